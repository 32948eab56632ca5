package optest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// srvClock is the fixed server time of the tests.
var srvClock = time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)

const srvCarolKey = "opsearch-carol"

// srvDay returns midnight UTC of a 2024 day.
func srvDay(month time.Month, day int) time.Time {
	return time.Date(2024, month, day, 0, 0, 0, 0, time.UTC)
}

// srvDataset builds the small hand-written data set of the server tests:
//
//	users:    1 admin, 2 alice, 3 bob, 4 carol (member of nothing)
//	projects: 1 demo (public, alice), 2 alice-private, 3 bob-private,
//	          4 bulk (public, child of 1, alice)
//	wps:      1 open bug in demo (assigned to alice, 4 journals),
//	          2 closed task in demo, 3 open in alice-private,
//	          4 open in bob-private, 5 open child of 1 in demo,
//	          10..59 in bulk: even ids closed, odd ids open
//	attachments: 1 guide.pdf inline on wiki page 1 (metadata only),
//	          2 cat.png on wp 1, 3 plan.txt on wp 4 (bob-private),
//	          4 minutes.md on meeting 1, 5 export.csv on wp 1 (external
//	          storage), 6 secret.txt on meeting 2 (bob-private)
func srvDataset() *Dataset {
	pct := 40
	d := &Dataset{
		InstanceName: "Fake OpenProject",
		Users: []User{
			{User: openproject.User{ID: 1, Name: "Ada Admin", Login: "admin", FirstName: "Ada", LastName: "Admin", Email: "admin@example.com", Admin: true, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)}, APIKey: AdminKey},
			{User: openproject.User{ID: 2, Name: "Alice Doe", Login: "alice", FirstName: "Alice", LastName: "Doe", Email: "alice@example.com", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 2)}, APIKey: AliceKey},
			{User: openproject.User{ID: 3, Name: "Bob Roe", Login: "bob", FirstName: "Bob", LastName: "Roe", Email: "bob@example.com", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 3)}, APIKey: BobKey},
			{User: openproject.User{ID: 4, Name: "Carol Poe", Login: "carol", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 4)}, APIKey: srvCarolKey},
		},
		Projects: []Project{
			{Project: openproject.Project{ID: 1, Identifier: "demo", Name: "Demo", Active: true, Public: true, Description: "The **demo** project", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)}, Members: []int64{2}},
			{Project: openproject.Project{ID: 2, Identifier: "alice-private", Name: "Alice Private", Active: true, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)}, Members: []int64{2}},
			{Project: openproject.Project{ID: 3, Identifier: "bob-private", Name: "Bob Private", Active: true, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)}, Members: []int64{3}},
			{Project: openproject.Project{ID: 4, Identifier: "bulk", Name: "Bulk", Active: true, Public: true, Parent: &openproject.Ref{ID: 1}, CreatedAt: srvDay(1, 2), UpdatedAt: srvDay(1, 2)}, Members: []int64{2}},
		},
		Statuses: []openproject.Status{
			{ID: 1, Name: "New", IsDefault: true, Color: "#3997AD", Position: 1},
			{ID: 2, Name: "In Progress", Color: "#3852C6", Position: 2},
			{ID: 5, Name: "Closed", IsClosed: true, Color: "#DF6DA1", Position: 5},
			{ID: 6, Name: "Rejected", IsClosed: true, Color: "#D32937", Position: 6},
		},
		Types: []openproject.Type{
			{ID: 1, Name: "Task", IsDefault: true, Color: "#1A67A3", Position: 1},
			{ID: 2, Name: "Bug", Color: "#ff0000", Position: 2},
		},
		Priorities: []openproject.Priority{
			{ID: 1, Name: "Low", Position: 1, IsActive: true},
			{ID: 2, Name: "Normal", Position: 2, IsDefault: true, IsActive: true},
			{ID: 3, Name: "High", Position: 3, IsActive: true},
		},
		WorkPackages: []openproject.WorkPackage{
			{ID: 1, LockVersion: 3, Subject: "Login page broken", Description: "The login button does nothing.", Project: openproject.Ref{ID: 1}, Type: openproject.Ref{ID: 2}, Status: openproject.Ref{ID: 2}, Priority: openproject.Ref{ID: 3}, Author: openproject.Ref{ID: 2}, Assignee: &openproject.Ref{ID: 2}, Responsible: &openproject.Ref{ID: 1}, Version: &openproject.Ref{ID: 7, Title: "1.0"}, StartDate: "2024-01-02", DueDate: "2024-01-31", PercentageDone: &pct, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 5)},
			{ID: 2, Subject: "Write docs", Project: openproject.Ref{ID: 1}, Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 5}, Priority: openproject.Ref{ID: 2}, Author: openproject.Ref{ID: 1}, CreatedAt: srvDay(1, 2), UpdatedAt: srvDay(2, 1)},
			{ID: 3, Subject: "Alice secret plan", Project: openproject.Ref{ID: 2}, Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1}, Priority: openproject.Ref{ID: 2}, Author: openproject.Ref{ID: 2}, Assignee: &openproject.Ref{ID: 2}, CreatedAt: srvDay(1, 3), UpdatedAt: srvDay(3, 1)},
			{ID: 4, Subject: "Bob secret plan", Project: openproject.Ref{ID: 3}, Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1}, Priority: openproject.Ref{ID: 2}, Author: openproject.Ref{ID: 3}, CreatedAt: srvDay(1, 4), UpdatedAt: srvDay(3, 2)},
			{ID: 5, Subject: "Fix the login form", Project: openproject.Ref{ID: 1}, Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1}, Priority: openproject.Ref{ID: 2}, Author: openproject.Ref{ID: 2}, Parent: &openproject.Ref{ID: 1}, PercentageDone: new(0), CreatedAt: srvDay(1, 5), UpdatedAt: srvDay(3, 3)},
		},
		Activities: []openproject.Activity{
			{ID: 1, Version: 1, User: openproject.Ref{ID: 2}, WorkPackageID: 1, CreatedAt: srvDay(1, 1)},
			{ID: 2, Version: 2, Comment: "I can reproduce this with Firefox.", User: openproject.Ref{ID: 3}, WorkPackageID: 1, CreatedAt: srvDay(1, 2)},
			{ID: 3, Version: 3, Details: []string{"Status changed from New to In Progress"}, User: openproject.Ref{ID: 2}, WorkPackageID: 1, CreatedAt: srvDay(1, 3)},
			{ID: 4, Version: 4, Comment: "Internal note: customer is Zeta Corp.", Internal: true, User: openproject.Ref{ID: 2}, WorkPackageID: 1, CreatedAt: srvDay(1, 5)},
			{ID: 5, Version: 1, User: openproject.Ref{ID: 3}, WorkPackageID: 4, CreatedAt: srvDay(1, 4)},
		},
		WikiPages: []openproject.WikiPage{
			{ID: 1, Title: "Getting Started", Project: openproject.Ref{ID: 1}, Text: "Welcome to the *wiki*.", LockVersion: 2, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 9),
				Attachments: []openproject.Attachment{{ID: 1, FileName: "guide.pdf", FileSize: 2048, ContentType: "application/pdf", Description: "The guide", Author: openproject.Ref{ID: 2}, CreatedAt: srvDay(1, 9)}}},
			{ID: 2, Title: "Bob notes", Project: openproject.Ref{ID: 3}, Text: "secret", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)},
		},
		Meetings: []openproject.Meeting{
			{ID: 1, Title: "Weekly sync", Location: "Room 1", LockVersion: 1, StartTime: time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC), EndTime: time.Date(2030, 1, 1, 11, 30, 0, 0, time.UTC),
				Project: openproject.Ref{ID: 1}, Author: openproject.Ref{ID: 2}, Participants: []openproject.Ref{{ID: 2}, {ID: 3}}, CreatedAt: srvDay(6, 1), UpdatedAt: srvDay(6, 2),
				AgendaItems: []openproject.AgendaItem{
					{ID: 2, Title: "Bob's item", Position: 2, ItemType: "work_package", WorkPackage: &openproject.Ref{ID: 4}, Author: &openproject.Ref{ID: 3}},
					{ID: 1, Title: "Review login bug", Notes: "Check the *form*.", Position: 1, DurationMinutes: new(15), ItemType: "work_package", WorkPackage: &openproject.Ref{ID: 1}, Author: &openproject.Ref{ID: 2}, Presenter: &openproject.Ref{ID: 3}, Section: &openproject.Ref{ID: 9, Title: "Bugs"},
						Outcomes: []openproject.Outcome{{ID: 1, Notes: "Fixed in 1.0.1", Kind: "decision"}}, CreatedAt: srvDay(6, 1), UpdatedAt: srvDay(6, 2)},
				}},
			{ID: 2, Title: "Bob private meeting", StartTime: time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC), EndTime: time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), Project: openproject.Ref{ID: 3}, Author: openproject.Ref{ID: 3}, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)},
			{ID: 3, Title: "Retro", StartTime: time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC), EndTime: time.Date(2024, 6, 1, 10, 0, 0, 0, time.UTC), Project: openproject.Ref{ID: 1}, Author: openproject.Ref{ID: 1}, CreatedAt: srvDay(5, 1), UpdatedAt: srvDay(5, 1)},
		},
		Attachments: []Attachment{
			{Attachment: openproject.Attachment{ID: 2, FileName: "cat.png", ContentType: "image/png", Description: "A picture of a cute cat",
				Container: openproject.Ref{Href: "/api/v3/work_packages/1"}, Author: openproject.Ref{ID: 2}, CreatedAt: srvDay(1, 6)}, Content: []byte(srvCatPNG)},
			{Attachment: openproject.Attachment{ID: 3, FileName: "plan.txt", ContentType: "text/plain",
				Container: openproject.Ref{ID: 4, Href: "/api/v3/work_packages/4"}, Author: openproject.Ref{ID: 3}, CreatedAt: srvDay(1, 6)}, Content: []byte("Bob's secret plan, in full.\n")},
			{Attachment: openproject.Attachment{ID: 4, FileName: "minutes.md", ContentType: "text/markdown", Description: "Minutes",
				Container: openproject.Ref{Href: "/api/v3/meetings/1"}, Author: openproject.Ref{ID: 2}, CreatedAt: srvDay(6, 2)}, Content: []byte("# Weekly sync\n\nWe fixed the *login*.\n")},
			{Attachment: openproject.Attachment{ID: 5, FileName: "export 2024 \"final\".csv", ContentType: "text/csv",
				Container: openproject.Ref{Href: "/api/v3/work_packages/1"}, Author: openproject.Ref{ID: 1}, CreatedAt: srvDay(1, 7)}, Content: []byte("id,subject\n1,Login page broken\n"), External: true},
			{Attachment: openproject.Attachment{ID: 6, FileName: "secret.txt", ContentType: "text/plain",
				Container: openproject.Ref{Href: "/api/v3/meetings/2"}, Author: openproject.Ref{ID: 3}, CreatedAt: srvDay(1, 1)}, Content: []byte("only bob")},
		},
		Queries: []openproject.Query{
			{ID: 1, Name: "All open", Project: &openproject.Ref{ID: 1}, Public: true, Starred: true, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)},
			{ID: 2, Name: "Private view", Project: &openproject.Ref{ID: 1}, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)},
			{ID: 3, Name: "Global", Public: true, CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 1)},
		},
	}
	for i := 10; i < 60; i++ {
		status := int64(1)
		if i%2 == 0 {
			status = 5
		}
		d.WorkPackages = append(d.WorkPackages, openproject.WorkPackage{
			ID: int64(i), Subject: fmt.Sprintf("Bulk item %d", i), Project: openproject.Ref{ID: 4},
			Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: status}, Priority: openproject.Ref{ID: 2},
			Author: openproject.Ref{ID: 2}, CreatedAt: srvDay(4, 1).Add(time.Duration(i) * time.Hour),
			UpdatedAt: srvDay(4, 1).Add(time.Duration(100-i) * time.Hour),
		})
	}
	return d
}

// srvCatPNG is a 1x1 PNG, the content of attachment 2.
const srvCatPNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\b\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x10IDATx\x9cb\xfa\xdf\xc0\x00\b\x00\x00\xff\xff\x04\t\x01\x82$\xc1\x835\x00\x00\x00\x00IEND\xaeB`\x82"

// Counts of the test data set, as alice sees it.
const (
	srvAliceOpen = 3 + 25 // 1, 3, 5 and the odd bulk ids
	srvAliceAll  = 4 + 50 // 1, 2, 3, 5 and all bulk ids
)

// srvStart starts a server over srvDataset with the fixed clock.
func srvStart(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return srvClock }
	}
	return Start(t, srvDataset(), opts)
}

// srvResp is a decoded response.
type srvResp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// srvDo sends a request with the given API key (empty: no credentials)
// and decodes a JSON answer.
func srvDo(t *testing.T, method, url, key string, body any) srvResp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.SetBasicAuth("apikey", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return srvSend(t, req)
}

func srvSend(t *testing.T, req *http.Request) srvResp {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read %s: %v", req.URL, err)
	}
	r := srvResp{status: res.StatusCode, header: res.Header, raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/hal+json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Fatalf("decode %s: %v\n%s", req.URL, err, raw)
		}
	}
	return r
}

// srvGet is a GET as alice unless another key is given.
func srvGet(t *testing.T, base, path string, key ...string) srvResp {
	t.Helper()
	k := AliceKey
	if len(key) > 0 {
		k = key[0]
	}
	return srvDo(t, http.MethodGet, base+path, k, nil)
}

// srvQ builds a query string from alternating keys and values.
func srvQ(kvs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kvs); i += 2 {
		v.Set(kvs[i], kvs[i+1])
	}
	return "?" + v.Encode()
}

// jget walks a decoded JSON document: strings index objects, ints arrays.
func jget(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// elementIDs returns the ids of a collection's elements.
func elementIDs(body map[string]any) []int64 {
	els, _ := jget(body, "_embedded", "elements").([]any)
	ids := make([]int64, 0, len(els))
	for _, e := range els {
		if f, ok := jget(e, "id").(float64); ok {
			ids = append(ids, int64(f))
		}
	}
	return ids
}

func jnum(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// wantError checks a HAL error answer.
func wantError(t *testing.T, r srvResp, status int, identifier, message string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.raw)
	}
	if got := r.header.Get("Content-Type"); got != halContentType {
		t.Errorf("Content-Type = %q, want %q", got, halContentType)
	}
	if got := jget(r.body, "_type"); got != "Error" {
		t.Errorf("_type = %v, want Error", got)
	}
	if got := jget(r.body, "errorIdentifier"); got != openproject.ErrorIdentifierPrefix+identifier {
		t.Errorf("errorIdentifier = %v, want %s", got, identifier)
	}
	if message != "" {
		if got := jget(r.body, "message"); got != message {
			t.Errorf("message = %q, want %q", got, message)
		}
	}
}

func filtersParam(fs ...openproject.Filter) string {
	return openproject.Filters(fs).String()
}

func TestAuth(t *testing.T) {
	srv, base := srvStart(t, Options{})
	legacy, legacyBase := srvStart(t, Options{Profile: ProfileLegacy})
	token, err := srv.IssueToken("alice")
	if err != nil {
		t.Fatal(err)
	}
	legacyToken, err := legacy.IssueToken("alice")
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := srv.IssueToken("alice")
	if err != nil {
		t.Fatal(err)
	}
	srv.RevokeToken(revoked)
	if _, err := srv.IssueToken("nobody"); err == nil {
		t.Error("a token was issued to a user who does not exist")
	}
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	tests := []struct {
		name      string
		base      string
		header    map[string]string
		status    int
		message   string
		challenge string
	}{
		{"no credentials", base, nil, 401, msgNoCredentials, `Basic realm="OpenProject API"`},
		{"wrong basic key", base, map[string]string{"Authorization": basic("apikey", "nope")}, 401, msgBadCredentials, `Basic realm="OpenProject API"`},
		{"login instead of apikey", base, map[string]string{"Authorization": basic("alice", AliceKey)}, 401, msgBadCredentials, `Basic realm="OpenProject API"`},
		{"garbage basic", base, map[string]string{"Authorization": "Basic !!!"}, 401, msgBadCredentials, `Basic realm="OpenProject API"`},
		{"wrong bearer", base, map[string]string{"Authorization": "Bearer nope"}, 401, msgBadCredentials, `Bearer realm="OpenProject API" error="invalid_token"`},
		{"session scheme", base, map[string]string{"X-Authentication-Scheme": "Session"}, 401, msgNoCredentials, `Session realm="OpenProject API"`},
		{"basic ok", base, map[string]string{"Authorization": basic("apikey", AliceKey)}, 200, "", ""},
		{"bearer ok", base, map[string]string{"Authorization": "Bearer " + AliceKey}, 200, "", ""},
		{"legacy basic ok", legacyBase, map[string]string{"Authorization": basic("apikey", AliceKey)}, 200, "", ""},
		{"legacy bearer is an OAuth token", legacyBase, map[string]string{"Authorization": "Bearer " + AliceKey}, 401, msgBadCredentials, `Bearer realm="OpenProject API" error="invalid_token"`},
		{"unknown path still needs auth", base + "/api/v3/nope", nil, 401, msgNoCredentials, `Basic realm="OpenProject API"`},
		{"oauth token ok", base, map[string]string{"Authorization": "Bearer " + token}, 200, "", ""},
		{"legacy oauth token ok", legacyBase, map[string]string{"Authorization": "Bearer " + legacyToken}, 200, "", ""},
		{"revoked oauth token", base, map[string]string{"Authorization": "Bearer " + revoked}, 401, msgBadCredentials, `Bearer realm="OpenProject API" error="invalid_token"`},
		{"oauth token is no api key", base, map[string]string{"Authorization": basic("apikey", token)}, 401, msgBadCredentials, `Basic realm="OpenProject API"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.base
			if !strings.Contains(u, "/api/v3") {
				u += "/api/v3/users/me"
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			r := srvSend(t, req)
			if tt.status == 200 {
				if r.status != 200 || jget(r.body, "id") != float64(2) {
					t.Fatalf("status %d body %s, want alice", r.status, r.raw)
				}
				if r.header.Get("Content-Type") != halContentType {
					t.Errorf("Content-Type = %q", r.header.Get("Content-Type"))
				}
				return
			}
			wantError(t, r, tt.status, "Unauthenticated", tt.message)
			if got := r.header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tt.challenge)
			}
			want := map[string]any{"_type": "Error", "errorIdentifier": openproject.ErrorIdentifierPrefix + "Unauthenticated", "message": tt.message}
			if !jsonEqual(r.body, want) {
				t.Errorf("body = %s, want exactly %v", r.raw, want)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestRootAndUsers(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3", AdminKey)
	if jget(r.body, "_type") != "Root" || jget(r.body, "instanceName") != "Fake OpenProject" || jget(r.body, "coreVersion") == nil {
		t.Errorf("admin root = %s", r.raw)
	}
	if jget(r.body, "_links", "user", "href") != "/api/v3/users/1" {
		t.Errorf("root user link = %v", jget(r.body, "_links", "user"))
	}
	r = srvGet(t, base, "/api/v3/")
	if r.status != 200 || jget(r.body, "coreVersion") != nil {
		t.Errorf("alice root shows coreVersion: %s", r.raw)
	}
	if jget(r.body, "_links", "user", "title") != "Alice Doe" {
		t.Errorf("alice root user link = %v", jget(r.body, "_links", "user"))
	}

	// Private fields only for self and admins.
	r = srvGet(t, base, "/api/v3/users/3")
	if r.status != 200 || jget(r.body, "name") != "Bob Roe" || jget(r.body, "email") != nil || jget(r.body, "login") != nil {
		t.Errorf("alice sees bob as %s", r.raw)
	}
	r = srvGet(t, base, "/api/v3/users/3", AdminKey)
	if jget(r.body, "email") != "bob@example.com" || jget(r.body, "login") != "bob" {
		t.Errorf("admin sees bob as %s", r.raw)
	}
	r = srvGet(t, base, "/api/v3/users/me", BobKey)
	if jget(r.body, "email") != "bob@example.com" {
		t.Errorf("bob sees himself as %s", r.raw)
	}
	wantError(t, srvGet(t, base, "/api/v3/users/99"), 404, "NotFound", msgUserNotFound)

	wantError(t, srvGet(t, base, "/api/v3/users"), 403, "MissingPermission", msgForbidden)
	r = srvGet(t, base, "/api/v3/users"+srvQ("pageSize", "2", "offset", "2"), AdminKey)
	if r.status != 200 || jnum(r.body["total"]) != 4 || !slices.Equal(elementIDs(r.body), []int64{3, 4}) {
		t.Errorf("admin user list = %s", r.raw)
	}
}

func TestVisibilityIs404Not403(t *testing.T) {
	_, base := srvStart(t, Options{})
	tests := []struct {
		path    string
		key     string
		status  int
		message string
	}{
		{"/api/v3/projects/2", AliceKey, 200, ""},
		{"/api/v3/projects/alice-private", AliceKey, 200, ""},
		{"/api/v3/projects/3", AliceKey, 404, msgNotFound},
		{"/api/v3/projects/bob-private", AliceKey, 404, msgNotFound},
		{"/api/v3/projects/2", BobKey, 404, msgNotFound},
		{"/api/v3/projects/3", AdminKey, 200, ""},
		{"/api/v3/projects/1", srvCarolKey, 200, ""},
		{"/api/v3/work_packages/3", AliceKey, 200, ""},
		{"/api/v3/work_packages/4", AliceKey, 404, msgWPNotFound},
		{"/api/v3/work_packages/3", BobKey, 404, msgWPNotFound},
		{"/api/v3/work_packages/999", AdminKey, 404, msgWPNotFound},
		{"/api/v3/work_packages/4/activities", AliceKey, 404, msgWPNotFound},
		{"/api/v3/projects/3/work_packages", AliceKey, 404, msgProjectMissing},
		{"/api/v3/wiki_pages/2", AliceKey, 404, msgNotFound},
		{"/api/v3/wiki_pages/2", BobKey, 200, ""},
		{"/api/v3/meetings/2", AliceKey, 404, msgNotFound},
		{"/api/v3/meetings/2", BobKey, 200, ""},
		{"/api/v3/activities/5", AliceKey, 404, msgNotFound},
		{"/api/v3/activities/5", BobKey, 200, ""},
		{"/api/v3/queries/2", AliceKey, 404, msgNotFound},
		{"/api/v3/queries/2", AdminKey, 200, ""},
		{"/api/v3/nothing/here", AliceKey, 404, msgNotFound},
		{"/api/v3/wiki_pages", AliceKey, 404, msgNotFound},
		{"/somewhere/else", AliceKey, 404, msgNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.key+tt.path, func(t *testing.T) {
			r := srvGet(t, base, tt.path, tt.key)
			if tt.status == 200 {
				if r.status != 200 {
					t.Fatalf("status = %d: %s", r.status, r.raw)
				}
				return
			}
			wantError(t, r, tt.status, "NotFound", tt.message)
		})
	}

	// Lists only contain what the caller may see.
	r := srvGet(t, base, "/api/v3/projects")
	if !slices.Equal(elementIDs(r.body), []int64{1, 2, 4}) {
		t.Errorf("alice projects = %v", elementIDs(r.body))
	}
	r = srvGet(t, base, "/api/v3/projects", BobKey)
	if !slices.Equal(elementIDs(r.body), []int64{1, 3, 4}) {
		t.Errorf("bob projects = %v", elementIDs(r.body))
	}
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "pageSize", "5"), BobKey)
	if ids := elementIDs(r.body); !slices.Equal(ids, []int64{1, 2, 4, 5, 10}) {
		t.Errorf("bob work packages = %v", ids)
	}

	// Undisclosed links: the agenda item of bob's work package.
	r = srvGet(t, base, "/api/v3/meetings/1/agenda_items")
	if got := jget(r.body, "_embedded", "elements", 1, "_links", "workPackage", "href"); got != openproject.UndisclosedHref {
		t.Errorf("alice sees bob's work package link as %v", got)
	}
	r = srvGet(t, base, "/api/v3/meetings/1/agenda_items", BobKey)
	if got := jget(r.body, "_embedded", "elements", 1, "_links", "workPackage", "href"); got != "/api/v3/work_packages/4" {
		t.Errorf("bob sees his work package link as %v", got)
	}
}

func TestWorkPackageListForbiddenWithoutAnyProject(t *testing.T) {
	d := srvDataset()
	for i := range d.Projects {
		d.Projects[i].Public = false
	}
	_, base := Start(t, d, Options{})
	wantError(t, srvGet(t, base, "/api/v3/work_packages", srvCarolKey), 403, "MissingPermission", msgWPForbidden)
	r := srvGet(t, base, "/api/v3/work_packages", AliceKey)
	if r.status != 200 {
		t.Errorf("alice: %d", r.status)
	}
}

func TestPaging(t *testing.T) {
	_, base := srvStart(t, Options{MaxPageSize: 30})
	all := srvQ("filters", "[]")
	tests := []struct {
		name       string
		query      string
		wantOffset int
		wantSize   int
		wantIDs    []int64 // nil: do not check
		wantCount  int
		wantNext   bool
		wantPrev   bool
	}{
		{"default", all, 1, 20, nil, 20, true, false},
		{"offset 0", all + "&offset=0&pageSize=3", 1, 3, []int64{1, 2, 3}, 3, true, false},
		{"offset -1", all + "&offset=-1&pageSize=3", 1, 3, []int64{1, 2, 3}, 3, true, false},
		{"offset abc", all + "&offset=abc&pageSize=3", 1, 3, []int64{1, 2, 3}, 3, true, false},
		{"offset 2", all + "&offset=2&pageSize=3", 2, 3, []int64{5, 10, 11}, 3, true, true},
		{"ruby to_i", all + "&offset=2x&pageSize=3", 2, 3, []int64{5, 10, 11}, 3, true, true},
		{"last page", all + "&offset=18&pageSize=3", 18, 3, []int64{57, 58, 59}, 3, false, true},
		{"past end", all + "&offset=99&pageSize=3", 99, 3, []int64{}, 0, false, true},
		{"capped", all + "&pageSize=5000", 1, 30, nil, 30, true, false},
		{"minus one is max", all + "&pageSize=-1", 1, 30, nil, 30, true, false},
		{"zero", all + "&pageSize=0", 1, 0, []int64{}, 0, true, false},
		{"page size abc", all + "&pageSize=abc", 1, 0, []int64{}, 0, true, false},
		{"exact fit", all + "&pageSize=27&offset=2", 2, 27, nil, 27, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := srvGet(t, base, "/api/v3/work_packages"+tt.query)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.raw)
			}
			if got := jnum(r.body["offset"]); got != tt.wantOffset {
				t.Errorf("offset = %d, want %d", got, tt.wantOffset)
			}
			if got := jnum(r.body["pageSize"]); got != tt.wantSize {
				t.Errorf("pageSize = %d, want %d", got, tt.wantSize)
			}
			if got := jnum(r.body["total"]); got != srvAliceAll {
				t.Errorf("total = %d, want %d", got, srvAliceAll)
			}
			if got := jnum(r.body["count"]); got != tt.wantCount {
				t.Errorf("count = %d, want %d", got, tt.wantCount)
			}
			ids := elementIDs(r.body)
			if len(ids) != tt.wantCount || (tt.wantIDs != nil && !slices.Equal(ids, tt.wantIDs)) {
				t.Errorf("ids = %v, want %v (%d)", ids, tt.wantIDs, tt.wantCount)
			}
			links, _ := r.body["_links"].(map[string]any)
			if _, ok := links["nextByOffset"]; ok != tt.wantNext {
				t.Errorf("nextByOffset present = %v, want %v", ok, tt.wantNext)
			}
			if _, ok := links["previousByOffset"]; ok != tt.wantPrev {
				t.Errorf("previousByOffset present = %v, want %v", ok, tt.wantPrev)
			}
			for _, l := range []string{"jumpTo", "changeSize"} {
				if jget(links, l, "templated") != true {
					t.Errorf("%s not templated: %v", l, links[l])
				}
			}
		})
	}

	r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "offset", "2", "pageSize", "3"))
	want := map[string]string{
		"self":             "/api/v3/work_packages?filters=%5B%5D&offset=2&pageSize=3",
		"jumpTo":           "/api/v3/work_packages?filters=%5B%5D&offset=%7Boffset%7D&pageSize=3",
		"changeSize":       "/api/v3/work_packages?filters=%5B%5D&offset=2&pageSize=%7Bsize%7D",
		"nextByOffset":     "/api/v3/work_packages?filters=%5B%5D&offset=3&pageSize=3",
		"previousByOffset": "/api/v3/work_packages?filters=%5B%5D&offset=1&pageSize=3",
	}
	for name, href := range want {
		if got := jget(r.body, "_links", name, "href"); got != href {
			t.Errorf("%s = %v, want %s", name, got, href)
		}
	}
	if r.body["_type"] != "WorkPackageCollection" {
		t.Errorf("_type = %v", r.body["_type"])
	}
	if jget(r.body, "_embedded", "schemas", "_type") != "Collection" {
		t.Errorf("no embedded schemas: %v", jget(r.body, "_embedded", "schemas"))
	}

	// Following nextByOffset visits every item exactly once.
	seen := map[int64]bool{}
	next := "/api/v3/work_packages" + srvQ("filters", "[]", "pageSize", "7")
	for pages := 0; next != ""; pages++ {
		if pages > 20 {
			t.Fatal("too many pages")
		}
		r := srvGet(t, base, next)
		for _, id := range elementIDs(r.body) {
			if seen[id] {
				t.Errorf("id %d seen twice", id)
			}
			seen[id] = true
		}
		next, _ = jget(r.body, "_links", "nextByOffset", "href").(string)
	}
	if len(seen) != srvAliceAll {
		t.Errorf("walked %d items, want %d", len(seen), srvAliceAll)
	}

	// Other paginated lists share the paging rules.
	r = srvGet(t, base, "/api/v3/projects"+srvQ("pageSize", "2", "offset", "2"))
	if r.body["_type"] != "Collection" || !slices.Equal(elementIDs(r.body), []int64{4}) || jnum(r.body["total"]) != 3 {
		t.Errorf("projects page 2 = %s", r.raw)
	}
	if jget(r.body, "_links", "previousByOffset") == nil || jget(r.body, "_links", "nextByOffset") != nil {
		t.Errorf("projects page 2 links = %v", r.body["_links"])
	}
}

func TestDefaultFilterHidesClosed(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/work_packages"+srvQ("pageSize", "100"))
	if jnum(r.body["total"]) != srvAliceOpen {
		t.Errorf("default total = %v, want %d", r.body["total"], srvAliceOpen)
	}
	for _, id := range elementIDs(r.body) {
		if id == 2 || (id >= 10 && id%2 == 0) {
			t.Errorf("closed work package %d listed by default", id)
		}
	}
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("pageSize", "100", "filters", "[]"))
	if jnum(r.body["total"]) != srvAliceAll {
		t.Errorf("filters=[] total = %v, want %d", r.body["total"], srvAliceAll)
	}
	r = srvGet(t, base, "/api/v3/projects/demo/work_packages")
	if !slices.Equal(elementIDs(r.body), []int64{1, 5}) {
		t.Errorf("demo default = %v", elementIDs(r.body))
	}
	r = srvGet(t, base, "/api/v3/projects/1/work_packages"+srvQ("filters", "[]"))
	if !slices.Equal(elementIDs(r.body), []int64{1, 2, 5}) {
		t.Errorf("demo all = %v", elementIDs(r.body))
	}
	if got := jget(r.body, "_links", "self", "href"); got != "/api/v3/projects/1/work_packages?filters=%5B%5D&offset=1&pageSize=20" {
		t.Errorf("self = %v", got)
	}
	// The alias "filter" is accepted too.
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filter", "[]", "pageSize", "1"))
	if jnum(r.body["total"]) != srvAliceAll {
		t.Errorf("filter=[] total = %v", r.body["total"])
	}
}

func TestWorkPackageFilters(t *testing.T) {
	_, base := srvStart(t, Options{})
	f := func(name, op string, values ...string) openproject.Filter {
		if values == nil {
			values = []string{}
		}
		return openproject.Filter{Name: name, Operator: op, Values: values}
	}
	tests := []struct {
		name    string
		filters []openproject.Filter
		want    []int64
	}{
		{"status o", []openproject.Filter{f("status", "o"), f("project", "=", "1")}, []int64{1, 5}},
		{"status c", []openproject.Filter{f("status", "c"), f("project", "=", "1")}, []int64{2}},
		{"status *", []openproject.Filter{f("status", "*"), f("project", "=", "1")}, []int64{1, 2, 5}},
		{"status =", []openproject.Filter{f("status", "=", "2")}, []int64{1}},
		{"status_id =", []openproject.Filter{f("status_id", "=", "2", "5"), f("project_id", "=", "1")}, []int64{1, 2}},
		{"status !", []openproject.Filter{f("status", "!", "1", "5")}, []int64{1}},
		{"id =", []openproject.Filter{f("id", "=", "2", "4", "5")}, []int64{2, 5}},
		{"id !", []openproject.Filter{f("id", "!", "1"), f("project", "=", "1")}, []int64{2, 5}},
		{"project !", []openproject.Filter{f("project", "!", "4")}, []int64{1, 2, 3, 5}},
		{"subject ~", []openproject.Filter{f("subject", "~", "LOGIN")}, []int64{1, 5}},
		{"subject ~ words", []openproject.Filter{f("subject", "~", "login broken")}, []int64{1}},
		{"search subject", []openproject.Filter{f("search", "**", "secret")}, []int64{3}},
		{"search description", []openproject.Filter{f("search", "**", "button")}, []int64{1}},
		{"search comment", []openproject.Filter{f("search", "**", "firefox")}, []int64{1}},
		{"search skips internal comments", []openproject.Filter{f("search", "**", "zeta")}, []int64{}},
		{"type =", []openproject.Filter{f("type", "=", "2")}, []int64{1}},
		{"type_id !", []openproject.Filter{f("type_id", "!", "1")}, []int64{1}},
		{"assignee =", []openproject.Filter{f("assignee", "=", "2")}, []int64{1, 3}},
		{"assigned_to = me", []openproject.Filter{f("assigned_to", "=", "me")}, []int64{1, 3}},
		{"assignee *", []openproject.Filter{f("assignee", "*"), f("status", "*")}, []int64{1, 3}},
		{"assignee !*", []openproject.Filter{f("assignee", "!*"), f("project", "=", "1")}, []int64{2, 5}},
		{"assignee !", []openproject.Filter{f("assignee", "!", "2"), f("project", "=", "1", "2")}, []int64{2, 5}},
		{"updatedAt <>d from", []openproject.Filter{f("updatedAt", "<>d", "2024-03-01T00:00:00Z", ""), f("project", "!", "4")}, []int64{3, 5}},
		{"updated_at <>d to, inclusive", []openproject.Filter{f("updated_at", "<>d", "", "2024-02-01T00:00:00.000Z")}, []int64{1, 2}},
		{"updatedAt <>d both, date only", []openproject.Filter{f("updatedAt", "<>d", "2024-01-05", "2024-02-01"), f("project", "=", "1")}, []int64{1, 2}},
		{"updatedAt <>d millis", []openproject.Filter{f("updatedAt", "<>d", "2024-03-02T00:00:00.001Z", "2024-03-03T00:00:00.000Z")}, []int64{5}},
		{"updatedAt <>d offset", []openproject.Filter{f("updatedAt", "<>d", "2024-03-02T01:00:00+01:00", "2024-03-02T01:00:00+01:00")}, []int64{}},
		{"createdAt <>d", []openproject.Filter{f("createdAt", "<>d", "2024-01-02", "2024-01-03"), f("status", "*")}, []int64{2, 3}},
		{"createdAt >t-", []openproject.Filter{f("created_at", ">t-", "300"), f("status", "*")}, bulkAll()},
		{"updatedAt <t-", []openproject.Filter{f("updatedAt", "<t-", "349"), f("status", "*")}, []int64{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", filtersParam(tt.filters...), "pageSize", "100"))
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.raw)
			}
			if ids := elementIDs(r.body); !slices.Equal(ids, tt.want) {
				t.Errorf("ids = %v, want %v", ids, tt.want)
			}
		})
	}
}

// bulkAll lists the bulk project's work packages.
func bulkAll() []int64 {
	var ids []int64
	for i := int64(10); i < 60; i++ {
		ids = append(ids, i)
	}
	return ids
}

func TestBadQueries(t *testing.T) {
	_, base := srvStart(t, Options{})
	tests := []struct {
		name       string
		path       string
		identifier string
		message    string
	}{
		{"unknown filter", "/api/v3/work_packages" + srvQ("filters", `[{"bogus":{"operator":"=","values":["1"]}}]`), "InvalidQuery", msgFilterUnknown},
		{"missing operator", "/api/v3/work_packages" + srvQ("filters", `[{"status":{"values":[]}}]`), "InvalidQuery", "Operator can't be blank."},
		{"bad json", "/api/v3/work_packages" + srvQ("filters", `[{"status":`), "InvalidQuery", ""},
		{"bad date", "/api/v3/work_packages" + srvQ("filters", `[{"updatedAt":{"operator":"<>d","values":["yesterday",""]}}]`), "InvalidQuery", "Updated on is not a valid date time."},
		{"one date value", "/api/v3/work_packages" + srvQ("filters", `[{"updatedAt":{"operator":"<>d","values":["2024-01-01"]}}]`), "InvalidQuery", ""},
		{"bad operator", "/api/v3/work_packages" + srvQ("filters", `[{"status":{"operator":"~","values":[]}}]`), "InvalidQuery", "Status Operator is not set to one of the allowed values."},
		{"bad days", "/api/v3/work_packages" + srvQ("filters", `[{"updatedAt":{"operator":">t-","values":["x"]}}]`), "InvalidQuery", ""},
		{"bad sort", "/api/v3/work_packages" + srvQ("sortBy", `[["bogus","asc"]]`), "InvalidQuery", ""},
		{"bad sort json", "/api/v3/work_packages" + srvQ("sortBy", `[[`), "InvalidQuery", ""},
		{"bad select", "/api/v3/work_packages" + srvQ("select", "total,elements/bogus"), "InvalidSignal", ""},
		{"bad select top", "/api/v3/work_packages" + srvQ("select", "bogus"), "InvalidSignal", ""},
		{"project unknown filter", "/api/v3/projects" + srvQ("filters", `[{"bogus":{"operator":"=","values":["1"]}}]`), "InvalidQuery", msgFilterUnknown},
		{"project bad select", "/api/v3/projects" + srvQ("select", "elements/bogus"), "InvalidSignal", ""},
		{"meeting unknown filter", "/api/v3/meetings" + srvQ("filters", `[{"bogus":{"operator":"=","values":["1"]}}]`), "InvalidQuery", msgFilterUnknown},
		{"meeting bad time", "/api/v3/meetings" + srvQ("filters", `[{"time":{"operator":"=","values":["soon"]}}]`), "InvalidQuery", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, srvGet(t, base, tt.path), 400, tt.identifier, tt.message)
		})
	}
}

func TestSelectAndSort(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "select", "total,elements/id,elements/updatedAt,elements/lockVersion", "pageSize", "2"))
	want := `{"total":54,"_embedded":{"elements":[{"id":1,"lockVersion":3,"updatedAt":"2024-01-05T00:00:00.000Z"},{"id":2,"lockVersion":0,"updatedAt":"2024-02-01T00:00:00.000Z"}]}}`
	var wantBody map[string]any
	_ = json.Unmarshal([]byte(want), &wantBody)
	if !jsonEqual(r.body, wantBody) {
		t.Errorf("select = %s\nwant %s", r.raw, want)
	}
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "select", `["total","self","elements/subject","elements/status"]`, "pageSize", "1"))
	if r.body["count"] != nil || jget(r.body, "_links", "self") == nil || jget(r.body, "_links", "jumpTo") != nil {
		t.Errorf("select top = %s", r.raw)
	}
	el := jget(r.body, "_embedded", "elements", 0)
	if jget(el, "subject") != "Login page broken" || jget(el, "_links", "status", "title") != "In Progress" || jget(el, "_embedded") != nil || jget(el, "id") != nil {
		t.Errorf("select element = %v", el)
	}
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "select", "*,elements/id", "pageSize", "1"))
	if r.body["_type"] != "WorkPackageCollection" || r.body["count"] == nil || jget(r.body, "_links", "jumpTo") == nil || len(jget(r.body, "_embedded", "elements", 0).(map[string]any)) != 1 {
		t.Errorf("select * = %s", r.raw)
	}
	r = srvGet(t, base, "/api/v3/projects"+srvQ("select", "total,elements/identifier"))
	if !jsonEqual(r.body, map[string]any{"total": 3, "_embedded": map[string]any{"elements": []any{
		map[string]any{"identifier": "demo"}, map[string]any{"identifier": "alice-private"}, map[string]any{"identifier": "bulk"}}}}) {
		t.Errorf("project select = %s", r.raw)
	}

	sorts := []struct {
		sortBy string
		want   []int64
	}{
		{`[["id","desc"]]`, []int64{5, 3, 2, 1}},
		{`[["updatedAt","desc"]]`, []int64{5, 3, 2, 1}},
		{`[["updated_at","asc"]]`, []int64{1, 2, 3, 5}},
		{`[["createdAt","desc"]]`, []int64{5, 3, 2, 1}},
		{`[["subject","asc"]]`, []int64{3, 5, 1, 2}},
		{`["subject:desc"]`, []int64{2, 1, 5, 3}},
		{`[["id","asc"]]`, []int64{1, 2, 3, 5}},
	}
	for _, s := range sorts {
		r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", `[{"project":{"operator":"!","values":["4"]}},{"status":{"operator":"*","values":[]}}]`, "sortBy", s.sortBy))
		if ids := elementIDs(r.body); !slices.Equal(ids, s.want) {
			t.Errorf("sortBy %s = %v, want %v", s.sortBy, ids, s.want)
		}
	}
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", `[{"project":{"operator":"=","values":["4"]}}]`, "sortBy", `[["updatedAt","asc"]]`, "pageSize", "3"))
	if ids := elementIDs(r.body); !slices.Equal(ids, []int64{59, 58, 57}) {
		t.Errorf("bulk by updatedAt = %v", ids)
	}
	r = srvGet(t, base, "/api/v3/projects"+srvQ("sortBy", `[["name","desc"]]`))
	if ids := elementIDs(r.body); !slices.Equal(ids, []int64{1, 4, 2}) {
		t.Errorf("projects by name desc = %v", ids)
	}
	r = srvGet(t, base, "/api/v3/projects"+srvQ("filters", `[{"active":{"operator":"=","values":["t"]}},{"id":{"operator":"=","values":["1","4"]}}]`))
	if ids := elementIDs(r.body); !slices.Equal(ids, []int64{1, 4}) {
		t.Errorf("projects filtered = %v", ids)
	}
}

func TestWorkPackageRepresentation(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/work_packages/1")
	checks := map[string]any{
		"_type":       "WorkPackage",
		"lockVersion": float64(3),
		"subject":     "Login page broken",
		"startDate":   "2024-01-02",
		"updatedAt":   "2024-01-05T00:00:00.000Z",
	}
	for k, v := range checks {
		if r.body[k] != v {
			t.Errorf("%s = %v, want %v", k, r.body[k], v)
		}
	}
	for p, want := range map[string]any{
		"description/raw":                   "The login button does nothing.",
		"_embedded/status/isClosed":         false,
		"_embedded/status/name":             "In Progress",
		"_embedded/type/name":               "Bug",
		"_embedded/priority/name":           "High",
		"_embedded/project/identifier":      "demo",
		"_embedded/author/name":             "Alice Doe",
		"_embedded/assignee/name":           "Alice Doe",
		"_links/project/href":               "/api/v3/projects/1",
		"_links/assignee/title":             "Alice Doe",
		"_links/version/title":              "1.0",
		"_links/children/0/href":            "/api/v3/work_packages/5",
		"_links/addComment/href":            "/api/v3/work_packages/1/activities",
		"_links/update/method":              "patch",
		"_links/category/href":              nil,
		"_embedded/author/_links/self/href": "/api/v3/users/2",
	} {
		keys := []any{}
		for _, k := range strings.Split(p, "/") {
			if k == "0" {
				keys = append(keys, 0)
			} else {
				keys = append(keys, k)
			}
		}
		if got := jget(r.body, keys...); got != want {
			t.Errorf("%s = %v, want %v", p, got, want)
		}
	}
	r = srvGet(t, base, "/api/v3/work_packages/5", srvCarolKey)
	if jget(r.body, "_links", "parent", "title") != "Login page broken" || jget(r.body, "_links", "ancestors", 0, "href") != "/api/v3/work_packages/1" {
		t.Errorf("parent links = %v", r.body["_links"])
	}
	if jget(r.body, "_links", "update") != nil || jget(r.body, "_links", "addComment") != nil {
		t.Errorf("non-member carol gets action links")
	}
	if jget(r.body, "_links", "assignee", "href") != nil {
		t.Errorf("unassigned work package assignee link = %v", jget(r.body, "_links", "assignee"))
	}

	// Every name the renderer produces is selectable.
	s := NewServer(srvDataset(), Options{})
	s.st.mu.RLock()
	admin := s.st.users[1]
	o := s.newRenderer(admin).workPackage(s.st.wps[1])
	s.st.mu.RUnlock()
	for _, name := range keyNames(o) {
		if !slices.Contains(wpElementNames, name) {
			t.Errorf("rendered key %q is missing from wpElementNames", name)
		}
	}
}

func TestActivities(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/work_packages/1/activities"+srvQ("pageSize", "1", "offset", "2"))
	if r.status != 200 || r.body["_type"] != "Collection" {
		t.Fatalf("activities: %d %s", r.status, r.raw)
	}
	for _, k := range []string{"pageSize", "offset"} {
		if _, ok := r.body[k]; ok {
			t.Errorf("unpaginated collection has %s", k)
		}
	}
	links := r.body["_links"].(map[string]any)
	if len(links) != 1 || jget(links, "self", "href") != "/api/v3/work_packages/1/activities" {
		t.Errorf("links = %v", links)
	}
	if ids := elementIDs(r.body); !slices.Equal(ids, []int64{1, 2, 3, 4}) || jnum(r.body["total"]) != 4 || jnum(r.body["count"]) != 4 {
		t.Errorf("alice (member) activities = %v", ids)
	}
	els := jget(r.body, "_embedded", "elements").([]any)
	if jget(els[0], "_type") != "Activity" || jget(els[1], "_type") != "Activity::Comment" || jget(els[2], "_type") != "Activity" {
		t.Errorf("types = %v %v %v", jget(els[0], "_type"), jget(els[1], "_type"), jget(els[2], "_type"))
	}
	if jget(els[1], "comment", "raw") != "I can reproduce this with Firefox." || jget(els[1], "_links", "user", "title") != "Bob Roe" {
		t.Errorf("comment = %v", els[1])
	}
	if jget(els[2], "details", 0, "raw") != "Status changed from New to In Progress" || jget(els[2], "details", 0, "format") != "custom" {
		t.Errorf("details = %v", jget(els[2], "details"))
	}
	if jget(els[1], "_links", "self", "href") != "/api/v3/activities/2" || jget(els[1], "_links", "workPackage", "title") != "Login page broken" {
		t.Errorf("links = %v", jget(els[1], "_links"))
	}
	// Internal comments are hidden from non-members.
	r = srvGet(t, base, "/api/v3/work_packages/1/activities", srvCarolKey)
	if ids := elementIDs(r.body); !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Errorf("carol activities = %v", ids)
	}
	wantError(t, srvGet(t, base, "/api/v3/activities/4", srvCarolKey), 404, "NotFound", msgNotFound)

	// Legacy servers render no internal flag and no embedded resources.
	_, legacyBase := srvStart(t, Options{Profile: ProfileLegacy})
	r = srvGet(t, legacyBase, "/api/v3/activities/2")
	if _, ok := r.body["internal"]; ok || r.body["_embedded"] != nil {
		t.Errorf("legacy activity = %s", r.raw)
	}
}

func TestWikiPages(t *testing.T) {
	_, base := srvStart(t, Options{})
	_, legacyBase := srvStart(t, Options{Profile: ProfileLegacy})
	r := srvGet(t, base, "/api/v3/wiki_pages/1")
	if jget(r.body, "text", "raw") != "Welcome to the *wiki*." || jget(r.body, "text", "format") != "markdown" || r.body["updatedAt"] != "2024-01-09T00:00:00.000Z" || r.body["slug"] != "getting-started" {
		t.Errorf("current wiki = %s", r.raw)
	}
	r = srvGet(t, legacyBase, "/api/v3/wiki_pages/1")
	keys := slices.Sorted(maps.Keys(r.body))
	if !slices.Equal(keys, []string{"_embedded", "_links", "_type", "id", "title"}) {
		t.Errorf("legacy wiki keys = %v", keys)
	}
	if jget(r.body, "_embedded", "project", "id") != float64(1) || jget(r.body, "_links", "project", "title") != "Demo" {
		t.Errorf("legacy wiki = %s", r.raw)
	}
	for _, b := range []string{base, legacyBase} {
		wantError(t, srvGet(t, b, "/api/v3/wiki_pages"), 404, "NotFound", msgNotFound)
		wantError(t, srvGet(t, b, "/api/v3/wiki_pages/99"), 404, "NotFound", msgNotFound)
		wantError(t, srvGet(t, b, "/api/v3/wiki_pages/abc"), 404, "NotFound", msgNotFound)
	}
	r = srvGet(t, base, "/api/v3/wiki_pages/1/attachments")
	if r.body["_type"] != "Collection" || jnum(r.body["total"]) != 1 || jget(r.body, "_embedded", "elements", 0, "fileName") != "guide.pdf" || r.body["pageSize"] != nil {
		t.Errorf("attachments = %s", r.raw)
	}
	r = srvGet(t, base, "/api/v3/attachments/1")
	if jget(r.body, "_links", "container", "href") != "/api/v3/wiki_pages/1" || jnum(r.body["fileSize"]) != 2048 {
		t.Errorf("attachment = %s", r.raw)
	}
}

func TestMeetings(t *testing.T) {
	_, base := srvStart(t, Options{})
	_, legacyBase := srvStart(t, Options{Profile: ProfileLegacy})

	r := srvGet(t, base, "/api/v3/meetings")
	if r.body["_type"] != "Collection" || !slices.Equal(elementIDs(r.body), []int64{1, 3}) || jnum(r.body["pageSize"]) != 20 {
		t.Errorf("meetings = %s", r.raw)
	}
	if got := jget(r.body, "_links", "self", "href"); got != "/api/v3/meetings?offset=1&pageSize=20" {
		t.Errorf("self = %v", got)
	}
	for _, tt := range []struct {
		filters string
		key     string
		want    []int64
	}{
		{`[{"time":{"operator":"=","values":["upcoming"]}}]`, AliceKey, []int64{1}},
		{`[{"time":{"operator":"=","values":["past"]}}]`, BobKey, []int64{2, 3}},
		{`[{"project":{"operator":"=","values":["3"]}}]`, BobKey, []int64{2}},
		{`[{"title":{"operator":"~","values":["retro"]}}]`, AliceKey, []int64{3}},
		{`[{"invitedUserId":{"operator":"=","values":["3"]}}]`, AliceKey, []int64{1}},
		{`[{"invited_user_id":{"operator":"=","values":["1","3"]}},{"time":{"operator":"=","values":["past"]}}]`, AdminKey, []int64{}},
		{`[{"invitedUserId":{"operator":"=","values":["1"]}}]`, AdminKey, []int64{}},
	} {
		r := srvGet(t, base, "/api/v3/meetings"+srvQ("filters", tt.filters), tt.key)
		if ids := elementIDs(r.body); !slices.Equal(ids, tt.want) {
			t.Errorf("%s as %s = %v, want %v", tt.filters, tt.key, ids, tt.want)
		}
	}
	for _, bad := range []string{
		`[{"invitedUserId":{"operator":"=","values":["me"]}}]`,
		`[{"invitedUserId":{"operator":"!","values":["2"]}}]`,
		`[{"invitedUserId":{"operator":"=","values":[]}}]`,
	} {
		wantError(t, srvGet(t, base, "/api/v3/meetings"+srvQ("filters", bad)), 400, "InvalidQuery", "")
	}
	r = srvGet(t, base, "/api/v3/meetings"+srvQ("sortBy", `[["startTime","desc"]]`), AdminKey)
	if ids := elementIDs(r.body); !slices.Equal(ids, []int64{1, 3, 2}) {
		t.Errorf("by start desc = %v", ids)
	}

	r = srvGet(t, base, "/api/v3/meetings/1")
	if r.body["duration"] != 1.5 || r.body["lockVersion"] != float64(1) || jget(r.body, "_links", "participants", 1, "title") != "Bob Roe" {
		t.Errorf("meeting = %s", r.raw)
	}
	r = srvGet(t, legacyBase, "/api/v3/meetings/1")
	if r.status != 200 || r.body["duration"] != float64(90) {
		t.Errorf("legacy meeting = %s", r.raw)
	}
	wantError(t, srvGet(t, legacyBase, "/api/v3/meetings"), 404, "NotFound", msgNotFound)
	wantError(t, srvGet(t, legacyBase, "/api/v3/meetings/1/agenda_items"), 404, "NotFound", msgNotFound)

	r = srvGet(t, base, "/api/v3/meetings/1/agenda_items"+srvQ("pageSize", "1"))
	if r.body["_type"] != "Collection" || r.body["pageSize"] != nil || !slices.Equal(elementIDs(r.body), []int64{1, 2}) {
		t.Fatalf("agenda = %s", r.raw)
	}
	it := jget(r.body, "_embedded", "elements", 0)
	for p, want := range map[string]any{
		"_type":                          "MeetingAgendaItem",
		"title":                          "Review login bug",
		"durationInMinutes":              float64(15),
		"itemType":                       "work_package",
		"position":                       float64(1),
		"notes/raw":                      "Check the *form*.",
		"_links/meeting/href":            "/api/v3/meetings/1",
		"_links/workPackage/title":       "Login page broken",
		"_links/presenter/title":         "Bob Roe",
		"_links/section/title":           "Bugs",
		"_embedded/outcomes/0/_type":     "MeetingOutcome",
		"_embedded/outcomes/0/kind":      "decision",
		"_embedded/outcomes/0/notes/raw": "Fixed in 1.0.1",
	} {
		keys := []any{}
		for _, k := range strings.Split(p, "/") {
			if k == "0" {
				keys = append(keys, 0)
			} else {
				keys = append(keys, k)
			}
		}
		if got := jget(it, keys...); got != want {
			t.Errorf("agenda item %s = %v, want %v", p, got, want)
		}
	}
	if outs, _ := jget(it, "_links", "outcomes").([]any); len(outs) != 1 {
		t.Errorf("outcome links = %v", jget(it, "_links", "outcomes"))
	}
	it2 := jget(r.body, "_embedded", "elements", 1)
	if jget(it2, "durationInMinutes") != nil || jget(it2, "_links", "presenter", "href") != nil {
		t.Errorf("second item = %v", it2)
	}
	for _, p := range []string{"/api/v3/meeting_agenda_items/1", "/api/v3/meetings/1/agenda_items/1"} {
		if r := srvGet(t, base, p); r.status != 200 || r.body["id"] != float64(1) {
			t.Errorf("%s = %d %s", p, r.status, r.raw)
		}
	}
	wantError(t, srvGet(t, base, "/api/v3/meetings/3/agenda_items/1"), 404, "NotFound", msgNotFound)
}

func TestQueriesAndLists(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/queries")
	if r.body["_type"] != "Collection" || !slices.Equal(elementIDs(r.body), []int64{1, 3}) {
		t.Errorf("queries = %s", r.raw)
	}
	r = srvGet(t, base, "/api/v3/queries/1")
	if r.body["name"] != "All open" || r.body["starred"] != true || jget(r.body, "_links", "project", "href") != "/api/v3/projects/1" {
		t.Errorf("query = %s", r.raw)
	}
	for _, p := range []string{"/api/v3/statuses", "/api/v3/types", "/api/v3/priorities", "/api/v3/projects/1/types"} {
		r := srvGet(t, base, p+srvQ("pageSize", "1"))
		if r.body["_type"] != "Collection" || r.body["pageSize"] != nil || jnum(r.body["count"]) < 2 || jnum(r.body["count"]) != jnum(r.body["total"]) {
			t.Errorf("%s = %s", p, r.raw)
		}
	}
	r = srvGet(t, base, "/api/v3/statuses/5")
	if r.body["isClosed"] != true || r.body["name"] != "Closed" {
		t.Errorf("status = %s", r.raw)
	}
	wantError(t, srvGet(t, base, "/api/v3/statuses/99"), 404, "NotFound", msgNotFound)
	r = srvDo(t, http.MethodPut, base+"/api/v3/statuses", AliceKey, map[string]any{})
	if r.status != http.StatusMethodNotAllowed {
		t.Errorf("PUT statuses = %d", r.status)
	}
}

func TestWrites(t *testing.T) {
	s, base := srvStart(t, Options{})
	wp1 := base + "/api/v3/work_packages/1"

	t.Run("content type", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPatch, wp1, strings.NewReader(`{"lockVersion":3}`))
		req.SetBasicAuth("apikey", AliceKey)
		r := srvSend(t, req)
		if r.status != http.StatusNotAcceptable || string(r.raw) != "Missing content-type header" || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
			t.Errorf("no content type: %d %q %q", r.status, r.raw, r.header.Get("Content-Type"))
		}
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodPatch, wp1, strings.NewReader(`lockVersion=3`))
		req.SetBasicAuth("apikey", AliceKey)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		wantError(t, srvSend(t, req), http.StatusUnsupportedMediaType, "TypeNotSupported", "")
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodPatch, wp1, strings.NewReader(`{`))
		req.SetBasicAuth("apikey", AliceKey)
		req.Header.Set("Content-Type", "application/hal+json")
		wantError(t, srvSend(t, req), http.StatusBadRequest, "InvalidRequestBody", "")
	})

	t.Run("conflict", func(t *testing.T) {
		wantError(t, srvDo(t, http.MethodPatch, wp1, AliceKey, map[string]any{"subject": "x"}), 409, "UpdateConflict", msgConflict)
		wantError(t, srvDo(t, http.MethodPatch, wp1, AliceKey, map[string]any{"subject": "x", "lockVersion": 2}), 409, "UpdateConflict", msgConflict)
	})

	t.Run("blank subject", func(t *testing.T) {
		r := srvDo(t, http.MethodPatch, wp1, AliceKey, map[string]any{"subject": "  ", "lockVersion": 3})
		wantError(t, r, 422, "PropertyConstraintViolation", "The subject might not be blank.")
		if jget(r.body, "_embedded", "details", "attribute") != "Subject" {
			t.Errorf("details = %v", r.body["_embedded"])
		}
		r = srvDo(t, http.MethodPatch, wp1, AliceKey, map[string]any{"lockVersion": 3, "_links": map[string]any{"status": map[string]any{"href": "/api/v3/statuses/77"}}})
		wantError(t, r, 422, "PropertyConstraintViolation", "")
	})

	t.Run("not allowed", func(t *testing.T) {
		wantError(t, srvDo(t, http.MethodPatch, wp1, srvCarolKey, map[string]any{"subject": "x", "lockVersion": 3}), 403, "MissingPermission", msgForbidden)
		wantError(t, srvDo(t, http.MethodPatch, base+"/api/v3/work_packages/4", AliceKey, map[string]any{"subject": "x", "lockVersion": 0}), 404, "NotFound", msgWPNotFound)
	})

	t.Run("update", func(t *testing.T) {
		s.SetClock(func() time.Time { return srvClock.Add(time.Hour) })
		defer s.SetClock(func() time.Time { return srvClock })
		r := srvDo(t, http.MethodPatch, wp1, AliceKey, map[string]any{
			"lockVersion": 3,
			"subject":     "Login page fixed",
			"description": map[string]any{"raw": "Now it works."},
			"_links": map[string]any{
				"status":   map[string]any{"href": "/api/v3/statuses/5"},
				"assignee": map[string]any{"href": nil},
				"priority": map[string]any{"href": "/api/v3/priorities/1"},
			},
		})
		if r.status != 200 {
			t.Fatalf("patch = %d %s", r.status, r.raw)
		}
		if r.body["lockVersion"] != float64(4) || r.body["subject"] != "Login page fixed" || r.body["updatedAt"] != "2025-01-15T13:00:00.000Z" ||
			jget(r.body, "_embedded", "status", "isClosed") != true || jget(r.body, "_links", "assignee", "href") != nil ||
			jget(r.body, "description", "raw") != "Now it works." {
			t.Errorf("patched = %s", r.raw)
		}
		r = srvGet(t, base, "/api/v3/work_packages/1/activities")
		last := jget(r.body, "_embedded", "elements", 4)
		if jget(last, "version") != float64(5) || jget(last, "_type") != "Activity" || len(jget(last, "details").([]any)) < 3 {
			t.Errorf("journal = %v", last)
		}
		// A no-op update changes nothing.
		r = srvDo(t, http.MethodPatch, wp1, AliceKey, map[string]any{"lockVersion": 4, "subject": "Login page fixed"})
		if r.body["lockVersion"] != float64(4) {
			t.Errorf("no-op update bumped lockVersion: %v", r.body["lockVersion"])
		}
		// Closed now: hidden by the default filter.
		r = srvGet(t, base, "/api/v3/projects/1/work_packages")
		if !slices.Equal(elementIDs(r.body), []int64{5}) {
			t.Errorf("open after close = %v", elementIDs(r.body))
		}
	})

	t.Run("comment moves updatedAt not lockVersion", func(t *testing.T) {
		s.SetClock(func() time.Time { return srvClock.Add(2 * time.Hour) })
		defer s.SetClock(func() time.Time { return srvClock })
		before := srvGet(t, base, "/api/v3/work_packages/5")
		r := srvDo(t, http.MethodPost, base+"/api/v3/work_packages/5/activities", AliceKey, map[string]any{"comment": map[string]any{"raw": "Looking into quokkas."}})
		if r.status != 201 || r.body["_type"] != "Activity::Comment" || jget(r.body, "comment", "raw") != "Looking into quokkas." || r.body["version"] != float64(1) {
			t.Fatalf("comment = %d %s", r.status, r.raw)
		}
		after := srvGet(t, base, "/api/v3/work_packages/5")
		if after.body["lockVersion"] != before.body["lockVersion"] {
			t.Errorf("lockVersion %v -> %v", before.body["lockVersion"], after.body["lockVersion"])
		}
		if after.body["updatedAt"] != "2025-01-15T14:00:00.000Z" {
			t.Errorf("updatedAt = %v", after.body["updatedAt"])
		}
		r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", filtersParam(openproject.FullText("quokkas"))))
		if !slices.Equal(elementIDs(r.body), []int64{5}) {
			t.Errorf("search new comment = %v", elementIDs(r.body))
		}
		r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", filtersParam(openproject.UpdatedBetween(srvClock.Add(90*time.Minute), time.Time{}))))
		if !slices.Equal(elementIDs(r.body), []int64{5}) {
			t.Errorf("changed since = %v", elementIDs(r.body))
		}
		wantError(t, srvDo(t, http.MethodPost, base+"/api/v3/work_packages/5/activities", AliceKey, map[string]any{"comment": map[string]any{"raw": ""}}), 422, "PropertyConstraintViolation", "")
	})

	t.Run("create", func(t *testing.T) {
		r := srvDo(t, http.MethodPost, base+"/api/v3/work_packages", AliceKey, map[string]any{
			"subject": "Brand new",
			"_links":  map[string]any{"project": map[string]any{"href": "/api/v3/projects/1"}, "type": map[string]any{"href": "/api/v3/types/2"}},
		})
		if r.status != 201 || r.body["id"] != float64(60) || jget(r.body, "_embedded", "status", "name") != "New" || jget(r.body, "_embedded", "type", "name") != "Bug" || jget(r.body, "_embedded", "author", "id") != float64(2) {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		r = srvDo(t, http.MethodPost, base+"/api/v3/projects/bulk/work_packages", AliceKey, map[string]any{"subject": "In bulk"})
		if r.status != 201 || jget(r.body, "_links", "project", "href") != "/api/v3/projects/4" || r.body["id"] != float64(61) {
			t.Fatalf("create in project = %d %s", r.status, r.raw)
		}
		wantError(t, srvDo(t, http.MethodPost, base+"/api/v3/projects/1/work_packages", AliceKey, map[string]any{}), 422, "PropertyConstraintViolation", "The subject might not be blank.")
		wantError(t, srvDo(t, http.MethodPost, base+"/api/v3/work_packages", AliceKey, map[string]any{"subject": "x"}), 422, "PropertyConstraintViolation", "")
		wantError(t, srvDo(t, http.MethodPost, base+"/api/v3/projects/1/work_packages", srvCarolKey, map[string]any{"subject": "x"}), 403, "MissingPermission", "")
		wantError(t, srvDo(t, http.MethodPost, base+"/api/v3/projects/3/work_packages", AliceKey, map[string]any{"subject": "x"}), 404, "NotFound", msgProjectMissing)
	})

	t.Run("delete", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, wp1, nil)
		req.SetBasicAuth("apikey", AliceKey)
		r := srvSend(t, req)
		if r.status != http.StatusNoContent || len(r.raw) != 0 {
			t.Fatalf("delete = %d %s", r.status, r.raw)
		}
		wantError(t, srvGet(t, base, "/api/v3/work_packages/1"), 404, "NotFound", msgWPNotFound)
		// The child went with it, as on the real server; so did the journals.
		wantError(t, srvGet(t, base, "/api/v3/work_packages/5"), 404, "NotFound", msgWPNotFound)
		wantError(t, srvGet(t, base, "/api/v3/activities/2"), 404, "NotFound", msgNotFound)
		d := s.Dataset()
		for _, a := range d.Activities {
			if a.WorkPackageID == 1 || a.WorkPackageID == 5 {
				t.Errorf("activity %d of a deleted work package survived", a.ID)
			}
		}
	})
}

func TestGoMutations(t *testing.T) {
	s, base := srvStart(t, Options{})
	s.SetClock(func() time.Time { return srvClock.Add(time.Minute) })

	wp, err := s.CreateWorkPackage(openproject.WorkPackage{Subject: "Made in Go", Project: openproject.Ref{ID: 1}, Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1}, Priority: openproject.Ref{ID: 2}, Author: openproject.Ref{ID: 1}})
	if err != nil || wp.ID != 60 || !wp.UpdatedAt.Equal(srvClock.Add(time.Minute)) {
		t.Fatalf("create = %+v, %v", wp, err)
	}
	if _, err := s.CreateWorkPackage(openproject.WorkPackage{Subject: "bad", Project: openproject.Ref{ID: 99}}); !errors.Is(err, ErrInvalidEntity) {
		t.Errorf("create with bad project: %v", err)
	}
	if err := s.UpdateWorkPackage(60, func(w *openproject.WorkPackage) { w.Subject = "Renamed in Go"; w.LockVersion = 42 }); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateWorkPackage(999, func(*openproject.WorkPackage) {}); !errors.Is(err, ErrUnknownEntity) {
		t.Errorf("update unknown: %v", err)
	}
	r := srvGet(t, base, "/api/v3/work_packages/60")
	if r.body["subject"] != "Renamed in Go" || r.body["lockVersion"] != float64(1) {
		t.Errorf("after update = %v %v", r.body["subject"], r.body["lockVersion"])
	}
	s.SetClock(func() time.Time { return srvClock.Add(2 * time.Minute) })
	a, err := s.AddComment(60, 3, "From Go")
	if err != nil || a.Kind != "Activity::Comment" || a.Version != 3 {
		t.Fatalf("comment = %+v, %v", a, err)
	}
	r = srvGet(t, base, "/api/v3/work_packages/60")
	if r.body["lockVersion"] != float64(1) || r.body["updatedAt"] != "2025-01-15T12:02:00.000Z" {
		t.Errorf("after comment = %v %v", r.body["lockVersion"], r.body["updatedAt"])
	}
	if err := s.DeleteWorkPackage(60); err != nil {
		t.Fatal(err)
	}
	if r := srvGet(t, base, "/api/v3/work_packages/60"); r.status != 404 {
		t.Errorf("deleted work package answers %d", r.status)
	}

	w, err := s.AddWikiPage(openproject.WikiPage{Title: "New Page", Project: openproject.Ref{ID: 1}, Text: "hello"})
	if err != nil || w.ID != 3 {
		t.Fatalf("add wiki = %+v, %v", w, err)
	}
	if err := s.UpdateWikiPage(3, func(p *openproject.WikiPage) { p.Text = "changed" }); err != nil {
		t.Fatal(err)
	}
	r = srvGet(t, base, "/api/v3/wiki_pages/3")
	if jget(r.body, "text", "raw") != "changed" || r.body["lockVersion"] != float64(1) {
		t.Errorf("wiki = %s", r.raw)
	}
	if err := s.DeleteWikiPage(3); err != nil {
		t.Fatal(err)
	}
	if r := srvGet(t, base, "/api/v3/wiki_pages/3"); r.status != 404 {
		t.Errorf("deleted wiki page answers %d", r.status)
	}

	m, err := s.AddMeeting(openproject.Meeting{Title: "Go meeting", Project: openproject.Ref{ID: 1}, Author: openproject.Ref{ID: 2},
		AgendaItems: []openproject.AgendaItem{{Title: "first"}, {Title: "second", Position: 1}}})
	if err != nil || m.ID != 4 || m.AgendaItems[0].ID != 3 || m.AgendaItems[1].ID != 4 {
		t.Fatalf("add meeting = %+v, %v", m, err)
	}
	if err := s.UpdateMeeting(4, func(m *openproject.Meeting) {
		m.Title = "Go meeting v2"
		m.AgendaItems = append(m.AgendaItems, openproject.AgendaItem{Title: "third", Position: 5})
	}); err != nil {
		t.Fatal(err)
	}
	r = srvGet(t, base, "/api/v3/meetings/4/agenda_items")
	if !slices.Equal(elementIDs(r.body), []int64{3, 4, 5}) {
		t.Errorf("agenda = %v", elementIDs(r.body))
	}
	r = srvGet(t, base, "/api/v3/meetings/4")
	if r.body["title"] != "Go meeting v2" || r.body["lockVersion"] != float64(1) {
		t.Errorf("meeting = %s", r.raw)
	}
	if err := s.DeleteMeeting(4); err != nil {
		t.Fatal(err)
	}
	if r := srvGet(t, base, "/api/v3/meeting_agenda_items/3"); r.status != 404 {
		t.Errorf("agenda item of deleted meeting answers %d", r.status)
	}

	// The snapshot is a copy.
	d := s.Dataset()
	d.WorkPackages[0].Subject = "mutated copy"
	if r := srvGet(t, base, "/api/v3/work_packages/1"); r.body["subject"] != "Login page broken" {
		t.Errorf("snapshot aliasing: %v", r.body["subject"])
	}
	if err := d.Validate(); err != nil {
		t.Errorf("snapshot does not validate: %v", err)
	}
}

func TestFaults(t *testing.T) {
	s, base := srvStart(t, Options{})

	t.Run("fail next", func(t *testing.T) {
		s.SetFaults(Faults{FailNext: 2, FailStatus: 503, RetryAfter: 1500 * time.Millisecond})
		for i := range 2 {
			r := srvGet(t, base, "/api/v3/statuses")
			wantError(t, r, 503, "InternalServerError", msgInternal)
			if r.header.Get("Retry-After") != "2" {
				t.Errorf("request %d Retry-After = %q", i, r.header.Get("Retry-After"))
			}
		}
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 {
			t.Errorf("third request = %d", r.status)
		}
		if f := s.Faults(); f.FailNext != 0 {
			t.Errorf("FailNext left = %d", f.FailNext)
		}
	})

	t.Run("path prefix", func(t *testing.T) {
		s.SetFaults(Faults{FailNext: 1, FailStatus: 500, PathPrefix: "/api/v3/work_packages"})
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 {
			t.Errorf("other path = %d", r.status)
		}
		wantError(t, srvGet(t, base, "/api/v3/work_packages/1"), 500, "InternalServerError", "")
		if r := srvGet(t, base, "/api/v3/work_packages/1"); r.status != 200 {
			t.Errorf("after = %d", r.status)
		}
	})

	t.Run("rate limit next", func(t *testing.T) {
		s.SetFaults(Faults{RateLimitNext: 1, RetryAfter: 3 * time.Second})
		r := srvGet(t, base, "/api/v3/statuses")
		wantError(t, r, 429, "TooManyRequests", "")
		if r.header.Get("Retry-After") != "3" {
			t.Errorf("Retry-After = %q", r.header.Get("Retry-After"))
		}
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 {
			t.Errorf("after = %d", r.status)
		}
	})

	t.Run("rate limit every", func(t *testing.T) {
		s.SetFaults(Faults{RateLimitEvery: 3})
		var got []int
		for range 6 {
			got = append(got, srvGet(t, base, "/api/v3/statuses").status)
		}
		if !slices.Equal(got, []int{200, 200, 429, 200, 200, 429}) {
			t.Errorf("statuses = %v", got)
		}
	})

	t.Run("error rate is deterministic", func(t *testing.T) {
		run := func() []int {
			s.SetFaults(Faults{ErrorRate: 0.5, Seed: 7})
			var got []int
			for range 20 {
				got = append(got, srvGet(t, base, "/api/v3/statuses").status)
			}
			return got
		}
		a, b := run(), run()
		if !slices.Equal(a, b) {
			t.Errorf("runs differ: %v vs %v", a, b)
		}
		fails := 0
		for _, st := range a {
			if st >= 500 {
				fails++
			}
		}
		if fails == 0 || fails == 20 {
			t.Errorf("fails = %d of 20", fails)
		}
	})

	t.Run("hang until the client gives up", func(t *testing.T) {
		s.SetFaults(Faults{HangNext: 1})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v3/statuses", nil)
		req.SetBasicAuth("apikey", AliceKey)
		start := time.Now()
		_, err := http.DefaultClient.Do(req)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("hang did not end with the client")
		}
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 {
			t.Errorf("after = %d", r.status)
		}
	})

	t.Run("latency respects cancellation", func(t *testing.T) {
		s.SetFaults(Faults{Latency: time.Hour})
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v3/statuses", nil)
		req.SetBasicAuth("apikey", AliceKey)
		if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
		s.SetFaults(Faults{Latency: 20 * time.Millisecond})
		start := time.Now()
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 || time.Since(start) < 20*time.Millisecond {
			t.Errorf("latency: %d after %v", r.status, time.Since(start))
		}
	})

	t.Run("truncate", func(t *testing.T) {
		s.SetFaults(Faults{TruncateNext: 1})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v3/work_packages"+srvQ("filters", "[]"), nil)
		req.SetBasicAuth("apikey", AliceKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("truncated: status %d, err %v", res.StatusCode, err)
		}
		if json.Valid(body) {
			t.Errorf("truncated body is valid JSON")
		}
		if r := srvGet(t, base, "/api/v3/statuses"); r.status != 200 {
			t.Errorf("after = %d", r.status)
		}
	})

	t.Run("faults before auth", func(t *testing.T) {
		s.SetFaults(Faults{FailNext: 1})
		wantError(t, srvGet(t, base, "/api/v3/statuses", ""), 503, "InternalServerError", "")
	})
	s.SetFaults(Faults{})
}

func TestHangReleasedOnClose(t *testing.T) {
	s := NewServer(srvDataset(), Options{Faults: Faults{HangNext: 1}})
	done := make(chan int)
	go func() {
		rec := newRecorder()
		req, _ := http.NewRequest(http.MethodGet, "/api/v3/statuses", nil)
		s.ServeHTTP(rec, req)
		done <- rec.status
	}()
	time.Sleep(20 * time.Millisecond)
	s.Close()
	select {
	case st := <-done:
		if st != 503 {
			t.Errorf("status = %d", st)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hung request not released by Close")
	}
}

// recorder is a minimal ResponseWriter for calling ServeHTTP directly.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(status int) { r.status = status }

func TestRequestCounter(t *testing.T) {
	s, base := srvStart(t, Options{})
	srvGet(t, base, "/api/v3/statuses")
	srvGet(t, base, "/api/v3/statuses"+srvQ("x", "1"))
	srvGet(t, base, "/api/v3/work_packages/1")
	srvGet(t, base, "/api/v3/work_packages/1", "")
	s.SetFaults(Faults{FailNext: 1})
	srvGet(t, base, "/api/v3/work_packages/2")
	s.SetFaults(Faults{})
	srvDo(t, http.MethodPatch, base+"/api/v3/work_packages/1", AliceKey, map[string]any{})

	want := map[string]int{
		"GET /api/v3/statuses":          2,
		"GET /api/v3/work_packages/1":   2,
		"GET /api/v3/work_packages/2":   1,
		"PATCH /api/v3/work_packages/1": 1,
	}
	if got := s.Requests(); !jsonEqual(got, want) {
		t.Errorf("Requests = %v, want %v", got, want)
	}
	if n := s.TotalRequests(); n != 6 {
		t.Errorf("TotalRequests = %d", n)
	}
	if n := s.RequestCount("/api/v3/work_packages"); n != 4 {
		t.Errorf("RequestCount(path) = %d", n)
	}
	if n := s.RequestCount("GET /api/v3/work_packages"); n != 3 {
		t.Errorf("RequestCount(GET path) = %d", n)
	}
	s.ResetRequests()
	if s.TotalRequests() != 0 || len(s.Requests()) != 0 {
		t.Errorf("reset left %v", s.Requests())
	}
}

func TestGzipAndConcurrency(t *testing.T) {
	s, base := srvStart(t, Options{})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v3/work_packages"+srvQ("filters", "[]"), nil)
	req.SetBasicAuth("apikey", AliceKey)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("Content-Encoding = %q", res.Header.Get("Content-Encoding"))
	}
	// Transparent decompression by the default client.
	if r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]")); jnum(r.body["total"]) != srvAliceAll {
		t.Errorf("gzip body: %s", r.raw[:min(100, len(r.raw))])
	}

	// Readers and writers at once (run with -race).
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if i%2 == 0 {
					_ = s.UpdateWorkPackage(int64(11+2*j), func(w *openproject.WorkPackage) { w.Subject = fmt.Sprintf("c%d-%d", i, j) })
					_, _ = s.AddComment(1, 2, "concurrent")
				} else {
					req, _ := http.NewRequest(http.MethodGet, base+"/api/v3/work_packages?filters=%5B%5D", nil)
					req.SetBasicAuth("apikey", AliceKey)
					if res, err := http.DefaultClient.Do(req); err == nil {
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestLargeDataset(t *testing.T) {
	if testing.Short() {
		t.Skip("large data set")
	}
	d := srvDataset()
	for i := int64(100); i < 100_100; i++ {
		d.WorkPackages = append(d.WorkPackages, openproject.WorkPackage{
			ID: i, Subject: fmt.Sprintf("Generated %d", i), Project: openproject.Ref{ID: 4 - i%2*3},
			Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1 + i%2*4}, Priority: openproject.Ref{ID: 2},
			Author: openproject.Ref{ID: 2}, CreatedAt: srvClock.Add(-time.Duration(i) * time.Minute), UpdatedAt: srvClock.Add(-time.Duration(i) * time.Second),
		})
	}
	_, base := Start(t, d, Options{})
	start := time.Now()
	r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "pageSize", "1000", "offset", "50"), AdminKey)
	if r.status != 200 || jnum(r.body["count"]) != 1000 || jnum(r.body["total"]) != 100_055 {
		t.Fatalf("page: %d count %v total %v", r.status, r.body["count"], r.body["total"])
	}
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", filtersParam(openproject.StatusAll(), openproject.UpdatedBetween(srvClock.Add(-time.Hour), time.Time{})), "select", "total,elements/id,elements/updatedAt,elements/lockVersion", "pageSize", "1000"), AdminKey)
	if r.status != 200 || jnum(r.body["total"]) < 3500 {
		t.Fatalf("incremental: %d total %v", r.status, r.body["total"])
	}
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", filtersParam(openproject.FullText("generated 4242")), "sortBy", `[["updatedAt","desc"]]`), AdminKey)
	if r.status != 200 || jnum(r.body["total"]) < 1 {
		t.Fatalf("search: %d total %v", r.status, r.body["total"])
	}
	t.Logf("three large list requests took %v", time.Since(start))
}
