package optesting

import (
	"io"
	"log"
	"net/http/httptest"
	"testing"

	"github.com/opsearch/opsearch/openproject/optest"
)

// Start runs a fake server for d on a local port until the test ends and
// returns it with its base URL (scheme, host and port; the API lives under
// base+"/api/v3"). It fails the test if d does not validate.
func Start(t testing.TB, d *optest.Dataset, opts optest.Options) (*optest.Server, string) {
	t.Helper()
	if err := d.Validate(); err != nil {
		t.Fatalf("start fake OpenProject: %v", err)
	}
	s := optest.NewServer(d, opts)
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
