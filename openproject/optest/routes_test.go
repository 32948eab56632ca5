package optest

import (
	"net/http"
	"strings"
	"testing"
)

// TestRouting pins how requests reach handlers, including the paths and
// methods no client should send: a trailing slash is ignored, empty, "."
// and ".." segments are not cleaned (an unknown path is 404, never a
// redirect), an argument may be any non-empty segment, a known path with
// another method is a HAL 405 naming the allowed methods, HEAD is GET,
// and a request with a body needs a JSON Content-Type before anything
// else is looked at.
func TestRouting(t *testing.T) {
	_, base := srvStart(t, Options{})
	const hal, text = "hal", "text"
	tests := []struct {
		method, path, contentType string
		status                    int
		// identifier is the HAL error's errorIdentifier, "" for success.
		identifier string
		allow      string
		body       string // "hal" or "text": the answer's Content-Type
	}{
		{"GET", "/api/v3", "", 200, "", "", hal},
		{"GET", "/api/v3/", "", 200, "", "", hal},
		// One trailing slash goes, then /api/v3/ is the root too.
		{"GET", "/api/v3//", "", 200, "", "", hal},
		{"GET", "/api", "", 404, "NotFound", "", hal},
		{"GET", "/", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3x", "", 404, "NotFound", "", hal},
		{"GET", "/API/v3/users", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/users", "", 200, "", "", hal},
		{"GET", "/api/v3/users/", "", 200, "", "", hal},
		{"GET", "/api/v3/users//", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3//users", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/./users", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/users/me", "", 200, "", "", hal},
		{"GET", "/api/v3/users/me/", "", 200, "", "", hal},
		{"GET", "/api/v3/users/.", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/users/..", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/users/%2E", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/users/a%2Fb", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/users/1/2/3", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/work%5Fpackages/1", "", 200, "", "", hal},
		{"GET", "/api/v3/work_packages/1/", "", 200, "", "", hal},
		{"GET", "/api/v3/work_packages/1/../2", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/meetings//agenda_items", "", 404, "NotFound", "", hal},
		{"GET", "/api/v3/meetings/1/agenda_items/1", "", 200, "", "", hal},
		{"GET", "/api/v3/spec.json/", "", 200, "", "", hal},
		{"GET", "/api/v3/wiki_pages", "", 404, "NotFound", "", hal},
		{"HEAD", "/api/v3/users/me", "", 200, "", "", hal},
		{"HEAD", "/api/v3/nothing", "", 404, "NotFound", "", hal},
		{"PUT", "/api/v3/statuses", "application/json", 405, "MethodNotAllowed", "GET", hal},
		{"PUT", "/api/v3/work_packages/1", "application/json", 405, "MethodNotAllowed", "GET, PATCH, DELETE", hal},
		{"POST", "/api/v3/work_packages/1", "application/json", 405, "MethodNotAllowed", "GET, PATCH, DELETE", hal},
		{"PATCH", "/api/v3/work_packages", "application/json", 405, "MethodNotAllowed", "GET, POST", hal},
		{"DELETE", "/api/v3/users/1", "", 405, "MethodNotAllowed", "GET", hal},
		{"DELETE", "/api/v3/users/1/", "", 405, "MethodNotAllowed", "GET", hal},
		{"DELETE", "/api/v3/nothing", "", 404, "NotFound", "", hal},
		{"BREW", "/api/v3", "application/json", 405, "MethodNotAllowed", "GET", hal},
		{"POST", "/api/v3/nothing", "application/json", 404, "NotFound", "", hal},
		{"POST", "/api/v3/nothing", "", 406, "", "", text},
		{"POST", "/api/v3/nothing", "text/plain", 415, "TypeNotSupported", "", hal},
		{"PUT", "/api/v3/statuses", "", 406, "", "", text},
		{"OPTIONS", "/api/v3/users", "", 406, "", "", text},
		{"POST", "/api", "", 404, "NotFound", "", hal},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth("apikey", AdminKey)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			r := srvSend(t, req)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, tc.status, r.raw)
			}
			switch ct := r.header.Get("Content-Type"); {
			case tc.body == hal && ct != halContentType, tc.body == text && !strings.HasPrefix(ct, "text/plain"):
				t.Errorf("Content-Type = %q, want %s", ct, tc.body)
			}
			if tc.method != http.MethodHead && tc.identifier != "" {
				wantError(t, r, tc.status, tc.identifier, "")
			}
			if tc.method == http.MethodHead && len(r.raw) != 0 {
				t.Errorf("HEAD answered a body: %s", r.raw)
			}
			if got := r.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
			if got := r.header.Get("Location"); got != "" {
				t.Errorf("Location = %q: the fake never redirects", got)
			}
		})
	}
}
