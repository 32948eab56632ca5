package mcp_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// The context bundles (issue 19), over Streamable HTTP with the go-sdk
// client, against the fake OpenProject.

// bundlePart is a part of a bundle as the client sees it.
type bundlePart[T any] struct {
	Total     int  `json:"total"`
	Omitted   int  `json:"omitted"`
	Truncated bool `json:"truncated"`
	Elements  []T  `json:"elements"`
}

type partFailure struct {
	Part  string `json:"part"`
	Error string `json:"error"`
}

type mentionOut struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
	By    string `json:"by"`
}

type wpContextOut struct {
	WorkPackage struct {
		ID          int64  `json:"id"`
		Subject     string `json:"subject"`
		LockVersion int    `json:"lockVersion"`
	} `json:"workPackage"`
	Comments *bundlePart[struct {
		ID      int64  `json:"id"`
		Comment string `json:"comment"`
	}] `json:"comments"`
	Relations *bundlePart[struct {
		Type        string `json:"type"`
		WorkPackage struct {
			ID int64 `json:"id"`
		} `json:"workPackage"`
	}] `json:"relations"`
	Mentions *struct {
		Meetings      bundlePart[mentionOut] `json:"meetings"`
		WikiPages     bundlePart[mentionOut] `json:"wikiPages"`
		IndexComplete bool                   `json:"indexComplete"`
		Note          string                 `json:"note"`
	} `json:"mentions"`
	Statuses *bundlePart[struct {
		ID int64 `json:"id"`
	}] `json:"statuses"`
	Types *bundlePart[struct {
		ID int64 `json:"id"`
	}] `json:"types"`
	Failed   []partFailure `json:"failed"`
	Complete bool          `json:"complete"`
}

// TestWorkPackageContext: one call returns the work package, its newest
// comments, its relations, the meetings and wiki pages that mention it
// (from the index), its project's statuses and types, each capped with
// what it left out; a part that fails is named and the rest still
// answers.
func TestWorkPackageContext(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newHTTPEnv(t, httpEnvOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.aliceID(t)
	client, err := openproject.New(openproject.Config{BaseURL: e.base, APIKey: optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}

	// A work package of alice's with 13 comments (the newest one long),
	// 27 relations, 12 meetings naming it by id and a wiki page that
	// names it by its subject.
	subject := "Calibrate the quasar flux capacitor"
	wp, err := client.CreateWorkPackage(ctx, openproject.NewWorkPackage{Project: "alice-private", Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 13 {
		text := fmt.Sprintf("Progress note %d on the calibration.", i)
		if i == 12 {
			text = strings.Repeat("A very long final note. ", 80)
		}
		if _, err := e.op.AddComment(wp.ID, alice, text); err != nil {
			t.Fatal(err)
		}
	}
	var related []int64
	for i := range 27 {
		other, err := client.CreateWorkPackage(ctx, openproject.NewWorkPackage{Project: "alice-private", Subject: fmt.Sprintf("Related chore %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.CreateRelation(ctx, wp.ID, openproject.NewRelation{ToID: other.ID, Type: "relates"}); err != nil {
			t.Fatal(err)
		}
		related = append(related, other.ID)
	}
	for i := range 12 {
		start := time.Date(2025, 3, 1+i, 10, 0, 0, 0, time.UTC)
		_, err := e.op.AddMeeting(openproject.Meeting{Title: fmt.Sprintf("Lab sync %d", i), Project: openproject.Ref{ID: e.alice},
			Author: openproject.Ref{ID: alice}, StartTime: start, EndTime: start.Add(time.Hour),
			AgendaItems: []openproject.AgendaItem{{Title: fmt.Sprintf("Status of #%d", wp.ID), ItemType: "simple", Position: 1}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The sync finds wiki pages by probing ids: this one's follows the
	// generated ones.
	page, err := e.op.AddWikiPage(openproject.WikiPage{ID: 14, Title: "Lab handbook", Project: openproject.Ref{ID: e.alice},
		Text: "Before each run we calibrate the quasar flux capacitor with the reference source."})
	if err != nil {
		t.Fatal(err)
	}

	cs := aliceSession(ctx, t, e)
	var c wpContextOut
	if err := httpCall(ctx, cs, "openproject_prepare_work_package_context", map[string]any{"workPackageId": wp.ID}, &c); err != nil {
		t.Fatal(err)
	}
	if c.WorkPackage.ID != wp.ID || c.WorkPackage.Subject != subject || len(c.Failed) != 0 || c.Complete {
		t.Errorf("work package %+v, failed %v, complete %v", c.WorkPackage, c.Failed, c.Complete)
	}
	if cm := c.Comments; cm == nil || cm.Total != 13 || len(cm.Elements) != 10 || cm.Omitted != 3 || !cm.Truncated ||
		!strings.HasPrefix(cm.Elements[0].Comment, "Progress note 3 ") || !strings.HasSuffix(cm.Elements[9].Comment, "…") ||
		len([]rune(cm.Elements[9].Comment)) > 1001 {
		t.Errorf("comments = %+v", cm)
	}
	if r := c.Relations; r == nil || r.Total != 27 || len(r.Elements) != 25 || r.Omitted != 2 ||
		r.Elements[0].Type != "relates" || !slices.Contains(related, r.Elements[0].WorkPackage.ID) {
		t.Errorf("relations = %+v", r)
	}
	if m := c.Mentions; m == nil || m.Meetings.Total != 12 || len(m.Meetings.Elements) != 10 || m.Meetings.Omitted != 2 ||
		m.Meetings.Elements[0].By != "id" || len(m.WikiPages.Elements) != 1 || m.WikiPages.Elements[0].ID != page.ID ||
		m.WikiPages.Elements[0].By != "subject" || !m.IndexComplete {
		t.Errorf("mentions = %+v", m)
	}
	if s := c.Statuses; s == nil || s.Total != len(e.data.Statuses) || len(s.Elements) != s.Total || s.Omitted != 0 {
		t.Errorf("statuses = %+v, want all %d", s, len(e.data.Statuses))
	}
	if ty := c.Types; ty == nil || ty.Total == 0 || len(ty.Elements) != ty.Total {
		t.Errorf("types = %+v", ty)
	}

	// The relations cannot be read: the bundle names that part and
	// answers with the others.
	e.op.SetFaults(optest.Faults{PathPrefix: "/api/v3/relations", FailNext: 10, FailStatus: 403})
	c = wpContextOut{}
	if err := httpCall(ctx, cs, "openproject_prepare_work_package_context", map[string]any{"workPackageId": wp.ID}, &c); err != nil {
		t.Fatal(err)
	}
	e.op.SetFaults(optest.Faults{})
	if len(c.Failed) != 1 || c.Failed[0].Part != "relations" || !strings.Contains(c.Failed[0].Error, "no permission") ||
		c.Relations != nil || c.Comments == nil || c.Mentions == nil || c.Statuses == nil || c.Types == nil || c.Complete {
		t.Errorf("with the relations failing: failed %v, relations %v, complete %v", c.Failed, c.Relations, c.Complete)
	}

	// Without the work package there is no bundle.
	callFails(ctx, t, cs, "openproject_prepare_work_package_context", map[string]any{"workPackageId": 999999}, "not found")
	callFails(ctx, t, cs, "openproject_prepare_work_package_context", map[string]any{"workPackageId": -1}, "workPackageId")
}

type myWorkOut struct {
	UpdatedSince time.Time `json:"updatedSince"`
	Assigned     *bundlePart[struct {
		ID     int64 `json:"id"`
		Closed bool  `json:"closed"`
	}] `json:"assigned"`
	Updated *bundlePart[struct {
		ID     int64 `json:"id"`
		Closed bool  `json:"closed"`
	}] `json:"updated"`
	Meetings *bundlePart[struct {
		ID        int64     `json:"id"`
		StartTime time.Time `json:"startTime"`
	}] `json:"meetings"`
	Failed   []partFailure `json:"failed"`
	Complete bool          `json:"complete"`
}

// TestMyWork: alice's open assigned work packages, hers updated since a
// time (closed ones too) and the upcoming meetings she is invited to,
// each capped with what it left out.
func TestMyWork(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newHTTPEnv(t, httpEnvOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.aliceID(t)
	// The generated data lies in the past: what changes from here on is
	// all that was updated since.
	since := time.Now().UTC().Add(-time.Second).Truncate(time.Second)

	// 28 new work packages assigned to alice; the last one then closed.
	client, err := openproject.New(openproject.Config{BaseURL: e.base, APIKey: optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	var mine []int64
	for i := range 28 {
		wp, err := client.CreateWorkPackage(ctx, openproject.NewWorkPackage{Project: "alice-private", Subject: fmt.Sprintf("Chore %d", i), AssigneeID: alice})
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, wp.ID)
	}
	i := slices.IndexFunc(e.data.Statuses, func(st openproject.Status) bool { return st.IsClosed })
	time.Sleep(10 * time.Millisecond) // a later updatedAt than the others'
	if err := e.op.UpdateWorkPackage(mine[27], func(wp *openproject.WorkPackage) { wp.Status = openproject.Ref{ID: e.data.Statuses[i].ID} }); err != nil {
		t.Fatal(err)
	}
	closedOne := mine[len(mine)-1]
	// Upcoming meetings: two alice is invited to, one she is not; and a
	// past one she was invited to.
	at := func(d time.Duration) time.Time { return time.Now().UTC().Add(d).Truncate(time.Minute) }
	meeting := func(title string, start time.Time, participants ...int64) int64 {
		t.Helper()
		m := openproject.Meeting{Title: title, Project: openproject.Ref{ID: e.alice}, Author: openproject.Ref{ID: alice}, StartTime: start, EndTime: start.Add(time.Hour)}
		for _, p := range participants {
			m.Participants = append(m.Participants, openproject.Ref{ID: p})
		}
		added, err := e.op.AddMeeting(m)
		if err != nil {
			t.Fatal(err)
		}
		return added.ID
	}
	later := meeting("Quarterly review", at(72*time.Hour), alice)
	soon := meeting("Standup", at(24*time.Hour), alice)
	meeting("Someone else's", at(48*time.Hour))
	meeting("Last week's", at(-7*24*time.Hour), alice)

	cs := aliceSession(ctx, t, e)
	var w myWorkOut
	if err := httpCall(ctx, cs, "openproject_my_work", map[string]any{"updatedSince": since.Format(time.RFC3339)}, &w); err != nil {
		t.Fatal(err)
	}
	if !w.UpdatedSince.Equal(since) || len(w.Failed) != 0 || w.Complete {
		t.Errorf("updatedSince %v (want %v), failed %v, complete %v", w.UpdatedSince, since, w.Failed, w.Complete)
	}
	// Assigned and open: the 27, newest first, and any others of hers.
	if a := w.Assigned; a == nil || a.Total < 27 || len(a.Elements) != 25 || a.Omitted != a.Total-25 ||
		slices.ContainsFunc(a.Elements, func(r struct {
			ID     int64 `json:"id"`
			Closed bool  `json:"closed"`
		}) bool {
			return r.Closed || !slices.Contains(mine, r.ID)
		}) {
		t.Errorf("assigned = %+v", a)
	}
	// Updated since: exactly the 28, the closed one (changed last) first.
	if u := w.Updated; u == nil || u.Total != 28 || len(u.Elements) != 25 || u.Omitted != 3 || u.Elements[0].ID != closedOne || !u.Elements[0].Closed {
		t.Errorf("updated = %+v", u)
	}
	if m := w.Meetings; m == nil || m.Total != 2 || m.Omitted != 0 || len(m.Elements) != 2 || m.Elements[0].ID != soon || m.Elements[1].ID != later {
		t.Errorf("meetings = %+v, want %d then %d", m, soon, later)
	}

	// Without updatedSince: the last 7 days.
	w = myWorkOut{}
	if err := httpCall(ctx, cs, "openproject_my_work", nil, &w); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(w.UpdatedSince); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour+time.Minute || w.Updated == nil || w.Updated.Total != 28 {
		t.Errorf("default: updatedSince %v, updated %+v", w.UpdatedSince, w.Updated)
	}

	// The meetings cannot be listed: named, and the rest answers.
	e.op.SetFaults(optest.Faults{PathPrefix: "/api/v3/meetings", FailNext: 10, FailStatus: 403})
	w = myWorkOut{}
	if err := httpCall(ctx, cs, "openproject_my_work", nil, &w); err != nil {
		t.Fatal(err)
	}
	e.op.SetFaults(optest.Faults{})
	if len(w.Failed) != 1 || w.Failed[0].Part != "meetings" || w.Meetings != nil || w.Assigned == nil || w.Updated == nil {
		t.Errorf("with the meetings failing: %+v", w)
	}

	for _, bad := range []string{"yesterday", "2025-06-01", "2025-06-01 10:00"} {
		callFails(ctx, t, cs, "openproject_my_work", map[string]any{"updatedSince": bad}, "updatedSince", "RFC 3339")
	}
}
