package opgen

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// genSmall keeps most tests fast; the default size is tested where the
// statistics need it.
var genSmall = GenOptions{Seed: 7, WorkPackages: 300, WikiPages: 30, Meetings: 10}

func genJSON(t testing.TB, d *optest.Dataset) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// genWords splits text into lower-case genWords of letters and digits.
func genWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func TestGenerateDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	for _, o := range []GenOptions{
		{Seed: 1, WorkPackages: 50},
		{Seed: 42, Projects: 40, Users: 5, WorkPackages: 5000, Comments: 100, WikiPages: 7, Meetings: 3},
		{Seed: -3, Start: time.Date(2030, 6, 1, 0, 0, 0, 0, time.FixedZone("CEST", 7200))},
	} {
		t.Run(strconv.FormatInt(o.Seed, 10), func(t *testing.T) {
			a, b := genJSON(t, Generate(o)), genJSON(t, Generate(o))
			if !bytes.Equal(a, b) {
				t.Fatal("same options gave different data sets")
			}
			o2 := o
			o2.Seed++
			if bytes.Equal(a, genJSON(t, Generate(o2))) {
				t.Fatal("different seeds gave the same data set")
			}
		})
	}
}

// TestGenerateParallel checks that the split of work across goroutines does
// not leak into the result.
func TestGenerateParallel(t *testing.T) {
	o := GenOptions{Seed: 5, WorkPackages: 9000, Comments: 2000, WikiPages: 1, Meetings: 1}
	prev := runtime.GOMAXPROCS(1)
	one := genJSON(t, Generate(o))
	runtime.GOMAXPROCS(4)
	four := genJSON(t, Generate(o))
	runtime.GOMAXPROCS(prev)
	if !bytes.Equal(one, four) {
		t.Fatal("result depends on GOMAXPROCS")
	}
}

// TestGenerateTimestamps walks the encoded data set: every timestamp and
// date lies in the generated year, and nothing is updated before it was
// created.
func TestGenerateTimestamps(t *testing.T) {
	for _, o := range []GenOptions{genSmall, {Seed: 2, Start: time.Date(2024, 2, 29, 23, 30, 0, 0, time.UTC), WorkPackages: 500}} {
		start := o.normalized().Start
		end := start.Add(genSpan)
		var tree any
		if err := json.Unmarshal(genJSON(t, Generate(o)), &tree); err != nil {
			t.Fatal(err)
		}
		n := 0
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case []any:
				for i, e := range v {
					walk(path+"["+strconv.Itoa(i)+"]", e)
				}
			case map[string]any:
				for k, e := range v {
					walk(path+"."+k, e)
				}
				c, _ := v["createdAt"].(string)
				u, _ := v["updatedAt"].(string)
				if c != "" && u != "" && u < c {
					t.Errorf("%s: updated %s before created %s", path, u, c)
				}
			case string:
				switch {
				case strings.HasSuffix(path, "At") || strings.HasSuffix(path, "Time"):
					ts, err := time.Parse(time.RFC3339, v)
					if err != nil || ts.Before(start) || ts.After(end) {
						t.Errorf("%s = %s: not in [%v, %v]", path, v, start, end)
					}
					n++
				case strings.HasSuffix(path, "Date"):
					if v < start.Format(time.DateOnly) || v > end.Format(time.DateOnly) {
						t.Errorf("%s = %s: not in the generated year", path, v)
					}
				}
			}
		}
		walk("", tree)
		if n < 1000 {
			t.Errorf("only %d timestamps checked", n)
		}
	}
}

func TestGenerateCounts(t *testing.T) {
	tests := []struct {
		name                                            string
		o                                               GenOptions
		users, projects, wps, comments, wikis, meetings int
	}{
		{"defaults", GenOptions{}, 23, 12, 2000, 6000, 60, 40},
		{"explicit", GenOptions{Projects: 5, Users: 2, WorkPackages: 10, Comments: 33, WikiPages: 3, Meetings: 2},
			5, 5, 10, 33, 3, 2},
		{"none", GenOptions{Projects: -1, Users: -1, WorkPackages: -1, WikiPages: -1, Meetings: -1}, 3, 3, 0, 0, 0, 0},
		{"no comments", GenOptions{WorkPackages: 20, Comments: -1, WikiPages: 1, Meetings: 1}, 23, 12, 20, 0, 1, 1},
		{"more projects than names", GenOptions{Projects: 100, WorkPackages: 150}, 23, 100, 150, 450, 60, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Generate(tt.o)
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			comments, changes := 0, 0
			for _, a := range d.Activities {
				switch a.Kind {
				case "Activity::Comment":
					comments++
				case "Activity":
					changes++
				}
			}
			got := []int{len(d.Users), len(d.Projects), len(d.WorkPackages), comments, len(d.WikiPages), len(d.Meetings)}
			want := []int{tt.users, tt.projects, tt.wps, tt.comments, tt.wikis, tt.meetings}
			if !slices.Equal(got, want) {
				t.Errorf("users, projects, work packages, comments, wiki pages, meetings = %v, want %v", got, want)
			}
			if changes != tt.wps {
				t.Errorf("%d change journals, want one per work package (%d)", changes, tt.wps)
			}
			if len(d.Statuses) != 6 || len(d.Types) != 6 || len(d.Priorities) != 4 {
				t.Errorf("%d statuses, %d types, %d priorities", len(d.Statuses), len(d.Types), len(d.Priorities))
			}
			idents := map[string]bool{}
			for _, p := range d.Projects {
				if idents[p.Identifier] {
					t.Errorf("duplicate project identifier %q", p.Identifier)
				}
				idents[p.Identifier] = true
				if p.Description == "" {
					t.Errorf("project %q has no description", p.Identifier)
				}
			}
		})
	}
}

func TestGenerateFixedUsersAndProjects(t *testing.T) {
	d := Generate(genSmall)
	fixed := []struct {
		id          int64
		login, name string
		key         string
		admin       bool
	}{
		{1, "admin", "OpenProject Admin", optest.AdminKey, true},
		{2, "alice", "Alice Andersson", optest.AliceKey, false},
		{3, "bob", "Bob Brennan", optest.BobKey, false},
	}
	for i, f := range fixed {
		u := d.Users[i]
		if u.ID != f.id || u.Login != f.login || u.Name != f.name || u.APIKey != f.key || u.Admin != f.admin {
			t.Errorf("user %d = %+v, want %+v", i, u, f)
		}
	}
	for _, u := range d.Users[3:] {
		if u.Admin || u.APIKey != "opsearch-user-"+strconv.FormatInt(u.ID, 10) {
			t.Errorf("user %d: admin %v, key %q", u.ID, u.Admin, u.APIKey)
		}
	}

	byIdent := map[string]optest.Project{}
	for _, p := range d.Projects {
		byIdent[p.Identifier] = p
	}
	for _, tt := range []struct {
		ident   string
		members []int64
	}{
		{aliceProjectIdentifier, []int64{AliceID}},
		{bobProjectIdentifier, []int64{BobID}},
	} {
		p, ok := byIdent[tt.ident]
		if !ok {
			t.Fatalf("no project %q", tt.ident)
		}
		if p.Public || !slices.Equal(p.Members, tt.members) {
			t.Errorf("%s: public %v, members %v; want private with %v", tt.ident, p.Public, p.Members, tt.members)
		}
	}
	if byIdent[aliceProjectIdentifier].Name != "Alice Private Research" || byIdent[bobProjectIdentifier].Name != "Bob Private Budget" {
		t.Error("private project names changed")
	}
	both, public := 0, 0
	for _, p := range d.Projects {
		if slices.Contains(p.Members, AliceID) && slices.Contains(p.Members, BobID) {
			both++
		}
		if p.Public {
			public++
		}
	}
	if shared := byIdent[sharedProjectIdentifier]; shared.Public || !slices.Contains(shared.Members, AliceID) || !slices.Contains(shared.Members, BobID) {
		t.Errorf("shared project: %+v", shared)
	}
	if both == 0 || public == 0 || public > len(d.Projects)/2 {
		t.Errorf("%d projects shared by alice and bob, %d of %d public", both, public, len(d.Projects))
	}
}

func TestGenerateNames(t *testing.T) {
	d := Generate(GenOptions{Seed: 3, Users: 200, WorkPackages: 10})
	ascii := regexp.MustCompile(`^[a-z0-9]+(\.[a-z0-9]+)*$`)
	accented, logins := 0, map[string]bool{}
	for _, u := range d.Users {
		if !ascii.MatchString(u.Login) {
			t.Errorf("login %q of %q is not folded to ASCII", u.Login, u.Name)
		}
		if logins[u.Login] {
			t.Errorf("duplicate login %q", u.Login)
		}
		logins[u.Login] = true
		if strings.ContainsFunc(u.Name, func(r rune) bool { return r > unicode.MaxASCII }) {
			accented++
		}
	}
	if accented < len(d.Users)/3 {
		t.Errorf("only %d of %d user names have diacritics", accented, len(d.Users))
	}
	// Even the smallest set has some.
	if u := Generate(GenOptions{Users: 1, WorkPackages: 1}).Users[3]; !strings.ContainsFunc(u.Name, func(r rune) bool { return r > unicode.MaxASCII }) {
		t.Errorf("first generated user %q has no diacritics", u.Name)
	}
	for _, tt := range []struct{ in, login, slug string }{
		{"Łukasz", "lukasz", "lukasz"},
		{"O'Brien", "obrien", "o-brien"},
		{"Groß Þórsson", "grossthorsson", "gross-thorsson"},
		{"Nguyễn Thảo", "nguyenthao", "nguyen-thao"},
		{"Architecture Decision Record 7: Event Sourcing", "architecturedecisionrecord7eventsourcing",
			"architecture-decision-record-7-event-sourcing"},
		{"  Tokyo office (東京) ", "tokyooffice", "tokyo-office"},
	} {
		if got := loginFold(tt.in); got != tt.login {
			t.Errorf("loginFold(%q) = %q, want %q", tt.in, got, tt.login)
		}
		if got := slugify(tt.in); got != tt.slug {
			t.Errorf("slugify(%q) = %q, want %q", tt.in, got, tt.slug)
		}
	}
}

func TestGenerateWorkPackages(t *testing.T) {
	o := GenOptions{Seed: 11}
	d := Generate(o)
	start, end := o.normalized().Start, o.normalized().Start.Add(genSpan)
	inYear := func(what string, ts time.Time) {
		if ts.Before(start) || ts.After(end) {
			t.Errorf("%s: %v outside the generated year", what, ts)
		}
	}
	statusClosed := map[int64]bool{}
	for _, s := range d.Statuses {
		statusClosed[s.ID] = s.IsClosed
	}
	projects := map[int64]optest.Project{}
	for _, p := range d.Projects {
		projects[p.ID] = p
	}
	closed, parents, assigned := 0, 0, 0
	for i, wp := range d.WorkPackages {
		if wp.ID != int64(i+1) {
			t.Fatalf("work package %d has id %d", i, wp.ID)
		}
		if wp.Closed != statusClosed[wp.Status.ID] {
			t.Errorf("#%d: closed %v with status %q", wp.ID, wp.Closed, wp.Status.Title)
		}
		if wp.Closed {
			closed++
		}
		if wp.Subject == "" || strings.ContainsAny(wp.Subject, "{}\n") {
			t.Errorf("#%d: subject %q", wp.ID, wp.Subject)
		}
		inYear("work package created", wp.CreatedAt)
		inYear("work package updated", wp.UpdatedAt)
		if wp.UpdatedAt.Before(wp.CreatedAt) {
			t.Errorf("#%d updated before created", wp.ID)
		}
		if i > 0 && wp.CreatedAt.Before(d.WorkPackages[i-1].CreatedAt) {
			t.Errorf("#%d created before #%d", wp.ID, wp.ID-1)
		}
		if wp.LockVersion < 0 || wp.LockVersion > 10 {
			t.Errorf("#%d: lock version %d", wp.ID, wp.LockVersion)
		}
		if wp.StartDate > wp.DueDate && wp.DueDate != "" {
			t.Errorf("#%d: starts %s after due %s", wp.ID, wp.StartDate, wp.DueDate)
		}
		members := projects[wp.Project.ID].Members
		for _, u := range []*openproject.Ref{&wp.Author, wp.Assignee, wp.Responsible} {
			if u != nil && !slices.Contains(members, u.ID) {
				t.Errorf("#%d: user %d is not a member of project %d", wp.ID, u.ID, wp.Project.ID)
			}
		}
		if wp.Assignee != nil {
			assigned++
		}
		if p := wp.Parent; p != nil {
			parents++
			if p.ID >= wp.ID || d.WorkPackages[p.ID-1].Project.ID != wp.Project.ID || p.Title != d.WorkPackages[p.ID-1].Subject {
				t.Errorf("#%d: bad parent %+v", wp.ID, p)
			}
		}
		genCheckRef(t, "project", wp.Project, "/api/v3/projects/", projects[wp.Project.ID].Name)
		genCheckRef(t, "status", wp.Status, "/api/v3/statuses/", d.Statuses[wp.Status.ID-1].Name)
		genCheckRef(t, "type", wp.Type, "/api/v3/types/", d.Types[wp.Type.ID-1].Name)
		genCheckRef(t, "priority", wp.Priority, "/api/v3/priorities/", d.Priorities[wp.Priority.ID-1].Name)
		genCheckRef(t, "author", wp.Author, "/api/v3/users/", d.Users[wp.Author.ID-1].Name)
		if wp.Type.ID == TypeMilestone && (wp.StartDate == "" || wp.StartDate != wp.DueDate) {
			t.Errorf("milestone #%d: dates %q, %q", wp.ID, wp.StartDate, wp.DueDate)
		}
	}
	n := len(d.WorkPackages)
	if share := float64(closed) / float64(n); share < 0.25 || share > 0.35 {
		t.Errorf("closed share %.2f, want about 0.30", share)
	}
	if parents < n/20 || assigned < n/2 || assigned == n {
		t.Errorf("%d with parent, %d assigned of %d", parents, assigned, n)
	}

	// Activities: ids in time order, versions 1.. per work package, inside
	// the work package's lifetime, which ends with its last activity.
	perWP := make([][]openproject.Activity, n+1)
	for i, a := range d.Activities {
		if a.ID != int64(i+1) {
			t.Fatalf("activity %d has id %d", i, a.ID)
		}
		if i > 0 && a.CreatedAt.Before(d.Activities[i-1].CreatedAt) {
			t.Errorf("activity %d is older than activity %d", a.ID, a.ID-1)
		}
		perWP[a.WorkPackageID] = append(perWP[a.WorkPackageID], a)
	}
	counts := map[int]int{}
	for id := 1; id <= n; id++ {
		wp, acts := d.WorkPackages[id-1], perWP[id]
		counts[len(acts)-1]++
		for k, a := range acts {
			if a.Version != k+1 {
				t.Fatalf("#%d: activity %d has version %d, want %d", id, a.ID, a.Version, k+1)
			}
			if a.CreatedAt.Before(wp.CreatedAt) || a.CreatedAt.After(wp.UpdatedAt) {
				t.Errorf("#%d: activity at %v outside [%v, %v]", id, a.CreatedAt, wp.CreatedAt, wp.UpdatedAt)
			}
			if a.IsComment() != (a.Kind == "Activity::Comment") || (a.Kind == "Activity") == (len(a.Details) == 0) {
				t.Errorf("#%d: activity %+v", id, a)
			}
			genCheckRef(t, "activity user", a.User, "/api/v3/users/", d.Users[a.User.ID-1].Name)
		}
		if !acts[len(acts)-1].CreatedAt.Equal(wp.UpdatedAt) {
			t.Errorf("#%d: updated %v, last activity %v", id, wp.UpdatedAt, acts[len(acts)-1].CreatedAt)
		}
	}
	busiest := 0
	for c := range counts {
		busiest = max(busiest, c)
	}
	if counts[0] < n/3 || busiest < 15 {
		t.Errorf("comments too even: %d of %d work packages without, at most %d on one", counts[0], n, busiest)
	}
}

func genCheckRef(t *testing.T, what string, r openproject.Ref, prefix, title string) {
	t.Helper()
	if r.ID <= 0 || r.Href != prefix+strconv.FormatInt(r.ID, 10) || r.Title != title {
		t.Errorf("%s ref %+v, want href %s%d and title %q", what, r, prefix, r.ID, title)
	}
}

func TestGenerateText(t *testing.T) {
	d := Generate(GenOptions{Seed: 5})
	vocab := map[string]bool{}
	withDesc := 0
	for _, wp := range d.WorkPackages {
		for _, w := range genWords(wp.Subject + " " + wp.Description) {
			vocab[w] = true
		}
		if wp.Description != "" {
			withDesc++
		}
	}
	if len(vocab) < 1500 {
		t.Errorf("%d distinct genWords in subjects and descriptions, want > 1500", len(vocab))
	}
	if withDesc < len(d.WorkPackages)*8/10 || withDesc == len(d.WorkPackages) {
		t.Errorf("%d of %d work packages have a description", withDesc, len(d.WorkPackages))
	}
	subjects := map[string]bool{}
	for _, wp := range d.WorkPackages {
		subjects[wp.Subject] = true
	}
	if len(subjects) < len(d.WorkPackages)*8/10 {
		t.Errorf("only %d distinct subjects for %d work packages", len(subjects), len(d.WorkPackages))
	}

	// Comment-only genWords: the tools people name in comments occur in no
	// subject or description, and a search for them finds work packages
	// through comments alone.
	for _, tool := range commentTools {
		for _, w := range genWords(tool) {
			if vocab[w] {
				t.Errorf("comment-only word %q occurs in a subject or description", w)
			}
		}
	}
	found := 0
	texts := map[int64]map[string]bool{}
	for _, wp := range d.WorkPackages {
		texts[wp.ID] = map[string]bool{}
		for _, w := range genWords(wp.Subject + " " + wp.Description) {
			texts[wp.ID][w] = true
		}
	}
	onlyInComment := 0
	for _, a := range d.Activities {
		ws := genWords(a.Comment)
		for _, tool := range commentTools {
			if slices.Contains(ws, genWords(tool)[0]) {
				found++
				break
			}
		}
		for _, w := range ws {
			if !texts[a.WorkPackageID][w] {
				onlyInComment++
				break
			}
		}
	}
	if found < 100 || onlyInComment < len(d.Activities)/2 {
		t.Errorf("%d comments name a comment-only tool, %d have genWords their work package lacks", found, onlyInComment)
	}

	// Codenames find exactly their project: every work package of the
	// private projects mentions it, nothing else does.
	for _, tt := range []struct {
		project  int64
		codename string
	}{{2, "nightingale"}, {3, "kestrel"}} {
		for _, wp := range d.WorkPackages {
			has := slices.Contains(genWords(wp.Description), tt.codename)
			if has != (wp.Project.ID == tt.project) {
				t.Errorf("#%d in project %d: mentions %q: %v", wp.ID, wp.Project.ID, tt.codename, has)
			}
		}
		for _, a := range d.Activities {
			if slices.Contains(genWords(a.Comment), tt.codename) {
				t.Errorf("activity %d mentions %q", a.ID, tt.codename)
			}
		}
	}
	// The umlaut bug is there, and so are identifiers and versions.
	all := genJSON(t, d)
	for _, re := range []string{`Login fails with 500 when password contains`, `\b[a-z]+[A-Z][a-z]+[A-Za-z]*\b`,
		`\b[a-z]+_[a-z]+\b`, `\bv\d+\.\d+\.\d+\b`, `\bERR_[A-Z_]+\b`, `data-type=\\"user\\"`, `\.(prod|staging)\.`} {
		if !regexp.MustCompile(re).Match(all) {
			t.Errorf("no text matches %s", re)
		}
	}
}

func TestGenerateWikiPages(t *testing.T) {
	o := GenOptions{Seed: 9, WorkPackages: 50}
	d := Generate(o)
	slug := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	high, maxLow := 0, int64(0)
	seen := map[string]bool{}
	var attachments []int64
	for i, p := range d.WikiPages {
		if i > 0 && p.ID <= d.WikiPages[i-1].ID {
			t.Errorf("wiki ids not ascending at %d", p.ID)
		}
		if p.ID > 1000 {
			high++
		} else {
			maxLow = max(maxLow, p.ID)
		}
		if !p.HasText || !strings.Contains(p.Text, "\n## ") || p.Title == "" || !slug.MatchString(p.Slug) {
			t.Errorf("wiki page %d: %q %q hasText %v", p.ID, p.Title, p.Slug, p.HasText)
		}
		key := strconv.FormatInt(p.Project.ID, 10) + "/" + p.Slug
		if seen[key] {
			t.Errorf("duplicate slug %s", key)
		}
		seen[key] = true
		if p.UpdatedAt.Before(p.CreatedAt) {
			t.Errorf("wiki page %d updated before created", p.ID)
		}
		if len(p.Attachments) != 0 {
			t.Errorf("wiki page %d has inline attachments", p.ID)
		}
		for _, a := range d.Attachments {
			if a.Container.Href == "/api/v3/wiki_pages/"+strconv.FormatInt(p.ID, 10) {
				attachments = append(attachments, a.ID)
				if a.Container.ID != p.ID || a.CreatedAt.Before(p.CreatedAt) || a.CreatedAt.After(p.UpdatedAt) {
					t.Errorf("attachment %+v", a.Attachment)
				}
			}
		}
	}
	low := len(d.WikiPages) - high
	if high == 0 || high > len(d.WikiPages)/10 {
		t.Errorf("%d of %d wiki ids above 1000", high, len(d.WikiPages))
	}
	if maxLow <= int64(low) {
		t.Errorf("wiki ids up to %d for %d pages: no gaps", maxLow, low)
	}
	if len(attachments) == 0 || slices.Compact(slices.Sorted(slices.Values(attachments))) == nil {
		t.Error("no attachments")
	}
	// Gaps and high ids for every size.
	for n := 1; n < 100; n++ {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		ids := wikiIDs(r, n)
		if len(ids) != n || !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != n {
			t.Fatalf("wikiIDs(%d) = %v", n, ids)
		}
		if n >= 2 && ids[n-1] < 1000 {
			t.Errorf("wikiIDs(%d): no id above 1000", n)
		}
	}
	if ids := wikiIDs(rand.New(rand.NewPCG(1, 2)), 5000); ids[len(ids)-1] < 9000 || ids[len(ids)-251] > 7500 {
		t.Errorf("wikiIDs(5000): low ids end at %d, high ids end at %d", ids[len(ids)-251], ids[len(ids)-1])
	}
}

func TestGenerateMeetings(t *testing.T) {
	o := GenOptions{Seed: 13, WorkPackages: 500, Meetings: 60}
	d := Generate(o)
	start, end := o.normalized().Start, o.normalized().Start.Add(genSpan)
	projects := map[int64]optest.Project{}
	for _, p := range d.Projects {
		projects[p.ID] = p
	}
	var items, outcomes []int64
	wpItems := 0
	for i, m := range d.Meetings {
		if m.ID != int64(i+1) || m.Title == "" || m.Location == "" {
			t.Errorf("meeting %d: %+v", i, m)
		}
		if m.StartTime.Before(start) || m.EndTime.After(end) || !m.EndTime.After(m.StartTime) ||
			m.CreatedAt.After(m.StartTime) || m.UpdatedAt.Before(m.EndTime) && m.UpdatedAt != end {
			t.Errorf("meeting %d times: created %v, %v-%v, updated %v", m.ID, m.CreatedAt, m.StartTime, m.EndTime, m.UpdatedAt)
		}
		if got := m.EndTime.Sub(m.StartTime).Hours(); got != m.Duration {
			t.Errorf("meeting %d: duration %v, times %v apart", m.ID, m.Duration, got)
		}
		members := projects[m.Project.ID].Members
		if len(m.Participants) < 2 || len(m.Participants) > 8 {
			t.Errorf("meeting %d has %d participants", m.ID, len(m.Participants))
		}
		for _, p := range m.Participants {
			if !slices.Contains(members, p.ID) {
				t.Errorf("meeting %d: participant %d is not a project member", m.ID, p.ID)
			}
			genCheckRef(t, "participant", p, "/api/v3/users/", d.Users[p.ID-1].Name)
		}
		if len(m.AgendaItems) < 2 || len(m.AgendaItems) > 7 {
			t.Errorf("meeting %d has %d agenda items", m.ID, len(m.AgendaItems))
		}
		for k, a := range m.AgendaItems {
			items = append(items, a.ID)
			if a.MeetingID != m.ID || a.Position != k+1 || a.Title == "" || a.DurationMinutes == nil || a.Author == nil {
				t.Errorf("agenda item %+v", a)
			}
			switch a.ItemType {
			case "work_package":
				wpItems++
				wp := d.WorkPackages[a.WorkPackage.ID-1]
				if wp.Project.ID != m.Project.ID || wp.CreatedAt.After(m.StartTime) {
					t.Errorf("agenda item %d links #%d of project %d", a.ID, wp.ID, wp.Project.ID)
				}
				genCheckRef(t, "agenda work package", *a.WorkPackage, "/api/v3/work_packages/", wp.Subject)
			case "simple":
				if a.WorkPackage != nil {
					t.Errorf("simple agenda item %d links a work package", a.ID)
				}
			default:
				t.Errorf("agenda item type %q", a.ItemType)
			}
			for _, oc := range a.Outcomes {
				outcomes = append(outcomes, oc.ID)
			}
		}
	}
	for _, ids := range [][]int64{items, outcomes} {
		if len(ids) == 0 || !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Errorf("ids not unique and increasing: %v", ids)
		}
	}
	if wpItems == 0 {
		t.Error("no work package agenda items")
	}
}

// TestTemplates expands every template many times: no unknown slots, no
// unbalanced braces, nothing left unexpanded.
func TestTemplates(t *testing.T) {
	g := &generator{o: genSmall.normalized()}
	g.start, g.end = g.o.Start, g.o.Start.Add(genSpan)
	g.genUsers()
	g.genProjects()
	g.wpByProject = make([][]int32, len(g.projects))
	w := newWriter(g, rand.New(rand.NewPCG(1, 2)))
	lists := [][]string{bugSubjects, featureSubjects, taskSubjects, epicSubjects, milestoneSubjects, storySubjects,
		sentences, bugSteps, bugExpected, bugActual, acceptance, taskItems, decisions, commentTemplates, commentFacts,
		changeDetails, wikiGuideTitles, wikiRunbookTitles, wikiParagraphs, meetingSeries, agendaTitles, agendaNotes,
		outcomeTemplates, statusExplanations, rootCauses, logMessages, successMetrics, runbookSteps}
	for _, list := range lists {
		for _, tmpl := range list {
			for i := range 20 {
				w.setProject(&g.projects[i%len(g.projects)], 100)
				if got := w.text(tmpl); strings.ContainsAny(got, "{}") || got == "" {
					t.Errorf("%q expanded to %q", tmpl, got)
				}
			}
		}
	}
	// Codenames are unique genWords.
	vocab := map[string]bool{}
	for _, list := range lists {
		for _, s := range list {
			for _, w := range genWords(s) {
				vocab[w] = true
			}
		}
	}
	for _, d := range domains {
		for _, list := range [][]string{d.nouns, d.components, d.screens, d.roles, d.idents} {
			for _, s := range list {
				for _, w := range genWords(s) {
					vocab[w] = true
				}
			}
		}
	}
	for _, c := range spareCodenames {
		if vocab[strings.ToLower(c)] {
			t.Errorf("codename %q is also an ordinary word", c)
		}
	}
	for _, p := range projectSpecs {
		if vocab[strings.ToLower(p.codename)] {
			t.Errorf("codename %q is also an ordinary word", p.codename)
		}
	}
}

func BenchmarkGenerate100k(b *testing.B) {
	o := GenOptions{Seed: 1, WorkPackages: 100_000, Comments: 300_000}
	for b.Loop() {
		Generate(o)
	}
}

// TestGenerateVersions checks the versions and custom fields: every
// project defines some, work packages are planned only for versions that
// exist, and the data set validates.
func TestGenerateVersions(t *testing.T) {
	d := Generate(GenOptions{Seed: 5, WorkPackages: 400})
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	defined := map[int64]int{}
	for _, v := range d.Versions {
		defined[v.Project.ID]++
	}
	for _, p := range d.Projects {
		if defined[p.ID] < 2 {
			t.Errorf("project %d defines %d versions, want at least 2", p.ID, defined[p.ID])
		}
	}
	planned := 0
	for _, wp := range d.WorkPackages {
		if wp.Version != nil {
			planned++
		}
	}
	if planned == 0 || planned == len(d.WorkPackages) {
		t.Errorf("%d of %d work packages have a version, want some", planned, len(d.WorkPackages))
	}
	if len(d.CustomFields) == 0 || len(d.CustomValues) == 0 {
		t.Errorf("%d custom fields, %d values, want some", len(d.CustomFields), len(d.CustomValues))
	}
}
