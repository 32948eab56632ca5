package mcp

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// The meeting tools: list_meetings and get_meeting (with agenda items
// and their outcomes).

type listMeetingsIn struct {
	paging
	ProjectID idOrSlug `json:"projectId,omitempty" jsonschema:"project id or identifier"`
	Time      string   `json:"time,omitempty" jsonschema:"upcoming or past"`
}

func (s *server) listMeetings(ctx context.Context, in listMeetingsIn) (listOut[meetingRow], error) {
	opts, err := in.options(20)
	if err != nil {
		return listOut[meetingRow]{}, err
	}
	fs := openproject.Filters{}
	switch t := strings.ToLower(strings.TrimSpace(in.Time)); t {
	case "":
	case "upcoming", "past":
		fs = append(fs, openproject.Filter{Name: "time", Operator: "=", Values: []string{t}})
	default:
		return listOut[meetingRow]{}, argErr("time", "must be upcoming or past, got %q", in.Time)
	}
	if in.ProjectID != "" {
		id, err := s.projectID(ctx, "projectId", in.ProjectID)
		if err != nil {
			return listOut[meetingRow]{}, err
		}
		fs = append(fs, openproject.InProjects(id))
	}
	if len(fs) > 0 {
		opts.Filters = fs
	}
	p, err := s.api.ListMeetings(ctx, opts)
	if errors.Is(err, openproject.ErrUnsupported) {
		return listOut[meetingRow]{}, s.unsupported(ctx, "openproject_list_meetings", err,
			"it has no meetings list (OpenProject before the meetings API); use openproject_search_meetings, or openproject_get_meeting with an id")
	}
	if err != nil {
		return listOut[meetingRow]{}, err
	}
	return pageOf(p, meetingRowOf), nil
}

type getMeetingIn struct {
	ID                 int64 `json:"id" jsonschema:"meeting id"`
	IncludeAgendaItems *bool `json:"includeAgendaItems,omitempty" jsonschema:"include agenda items (default true)"`
}

type meetingOut struct {
	ID           int64       `json:"id"`
	Title        string      `json:"title"`
	StartTime    string      `json:"startTime,omitempty"`
	EndTime      string      `json:"endTime,omitempty"`
	Duration     float64     `json:"duration,omitempty"`
	Location     string      `json:"location"`
	Project      *ref        `json:"project"`
	Author       *ref        `json:"author"`
	Participants []ref       `json:"participants"`
	AgendaItems  []agendaRow `json:"agendaItems"`
	URL          string      `json:"url,omitempty"`
	Note         string      `json:"note"`
	Truncated    bool        `json:"truncated"`
}

// maxParticipants bounds the participant list of one answer.
const maxParticipants = 100

func (s *server) getMeeting(ctx context.Context, in getMeetingIn) (meetingOut, error) {
	if err := checkID("id", in.ID); err != nil {
		return meetingOut{}, err
	}
	m, err := s.api.Meeting(ctx, in.ID)
	if err != nil {
		return meetingOut{}, err
	}
	out := meetingOutOf(m, s.baseURL())
	if in.IncludeAgendaItems == nil || *in.IncludeAgendaItems {
		items, err := s.api.AgendaItems(ctx, in.ID)
		switch {
		case errors.Is(err, openproject.ErrNotFound):
			// The meeting exists (we just read it), so a 404 here means the
			// server predates the agenda items API, not a hidden meeting.
			out.Note = "this OpenProject server does not provide agenda items through its API"
		case err != nil:
			// Never an empty agenda for an auth or network failure.
			return meetingOut{}, err
		}
		out.addAgenda(items)
	}
	return out, nil
}

// meetingOutOf is get_meeting's answer for m without its agenda items
// (addAgenda adds them); base is the instance's web address.
func meetingOutOf(m openproject.Meeting, base string) meetingOut {
	loc, cut := capText(m.Location, capRow)
	out := meetingOut{ID: m.ID, Title: m.Title, Duration: m.Duration, Location: loc, Project: refOf(m.Project),
		Author: refOf(m.Author), Participants: []ref{}, AgendaItems: []agendaRow{}, Truncated: cut}
	if !m.StartTime.IsZero() {
		out.StartTime = m.StartTime.Format("2006-01-02T15:04:05Z07:00")
	}
	if !m.EndTime.IsZero() {
		out.EndTime = m.EndTime.Format("2006-01-02T15:04:05Z07:00")
	}
	if base != "" {
		out.URL = base + "/meetings/" + strconv.FormatInt(m.ID, 10)
	}
	for i, p := range m.Participants {
		if i == maxParticipants {
			out.Truncated = true
			break
		}
		if r := refOf(p); r != nil {
			out.Participants = append(out.Participants, *r)
		}
	}
	return out
}

// addAgenda adds a meeting's agenda items, with their notes and
// outcomes, capped.
func (out *meetingOut) addAgenda(items []openproject.AgendaItem) {
	for _, it := range items {
		row, cut := agendaRowOf(it)
		out.AgendaItems = append(out.AgendaItems, row)
		out.Truncated = out.Truncated || cut
	}
}

type meetingRow struct {
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	StartTime time.Time `json:"startTime,omitzero"`
	EndTime   time.Time `json:"endTime,omitzero"`
	Location  string    `json:"location,omitempty"`
	Project   *ref      `json:"project"`
}

func meetingRowOf(m openproject.Meeting) (meetingRow, bool) {
	title, cut1 := capText(m.Title, capRow)
	loc, cut2 := capText(m.Location, capRow)
	return meetingRow{ID: m.ID, Title: title, StartTime: m.StartTime, EndTime: m.EndTime, Location: loc, Project: refOf(m.Project)}, cut1 || cut2
}

type agendaRow struct {
	ID              int64        `json:"id"`
	Position        int          `json:"position"`
	Title           string       `json:"title"`
	ItemType        string       `json:"itemType"`
	DurationMinutes *int         `json:"durationInMinutes,omitempty"`
	Notes           string       `json:"notes"`
	WorkPackage     *ref         `json:"workPackage,omitempty"`
	Presenter       *ref         `json:"presenter,omitempty"`
	Section         *ref         `json:"section,omitempty"`
	Outcomes        []outcomeRow `json:"outcomes"`
}

type outcomeRow struct {
	ID    int64  `json:"id"`
	Notes string `json:"notes"`
}

func agendaRowOf(it openproject.AgendaItem) (agendaRow, bool) {
	title, cut := capText(it.Title, capRow)
	notes, c := capText(it.Notes, capComment)
	cut = cut || c
	row := agendaRow{ID: it.ID, Position: it.Position, Title: title, ItemType: it.ItemType, DurationMinutes: it.DurationMinutes,
		Notes: notes, WorkPackage: optRefOf(it.WorkPackage), Presenter: optRefOf(it.Presenter), Section: optRefOf(it.Section),
		Outcomes: []outcomeRow{}}
	for _, o := range it.Outcomes {
		n, c := capText(o.Notes, capComment)
		cut = cut || c
		row.Outcomes = append(row.Outcomes, outcomeRow{ID: o.ID, Notes: n})
	}
	return row, cut
}
