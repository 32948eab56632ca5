package opgen

import (
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// meetingMinutes are the lengths of meetings, in minutes, weighted.
var meetingMinutes = []weighted{{15, 1}, {30, 3}, {60, 8}, {90, 2}, {120, 1}}

func (g *generator) genMeetings(wps []openproject.WorkPackage) []openproject.Meeting {
	n := g.o.Meetings
	if n == 0 {
		return []openproject.Meeting{}
	}
	r := Rand(g.o.Seed, streamMeetings)
	w := newWriter(g, r)
	meetings := make([]openproject.Meeting, n)
	crowded := func(i int) bool { return len(g.projects[i].members) >= 2 }
	if g.pickProject(r, crowded) < 0 {
		crowded = nil
	}
	for i := range meetings {
		m := &meetings[i]
		pi := g.pickProject(r, crowded)
		proj := &g.projects[pi]
		w.setProject(proj, len(wps))

		// Meetings start on a weekday between 9:00 and 16:30.
		day := g.start.AddDate(0, 0, 2+r.IntN(355))
		switch day.Weekday() {
		case time.Saturday:
			day = day.AddDate(0, 0, 2)
		case time.Sunday:
			day = day.AddDate(0, 0, 1)
		}
		startTime := time.Date(day.Year(), day.Month(), day.Day(), 9+r.IntN(8), 30*r.IntN(2), 0, 0, time.UTC)
		if startTime.Before(g.start) {
			startTime = g.start
		}
		minutes := pickWeighted(r, meetingMinutes)
		endTime := startTime.Add(time.Duration(minutes) * time.Minute)
		if endTime.After(g.end) {
			endTime = g.end
			startTime = endTime.Add(-time.Duration(minutes) * time.Minute)
		}
		created := genLater(g.start, startTime.Add(-time.Duration(1+r.IntN(14*24))*time.Hour))
		updated := genEarlier(g.end, endTime.Add(time.Duration(r.IntN(48*60))*time.Minute))

		// Participants: 2-8 members, the author first.
		members := slices.Clone(proj.members)
		r.Shuffle(len(members), func(a, b int) { members[a], members[b] = members[b], members[a] })
		members = members[:min(len(members), 2+r.IntN(7))]
		slices.Sort(members)
		author := members[r.IntN(len(members))]
		w.people = members

		m.Title = w.text(meetingSeries[r.IntN(len(meetingSeries))])
		m.Location = meetingRooms[r.IntN(len(meetingRooms))]
		m.LockVersion = r.IntN(4)
		m.StartTime = startTime
		m.EndTime = endTime
		m.Duration = float64(minutes) / 60 // quarters of an hour: exact
		m.Project = proj.ref
		m.Author = g.userRefs[author]
		m.Participants = make([]openproject.Ref, len(members))
		for j, u := range members {
			m.Participants[j] = g.userRefs[u]
		}
		m.CreatedAt = created
		m.UpdatedAt = updated

		// Work packages that existed when the meeting took place.
		pw := g.wpByProject[pi]
		known := pw[:sort.Search(len(pw), func(k int) bool { return g.wpCreated[pw[k]] > startTime.Unix() })]
		items := 2 + r.IntN(6)
		m.AgendaItems = make([]openproject.AgendaItem, items)
		for k := range m.AgendaItems {
			a := &m.AgendaItems[k]
			a.Position = k + 1
			dm := []int{5, 10, 10, 15, 15, 20, 30}[r.IntN(7)]
			a.DurationMinutes = &dm
			by := g.userRefs[members[r.IntN(len(members))]]
			a.Author = &by
			if r.IntN(3) == 0 {
				pr := g.userRefs[members[r.IntN(len(members))]]
				a.Presenter = &pr
			}
			if len(known) > 0 && r.IntN(3) == 0 {
				wp := &wps[known[r.IntN(len(known))]]
				a.ItemType = "work_package"
				a.WorkPackage = &openproject.Ref{ID: wp.ID, Href: "/api/v3/work_packages/" + strconv.FormatInt(wp.ID, 10), Title: wp.Subject}
				a.Title = wp.Subject
			} else {
				a.ItemType = "simple"
				// A second draw makes repeated titles in one meeting rare.
				for try := 0; try < 2 && (a.Title == "" || hasAgendaTitle(m.AgendaItems[:k], a.Title)); try++ {
					a.Title = w.text(agendaTitles[r.IntN(len(agendaTitles))])
				}
			}
			if r.IntN(3) != 0 {
				a.Notes = w.text(agendaNotes[r.IntN(len(agendaNotes))])
			}
			for range r.IntN(3) {
				a.Outcomes = append(a.Outcomes, openproject.Outcome{Notes: w.text(outcomeTemplates[r.IntN(len(outcomeTemplates))])})
			}
			a.LockVersion = r.IntN(3)
			a.CreatedAt = created.Add(time.Duration(r.Int64N(int64(startTime.Sub(created)/time.Second)+1)) * time.Second)
			a.UpdatedAt = a.CreatedAt.Add(time.Duration(r.Int64N(int64(updated.Sub(a.CreatedAt)/time.Second)+1)) * time.Second)
		}
	}
	// Ids follow creation, as they do on a real server; agenda item and
	// outcome ids are global sequences in that order.
	slices.SortStableFunc(meetings, func(a, b openproject.Meeting) int { return a.CreatedAt.Compare(b.CreatedAt) })
	var itemID, outcomeID int64
	for i := range meetings {
		m := &meetings[i]
		m.ID = int64(i + 1)
		for k := range m.AgendaItems {
			a := &m.AgendaItems[k]
			itemID++
			a.ID = itemID
			a.MeetingID = m.ID
			for o := range a.Outcomes {
				outcomeID++
				a.Outcomes[o].ID = outcomeID
			}
		}
	}
	return meetings
}

func hasAgendaTitle(items []openproject.AgendaItem, title string) bool {
	for _, it := range items {
		if it.Title == title {
			return true
		}
	}
	return false
}

func genLater(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func genEarlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
