package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
)

// The context bundles answer in one call what an agent otherwise gathers
// with six: prepare_work_package_context (a work package with its recent
// comments, relations, the meetings and wiki pages that mention it, and
// its project's statuses and types) and my_work (the caller's open
// assigned work packages, those updated lately and their upcoming
// meetings). Every part is capped and says how much it left out; a part
// that fails is named in failed and the others still answer.

const (
	toolWorkPackageContext = "openproject_prepare_work_package_context"
	toolMyWork             = "openproject_my_work"
)

// Bundle caps. A bundle is a first look, meant to fit a model's context
// next to the work itself; the list and get tools page through the rest.
const (
	// bundleComments is the number of newest comments kept.
	bundleComments = 10
	// bundleCommentRunes bounds each comment's text: ten comments of
	// capComment would be most of the bundle.
	bundleCommentRunes = 1000
	// bundleRows bounds the relations and each my_work list.
	bundleRows = 25
	// bundleMentions bounds the meetings, and the wiki pages, that
	// mention a work package.
	bundleMentions = 10
	// bundleMetadata bounds the statuses and the types.
	bundleMetadata = 50
	// bundleParallel bounds the requests one bundle has in flight: it is
	// one agent's call, and OpenProject serves everyone else meanwhile.
	bundleParallel = 4
	// defaultUpdatedSince is how far back my_work looks for updates when
	// not told.
	defaultUpdatedSince = 7 * 24 * time.Hour
)

// part is one part of a bundle: how many rows there are in all, how many
// the cap left out, whether a text in the rows kept was cut, and the rows.
type part[T any] struct {
	Total     int  `json:"total"`
	Omitted   int  `json:"omitted"`
	Truncated bool `json:"truncated,omitempty"`
	Elements  []T  `json:"elements"`
}

// partOf keeps at most limit of items (the first ones), of total in all.
func partOf[T, R any](items []T, total, limit int, row func(T) (R, bool)) *part[R] {
	kept := items[:min(len(items), limit)]
	p := &part[R]{Total: max(total, len(items)), Elements: make([]R, 0, len(kept))}
	for _, it := range kept {
		r, cut := row(it)
		p.Elements = append(p.Elements, r)
		p.Truncated = p.Truncated || cut
	}
	p.Omitted = p.Total - len(p.Elements)
	return p
}

// partFailure names a part of a bundle that could not be read, and why.
type partFailure struct {
	Part  string `json:"part"`
	Error string `json:"error"`
}

// bundle runs a bundle's parts, at most bundleParallel at once, each on
// its own: a part's failure is kept for the answer, not passed to the
// others (an errgroup.WithContext would cancel them).
type bundle struct {
	g    errgroup.Group
	mu   gosync.Mutex
	errs map[string]error
}

func newBundle() *bundle {
	b := &bundle{errs: map[string]error{}}
	b.g.SetLimit(bundleParallel)
	return b
}

// run starts a part; fn's error is the part's failure.
func (b *bundle) run(name string, fn func() error) {
	b.g.Go(func() error {
		if err := fn(); err != nil {
			b.mu.Lock()
			b.errs[name] = err
			b.mu.Unlock()
		}
		return nil
	})
}

// wait waits for every part and returns the failures in the order of
// names, with the first failure itself for a bundle of which every part
// failed.
func (b *bundle) wait(ctx context.Context, s *server, tool string, names []string) ([]partFailure, error) {
	_ = b.g.Wait() // the parts return nil; their failures are in errs
	failed := []partFailure{}
	var first error
	for _, name := range names {
		err, ok := b.errs[name]
		if !ok {
			continue
		}
		first = cmp.Or(first, err)
		failed = append(failed, partFailure{Part: name, Error: s.partMessage(ctx, tool, err)})
	}
	if len(failed) == len(names) {
		return nil, first
	}
	return failed, nil
}

// --- prepare_work_package_context ---

type wpContextIn struct {
	WorkPackageID int64 `json:"workPackageId" jsonschema:"work package id"`
}

// wpContextOut is a work package with what an agent reads before working
// on it. A part that could not be read is null and named in failed.
// Complete is true when every part was read and none left anything out.
type wpContextOut struct {
	WorkPackage wpDetail           `json:"workPackage"`
	Comments    *part[activityRow] `json:"comments"`
	Relations   *part[relationRow] `json:"relations"`
	Mentions    *mentionsPart      `json:"mentions"`
	Statuses    *part[statusRow]   `json:"statuses"`
	Types       *part[typeRow]     `json:"types"`
	Failed      []partFailure      `json:"failed"`
	Complete    bool               `json:"complete"`
}

// mentionsPart holds the meetings and wiki pages of the local index that
// mention a work package: by its id ("#123", or its display id) or its
// subject.
type mentionsPart struct {
	Meetings  *part[mentionRow] `json:"meetings"`
	WikiPages *part[mentionRow] `json:"wikiPages"`
	// IndexComplete is false while the index is not ready or its crawl
	// of meetings or wiki pages is incomplete: then a short list does
	// not mean nothing else mentions the work package.
	IndexComplete bool   `json:"indexComplete"`
	Note          string `json:"note,omitempty"`
}

type mentionRow struct {
	ID        int64      `json:"id"`
	Title     string     `json:"title"`
	Project   string     `json:"project,omitempty"`
	StartTime *time.Time `json:"startTime,omitempty"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty"`
	URL       string     `json:"url,omitempty"`
	// By is what matched: "id" or "subject".
	By      string `json:"by"`
	Snippet string `json:"snippet,omitempty"`
}

// The parts of prepare_work_package_context, in answer order.
var wpContextParts = []string{"comments", "relations", "mentions", "statuses", "types"}

func (s *server) workPackageContext(ctx context.Context, in wpContextIn) (wpContextOut, error) {
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return wpContextOut{}, err
	}
	id := in.WorkPackageID
	b := newBundle()
	var (
		out   wpContextOut
		wp    openproject.WorkPackage
		wpErr error
		// read is closed once wp (or wpErr) is known: the parts that
		// need the work package wait for it, the others start at once.
		read = make(chan struct{})
	)
	b.g.Go(func() error {
		defer close(read)
		if wp, wpErr = s.api.WorkPackage(ctx, id); wpErr == nil {
			out.WorkPackage, wpErr = s.workPackageDetail(ctx, wp)
		}
		return nil
	})
	b.run("comments", func() error {
		acts, err := s.api.Activities(ctx, id)
		if err != nil {
			return err
		}
		acts = slices.DeleteFunc(acts, func(a openproject.Activity) bool { return !a.IsComment() })
		// The newest, oldest first: the end of a history is what an
		// agent picks up from.
		newest := acts[max(0, len(acts)-bundleComments):]
		out.Comments = partOf(newest, len(acts), bundleComments, func(a openproject.Activity) (activityRow, bool) {
			row, cut := activityRowOf(a)
			var c bool
			row.Comment, c = capText(row.Comment, bundleCommentRunes)
			return row, cut || c
		})
		return nil
	})
	b.run("relations", func() error {
		p, err := s.api.Relations(ctx, id, openproject.ListOptions{PageSize: bundleRows})
		if err != nil {
			return err
		}
		out.Relations = partOf(p.Items, p.Total, bundleRows, func(r openproject.Relation) (relationRow, bool) { return relationRowOf(r, id) })
		return nil
	})
	b.run("statuses", func() error {
		sts, err := s.api.Statuses(ctx)
		if err != nil {
			return err
		}
		out.Statuses = partOf(sts, len(sts), bundleMetadata, func(st openproject.Status) (statusRow, bool) {
			return statusRow{ID: st.ID, Name: st.Name, IsClosed: st.IsClosed, IsDefault: st.IsDefault}, false
		})
		return nil
	})
	b.run("types", func() error {
		<-read
		if wpErr != nil {
			return nil // the answer is wpErr
		}
		ts, err := s.api.Types(ctx, strconv.FormatInt(wp.Project.ID, 10))
		if err != nil {
			return err
		}
		out.Types = partOf(ts, len(ts), bundleMetadata, func(t openproject.Type) (typeRow, bool) {
			return typeRow{ID: t.ID, Name: t.Name, IsMilestone: t.IsMilestone, IsDefault: t.IsDefault}, false
		})
		return nil
	})
	b.run("mentions", func() error {
		<-read
		if wpErr != nil {
			return nil
		}
		m, err := s.mentions(ctx, wp)
		out.Mentions = m
		return err
	})
	failed, err := b.wait(ctx, s, toolWorkPackageContext, wpContextParts)
	// Without the work package nothing else means anything: its error
	// (not found, most often) is the answer.
	if wpErr != nil {
		return wpContextOut{}, wpErr
	}
	if err != nil {
		return wpContextOut{}, err
	}
	out.Failed = failed
	out.Complete = len(failed) == 0 && !out.WorkPackage.Truncated &&
		out.Comments.Omitted == 0 && out.Relations.Omitted == 0 && out.Statuses.Omitted == 0 && out.Types.Omitted == 0 &&
		out.Mentions.IndexComplete && out.Mentions.Meetings.Omitted == 0 && out.Mentions.WikiPages.Omitted == 0
	return out, nil
}

// mentionWindow is how many ranked results of each mention search are
// examined.
const mentionWindow = 50

// mentions searches the local index for the meetings and wiki pages that
// name the work package: by its id forms, as written (every result holds
// the id), then by its subject, keeping only results that hold most of it
// (a "good" match: a few of its words are no mention).
func (s *server) mentions(ctx context.Context, wp openproject.WorkPackage) (*mentionsPart, error) {
	type query struct{ text, by string }
	qs := []query{{"#" + strconv.FormatInt(wp.ID, 10), "id"}}
	if d := strings.TrimSpace(wp.DisplayID); d != "" && d != qs[0].text {
		qs = append(qs, query{d, "id"})
	}
	if subj, _ := capText(strings.TrimSpace(wp.Subject), maxQueryRunes); checkSearchable(subj) == nil && subj != "" {
		qs = append(qs, query{subj, "subject"})
	}
	m := &mentionsPart{IndexComplete: true}
	found := map[kind.Kind][]mentionRow{}
	seen := map[string]bool{}
	var notes []string
	for _, q := range qs {
		sq := search.Query{Text: q.text, Kinds: []kind.Kind{kind.Meeting, kind.WikiPage}, Exact: q.by == "id", Page: 1, PageSize: mentionWindow}
		ans, err := s.searchAnswer(ctx, toolWorkPackageContext, sq, searchProject{}, "")
		if err != nil {
			return nil, err
		}
		if !ans.Index.Complete || !ans.Index.Ready {
			m.IndexComplete = false
		}
		for _, n := range []string{ans.Index.Note, ans.Note} {
			if n != "" && !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
		for _, r := range ans.Results {
			key := fmt.Sprintf("%s/%d", r.Kind, r.ID)
			if seen[key] || q.by == "subject" && r.Match != search.MatchGood {
				continue
			}
			seen[key] = true
			row := mentionRow{ID: r.ID, Title: r.Title, StartTime: r.StartTime, UpdatedAt: r.UpdatedAt, URL: r.URL, By: q.by}
			row.Snippet, _ = capText(r.Snippet, capRow)
			if r.Project != nil {
				row.Project = r.Project.Name
			}
			found[r.Kind] = append(found[r.Kind], row)
		}
	}
	m.Note = strings.Join(notes, "; ")
	keep := func(rows []mentionRow) *part[mentionRow] {
		return partOf(rows, len(rows), bundleMentions, func(r mentionRow) (mentionRow, bool) { return r, false })
	}
	m.Meetings, m.WikiPages = keep(found[kind.Meeting]), keep(found[kind.WikiPage])
	return m, nil
}

// --- my_work ---

type myWorkIn struct {
	UpdatedSince string `json:"updatedSince,omitempty" jsonschema:"RFC 3339 time (default: 7 days ago)"`
}

// myWorkOut is the caller's work: open work packages assigned to them,
// those assigned to them that changed since updatedSince (closed ones
// too), and the upcoming meetings they are invited to. A part that could
// not be read is null and named in failed.
type myWorkOut struct {
	UpdatedSince time.Time         `json:"updatedSince"`
	Assigned     *part[wpRow]      `json:"assigned"`
	Updated      *part[wpRow]      `json:"updated"`
	Meetings     *part[meetingRow] `json:"meetings"`
	Failed       []partFailure     `json:"failed"`
	Complete     bool              `json:"complete"`
}

// The parts of my_work, in answer order.
var myWorkParts = []string{"assigned", "updated", "meetings"}

func (s *server) myWork(ctx context.Context, in myWorkIn) (myWorkOut, error) {
	since := time.Now().Add(-defaultUpdatedSince).UTC().Truncate(time.Second)
	if v := strings.TrimSpace(in.UpdatedSince); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return myWorkOut{}, argErr("updatedSince", "must be an RFC 3339 time such as 2025-06-01T09:00:00Z, got %q", in.UpdatedSince)
		}
		since = t
	}
	out := myWorkOut{UpdatedSince: since}
	// "me" is the API's own value for the caller in the assignee filter.
	mine := openproject.Filter{Name: "assignee", Operator: "=", Values: []string{"me"}}
	newest := []openproject.Sort{{Field: "updatedAt", Direction: "desc"}}
	wps := func(dst **part[wpRow], fs ...openproject.Filter) func() error {
		return func() error {
			p, err := s.api.ListWorkPackages(ctx, openproject.ListOptions{Filters: fs, SortBy: newest, PageSize: bundleRows})
			if err != nil {
				return err
			}
			*dst = partOf(p.Items, p.Total, bundleRows, wpRowOf)
			return nil
		}
	}
	b := newBundle()
	b.run("assigned", wps(&out.Assigned, mine, openproject.StatusOpen()))
	b.run("updated", wps(&out.Updated, mine, openproject.StatusAll(), openproject.UpdatedBetween(since, time.Time{})))
	b.run("meetings", func() error {
		// The meetings filter takes user ids only, not "me".
		me, err := s.api.Me(ctx)
		if err != nil {
			return err
		}
		p, err := s.api.ListMeetings(ctx, openproject.ListOptions{
			Filters: openproject.Filters{
				{Name: "time", Operator: "=", Values: []string{"upcoming"}},
				{Name: "invitedUserId", Operator: "=", Values: []string{strconv.FormatInt(me.ID, 10)}},
			},
			SortBy:   []openproject.Sort{{Field: "startTime", Direction: "asc"}},
			PageSize: bundleRows,
		})
		if errors.Is(err, openproject.ErrUnsupported) {
			return s.unsupported(ctx, toolMyWork, err, "it has no meetings list (OpenProject before the meetings API)")
		}
		if err != nil {
			return err
		}
		out.Meetings = partOf(p.Items, p.Total, bundleRows, meetingRowOf)
		return nil
	})
	failed, err := b.wait(ctx, s, toolMyWork, myWorkParts)
	if err != nil {
		return myWorkOut{}, err
	}
	out.Failed = failed
	out.Complete = len(failed) == 0 && out.Assigned.Omitted == 0 && out.Updated.Omitted == 0 && out.Meetings.Omitted == 0
	return out, nil
}
