package openproject

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	status := http.StatusUnauthorized
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v3" || r.Header.Get("Authorization") != "" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		status int
		base   string
		want   error
	}{
		{http.StatusUnauthorized, srv.URL, nil},
		{http.StatusOK, srv.URL + "/api/v3/", nil},
		{http.StatusServiceUnavailable, srv.URL, ErrServer},
		{http.StatusOK, srv.URL + "/not-openproject", ErrServer},
	} {
		status = tc.status
		err := Probe(ctx, nil, tc.base)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%d %s: %v, want %v", tc.status, tc.base, err, tc.want)
		}
	}
	srv.Close()
	if err := Probe(ctx, nil, srv.URL); !errors.Is(err, ErrNetwork) {
		t.Errorf("stopped server: %v, want ErrNetwork", err)
	}
	if err := Probe(ctx, nil, "ftp://x"); err == nil {
		t.Error("ftp URL accepted")
	}
}
