package optest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// TestLatencyCountsFromArrival: every answer, whatever its kind, goes
// out Options.Latency after the request arrived, not sooner, and a
// fault's latency comes on top. The fake's own work is part of that time
// (a real server's response time includes its work); under synctest the
// work takes no time, so each answer comes exactly at its due time.
func TestLatencyCountsFromArrival(t *testing.T) {
	const latency = 20 * time.Millisecond
	tests := []struct {
		name   string
		method string
		path   string
		key    string
		faults Faults
		status int
		due    time.Duration
	}{
		{"list", http.MethodGet, "/api/v3/work_packages", AliceKey, Faults{}, http.StatusOK, latency},
		{"not found", http.MethodGet, "/api/v3/work_packages/404", AliceKey, Faults{}, http.StatusNotFound, latency},
		{"unauthenticated", http.MethodGet, "/api/v3/work_packages", "", Faults{}, http.StatusUnauthorized, latency},
		{"no content", http.MethodDelete, "/api/v3/work_packages/5", AdminKey, Faults{}, http.StatusNoContent, latency},
		{"fault", http.MethodGet, "/api/v3/statuses", AliceKey, Faults{FailNext: 1}, http.StatusServiceUnavailable, latency},
		{"fault latency on top", http.MethodGet, "/api/v3/statuses", AliceKey, Faults{Latency: 15 * time.Millisecond}, http.StatusOK, latency + 15*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewServer(srvDataset(), Options{Latency: latency, Faults: tt.faults, Now: func() time.Time { return srvClock }})
				defer s.Close()
				req := httptest.NewRequest(tt.method, tt.path, nil)
				if tt.key != "" {
					req.SetBasicAuth("apikey", tt.key)
				}
				rec := httptest.NewRecorder()
				start := time.Now()
				s.ServeHTTP(rec, req)
				if took := time.Since(start); took != tt.due {
					t.Errorf("answered after %v, want %v", took, tt.due)
				}
				if rec.Code != tt.status {
					t.Errorf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
				}
			})
		})
	}

	// A client that gives up while the answer waits gets nothing written.
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(srvDataset(), Options{Latency: time.Hour})
		defer s.Close()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req := httptest.NewRequest(http.MethodGet, "/api/v3/statuses", nil).WithContext(ctx)
		req.SetBasicAuth("apikey", AliceKey)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Body.Len() != 0 {
			t.Errorf("answered a client that went away: %q", rec.Body)
		}
	})
}
