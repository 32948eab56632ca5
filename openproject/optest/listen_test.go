package optest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestListen serves the test data set on a free port, answers a request
// and shuts down gracefully although a request hangs: Shutdown releases
// it first.
func TestListen(t *testing.T) {
	in, err := Listen("127.0.0.1:0", srvDataset(), Options{Faults: Faults{PathPrefix: "/api/v3/statuses", HangNext: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if r := srvGet(t, in.URL, "/api/v3"); r.status != http.StatusOK || r.body["instanceName"] != "Fake OpenProject" {
		t.Fatalf("GET /api/v3 = %d %s", r.status, r.raw)
	}
	hung := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, in.URL+"/api/v3/statuses", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			hung <- 0
			return
		}
		res.Body.Close()
		hung <- res.StatusCode
	}()
	for in.Server.RequestCount("/api/v3/statuses") == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := in.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if st := <-hung; st != http.StatusServiceUnavailable {
		t.Errorf("hung request = %d, want 503 once released", st)
	}
	if err := <-in.Err(); !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Err = %v, want http.ErrServerClosed", err)
	}
}

func TestListenError(t *testing.T) {
	in, err := Listen("127.0.0.1:0", srvDataset(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := Listen(in.URL[len("http://"):], srvDataset(), Options{}); err == nil {
		t.Error("a second Listen on the same address succeeded")
	}
}
