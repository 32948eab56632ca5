package eval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
	"github.com/opsearch/opsearch/store"
)

// Made-up words planted into a small generated data set; neither they nor
// their one-edit neighbours occur in the generator's text.
const (
	plantTitle    = "quokkaforge"     // a work package's subject
	plantComment  = "marzipanvault"   // a comment of another work package
	plantWiki     = "obsidianferry"   // a wiki page's text
	plantAgenda   = "tamarindlattice" // a meeting's agenda item notes
	plantLocation = "pelicanquasar"   // another meeting's location
	plantProject  = "gondolabrisket"  // a project's description
	plantAlice    = "heliotropewinch" // a work package in alice's private project
	plantBob      = "saffronbollard"  // a work package in bob's private project
	absentA       = "zyxwvutq"
	absentB       = "qqjjxxkk"
)

// plantedData is a small generated data set with the plant* words put into
// one entity of each kind; want maps each word to its entity.
func plantedData(t *testing.T) (*optest.Dataset, map[string]scorer.Target) {
	t.Helper()
	d := opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 80, Comments: 160, WikiPages: 6, Meetings: 6})
	want := map[string]scorer.Target{}
	wpIn := func(project int64, skip ...int64) int {
		for i, wp := range d.WorkPackages {
			if wp.Project.ID == project && !slices.Contains(skip, wp.ID) {
				return i
			}
		}
		t.Fatalf("no work package in project %d", project)
		return 0
	}
	// Project 2 is alice's private project, 3 bob's (see opgen.Generate).
	a, b := wpIn(2), wpIn(3)
	d.WorkPackages[a].Subject = "Grease the " + plantAlice + " before the audit"
	d.WorkPackages[b].Subject = "Inspect the " + plantBob + " on pier four"
	want[plantAlice] = scorer.Target{Type: "work_package", ID: d.WorkPackages[a].ID}
	want[plantBob] = scorer.Target{Type: "work_package", ID: d.WorkPackages[b].ID}

	w := wpIn(d.WorkPackages[0].Project.ID, d.WorkPackages[a].ID, d.WorkPackages[b].ID)
	d.WorkPackages[w].Subject = "Recalibrate the " + plantTitle + " sensors"
	want[plantTitle] = scorer.Target{Type: "work_package", ID: d.WorkPackages[w].ID}

	c := slices.IndexFunc(d.Activities, func(act openproject.Activity) bool {
		return act.IsComment() && act.WorkPackageID != d.WorkPackages[w].ID
	})
	if c < 0 {
		t.Fatal("no comment in the data set")
	}
	d.Activities[c].Comment = "Checked the " + plantComment + " seals yesterday, all fine."
	want[plantComment] = scorer.Target{Type: "work_package", ID: d.Activities[c].WorkPackageID}

	d.WikiPages[0].Text += "\n\nThe " + plantWiki + " timetable changes in spring."
	d.WikiPages[0].HasText = true
	want[plantWiki] = scorer.Target{Type: "wiki_page", ID: d.WikiPages[0].ID}

	m := slices.IndexFunc(d.Meetings, func(m openproject.Meeting) bool { return len(m.AgendaItems) > 0 })
	if m < 0 || len(d.Meetings) < 2 {
		t.Fatal("no meeting with agenda items in the data set")
	}
	d.Meetings[m].AgendaItems[0].Notes = "Agree on the " + plantAgenda + " budget."
	want[plantAgenda] = scorer.Target{Type: "meeting", ID: d.Meetings[m].ID}
	l := (m + 1) % len(d.Meetings)
	d.Meetings[l].Location = "Room " + plantLocation
	want[plantLocation] = scorer.Target{Type: "meeting", ID: d.Meetings[l].ID}

	d.Projects[4].Description = "The " + plantProject + " programme."
	want[plantProject] = scorer.Target{Type: "project", ID: d.Projects[4].ID}
	return d, want
}

// openDefault builds the bleve-default index of st, closed at cleanup.
func openDefault(t *testing.T, st *store.Store) *defaultIndex {
	t.Helper()
	di, err := buildDefaultIndex(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := di.Close(); err != nil {
			t.Error(err)
		}
	})
	return di
}

func targets(hits []hit) []scorer.Target {
	ts := make([]scorer.Target, len(hits))
	for i, h := range hits {
		ts[i] = h.target
	}
	return ts
}

// TestBleveDefault_Search checks plain bleve's behaviour the variant
// promises: fuzziness 1 finds a word with one typo in every kind's text,
// the OR operator finds an item when one query word is absent, and a query
// of absent words finds nothing.
func TestBleveDefault_Search(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d, want := plantedData(t)
	st, _ := syncInto(t, d)
	di := openDefault(t, st)
	n, err := di.idx.DocCount()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, k := range []kind.Kind{kind.Project, kind.WorkPackage, kind.WikiPage, kind.Meeting, kind.Attachment} {
		c, err := st.Count(k)
		if err != nil {
			t.Fatal(err)
		}
		total += c
	}
	if n != uint64(total) || total < len(d.WorkPackages) {
		t.Errorf("bleve-default index holds %d documents, want one per stored entity, %d", n, total)
	}
	cases := []struct {
		name, query string
		want        string // planted word whose entity must rank first; "" for no results
	}{
		{"title, one deletion", "quokaforge", plantTitle},
		{"title, exact", plantTitle, plantTitle},
		{"comment, one deletion", "marzipanvalt", plantComment},
		{"wiki text, one substitution", "obsidianforry", plantWiki},
		{"agenda notes, one deletion", "tamarindlatice", plantAgenda},
		{"location, one insertion", "pelicanquasars", plantLocation},
		{"project description, exact", plantProject, plantProject},
		{"project description, one insertion", "gondolabriskets", plantProject},
		{"OR: one absent word", plantTitle + " " + absentA, plantTitle},
		{"OR: typo and absent word", "marzipanvalt " + absentB, plantComment},
		{"all words absent", absentA + " " + absentB, ""},
		{"two typos are too many", "quokafrge", ""},
		{"empty query", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := di.search(context.Background(), tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got := targets(hits)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("search %q: got %v, want nothing", tc.query, got)
				}
				return
			}
			if len(got) == 0 || got[0] != want[tc.want] {
				t.Fatalf("search %q: got %v, want %v first", tc.query, got, want[tc.want])
			}
			if len(got) > K {
				t.Errorf("search %q: %d hits, want at most %d", tc.query, len(got), K)
			}
			if hits[0].title == "" || hits[0].score <= 0 {
				t.Errorf("search %q: first hit %+v lacks title or score", tc.query, hits[0])
			}
		})
	}
}

// TestBleveDefault_OnlyTheUsersStore checks that the index holds what the
// evaluated user's store holds and nothing else: alice finds her private
// work package, not bob's.
func TestBleveDefault_OnlyTheUsersStore(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d, want := plantedData(t)
	st, _ := syncAs(t, d, optest.AliceKey)
	di := openDefault(t, st)
	for _, tc := range []struct {
		word string
		want []scorer.Target
	}{
		{plantAlice, []scorer.Target{want[plantAlice]}},
		{plantBob, []scorer.Target{}},
	} {
		hits, err := di.search(context.Background(), tc.word)
		if err != nil {
			t.Fatal(err)
		}
		if got := targets(hits); !slices.Equal(got, tc.want) {
			t.Errorf("alice searches %q: got %v, want %v", tc.word, got, tc.want)
		}
	}
}

// TestRun_BleveDefaultInDefaultReport runs the default variants and checks
// that bleve-default is among them, is measured like the others, shows in
// the table, and leaves no temporary index behind; and that Run builds no
// such index when the variant is not requested.
func TestRun_BleveDefaultInDefaultReport(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d, want := plantedData(t)
	st, idx := syncInto(t, d)
	queries := []scorer.LabelledQuery{
		{ID: "typo-title", Query: "quokaforge", Kind: "typo", Expect: []scorer.Target{want[plantTitle]}},
		{ID: "or-comment", Query: plantComment + " " + absentA, Kind: "comment_fact", Expect: []scorer.Target{want[plantComment]}},
		{ID: "neg", Query: absentA + " " + absentB, Kind: "negative"},
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	rep, err := Run(context.Background(), st, idx, queries, Options{Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range rep.Variants {
		names = append(names, v.Name)
	}
	var defaults []string
	for _, v := range DefaultVariants() {
		defaults = append(defaults, v.Name)
	}
	if !slices.Equal(names, defaults) || !slices.Contains(names, VariantBleveDefault) || !slices.Contains(names, VariantOpsearch) {
		t.Fatalf("report variants %v, want the defaults %v with %s and %s", names, defaults, VariantBleveDefault, VariantOpsearch)
	}
	bd, _ := rep.Variant(VariantBleveDefault)
	if m := bd.Kinds["typo"]; m.Queries != 1 || m.Recall1 != 1 {
		t.Errorf("bleve-default typo metrics %+v, want recall@1 1", m)
	}
	if m := bd.Kinds["comment_fact"]; m.Recall1 != 1 {
		t.Errorf("bleve-default OR query metrics %+v, want recall@1 1", m)
	}
	if m := bd.Kinds["negative"]; m.Negatives != 1 || m.NegativeClean != 1 {
		t.Errorf("bleve-default negative metrics %+v, want clean", m)
	}
	if len(bd.Detail) != len(queries) || len(bd.Detail[0].Top) == 0 || !strings.Contains(bd.Detail[0].Top[0], plantTitle) {
		t.Errorf("bleve-default detail %+v, want the planted title on top", bd.Detail)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table, true); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(table.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == VariantBleveDefault {
			rows++
		}
	}
	if rows != 4 || !strings.Contains(table.String(), VariantBleveDefault+": median ") {
		t.Errorf("table has %d %s rows (want 3 kinds and overall) or no latency line:\n%s", rows, VariantBleveDefault, table.String())
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("temporary directory after Run: %v %v, want empty", left, err)
	}

	// Without a bleve-default variant Run needs no temporary directory.
	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	if _, err := Run(context.Background(), st, idx, queries, Options{Variants: []Variant{{Name: VariantOpsearch}}}); err != nil {
		t.Errorf("opsearch alone: %v", err)
	}
	if _, err := Run(context.Background(), st, idx, queries, Options{Variants: []Variant{{Name: VariantBleveDefault, Ranker: RankerBleveDefault}}}); err == nil {
		t.Error("bleve-default without a temporary directory: no error")
	}
}
