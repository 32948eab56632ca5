package openproject

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goInternals are fragments of encoding/json and reflect errors that name
// Go types. An error a caller can see must describe the input, not them.
var goInternals = []string{"Go value", "Go struct", "struct field", "reflect", "map[", "RawMessage", "interface {}"}

func leaksGoTypes(msg string) string {
	for _, s := range goInternals {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

// addExamples seeds f with every API spec example payload, and with each
// element of the collections, so the fuzzer starts from real HAL.
func addExamples(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "examples", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no examples in testdata/examples: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		var coll halCollection
		if json.Unmarshal(b, &coll) == nil {
			for _, el := range coll.Embedded.Elements {
				f.Add([]byte(el))
			}
		}
	}
}

// stableJSON checks that m survives the store's encoding: it marshals, and
// decoding and re-encoding gives the same bytes. A model that does not
// marshal (a non-finite number, a year outside 0..9999) would fail the
// whole sync page it is in.
func stableJSON[M any](t *testing.T, what string, m M) {
	t.Helper()
	b1, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("%s: the decoded model does not encode: %v\n%+v", what, err, m)
	}
	var back M
	if err := json.Unmarshal(b1, &back); err != nil {
		t.Fatalf("%s: the encoded model does not decode: %v\n%s", what, err, b1)
	}
	b2, err := json.Marshal(back)
	if err != nil || !bytes.Equal(b1, b2) {
		t.Fatalf("%s: encode/decode is not stable (%v):\n%s\n%s", what, err, b1, b2)
	}
}

// checkRef: a link's id is what its href says, and a link without href
// has neither id nor title.
func checkRef(t *testing.T, what string, r Ref) {
	t.Helper()
	if r.IsZero() {
		if r != (Ref{}) {
			t.Fatalf("%s: link without href carries %+v", what, r)
		}
		return
	}
	if r.ID != idFromHref(r.Href) {
		t.Fatalf("%s: id %d, but href %q says %d", what, r.ID, r.Href, idFromHref(r.Href))
	}
}

func checkOptRef(t *testing.T, what string, r *Ref) {
	t.Helper()
	if r != nil {
		if r.IsZero() {
			t.Fatalf("%s: an absent link decoded as %+v instead of nil", what, *r)
		}
		checkRef(t, what, *r)
	}
}

func checkTimes(t *testing.T, what string, ts ...time.Time) {
	t.Helper()
	for _, tm := range ts {
		if !tm.IsZero() && tm.Location() != time.UTC {
			t.Fatalf("%s: time %v is not UTC", what, tm)
		}
	}
}

// halDecoders decode one HAL object as each entity the client reads, the
// way the client does (wire type, then model), and check the model.
var halDecoders = []struct {
	name   string
	decode func(t *testing.T, b []byte)
}{
	{"user", func(t *testing.T, b []byte) {
		var w wireUser
		if decodeBody(b, &w) == nil {
			u := w.model()
			checkTimes(t, "user", u.CreatedAt, u.UpdatedAt)
			stableJSON(t, "user", u)
		}
	}},
	{"project", func(t *testing.T, b []byte) {
		var w wireProject
		if decodeBody(b, &w) == nil {
			p := w.model()
			checkOptRef(t, "project parent", p.Parent)
			checkTimes(t, "project", p.CreatedAt, p.UpdatedAt)
			stableJSON(t, "project", p)
		}
	}},
	{"status", func(t *testing.T, b []byte) {
		var w wireStatus
		if decodeBody(b, &w) == nil {
			stableJSON(t, "status", Status{ID: int64(w.ID), Name: w.Name, IsClosed: w.IsClosed, IsDefault: w.IsDefault, Color: w.Color, Position: w.Position})
		}
	}},
	{"type", func(t *testing.T, b []byte) {
		var w wireType
		if decodeBody(b, &w) == nil {
			stableJSON(t, "type", Type{ID: int64(w.ID), Name: w.Name, Color: w.Color, Position: w.Position, IsDefault: w.IsDefault, IsMilestone: w.IsMilestone})
		}
	}},
	{"priority", func(t *testing.T, b []byte) {
		var w wirePriority
		if decodeBody(b, &w) == nil {
			stableJSON(t, "priority", Priority{ID: int64(w.ID), Name: w.Name, Position: w.Position, IsDefault: w.IsDefault})
		}
	}},
	{"work package", func(t *testing.T, b []byte) {
		var w wireWorkPackage
		if decodeBody(b, &w) == nil {
			wp, _ := w.model()
			for _, r := range []Ref{wp.Project, wp.Type, wp.Status, wp.Priority, wp.Author} {
				checkRef(t, "work package", r)
			}
			for _, r := range []*Ref{wp.Assignee, wp.Responsible, wp.Parent, wp.Version} {
				checkOptRef(t, "work package", r)
			}
			checkTimes(t, "work package", wp.CreatedAt, wp.UpdatedAt)
			stableJSON(t, "work package", wp)
		}
	}},
	{"activity", func(t *testing.T, b []byte) {
		var w wireActivity
		if decodeBody(b, &w) == nil {
			a := w.model()
			checkRef(t, "activity user", a.User)
			if slices.Contains(a.Details, "") {
				t.Fatalf("activity keeps an empty detail: %q", a.Details)
			}
			checkTimes(t, "activity", a.CreatedAt, a.UpdatedAt)
			stableJSON(t, "activity", a)
		}
	}},
	{"attachment", func(t *testing.T, b []byte) {
		var w wireAttachment
		if decodeBody(b, &w) == nil {
			a := w.model()
			checkRef(t, "attachment container", a.Container)
			checkTimes(t, "attachment", a.CreatedAt)
			stableJSON(t, "attachment", a)
		}
	}},
	{"wiki page", func(t *testing.T, b []byte) {
		var w wireWikiPage
		if decodeBody(b, &w) == nil {
			p := w.model()
			if p.Text != "" && !p.HasText {
				t.Fatalf("wiki page has text %q but HasText is false", p.Text)
			}
			checkTimes(t, "wiki page", p.CreatedAt, p.UpdatedAt)
			stableJSON(t, "wiki page", p)
		}
	}},
	{"meeting", func(t *testing.T, b []byte) {
		var w wireMeeting
		if decodeBody(b, &w) == nil {
			m := w.model()
			checkRef(t, "meeting project", m.Project)
			checkTimes(t, "meeting", m.StartTime, m.EndTime, m.CreatedAt, m.UpdatedAt)
			stableJSON(t, "meeting", m)
		}
	}},
	{"agenda item", func(t *testing.T, b []byte) {
		var w wireAgendaItem
		if decodeBody(b, &w) == nil {
			it := w.model()
			for _, r := range []*Ref{it.WorkPackage, it.Author, it.Presenter, it.Section} {
				checkOptRef(t, "agenda item", r)
			}
			checkTimes(t, "agenda item", it.CreatedAt, it.UpdatedAt)
			stableJSON(t, "agenda item", it)
		}
	}},
	{"query", func(t *testing.T, b []byte) {
		var w wireQuery
		if decodeBody(b, &w) == nil {
			q := w.model()
			checkOptRef(t, "query project", q.Project)
			stableJSON(t, "query", q)
		}
	}},
	{"root", func(t *testing.T, b []byte) {
		var w wireRoot
		if decodeBody(b, &w) == nil {
			stableJSON(t, "root", Root{InstanceName: w.InstanceName, CoreVersion: w.CoreVersion, UserID: w.Links.ref("user").ID})
		}
	}},
	{"grouped counts", func(t *testing.T, b []byte) {
		var w wireGroupedCollection
		if decodeBody(b, &w) == nil {
			c, ok := w.projectCounts()
			if ok != (w.Groups != nil) {
				t.Fatalf("grouped counts: ok %v with groups %v", ok, w.Groups)
			}
			if c.Total < 0 {
				t.Fatalf("grouped counts: negative total %d", c.Total)
			}
			for pid, n := range c.ByProject {
				if pid < 0 || n < 0 {
					t.Fatalf("grouped counts: project %d has %d", pid, n)
				}
			}
			stableJSON(t, "grouped counts", c)
		}
	}},
	{"id element", func(t *testing.T, b []byte) {
		var w wireID
		if decodeBody(b, &w) == nil {
			stableJSON(t, "id element", int64(w.ID))
		}
	}},
	{"error", func(t *testing.T, b []byte) {
		var w halError
		_ = decodeBody(b, &w) // decoding an error body must not panic, whatever it holds
	}},
	{"collection", func(t *testing.T, b []byte) {
		var c halCollection
		if decodeBody(b, &c) == nil {
			for _, el := range c.Embedded.Elements {
				if !json.Valid(el) {
					t.Fatalf("collection element is not JSON: %q", el)
				}
			}
		}
	}},
}

// FuzzHAL decodes arbitrary bytes as every HAL entity the client reads
// (users, projects, statuses, types, priorities, work packages,
// activities, attachments, wiki pages, meetings, agenda items, queries,
// the root, grouped counts, id-only elements, error bodies and
// collections). It checks that decoding never
// panics; that every decoded model survives the store's JSON encoding and
// re-encodes to the same bytes; that each link's id is the one its href
// names and an absent link is nil; and that times are UTC.
func FuzzHAL(f *testing.F) {
	addExamples(f)
	f.Add([]byte(`{"id":"7","percentageDone":"40","duration":"1.5","startTime":"2024-05-01","_links":{"assignee":{"href":null},"participants":[{"href":"/api/v3/users/3","title":"A"}]}}`))
	f.Add([]byte(`{"description":"plain","text":{"raw":"x"},"fileSize":"12","_embedded":{"status":{"isClosed":true}}}`))
	f.Add([]byte(`{"_type":"WorkPackageCollection","total":3,"count":0,"groups":[{"_links":{"valueLink":[{"href":"/api/v3/projects/1"}],"groupBy":{"href":"/api/v3/queries/group_bys/project","title":"Project"}},"value":"Demo","count":2},{"_links":{"valueLink":[{"href":null}]},"value":null,"count":"1"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range halDecoders {
			d.decode(t, b)
		}
	})
}

// FuzzParseFilters checks the filter syntax parser: a rejected input gives
// a *FilterSyntaxError (never a panic) whose text names no Go types, and
// an accepted one renders with String and parses back to the same
// filters.
func FuzzParseFilters(f *testing.F) {
	for _, s := range []string{
		`[{"status":{"operator":"o","values":[]}}]`,
		`[{"status_id":{"operator":"=","values":["1","2"]}},{"assignee":{"operator":"!*","values":null}}]`,
		`[{"updatedAt":{"operator":"<>d","values":["2024-01-01T00:00:00.000Z",""]}}]`,
		`[{"id":{"operator":"=","values":[12,3.5]}}]`,
		`[{"search":{"operator":"**","values":["ümlaut <>"]}}]`,
		`[]`, `[1]`, `{}`, `[{"a":1}]`, `[{"a":{"operator":""}}]`, `[{}]`, `[{"a":{"operator":"=","values":[true]}}]`,
		Filters{UpdatedBetween(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), time.Time{}), IDs(1, 2), FullText("a\"b")}.String(),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParseFilters(s)
		if err != nil {
			var fse *FilterSyntaxError
			if !errors.As(err, &fse) {
				t.Fatalf("ParseFilters(%q) error %T %v is not a *FilterSyntaxError", s, err, err)
			}
			if leak := leaksGoTypes(err.Error()); leak != "" {
				t.Fatalf("ParseFilters(%q) error %q names Go internals (%q)", s, err, leak)
			}
			return
		}
		again, err := ParseFilters(fs.String())
		if err != nil {
			t.Fatalf("ParseFilters(%q) = %v renders as %s, which does not parse: %v", s, fs, fs, err)
		}
		if !slices.EqualFunc(fs, again, func(a, b Filter) bool {
			return a.Name == b.Name && a.Operator == b.Operator && slices.Equal(a.Values, b.Values)
		}) {
			t.Fatalf("round trip of %q: %v became %v", s, fs, again)
		}
	})
}

// FuzzParseSortBy checks the sortBy parser: a rejected input gives a
// *FilterSyntaxError naming no Go types, and an accepted one, rendered by
// ListOptions.Values, parses back to the same criteria with directions
// asc or desc only.
func FuzzParseSortBy(f *testing.F) {
	for _, s := range []string{`[["id","asc"]]`, `[["updatedAt","DESC"],["id"]]`, `["id:desc","subject"]`, `[[]]`, `[["id","up"]]`, `{}`, `[1]`, ` `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sorts, err := ParseSortBy(s)
		if err != nil {
			var fse *FilterSyntaxError
			if !errors.As(err, &fse) {
				t.Fatalf("ParseSortBy(%q) error %T is not a *FilterSyntaxError", s, err)
			}
			if leak := leaksGoTypes(err.Error()); leak != "" {
				t.Fatalf("ParseSortBy(%q) error %q names Go internals (%q)", s, err, leak)
			}
			return
		}
		for _, so := range sorts {
			if so.Field == "" || (so.Direction != "asc" && so.Direction != "desc") {
				t.Fatalf("ParseSortBy(%q) gave %+v", s, so)
			}
		}
		if len(sorts) == 0 {
			return
		}
		rendered := ListOptions{SortBy: sorts}.Values().Get("sortBy")
		again, err := ParseSortBy(rendered)
		if err != nil || !slices.Equal(sorts, again) {
			t.Fatalf("round trip of %q via %s: %v became %v (%v)", s, rendered, sorts, again, err)
		}
	})
}

// FuzzRetryAfter checks Retry-After parsing: the delay is never negative,
// delay-seconds give exactly that many seconds when they fit in a
// time.Duration, and an HTTP date gives the time until it, rounded.
func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"0", "5", " 120 ", "-3", "Wed, 01 May 2024 12:00:30 GMT", "Tue, 30 Apr 2024 12:00:00 GMT", "soon", "9223372037", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d := parseRetryAfter(v, now)
		if d < 0 {
			t.Fatalf("parseRetryAfter(%q) = %v, negative", v, d)
		}
		secs, err := strconv.Atoi(strings.TrimSpace(v))
		if err == nil && secs >= 0 && secs <= int(time.Duration(1<<63-1)/time.Second) && d != time.Duration(secs)*time.Second {
			t.Fatalf("parseRetryAfter(%q) = %v, want %ds", v, d, secs)
		}
		if err != nil {
			if at, perr := http.ParseTime(strings.TrimSpace(v)); perr == nil && at.After(now.Add(time.Second)) && at.Sub(now) < 1<<62 && d != at.Sub(now).Round(time.Second) {
				t.Fatalf("parseRetryAfter(%q) = %v, want %v", v, d, at.Sub(now).Round(time.Second))
			}
		}
	})
}

// FuzzIDFromHref checks href id parsing: a query string or fragment and
// trailing slashes never change the id, and an href built from a positive
// id gives that id back.
func FuzzIDFromHref(f *testing.F) {
	for _, s := range []string{"/api/v3/users/11", "/api/v3/work_packages/42/", "/api/v3/statuses/1?x=2", "urn:openproject-org:api:v3:undisclosed", "/api/v3/projects/demo", "", "/"} {
		f.Add(s, int64(7))
	}
	f.Fuzz(func(t *testing.T, href string, n int64) {
		id := idFromHref(href)
		if !strings.ContainsAny(href, "?#") {
			for _, suffix := range []string{"/", "?offset=2", "#x", "/?a=b#c"} {
				if got := idFromHref(href + suffix); got != id {
					t.Fatalf("idFromHref(%q) = %d, but %q gives %d", href, id, href+suffix, got)
				}
			}
		}
		if n > 0 {
			built := strings.TrimRight(href, "/") + "/" + strconv.FormatInt(n, 10)
			if strings.ContainsAny(href, "?#") {
				built = "/api/v3/x/" + strconv.FormatInt(n, 10)
			}
			if got := idFromHref(built); got != n {
				t.Fatalf("idFromHref(%q) = %d, want %d", built, got, n)
			}
		}
	})
}
