package main

// skipShort is why a test skips under -short. The race run is
// "go test -race -short ./...", and it is there to find data races: it
// keeps the tests that run goroutines against each other (syncs beside
// searches, shared views refreshing, cancellation, shutdown) and leaves
// to the full suite those that check what a single call returns, which
// the race detector would only make slower.
const skipShort = "checks results, not concurrency: runs in the full suite, not again under -race -short"
