package mcp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject/optest"
)

// TestHTTPOAuth: an OpenProject OAuth access token works on the team
// server wherever an API key does, as its user; once revoked, the next
// request gets 401 with a challenge that leads an OAuth client to
// OpenProject's authorization server (RFC 9728); API keys keep working in
// the same header, and no token reaches the log.
func TestHTTPOAuth(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newHTTPEnv(t, httpEnvOpts{})
	token, err := e.op.IssueToken("alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.Contains(e.logs.String(), token) {
			t.Error("the log contains the OAuth token")
		}
	})
	bearer := map[string]string{"Authorization": "Bearer " + token}
	cs, err := e.connectStreamable(t.Context(), "/mcp", bearer)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if id := waitSynced(t.Context(), t, cs); id != 2 {
		t.Fatalf("the token's user is %d, want alice (2)", id)
	}
	// Searches and live tools answer as alice.
	if err := checkSearch(t.Context(), func(q string) (searchOut, error) {
		var o searchOut
		err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": q, "pageSize": 50}, &o)
		return o, err
	}, "Nightingale", "Kestrel", e.alice, e.bob); err != nil {
		t.Error(err)
	}
	var project map[string]any
	if err := httpCall(t.Context(), cs, "openproject_get_project", map[string]any{"projectId": "alice-private"}, &project); err != nil {
		t.Errorf("a live tool with the token: %v", err)
	}
	if code, _ := e.rest("/api/tools/openproject_sync_status", bearer, "{}"); code != http.StatusOK {
		t.Errorf("REST with the token: %d", code)
	}
	// An API key in the same header still works.
	if code, _ := e.rest("/api/tools/openproject_sync_status", map[string]string{"Authorization": "Bearer " + optest.BobKey}, "{}"); code != http.StatusOK {
		t.Errorf("REST with an API key as Bearer: %d", code)
	}

	// The metadata names OpenProject as the authorization server.
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(e.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			Scopes               []string `json:"scopes_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&md)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || md.Resource != e.ts.URL+"/mcp" ||
			len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != e.base || len(md.Scopes) == 0 {
			t.Errorf("GET %s: %d %+v %v; want the resource %s/mcp and OpenProject %s as its authorization server", path, resp.StatusCode, md, err, e.ts.URL, e.base)
		}
	}

	// Revoked: the next call reaching OpenProject fails, and the request
	// after it is refused with the challenge.
	e.op.RevokeToken(token)
	if err := httpCall(t.Context(), cs, "openproject_get_project", map[string]any{"projectId": "alice-private"}, &project); err == nil {
		t.Fatal("a live tool worked with a revoked token")
	}
	code, body := e.rest("/api/tools/openproject_sync_status", bearer, "{}")
	if code != http.StatusUnauthorized {
		t.Fatalf("a request with the revoked token: %d %v, want 401", code, body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer ") ||
		!strings.Contains(challenge, `resource_metadata="`+e.ts.URL+`/.well-known/oauth-protected-resource"`) {
		t.Errorf("POST /mcp with the revoked token: %d, WWW-Authenticate %q; want 401 naming the resource metadata", resp.StatusCode, challenge)
	}
}
