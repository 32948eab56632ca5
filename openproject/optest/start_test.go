package optest

import (
	"io"
	"log"
	"net/http/httptest"
	"testing"
)

// Start is internal/optesting.Start for optest's own tests, which cannot
// import optesting (it imports optest). Keep the two alike.
func Start(t testing.TB, d *Dataset, opts Options) (*Server, string) {
	t.Helper()
	if err := d.Validate(); err != nil {
		t.Fatalf("start fake OpenProject: %v", err)
	}
	s := NewServer(d, opts)
	ts := httptest.NewUnstartedServer(s)
	// Truncation faults and clients that hang up make net/http log; a test
	// server should stay quiet.
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	t.Cleanup(func() {
		// Release hung requests first: httptest.Server.Close waits for
		// every handler to return.
		s.Close()
		ts.Close()
	})
	return s, ts.URL
}
