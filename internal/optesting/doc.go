// Package optesting runs the fake OpenProject (package optest) for tests:
// Start serves a data set on a local port until the test ends. It is the
// one place that ties a fake's life to a testing.TB.
//
// Only _test.go files may import it. Programs run a fake with
// optest.Listen, so that the opsearch binary links neither package
// testing nor this one (cmd/opsearch's TestBinaryDoesNotLinkTesting holds
// that).
//
// It must not know what a data set holds or how one is made (opgen), nor
// how the fake answers (optest): it only starts and stops the server.
// optest's own tests cannot import it, since it imports optest; they keep
// the same Start in optest/start_test.go.
//
// Its subpackage synced goes one step further for the tests that search
// what a sync wrote: a fake, a store and index of its own, one sync.
package optesting
