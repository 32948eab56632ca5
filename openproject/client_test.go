package openproject_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// sleeps records the waits the client asked for instead of sleeping, so
// retry tests assert backoff and Retry-After without taking wall time.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

type fixture struct {
	srv    *optest.Server
	url    string
	data   *optest.Dataset
	sleeps *sleeps
}

func newFixture(t *testing.T, opts optest.Options) *fixture {
	t.Helper()
	d := opgen.Generate(opgen.GenOptions{Seed: 7, WorkPackages: 180, Comments: 300, WikiPages: 20, Meetings: 8})
	srv, url := optesting.Start(t, d, opts)
	return &fixture{srv: srv, url: url, data: d, sleeps: &sleeps{}}
}

func (f *fixture) client(t *testing.T, key string, mod ...func(*openproject.Config)) *openproject.Client {
	t.Helper()
	cfg := openproject.Config{BaseURL: f.url, APIKey: key, Sleep: f.sleeps.sleep, RetryBase: 10 * time.Millisecond}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := openproject.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) projectID(t *testing.T, identifier string) int64 {
	t.Helper()
	for _, p := range f.data.Projects {
		if p.Identifier == identifier {
			return p.ID
		}
	}
	t.Fatalf("no project %q", identifier)
	return 0
}

func TestNew_Config(t *testing.T) {
	tests := []struct {
		name    string
		cfg     openproject.Config
		wantErr string
		base    string
	}{
		{"trailing slash", openproject.Config{BaseURL: "https://op.example.com/", APIKey: "k"}, "", "https://op.example.com"},
		{"sub path and api root", openproject.Config{BaseURL: "https://example.com/openproject/api/v3/", APIKey: "k"}, "", "https://example.com/openproject"},
		{"empty url", openproject.Config{APIKey: "k"}, "base URL is empty", ""},
		{"relative url", openproject.Config{BaseURL: "op.example.com", APIKey: "k"}, "absolute http(s) URL", ""},
		{"ftp", openproject.Config{BaseURL: "ftp://op.example.com", APIKey: "k"}, "absolute http(s) URL", ""},
		{"credentials in url", openproject.Config{BaseURL: "https://u:p@op.example.com", APIKey: "k"}, "must not contain credentials", ""},
		{"no key", openproject.Config{BaseURL: "https://op.example.com"}, "API key is empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := openproject.New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.BaseURL() != tt.base {
				t.Errorf("base = %q, want %q", c.BaseURL(), tt.base)
			}
		})
	}
}

func TestClient_Auth(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	t.Run("basic", func(t *testing.T) {
		me, err := f.client(t, optest.AliceKey).Me(ctx)
		if err != nil || me.Login != "alice" {
			t.Fatalf("me = %+v, %v", me, err)
		}
	})
	t.Run("bearer", func(t *testing.T) {
		me, err := f.client(t, optest.BobKey, func(c *openproject.Config) { c.Bearer = true }).Me(ctx)
		if err != nil || me.Login != "bob" {
			t.Fatalf("me = %+v, %v", me, err)
		}
	})
	t.Run("base url with trailing slash and api root", func(t *testing.T) {
		c := f.client(t, optest.AliceKey, func(c *openproject.Config) { c.BaseURL = f.url + "/api/v3/" })
		if _, err := c.Me(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("rejected key is typed, not retried, and never echoed", func(t *testing.T) {
		const secret = "s3cret-key-that-must-not-leak"
		f.srv.ResetRequests()
		_, err := f.client(t, secret).Me(ctx)
		if !errors.Is(err, openproject.ErrUnauthenticated) {
			t.Fatalf("err = %v", err)
		}
		var e *openproject.Error
		if !errors.As(err, &e) || e.Status != 401 || e.Identifier != "Unauthenticated" {
			t.Fatalf("err = %+v", e)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error leaks the key: %v", err)
		}
		if n := f.srv.TotalRequests(); n != 1 {
			t.Errorf("requests = %d, want 1 (no retry on 401)", n)
		}
	})
}

func TestClient_Visibility(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	bobPrivate := f.projectID(t, "bob-private")
	var bobWP int64
	for _, wp := range f.data.WorkPackages {
		if wp.Project.ID == bobPrivate {
			bobWP = wp.ID
			break
		}
	}
	if bobWP == 0 {
		t.Fatal("generator made no work package in bob-private")
	}
	alice := f.client(t, optest.AliceKey)
	if _, err := alice.WorkPackage(ctx, bobWP); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("alice reading bob's work package: err = %v, want not found (never 403)", err)
	}
	if _, err := alice.Project(ctx, "bob-private"); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("alice reading bob's project: err = %v, want not found", err)
	}
	bob := f.client(t, optest.BobKey)
	wp, err := bob.WorkPackage(ctx, bobWP)
	if err != nil || wp.Project.ID != bobPrivate {
		t.Errorf("bob reading his own work package: %+v, %v", wp, err)
	}
	var seen []int64
	err = openproject.EachPage(ctx, openproject.ListOptions{}, alice.ListProjects, func(p openproject.Page[openproject.Project]) error {
		for _, pr := range p.Items {
			seen = append(seen, pr.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(seen, bobPrivate) || !slices.Contains(seen, f.projectID(t, "alice-private")) {
		t.Errorf("alice's project list %v must hold alice-private and not bob-private", seen)
	}
}

func TestClient_Paging(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{MaxPageSize: 25})
	c := f.client(t, optest.AdminKey)

	// Ask for far more than the server allows: it caps at 25 silently, and
	// the iteration must follow the echoed size without skipping items.
	f.srv.ResetRequests()
	var ids []int64
	pages := 0
	opts := openproject.ListOptions{Filters: openproject.Filters{openproject.StatusAll()}, SortBy: []openproject.Sort{{Field: "id"}}, PageSize: 1000}
	err := openproject.EachPage(ctx, opts, c.ListWorkPackages, func(p openproject.Page[openproject.WorkPackage]) error {
		pages++
		if p.PageSize != 25 {
			t.Errorf("page %d: pageSize = %d, want the capped 25", p.Offset, p.PageSize)
		}
		for _, wp := range p.Items {
			ids = append(ids, wp.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(f.data.WorkPackages) {
		t.Fatalf("collected %d work packages, want all %d", len(ids), len(f.data.WorkPackages))
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Error("ids are not strictly increasing: items were repeated or reordered")
	}
	wantPages := (len(f.data.WorkPackages) + 24) / 25
	if pages != wantPages || f.srv.RequestCount("GET /api/v3/work_packages") != wantPages {
		t.Errorf("pages = %d, requests = %d, want %d each", pages, f.srv.RequestCount("GET /api/v3/work_packages"), wantPages)
	}

	t.Run("default filter hides closed work packages", func(t *testing.T) {
		closed := 0
		for _, wp := range f.data.WorkPackages {
			if wp.Closed {
				closed++
			}
		}
		if closed == 0 {
			t.Fatal("data set has no closed work packages")
		}
		def, err := c.ListWorkPackages(ctx, openproject.ListOptions{PageSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		all, err := c.ListWorkPackages(ctx, openproject.ListOptions{Filters: openproject.Filters{}, PageSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		if def.Total != len(f.data.WorkPackages)-closed || all.Total != len(f.data.WorkPackages) {
			t.Errorf("default total %d, filters=[] total %d; want %d open of %d", def.Total, all.Total, len(f.data.WorkPackages)-closed, len(f.data.WorkPackages))
		}
	})
	t.Run("closed flag comes from the status", func(t *testing.T) {
		page, err := c.ListWorkPackages(ctx, openproject.ListOptions{Filters: openproject.Filters{openproject.StatusClosed()}, PageSize: 5})
		if err != nil || len(page.Items) == 0 {
			t.Fatalf("%+v %v", page, err)
		}
		for _, wp := range page.Items {
			if !wp.Closed {
				t.Errorf("work package %d in a closed status has Closed=false", wp.ID)
			}
		}
	})
	t.Run("id-only listing with select", func(t *testing.T) {
		var n int
		opts := openproject.ListOptions{Filters: openproject.Filters{openproject.StatusAll()}, Select: []string{"total", "elements/id"}, PageSize: 1000}
		err := openproject.EachPage(ctx, opts, c.ListWorkPackages, func(p openproject.Page[openproject.WorkPackage]) error {
			for _, wp := range p.Items {
				if wp.ID == 0 || wp.Subject != "" {
					t.Errorf("select returned %+v, want ids only", wp)
				}
				n++
			}
			return nil
		})
		if err != nil || n != len(f.data.WorkPackages) {
			t.Errorf("listed %d ids, %v", n, err)
		}
	})
	t.Run("page past the end", func(t *testing.T) {
		p, err := c.ListWorkPackages(ctx, openproject.ListOptions{Filters: openproject.Filters{}, PageSize: 25, Offset: 999})
		if err != nil || len(p.Items) != 0 || p.Total != len(f.data.WorkPackages) || !p.Last() {
			t.Errorf("%+v %v", p, err)
		}
	})
}

func TestClient_Filters(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	c := f.client(t, optest.AdminKey)
	wps := f.data.WorkPackages
	mid := wps[len(wps)/2].UpdatedAt

	tests := []struct {
		name  string
		f     openproject.Filters
		check func(openproject.WorkPackage) bool
	}{
		{"updated since", openproject.Filters{openproject.StatusAll(), openproject.UpdatedBetween(mid, time.Time{})},
			func(wp openproject.WorkPackage) bool { return !wp.UpdatedAt.Before(mid) }},
		{"updated until", openproject.Filters{openproject.StatusAll(), openproject.UpdatedBetween(time.Time{}, mid)},
			func(wp openproject.WorkPackage) bool { return !wp.UpdatedAt.After(mid) }},
		{"ids", openproject.Filters{openproject.StatusAll(), openproject.IDs(wps[0].ID, wps[3].ID)},
			func(wp openproject.WorkPackage) bool { return wp.ID == wps[0].ID || wp.ID == wps[3].ID }},
		{"project", openproject.Filters{openproject.StatusAll(), openproject.InProjects(wps[0].Project.ID)},
			func(wp openproject.WorkPackage) bool { return wp.Project.ID == wps[0].Project.ID }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := 0
			for _, wp := range wps {
				if tt.check(wp) {
					want++
				}
			}
			got := 0
			err := openproject.EachPage(ctx, openproject.ListOptions{Filters: tt.f, PageSize: 1000}, c.ListWorkPackages, func(p openproject.Page[openproject.WorkPackage]) error {
				for _, wp := range p.Items {
					if !tt.check(wp) {
						t.Errorf("work package %d does not match the filter", wp.ID)
					}
					got++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != want || want == 0 {
				t.Errorf("got %d, want %d (non-zero)", got, want)
			}
		})
	}
	t.Run("invalid filter is a typed 400", func(t *testing.T) {
		_, err := c.ListWorkPackages(ctx, openproject.ListOptions{Filters: openproject.Filters{{Name: "bogus", Operator: "=", Values: []string{"1"}}}})
		var e *openproject.Error
		if !errors.Is(err, openproject.ErrInvalidQuery) || !errors.As(err, &e) || e.Identifier != "InvalidQuery" || !strings.Contains(e.Message, "Invalid filter") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestClient_Entities(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	c := f.client(t, optest.AdminKey)

	var withComments int64
	for _, a := range f.data.Activities {
		if a.IsComment() {
			withComments = a.WorkPackageID
			break
		}
	}
	acts, err := c.Activities(ctx, withComments)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, a := range f.data.Activities {
		if a.WorkPackageID == withComments {
			want++
		}
	}
	if len(acts) != want || !slices.ContainsFunc(acts, openproject.Activity.IsComment) {
		t.Errorf("activities = %d (want %d, with a comment)", len(acts), want)
	}

	wiki := f.data.WikiPages[len(f.data.WikiPages)-1]
	page, err := c.WikiPage(ctx, wiki.ID)
	if err != nil || page.Title != wiki.Title || !page.HasText || page.Text != wiki.Text {
		t.Errorf("wiki page = %+v, %v", page, err)
	}
	if _, err := c.WikiPage(ctx, 999999); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("missing wiki page: %v", err)
	}

	m := f.data.Meetings[0]
	got, err := c.Meeting(ctx, m.ID)
	if err != nil || got.Title != m.Title || len(got.Participants) != len(m.Participants) || got.Participants[0].Title == "" {
		t.Errorf("meeting = %+v, %v", got, err)
	}
	items, err := c.AgendaItems(ctx, m.ID)
	if err != nil || len(items) != len(m.AgendaItems) {
		t.Fatalf("agenda = %d items, %v (want %d)", len(items), err, len(m.AgendaItems))
	}
	outcomes := 0
	for i, it := range items {
		if it.MeetingID != m.ID || it.Title != m.AgendaItems[i].Title || it.Notes != m.AgendaItems[i].Notes {
			t.Errorf("agenda item %d = %+v", i, it)
		}
		outcomes += len(it.Outcomes)
	}
	wantOutcomes := 0
	for _, it := range m.AgendaItems {
		wantOutcomes += len(it.Outcomes)
	}
	if outcomes != wantOutcomes {
		t.Errorf("outcomes = %d, want %d", outcomes, wantOutcomes)
	}

	sts, err := c.Statuses(ctx)
	if err != nil || len(sts) != len(f.data.Statuses) {
		t.Errorf("statuses = %d, %v", len(sts), err)
	}
	types, err := c.Types(ctx, "")
	if err != nil || len(types) != len(f.data.Types) {
		t.Errorf("types = %d, %v", len(types), err)
	}
	prios, err := c.Priorities(ctx)
	if err != nil || len(prios) != len(f.data.Priorities) {
		t.Errorf("priorities = %d, %v", len(prios), err)
	}
}

func TestClient_Capabilities(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		profile  optest.Profile
		meetings bool
		text     bool
	}{
		{optest.ProfileCurrent, true, true},
		{optest.ProfileLegacy, false, false},
	} {
		t.Run(string(tt.profile), func(t *testing.T) {
			f := newFixture(t, optest.Options{Profile: tt.profile})
			c := f.client(t, optest.AliceKey)
			caps, err := c.Capabilities(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if caps.MeetingsList != tt.meetings || caps.WikiList || caps.WikiTextKnown {
				t.Errorf("caps = %+v", caps)
			}
			if !tt.meetings {
				if _, err := c.ListMeetings(ctx, openproject.ListOptions{}); !errors.Is(err, openproject.ErrUnsupported) {
					t.Errorf("legacy meetings list: err = %v, want ErrUnsupported", err)
				}
			}
			var wikiID int64
			alicePrivate := f.projectID(t, "alice-private")
			for _, w := range f.data.WikiPages {
				if w.Project.ID == alicePrivate {
					wikiID = w.ID
				}
			}
			if wikiID == 0 {
				wikiID = f.data.WikiPages[0].ID
			}
			if _, err := c.WikiPage(ctx, wikiID); err != nil {
				t.Fatal(err)
			}
			f.srv.ResetRequests()
			caps, err = c.Capabilities(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !caps.WikiTextKnown || caps.WikiText != tt.text {
				t.Errorf("after reading a page: caps = %+v", caps)
			}
			if n := f.srv.TotalRequests(); n != 0 {
				t.Errorf("cached capabilities cost %d requests", n)
			}
		})
	}
}

func TestClient_Writes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	c := f.client(t, optest.AliceKey)

	wp, err := c.CreateWorkPackage(ctx, openproject.NewWorkPackage{Project: "alice-private", Subject: "Evaluate zyxwvut tracing", Description: "first draft"})
	if err != nil {
		t.Fatal(err)
	}
	if wp.ID == 0 || wp.Subject != "Evaluate zyxwvut tracing" || wp.Description != "first draft" || wp.Project.ID != f.projectID(t, "alice-private") {
		t.Fatalf("created %+v", wp)
	}
	subject := "Evaluate zyxwvut tracing (revised)"
	upd, err := c.UpdateWorkPackage(ctx, wp.ID, openproject.WorkPackagePatch{LockVersion: wp.LockVersion, Subject: &subject})
	if err != nil || upd.Subject != subject || upd.LockVersion <= wp.LockVersion {
		t.Fatalf("updated %+v, %v", upd, err)
	}

	f.srv.ResetRequests()
	_, err = c.UpdateWorkPackage(ctx, wp.ID, openproject.WorkPackagePatch{LockVersion: wp.LockVersion, Subject: &subject})
	var e *openproject.Error
	if !errors.Is(err, openproject.ErrConflict) || !errors.As(err, &e) || e.Identifier != "UpdateConflict" {
		t.Fatalf("stale lockVersion: err = %v", err)
	}
	if n := f.srv.TotalRequests(); n != 1 {
		t.Errorf("conflict cost %d requests, want 1 (writes are not retried)", n)
	}

	empty := " "
	if _, err := c.UpdateWorkPackage(ctx, wp.ID, openproject.WorkPackagePatch{LockVersion: upd.LockVersion, Subject: &empty}); err == nil {
		t.Error("empty subject accepted")
	}

	// A version is set by id and removed by 0.
	vs, err := c.ListVersions(ctx, "alice-private", openproject.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(vs.Items, func(v openproject.Version) bool { return v.Status == "open" })
	if i < 0 {
		t.Fatalf("alice-private has no open version: %+v", vs.Items)
	}
	vid := vs.Items[i].ID
	upd, err = c.UpdateWorkPackage(ctx, wp.ID, openproject.WorkPackagePatch{LockVersion: upd.LockVersion, VersionID: &vid})
	if err != nil || upd.Version == nil || upd.Version.ID != vid || upd.Version.Title != vs.Items[i].Name {
		t.Fatalf("planned for version %d: %+v, %v", vid, upd.Version, err)
	}
	none := int64(0)
	upd, err = c.UpdateWorkPackage(ctx, wp.ID, openproject.WorkPackagePatch{LockVersion: upd.LockVersion, VersionID: &none})
	if err != nil || upd.Version != nil {
		t.Fatalf("version removed: %+v, %v", upd.Version, err)
	}

	act, err := c.AddComment(ctx, wp.ID, "The zyxwvut agent needs 2 GiB")
	if err != nil || act.Comment != "The zyxwvut agent needs 2 GiB" || act.WorkPackageID != wp.ID {
		t.Fatalf("comment %+v, %v", act, err)
	}
	after, err := c.WorkPackage(ctx, wp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.LockVersion != upd.LockVersion || after.UpdatedAt.Before(upd.UpdatedAt) {
		t.Errorf("after comment: lockVersion %d (want unchanged %d), updatedAt %v (want >= %v)", after.LockVersion, upd.LockVersion, after.UpdatedAt, upd.UpdatedAt)
	}

	_, err = f.client(t, optest.BobKey).AddComment(ctx, wp.ID, "bob was here")
	if !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("bob commenting on alice's private work package: err = %v, want not found", err)
	}
}

func TestClient_Retries(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		faults    optest.Faults
		maxRetry  time.Duration
		kind      error // nil: the call succeeds
		requests  int
		wantSleep []time.Duration // exact waits, when deterministic
	}{
		{name: "503 twice then success", faults: optest.Faults{FailNext: 2, FailStatus: 503}, requests: 3},
		{name: "502 then success", faults: optest.Faults{FailNext: 1, FailStatus: 502}, requests: 2},
		{name: "504 then success", faults: optest.Faults{FailNext: 1, FailStatus: 504}, requests: 2},
		{name: "503 on every attempt", faults: optest.Faults{FailNext: 10, FailStatus: 503}, kind: openproject.ErrServer, requests: 4},
		{name: "500 then success", faults: optest.Faults{FailNext: 1, FailStatus: 500}, requests: 2},
		{name: "500 on every attempt", faults: optest.Faults{FailNext: 10, FailStatus: 500}, kind: openproject.ErrServer, requests: 4},
		{name: "429 waits Retry-After", faults: optest.Faults{RateLimitNext: 1, RetryAfter: 7 * time.Second}, requests: 2, wantSleep: []time.Duration{7 * time.Second}},
		{name: "429 twice", faults: optest.Faults{RateLimitNext: 2, RetryAfter: 2 * time.Second}, requests: 3, wantSleep: []time.Duration{2 * time.Second, 2 * time.Second}},
		{name: "429 longer than we wait is returned", faults: optest.Faults{RateLimitNext: 1, RetryAfter: 90 * time.Second}, maxRetry: time.Minute, kind: openproject.ErrRateLimited, requests: 1},
		{name: "truncated body is retried", faults: optest.Faults{TruncateNext: 1}, requests: 2},
		{name: "truncated on every attempt", faults: optest.Faults{TruncateNext: 10}, kind: openproject.ErrMalformed, requests: 4},
		{name: "hang until timeout, then success", faults: optest.Faults{HangNext: 1}, requests: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, optest.Options{})
			c := f.client(t, optest.AdminKey, func(c *openproject.Config) {
				c.Timeout = 300 * time.Millisecond
				c.MaxRetryAfter = tt.maxRetry
			})
			f.srv.ResetRequests()
			f.srv.SetFaults(tt.faults)
			_, err := c.WorkPackage(ctx, f.data.WorkPackages[0].ID)
			switch {
			case tt.kind == nil && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tt.kind != nil && !errors.Is(err, tt.kind):
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			// The status list may be fetched once to fill Closed; count only
			// the work package requests.
			if n := f.srv.RequestCount("GET /api/v3/work_packages/"); n != tt.requests {
				t.Errorf("requests = %d, want %d", n, tt.requests)
			}
			got := f.sleeps.all()
			if len(got) != tt.requests-1 {
				t.Errorf("waits = %v, want %d", got, tt.requests-1)
			}
			if tt.wantSleep != nil && !slices.Equal(got, tt.wantSleep) {
				t.Errorf("waits = %v, want %v", got, tt.wantSleep)
			}
			if tt.kind == openproject.ErrRateLimited {
				var e *openproject.Error
				if !errors.As(err, &e) || e.RetryAfter != 90*time.Second {
					t.Errorf("RetryAfter = %+v", e)
				}
			}
		})
	}

	// A write that failed may have been applied; repeating a create or a
	// comment is worse than reporting the error, for 500 as for 503.
	for _, status := range []int{500, 503} {
		t.Run(fmt.Sprintf("writes are never retried on %d", status), func(t *testing.T) {
			f := newFixture(t, optest.Options{})
			c := f.client(t, optest.AliceKey)
			f.srv.SetFaults(optest.Faults{FailNext: 1, FailStatus: status})
			f.srv.ResetRequests()
			_, err := c.CreateWorkPackage(ctx, openproject.NewWorkPackage{Project: "alice-private", Subject: "x"})
			if !errors.Is(err, openproject.ErrServer) || f.srv.TotalRequests() != 1 {
				t.Errorf("err = %v after %d requests", err, f.srv.TotalRequests())
			}
		})
	}
	t.Run("cancelling the context stops a hanging request and its retries", func(t *testing.T) {
		f := newFixture(t, optest.Options{})
		c := f.client(t, optest.AdminKey)
		f.srv.SetFaults(optest.Faults{HangNext: 5})
		f.srv.ResetRequests()
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			for f.srv.TotalRequests() == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := c.Me(cctx)
		if !errors.Is(err, openproject.ErrNetwork) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want a network error caused by cancellation", err)
		}
		if n := f.srv.TotalRequests(); n != 1 {
			t.Errorf("requests = %d, want 1", n)
		}
	})
	t.Run("connection refused is a network error without the key", func(t *testing.T) {
		c, err := openproject.New(openproject.Config{BaseURL: "http://127.0.0.1:1", APIKey: "leaky-key", MaxAttempts: 2, Sleep: (&sleeps{}).sleep})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Me(ctx)
		if !errors.Is(err, openproject.ErrNetwork) || strings.Contains(err.Error(), "leaky-key") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestClient_UserAgentAndAccept(t *testing.T) {
	// The fake does not expose request headers, so a spy wraps it.
	var got http.Header
	f := newFixture(t, optest.Options{})
	ts := httptest.NewServer(&headerSpy{next: f.srv, seen: &got})
	t.Cleanup(ts.Close)
	c, err := openproject.New(openproject.Config{BaseURL: ts.URL, APIKey: optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Me(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ua := got.Get("User-Agent"); !strings.HasPrefix(ua, "opsearch/") {
		t.Errorf("User-Agent = %q", ua)
	}
	if acc := got.Get("Accept"); !strings.Contains(acc, "application/hal+json") {
		t.Errorf("Accept = %q", acc)
	}
}

type headerSpy struct {
	next http.Handler
	seen *http.Header
}

func (h *headerSpy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	*h.seen = r.Header.Clone()
	h.next.ServeHTTP(w, r)
}

// TestClient_AttemptObserver: every attempt of a call reaches the
// observer, retries included, with the Retry-After the server sent (and
// none where the server sent "0", although the client waits a little
// anyway).
func TestClient_AttemptObserver(t *testing.T) {
	tests := []struct {
		name   string
		faults optest.Faults
		want   []time.Duration // per attempt: -1 success, else the server's Retry-After
	}{
		{name: "success", want: []time.Duration{-1}},
		{name: "429 with Retry-After, then success", faults: optest.Faults{RateLimitNext: 1, RetryAfter: 7 * time.Second}, want: []time.Duration{7 * time.Second, -1}},
		{name: "429 with Retry-After 0", faults: optest.Faults{RateLimitNext: 1}, want: []time.Duration{0, -1}},
		{name: "503 twice", faults: optest.Faults{FailNext: 2, FailStatus: 503}, want: []time.Duration{0, 0, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, optest.Options{})
			c := f.client(t, optest.AdminKey)
			if _, err := c.WorkPackage(t.Context(), f.data.WorkPackages[0].ID); err != nil { // statuses cached
				t.Fatal(err)
			}
			f.srv.SetFaults(tt.faults)
			var got []time.Duration
			// An observer set before (a sync counting its requests)
			// sees every attempt too, after the inner one.
			var outer int
			ctx := openproject.WithAttemptObserver(t.Context(), func(openproject.Attempt) { outer++ })
			ctx = openproject.WithAttemptObserver(ctx, func(a openproject.Attempt) {
				if outer != len(got) {
					t.Errorf("the outer observer saw attempt %d before the inner one", outer)
				}
				if a.Err == nil {
					got = append(got, -1)
					return
				}
				if !errors.Is(a.Err, openproject.ErrRateLimited) && !errors.Is(a.Err, openproject.ErrServer) {
					t.Errorf("attempt error %v", a.Err)
				}
				got = append(got, a.RetryAfter)
			})
			if _, err := c.WorkPackage(ctx, f.data.WorkPackages[0].ID); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("attempts %v, want %v", got, tt.want)
			}
			if outer != len(tt.want) {
				t.Errorf("the outer observer saw %d attempts, want %d", outer, len(tt.want))
			}
		})
	}
}
