package openproject_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/opsearch/opsearch/openproject"
)

// TestClient_Gzip: the client asks for gzip itself and decompresses the
// answer (not net/http), so each way a gzipped answer can go must come
// out as the same answer, or as the error that names it.
func TestClient_Gzip(t *testing.T) {
	me := []byte(`{"_type":"User","id":7,"name":"Alice Example","login":"alice"}`)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(me)
	_ = zw.Close()
	gz := zipped.Bytes()
	notFound := gzipOf(t, `{"_type":"Error","errorIdentifier":"urn:openproject-org:api:v3:errors:NotFound","message":"The requested resource could not be found."}`)
	tests := []struct {
		name    string
		status  int
		body    []byte
		gzipped bool
		wantErr error // nil: Me must decode to user 7
	}{
		{"plain", 200, me, false, nil},
		{"gzipped", 200, gz, true, nil},
		{"gzipped truncated", 200, gz[:len(gz)/2], true, openproject.ErrMalformed},
		{"not gzip at all", 200, me, true, openproject.ErrMalformed},
		{"gzipped error status", 404, notFound, true, openproject.ErrNotFound},
		{"corrupt error status", 404, []byte("<html>gone</html>"), true, openproject.ErrNotFound},
		{"empty gzipped body", 200, nil, true, openproject.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var accept string
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				accept = r.Header.Get("Accept-Encoding")
				w.Header().Set("Content-Type", "application/hal+json")
				if tc.gzipped {
					w.Header().Set("Content-Encoding", "gzip")
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(tc.body)))
				w.WriteHeader(tc.status)
				_, _ = w.Write(tc.body)
			}))
			t.Cleanup(ts.Close)
			c, err := openproject.New(openproject.Config{BaseURL: ts.URL, APIKey: "k", MaxAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			u, err := c.Me(context.Background())
			if accept != "gzip" {
				t.Errorf("Accept-Encoding = %q, want gzip", accept)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || u.ID != 7 || u.Name != "Alice Example" {
				t.Fatalf("Me = %+v, %v", u, err)
			}
		})
	}
}

func gzipOf(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
