package opgen

import (
	"strconv"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// timeEntryCounts is how many time entries a work package gets, weighted:
// about half get none, a few get several.
var timeEntryCounts = []weighted{{0, 10}, {1, 5}, {2, 3}, {3, 2}, {4, 1}}

// timeEntryQuarters is a time entry's length in quarter hours, weighted:
// mostly half an hour to four hours.
var timeEntryQuarters = []weighted{{1, 2}, {2, 6}, {3, 2}, {4, 8}, {6, 4}, {8, 6}, {12, 3}, {16, 3}, {24, 1}, {32, 1}}

// timeEntryComments are the comments of time entries; "" (no comment) is
// the most frequent, as in real instances.
var timeEntryComments = []string{
	"", "", "", "Implementation", "Code review", "Pairing session", "Investigated the root cause",
	"Meeting with stakeholders", "Wrote tests", "Updated the documentation", "Deployment and checks",
	"Estimation and planning", "Follow-up on feedback", "Research", "Bug fixing",
}

// maxGeneratedDayHours bounds what one user logs on one day, below the
// API's limit of 24.
const maxGeneratedDayHours = 10

// genTimeEntries logs time on work packages: by members of the work
// package's project, on weekdays from the day it was created, with a
// comment now and then. It draws only from streamTimeEntries and reads
// what earlier stages produced, so the rest of the data set does not
// depend on it.
func (g *generator) genTimeEntries(wps []openproject.WorkPackage) []openproject.TimeEntry {
	r := Rand(g.o.Seed, streamTimeEntries)
	byProject := make(map[int64]*projInfo, len(g.projects))
	for i := range g.projects {
		byProject[g.projects[i].ref.ID] = &g.projects[i]
	}
	activities := optest.TimeEntryActivities()
	type userDay struct {
		user int64
		day  string
	}
	logged := map[userDay]float64{}
	out := []openproject.TimeEntry{}
	for i := range wps {
		wp := &wps[i]
		p := byProject[wp.Project.ID]
		n := pickWeighted(r, timeEntryCounts)
		if p == nil || len(p.members) == 0 {
			continue
		}
		created := wp.CreatedAt
		if i < len(g.wpCreated) {
			created = time.Unix(g.wpCreated[i], 0).UTC()
		}
		for range n {
			u := g.userRefs[p.members[r.IntN(len(p.members))]]
			day := weekday(created.AddDate(0, 0, r.IntN(45)))
			hours := float64(pickWeighted(r, timeEntryQuarters)) / 4
			comment := timeEntryComments[r.IntN(len(timeEntryComments))]
			act := activities[r.IntN(len(activities))]
			key := userDay{u.ID, day.Format(time.DateOnly)}
			// Logged in the late afternoon of the day itself.
			at := day.Add(time.Duration(16*60+r.IntN(120)) * time.Minute)
			if logged[key]+hours > maxGeneratedDayHours || at.Before(g.start) || at.After(g.end) {
				continue
			}
			logged[key] += hours
			id := int64(len(out) + 1)
			out = append(out, openproject.TimeEntry{
				ID: id, Hours: hours, SpentOn: key.day, Comment: comment,
				User:        openproject.Ref{ID: u.ID, Href: u.Href, Title: u.Title},
				WorkPackage: &openproject.Ref{ID: wp.ID, Href: "/api/v3/work_packages/" + strconv.FormatInt(wp.ID, 10), Title: wp.Subject},
				Project:     wp.Project,
				Activity:    &openproject.Ref{ID: act.ID, Href: "/api/v3/time_entries/activities/" + strconv.FormatInt(act.ID, 10), Title: act.Title},
				CreatedAt:   at, UpdatedAt: at,
			})
		}
	}
	return out
}

// weekday moves a weekend day to the Monday after, at midnight UTC.
func weekday(t time.Time) time.Time {
	t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch t.Weekday() {
	case time.Saturday:
		return t.AddDate(0, 0, 2)
	case time.Sunday:
		return t.AddDate(0, 0, 1)
	}
	return t
}
