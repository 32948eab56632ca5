package mcp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// The time entry tools: openproject_list_time_entries (live read) and
// openproject_log_time (a write). Time entries are not indexed, so logging
// time refreshes nothing locally.

type listTimeEntriesIn struct {
	paging
	WorkPackageID int64    `json:"workPackageId,omitempty" jsonschema:"work package id"`
	ProjectID     idOrSlug `json:"projectId,omitempty" jsonschema:"project id or identifier"`
	UserID        int64    `json:"userId,omitempty" jsonschema:"user id"`
	From          string   `json:"from,omitempty" jsonschema:"from this day, YYYY-MM-DD"`
	To            string   `json:"to,omitempty" jsonschema:"to this day, YYYY-MM-DD"`
}

func (s *server) listTimeEntries(ctx context.Context, in listTimeEntriesIn) (listOut[timeEntryRow], error) {
	opts, err := in.options(20)
	if err != nil {
		return listOut[timeEntryRow]{}, err
	}
	for _, c := range []struct {
		param string
		id    int64
	}{{"workPackageId", in.WorkPackageID}, {"userId", in.UserID}} {
		if c.id < 0 {
			return listOut[timeEntryRow]{}, argErr(c.param, "must be a positive id, got %d", c.id)
		}
	}
	from, to := strings.TrimSpace(in.From), strings.TrimSpace(in.To)
	if err := checkDate("from", from); err != nil {
		return listOut[timeEntryRow]{}, err
	}
	if err := checkDate("to", to); err != nil {
		return listOut[timeEntryRow]{}, err
	}
	if from != "" && to != "" && to < from {
		return listOut[timeEntryRow]{}, argErr("to", "%s is before from %s", to, from)
	}
	fs := openproject.Filters{}
	if in.WorkPackageID > 0 {
		fs = append(fs, openproject.Filter{Name: "work_package", Operator: "=", Values: []string{fmt.Sprint(in.WorkPackageID)}})
	}
	if in.ProjectID != "" {
		// The project filter takes ids only; an identifier costs a lookup.
		id, err := s.projectID(ctx, "projectId", in.ProjectID)
		if err != nil {
			return listOut[timeEntryRow]{}, err
		}
		fs = append(fs, openproject.InProjects(id))
	}
	if in.UserID > 0 {
		fs = append(fs, openproject.Filter{Name: "user", Operator: "=", Values: []string{fmt.Sprint(in.UserID)}})
	}
	if from != "" || to != "" {
		fs = append(fs, openproject.SpentBetween(from, to))
	}
	if len(fs) > 0 {
		opts.Filters = fs
	}
	// Newest first: an agent asking about logged time mostly wants the
	// recent entries (the API's default is oldest first).
	opts.SortBy = []openproject.Sort{{Field: "spent_on", Direction: "desc"}, {Field: "id", Direction: "desc"}}
	p, err := s.api.ListTimeEntries(ctx, opts)
	if err != nil {
		return listOut[timeEntryRow]{}, err
	}
	return pageOf(p, timeEntryRowOf), nil
}

// timeEntryRow is a time entry in a list or a log_time answer.
type timeEntryRow struct {
	ID          int64   `json:"id"`
	Hours       float64 `json:"hours"`
	SpentOn     string  `json:"spentOn"`
	User        *ref    `json:"user"`
	WorkPackage *ref    `json:"workPackage,omitempty"`
	Project     *ref    `json:"project"`
	Activity    string  `json:"activity,omitempty"`
	Comment     string  `json:"comment,omitempty"`
}

// roundHours keeps two decimals: a duration of 20 minutes is 0.33 hours,
// not 0.3333333333333333.
func roundHours(h float64) float64 { return math.Round(h*100) / 100 }

func timeEntryRowOf(te openproject.TimeEntry) (timeEntryRow, bool) {
	comment, cut := capText(te.Comment, capRow)
	row := timeEntryRow{ID: te.ID, Hours: roundHours(te.Hours), SpentOn: te.SpentOn, User: refOf(te.User),
		WorkPackage: optRefOf(te.WorkPackage), Project: refOf(te.Project), Comment: comment}
	if row.WorkPackage != nil {
		var c bool
		row.WorkPackage.Name, c = capText(row.WorkPackage.Name, capRow)
		cut = cut || c
	}
	if te.Activity != nil {
		row.Activity = te.Activity.Title
	}
	return row, cut
}

// --- log time ---

// maxLogHours is the most one time entry can hold: OpenProject refuses
// more than 24 hours per user and day.
const maxLogHours = 24

type logTimeIn struct {
	confirmArg
	WorkPackageID int64   `json:"workPackageId" jsonschema:"work package id"`
	Hours         float64 `json:"hours" jsonschema:"hours, over 0 and at most 24 (1.5 = 1h30m)"`
	SpentOn       string  `json:"spentOn,omitempty" jsonschema:"YYYY-MM-DD (default today)"`
	Comment       string  `json:"comment,omitempty" jsonschema:"what the time was spent on (plain text)"`
	ActivityID    int64   `json:"activityId,omitempty" jsonschema:"time entry activity id"`
}

// logTimeOut is the answer of openproject_log_time: the entry as stored.
type logTimeOut struct {
	TimeEntry timeEntryRow `json:"timeEntry"`
	Note      string       `json:"note"`
	Preview   *preview     `json:"preview,omitempty"`
}

func (s *server) logTime(ctx context.Context, in logTimeIn) (logTimeOut, error) {
	if s.opts.ReadOnly {
		return logTimeOut{}, errReadOnly
	}
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return logTimeOut{}, err
	}
	switch {
	case math.IsNaN(in.Hours) || in.Hours <= 0:
		return logTimeOut{}, argErr("hours", "must be more than 0, got %v", in.Hours)
	case in.Hours > maxLogHours:
		return logTimeOut{}, argErr("hours", "must be at most %d (one day), got %v", maxLogHours, in.Hours)
	case math.Round(in.Hours*3600) < 1:
		return logTimeOut{}, argErr("hours", "is less than a second, got %v", in.Hours)
	}
	spentOn := strings.TrimSpace(in.SpentOn)
	if spentOn == "" {
		spentOn = time.Now().Format(time.DateOnly)
	} else if err := checkDate("spentOn", spentOn); err != nil {
		return logTimeOut{}, err
	}
	if in.ActivityID < 0 {
		return logTimeOut{}, argErr("activityId", "must be a positive id, got %d", in.ActivityID)
	}
	if s.previewing(in.confirmArg) {
		// The work package, read now: one the user cannot see fails
		// here as the write would.
		wp, err := s.api.WorkPackage(ctx, in.WorkPackageID)
		if err != nil {
			return logTimeOut{}, err
		}
		changes := map[string]any{"hours": in.Hours, "spentOn": spentOn}
		if in.Comment != "" {
			c, _ := capText(in.Comment, capComment)
			changes["comment"] = c
		}
		if in.ActivityID != 0 {
			changes["activityId"] = in.ActivityID
		}
		return logTimeOut{Note: confirmNote, Preview: &preview{
			Action:  fmt.Sprintf("log %v h on work package %d %q as you", in.Hours, wp.ID, wp.Subject),
			Changes: changes,
		}}, nil
	}
	te, err := s.api.CreateTimeEntry(ctx, openproject.NewTimeEntry{
		WorkPackageID: in.WorkPackageID, Hours: in.Hours, SpentOn: spentOn, Comment: in.Comment, ActivityID: in.ActivityID,
	})
	if err != nil {
		return logTimeOut{}, err
	}
	row, _ := timeEntryRowOf(te)
	row.Comment, _ = capText(te.Comment, capComment)
	what := fmt.Sprintf("work package %d", in.WorkPackageID)
	if row.WorkPackage != nil && row.WorkPackage.Name != "" {
		what = fmt.Sprintf("work package %d (%s)", row.WorkPackage.ID, row.WorkPackage.Name)
	}
	return logTimeOut{TimeEntry: row, Note: fmt.Sprintf(
		"logged %v h spent on %s on %s as time entry %d; time entries are not in the search index: openproject_list_time_entries lists them",
		row.Hours, row.SpentOn, what, te.ID)}, nil
}
