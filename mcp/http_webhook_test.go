package mcp_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// sign is OpenProject's webhook signature of body.
func sign(secret string, body []byte) string {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write(body)
	return "sha1=" + hex.EncodeToString(mac.Sum(nil))
}

// TestHTTPWebhooks: a signed work package event makes a change
// searchable for the users who see it before the webhook is answered,
// with no scheduled sync (an hour away); a forged or missing signature
// gets 401 and changes nothing; without a secret the route is off.
func TestHTTPWebhooks(t *testing.T) {
	for _, team := range []string{"", "single"} {
		name := team
		if name == "" {
			name = "per-user"
		}
		t.Run(name, func(t *testing.T) { testWebhooks(t, team) })
	}
}

func testWebhooks(t *testing.T, team string) {
	const secret = "the-webhook-secret"
	e := newHTTPEnv(t, httpEnvOpts{webhookSecret: secret, team: team})
	e.syncUsers(t.Context())
	cs, err := e.connectStreamable(t.Context(), "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	finds := func(q string) int {
		t.Helper()
		var out searchOut
		if err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": q, "kinds": []string{"work_package"}}, &out); err != nil {
			t.Fatal(err)
		}
		return len(out.Results)
	}
	// A work package alice sees, renamed in OpenProject by the admin.
	var wp openproject.WorkPackage
	for _, w := range e.data.WorkPackages {
		if w.Project.ID == e.alice {
			wp = w
			break
		}
	}
	admin, err := openproject.New(openproject.Config{BaseURL: e.base, APIKey: optest.AdminKey})
	if err != nil {
		t.Fatal(err)
	}
	const word = "Quetzalcoatlus"
	subject := "Migrate the " + word + " pipeline"
	cur, err := admin.WorkPackage(t.Context(), wp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.UpdateWorkPackage(t.Context(), wp.ID, openproject.WorkPackagePatch{LockVersion: cur.LockVersion, Subject: &subject}); err != nil {
		t.Fatal(err)
	}
	if n := finds(word); n != 0 {
		t.Fatalf("the new subject is searchable before any event: %d results", n)
	}
	body, _ := json.Marshal(map[string]any{"action": "work_package:updated", "work_package": map[string]any{"_type": "WorkPackage", "id": wp.ID, "subject": subject}})
	post := func(sig string, b []byte) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.ts.URL+"/webhooks/openproject", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if sig != "" {
			req.Header.Set("X-OP-Signature", sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	for _, sig := range []string{"", sign("not-the-secret", body), "sha1=zz", sign(secret, body)[:20]} {
		if code, out := post(sig, body); code != http.StatusUnauthorized || len(out) != 1 {
			t.Errorf("signature %q: %d %v; want 401 and nothing else", sig, code, out)
		}
	}
	if n := finds(word); n != 0 {
		t.Fatalf("a forged event changed the index: %d results", n)
	}
	start := time.Now()
	code, out := post(sign(secret, body), body)
	if code != http.StatusOK || out["users"] != float64(2) {
		t.Fatalf("signed event: %d %v; want 200 and both active users refreshed", code, out)
	}
	t.Logf("event answered after %s: %v", time.Since(start).Round(time.Millisecond), out)
	if n := finds(word); n != 1 {
		t.Errorf("after the signed event alice finds %d work packages for %q, want 1", n, word)
	}
	// Bob does not see that project: the refresh with his key found
	// nothing, and his search shows nothing.
	bob, err := e.connectStreamable(t.Context(), "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.BobKey})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bob.Close() }()
	var bobOut searchOut
	if err := httpCall(t.Context(), bob, "openproject_search", map[string]any{"query": word}, &bobOut); err != nil {
		t.Fatal(err)
	}
	if len(bobOut.Results) != 0 {
		t.Errorf("bob finds %d results for a work package of alice's private project", len(bobOut.Results))
	}
	// A comment event names its work package by link; an event of
	// another kind waits for the schedule.
	comment, _ := json.Marshal(map[string]any{"action": "work_package_comment:comment", "activity": map[string]any{
		"id": 9, "_links": map[string]any{"workPackage": map[string]any{"href": fmt.Sprintf("/api/v3/work_packages/%d", wp.ID)}}}})
	if code, out := post(sign(secret, comment), comment); code != http.StatusOK || out["users"] != float64(2) {
		t.Errorf("comment event: %d %v", code, out)
	}
	// A project event starts the active users' syncs: alice's sync
	// count goes up (bounded by the test's timeout, not timed).
	var before statusOut
	if err := httpCall(t.Context(), cs, "openproject_sync_status", nil, &before); err != nil {
		t.Fatal(err)
	}
	project, _ := json.Marshal(map[string]any{"action": "project:updated", "project": map[string]any{"id": e.alice}})
	if code, out := post(sign(secret, project), project); code != http.StatusOK || out["syncsStarted"] != float64(2) {
		t.Errorf("project event: %d %v; want 200 and both users' syncs started", code, out)
	}
	for {
		var now statusOut
		if err := httpCall(t.Context(), cs, "openproject_sync_status", nil, &now); err != nil {
			t.Fatal(err)
		}
		if now.SyncsSinceStart > before.SyncsSinceStart {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("no sync after the project event")
		case <-time.After(20 * time.Millisecond):
		}
	}
	entry, _ := json.Marshal(map[string]any{"action": "time_entry:created", "time_entry": map[string]any{"id": 5}})
	if code, out := post(sign(secret, entry), entry); code != http.StatusOK || out["refreshed"] != float64(0) || out["note"] == nil {
		t.Errorf("time entry event: %d %v; want 200, nothing refreshed, a note", code, out)
	}
}

// TestHTTPWebhooksOff: without a secret the route does not exist.
func TestHTTPWebhooksOff(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	resp, err := http.Post(e.ts.URL+"/webhooks/openproject", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /webhooks/openproject without a secret: %d, want 404", resp.StatusCode)
	}
}
