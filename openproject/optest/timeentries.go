package optest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// Time entries: GET and POST /api/v3/time_entries, after
// docs/api/apiv3/paths/time_entries.yml, TimeEntryRepresenter and the
// TimeEntries contracts of opf/openproject.
//
// Where the fake simplifies:
//   - A user sees the time entries of the projects where they may view
//     work packages (the real server asks for view_time_entries, or
//     view_own_time_entries for their own); the fake does not model those
//     permissions.
//   - Logging time needs log_time in the work package's project, which the
//     fake also grants to whoever may edit work packages there (canWrite).
//   - A request body with several problems gets the first one as a single
//     PropertyConstraintViolation, not the real MultipleErrors.

// PermLogTime lets a member log time in a project (CreateContract's
// user_allowed_to_add).
const PermLogTime = "log_time"

// timeEntryActivities are the activities of OpenProject's seed data; a
// time entry's activity must be one of them.
var timeEntryActivities = []openproject.Ref{
	{ID: 1, Title: "Management"}, {ID: 2, Title: "Specification"}, {ID: 3, Title: "Other"},
	{ID: 4, Title: "Development"}, {ID: 5, Title: "Testing"}, {ID: 6, Title: "Support"},
}

// TimeEntryActivities returns the time entry activities the fake knows
// (ids and names), for data sets to pick from.
func TimeEntryActivities() []openproject.Ref { return slices.Clone(timeEntryActivities) }

func activityName(id int64) (string, bool) {
	for _, a := range timeEntryActivities {
		if a.ID == id {
			return a.Title, true
		}
	}
	return "", false
}

// dayLimitHours is the most a user may log on one day
// (BaseContract#validate_day_limit).
const dayLimitHours = 24

// canLogTime reports whether u may log time in project pid.
func (s *store) canLogTime(u *User, pid int64) bool {
	return s.allowed(u, pid, PermLogTime) || s.canWrite(u, pid)
}

// listTimeEntries answers GET /time_entries: a paged collection of the
// entries the caller may see, filtered by work_package, project, user,
// activity (=, !), spent_on (date operators) and created_at/updated_at,
// sorted by spentOn ascending unless sortBy says otherwise.
func (s *Server) listTimeEntries(ex *exchange, _ []string) {
	q := ex.r.URL.Query()
	fs, _, apiErr := readFilters(q, false)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	preds, apiErr := compileTimeEntryFilters(fs, ex.user, s.clock())
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	keys, apiErr := readSort(q, timeEntrySortField)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	if len(keys) == 0 {
		// The documented default order: spent_on ascending.
		keys = []sortKey[*openproject.TimeEntry]{{cmp: timeEntrySortField("spent_on")}}
	}
	pg := s.parsePage(q)
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	elems, total := visiblePage(s, ex.user, s.st.teOrder, func(id int64) *openproject.TimeEntry { return s.st.timeEntries[id] },
		func(te *openproject.TimeEntry) int64 { return te.Project.ID }, func(te *openproject.TimeEntry) int64 { return te.ID },
		PermViewWorkPackages, preds, keys, pg, r.timeEntry)
	s.st.mu.RUnlock()
	extra := obj{
		{"createTimeEntry", actionLink("/api/v3/time_entries/form", "post", "")},
		{"createTimeEntryImmediately", actionLink("/api/v3/time_entries", "post", "")},
	}
	ex.sendHAL(http.StatusOK, pagedCollection("Collection", "/api/v3/time_entries", q, pg, total, elems, extra, nil))
}

// spentOnTime is a time entry's day as midnight UTC, for the date filters.
func spentOnTime(te *openproject.TimeEntry) time.Time {
	t, _ := time.Parse(time.DateOnly, te.SpentOn)
	return t
}

func compileTimeEntryFilters(fs openproject.Filters, caller *User, now time.Time) ([]func(*openproject.TimeEntry) bool, *apiError) {
	var preds []func(*openproject.TimeEntry) bool
	for _, f := range fs {
		name := canonicalFilterName(f.Name)
		var p func(*openproject.TimeEntry) bool
		var err *apiError
		switch name {
		case "work_package":
			p, err = idFilter(f, name, func(te *openproject.TimeEntry) int64 {
				if te.WorkPackage == nil {
					return 0
				}
				return te.WorkPackage.ID
			})
		case "project":
			p, err = idFilter(f, name, func(te *openproject.TimeEntry) int64 { return te.Project.ID })
		case "user":
			// "me" is the caller, as in every principal filter.
			g := f
			g.Values = slices.Clone(f.Values)
			for i, v := range g.Values {
				if strings.TrimSpace(v) == "me" {
					g.Values[i] = itoa(caller.ID)
				}
			}
			p, err = idFilter(g, name, func(te *openproject.TimeEntry) int64 { return te.User.ID })
		case "activity":
			p, err = idFilter(f, name, func(te *openproject.TimeEntry) int64 {
				if te.Activity == nil {
					return 0
				}
				return te.Activity.ID
			})
		case "spent_on":
			p, err = dateFilter(f, name, now, spentOnTime)
		case "created_at":
			p, err = dateFilter(f, name, now, func(te *openproject.TimeEntry) time.Time { return te.CreatedAt })
		case "updated_at":
			p, err = dateFilter(f, name, now, func(te *openproject.TimeEntry) time.Time { return te.UpdatedAt })
		default:
			return nil, errInvalidQuery(msgFilterUnknown)
		}
		if err != nil {
			return nil, err
		}
		preds = append(preds, p)
	}
	return preds, nil
}

// timeEntrySortField resolves the documented sorts: id, hours, spent_on,
// created_at, updated_at.
func timeEntrySortField(name string) func(a, b *openproject.TimeEntry) int {
	switch name {
	case "id":
		return func(a, b *openproject.TimeEntry) int { return cmp.Compare(a.ID, b.ID) }
	case "hours":
		return func(a, b *openproject.TimeEntry) int { return cmp.Compare(a.Hours, b.Hours) }
	case "spent_on":
		return func(a, b *openproject.TimeEntry) int { return cmp.Compare(a.SpentOn, b.SpentOn) }
	case "created_at":
		return func(a, b *openproject.TimeEntry) int { return a.CreatedAt.Compare(b.CreatedAt) }
	case "updated_at":
		return func(a, b *openproject.TimeEntry) int { return a.UpdatedAt.Compare(b.UpdatedAt) }
	}
	return nil
}

// timeEntryInput is the writable part of a time entry request body.
type timeEntryInput struct {
	Hours   json.RawMessage            `json:"hours"`
	SpentOn json.RawMessage            `json:"spentOn"`
	Comment *formattableInput          `json:"comment"`
	Links   map[string]json.RawMessage `json:"_links"`
}

func errPropertyFormat(attr, expected, got string) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, identifier: "PropertyFormatError", attribute: attr,
		message: fmt.Sprintf("%s is invalid. Expected format like '%s', got '%s'.", attr, expected, got)}
}

// createTimeEntry answers POST /time_entries with 201 and the new entry.
// Checks, in order: a JSON body (400); a work package link that names an
// existing work package (422 Work package is invalid); log_time in its
// project (403, also when the caller cannot see the work package, as the
// real contract's unauthorized error wins over the others); a work
// package the caller can see (422); hours, an ISO 8601 duration, present
// and not negative (422); spentOn, a date, present (422); a known
// activity (422); at most 24 hours per user and day (422).
func (s *Server) createTimeEntry(ex *exchange, _ []string) {
	var in timeEntryInput
	if err := ex.readBody(&in); err != nil {
		ex.sendAPIError(err)
		return
	}
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	wpID, set, ok := linkTarget(in.Links, "workPackage", "/api/v3/work_packages/")
	wp := s.st.wps[wpID]
	if !set || !ok || wp == nil {
		ex.sendAPIError(errConstraint("workPackage", "Work package is invalid."))
		return
	}
	if !s.st.canLogTime(ex.user, wp.Project.ID) {
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	if !s.st.canSeeWP(ex.user, wp) {
		ex.sendAPIError(errConstraint("workPackage", "Work package is invalid."))
		return
	}
	hours, apiErr := readHours(in.Hours)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	spentOn, apiErr := readSpentOn(in.SpentOn)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	te := &openproject.TimeEntry{
		Hours: hours, SpentOn: spentOn,
		User:        openproject.Ref{ID: ex.user.ID, Href: "/api/v3/users/" + itoa(ex.user.ID)},
		WorkPackage: &openproject.Ref{ID: wp.ID, Href: "/api/v3/work_packages/" + itoa(wp.ID)},
		Project:     openproject.Ref{ID: wp.Project.ID, Href: "/api/v3/projects/" + itoa(wp.Project.ID)},
		CreatedAt:   now, UpdatedAt: now,
	}
	if in.Comment != nil {
		te.Comment = in.Comment.Raw
	}
	if actID, set, ok := linkTarget(in.Links, "activity", "/api/v3/time_entries/activities/"); set {
		name, known := activityName(actID)
		if !ok || (actID != 0 && !known) {
			ex.sendAPIError(errConstraint("activity", "Activity is not set to one of the allowed values."))
			return
		}
		if actID != 0 {
			te.Activity = &openproject.Ref{ID: actID, Href: "/api/v3/time_entries/activities/" + itoa(actID), Title: name}
		}
	}
	if s.st.hoursOn(ex.user.ID, spentOn)+hours > dayLimitHours {
		ex.sendAPIError(errConstraint("hours", "Hours exceed the limit of 24 hours per day."))
		return
	}
	s.st.nextTimeEntry++
	te.ID = s.st.nextTimeEntry
	s.st.addTimeEntry(te)
	ex.sendHAL(http.StatusCreated, s.newRenderer(ex.user).timeEntry(te))
}

// readHours reads the hours of a request body: an ISO 8601 duration, not
// negative. As the real representer does, a number is not a duration.
func readHours(raw json.RawMessage) (float64, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errConstraint("hours", "Hours can't be blank.")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, errPropertyFormat("hours", "ISO 8601 duration", strings.Trim(string(raw), `"`))
	}
	h, err := openproject.ParseHours(s)
	if err != nil || math.IsInf(h, 0) || math.IsNaN(h) {
		return 0, errPropertyFormat("hours", "ISO 8601 duration", s)
	}
	if h < 0 {
		return 0, errConstraint("hours", "Hours is invalid.")
	}
	return h, nil
}

// readSpentOn reads the spentOn of a request body: a YYYY-MM-DD date.
func readSpentOn(raw json.RawMessage) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errConstraint("spentOn", "Date can't be blank.")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errPropertyFormat("spentOn", "ISO 8601 date only", strings.Trim(string(raw), `"`))
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return "", errPropertyFormat("spentOn", "ISO 8601 date only", s)
	}
	return s, nil
}

// hoursOn sums what user logged on day. The caller holds the lock.
func (s *store) hoursOn(user int64, day string) float64 {
	sum := 0.0
	for _, te := range s.timeEntries {
		if te.User.ID == user && te.SpentOn == day {
			sum += te.Hours
		}
	}
	return sum
}

// addTimeEntry indexes a new time entry (its id is the largest so far).
// The caller holds the write lock.
func (s *store) addTimeEntry(te *openproject.TimeEntry) {
	s.timeEntries[te.ID] = te
	s.teOrder = append(s.teOrder, te.ID)
	if te.WorkPackage != nil {
		s.teByWP[te.WorkPackage.ID] = append(s.teByWP[te.WorkPackage.ID], te.ID)
	}
}

// deleteTimeEntriesOfWP removes the time entries of a deleted work
// package, as the real DELETE does. The caller holds the write lock.
func (s *store) deleteTimeEntriesOfWP(wpID int64) {
	ids := s.teByWP[wpID]
	if len(ids) == 0 {
		return
	}
	for _, id := range ids {
		delete(s.timeEntries, id)
	}
	delete(s.teByWP, wpID)
	s.teOrder = slices.DeleteFunc(s.teOrder, func(id int64) bool { _, ok := s.timeEntries[id]; return !ok })
}

// formatHours renders hours as the real server does (ruby-duration's
// iso8601 of hours*3600 seconds): days, then hours, minutes and seconds,
// zeros left out; "PT0S" for nothing.
func formatHours(h float64) string {
	secs := int64(math.Round(h * 3600))
	if secs <= 0 {
		return "PT0S"
	}
	var b strings.Builder
	b.WriteByte('P')
	if d := secs / 86400; d > 0 {
		b.WriteString(strconv.FormatInt(d, 10) + "D")
	}
	if secs%86400 != 0 {
		b.WriteByte('T')
		for _, u := range []struct {
			n    int64
			unit string
		}{{secs % 86400 / 3600, "H"}, {secs % 3600 / 60, "M"}, {secs % 60, "S"}} {
			if u.n > 0 {
				b.WriteString(strconv.FormatInt(u.n, 10) + u.unit)
			}
		}
	}
	return b.String()
}

// timeEntry renders a TimeEntry (time_entry_model.yml). The caller holds
// the read lock.
func (r *renderer) timeEntry(te *openproject.TimeEntry) obj {
	self := "/api/v3/time_entries/" + itoa(te.ID)
	o := obj{
		{"_type", "TimeEntry"},
		{"id", te.ID},
		{"comment", formattable("plain", te.Comment)},
		{"spentOn", fmtDate(te.SpentOn)},
		{"hours", formatHours(te.Hours)},
		{"ongoing", false},
		{"createdAt", fmtTime(te.CreatedAt)},
		{"updatedAt", fmtTime(te.UpdatedAt)},
	}
	links := obj{}
	// update_allowed?: edit_time_entries, or edit_own_time_entries for
	// one's own; the fake lets the author (with log_time) and writers edit.
	if r.st.canWrite(r.caller, te.Project.ID) || (te.User.ID == r.caller.ID && r.st.canLogTime(r.caller, te.Project.ID)) {
		links = append(links,
			kv{"updateImmediately", actionLink(self, "patch", "")},
			kv{"update", actionLink(self+"/form", "post", "")},
			kv{"delete", actionLink(self, "delete", "")})
	}
	activity := nullLink()
	if te.Activity != nil && te.Activity.ID != 0 {
		name, _ := activityName(te.Activity.ID)
		activity = link("/api/v3/time_entries/activities/"+itoa(te.Activity.ID), cmp.Or(name, te.Activity.Title))
	}
	wp := nullLink()
	if te.WorkPackage != nil {
		wp = r.wpLink(te.WorkPackage.ID)
	}
	links = append(links,
		kv{"schema", link("/api/v3/time_entries/schema", "")},
		kv{"self", link(self, "")},
		kv{"project", r.projectLink(te.Project.ID)},
		kv{"workPackage", wp},
		kv{"user", r.userLink(te.User.ID)},
		kv{"activity", activity},
	)
	return append(o, kv{"_links", links})
}

// cloneTimeEntry deep-copies a time entry.
func cloneTimeEntry(te openproject.TimeEntry) openproject.TimeEntry {
	te.WorkPackage = cloneRef(te.WorkPackage)
	te.Activity = cloneRef(te.Activity)
	return te
}
