package optest

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/opsearch/opsearch/openproject"
)

// canonicalFilterName maps the API's camelCase and snake_case filter and
// sort names onto one spelling, as the real server's
// PropertyNameConverter.to_ar_name(refer_to_ids: true) does: updatedAt and
// updated_at become updated_at; status, status_id and statusId become
// status; assigned_to and assignee become assignee.
func canonicalFilterName(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	n := b.String()
	if n != "id" {
		n = strings.TrimSuffix(n, "_id")
	}
	switch n {
	case "assigned_to":
		return "assignee"
	case "updated_on":
		return "updated_at"
	case "created_on":
		return "created_at"
	}
	return n
}

// humanFilterNames are the attribute names the real server puts in front
// of filter validation messages.
var humanFilterNames = map[string]string{
	"status":              "Status",
	"updated_at":          "Updated on",
	"created_at":          "Created on",
	"id":                  "ID",
	"project":             "Project",
	"subject":             "Subject",
	"search":              "Search",
	"type":                "Type",
	"assignee":            "Assignee",
	"active":              "Active",
	"name_and_identifier": "Name or identifier",
	"parent":              "Parent",
	"title":               "Title",
	"time":                "Time",
	"version":             "Version",
	"sharing":             "Sharing",
	"invited_user":        "Invited user",
}

func humanName(canonical string) string {
	if h, ok := humanFilterNames[canonical]; ok {
		return h
	}
	return canonical
}

func errOperator(name string) *apiError {
	return errInvalidQuery(humanName(name) + " Operator is not set to one of the allowed values.")
}

func errValues(name string) *apiError {
	return errInvalidQuery(humanName(name) + " filter has invalid values.")
}

// readFilters returns the request's filters, whether the parameter was
// given, and a 400 answer for unparseable ones. Work packages also accept
// the alias "filter".
func readFilters(q url.Values, allowAlias bool) (openproject.Filters, bool, *apiError) {
	raw, ok := q["filters"]
	if !ok && allowAlias {
		raw, ok = q["filter"]
	}
	if !ok || len(raw) == 0 || strings.TrimSpace(raw[0]) == "" {
		return nil, false, nil
	}
	fs, err := openproject.ParseFilters(raw[0])
	if err != nil {
		return nil, true, errInvalidQuery(err.Error())
	}
	return fs, true, nil
}

// wpPred is one compiled work package filter.
type wpPred = func(wp *openproject.WorkPackage) bool

// wpFilterEnv is what compiling work package filters needs to know.
type wpFilterEnv struct {
	st     *store
	caller *User
	now    time.Time
}

// compileWPFilters validates the filters and turns them into predicates.
func (env wpFilterEnv) compileWPFilters(fs openproject.Filters) ([]wpPred, *apiError) {
	preds := make([]wpPred, 0, len(fs))
	for _, f := range fs {
		p, err := env.compileWPFilter(f)
		if err != nil {
			return nil, err
		}
		if p != nil {
			preds = append(preds, p)
		}
	}
	return preds, nil
}

func (env wpFilterEnv) compileWPFilter(f openproject.Filter) (wpPred, *apiError) {
	name := canonicalFilterName(f.Name)
	switch name {
	case "status":
		return env.statusFilter(f, name)
	case "updated_at":
		return dateFilter(f, name, env.now, func(wp *openproject.WorkPackage) time.Time { return wp.UpdatedAt })
	case "created_at":
		return dateFilter(f, name, env.now, func(wp *openproject.WorkPackage) time.Time { return wp.CreatedAt })
	case "id":
		return idFilter(f, name, func(wp *openproject.WorkPackage) int64 { return wp.ID })
	case "project":
		return idFilter(f, name, func(wp *openproject.WorkPackage) int64 { return wp.Project.ID })
	case "type":
		return idFilter(f, name, func(wp *openproject.WorkPackage) int64 { return wp.Type.ID })
	case "subject":
		m, err := textFilter(f, name)
		if err != nil {
			return nil, err
		}
		return func(wp *openproject.WorkPackage) bool { return m(wp.Subject) }, nil
	case "search":
		if f.Operator != "**" {
			return nil, errOperator(name)
		}
		if len(f.Values) != 1 {
			return nil, errValues(name)
		}
		tokens := strings.Fields(strings.ToLower(f.Values[0]))
		st := env.st
		return func(wp *openproject.WorkPackage) bool { return containsAll(st.search[wp.ID], tokens) }, nil
	case "assignee":
		return env.assigneeFilter(f, name)
	case "version", "fixed_version", "target_version":
		// Queries::WorkPackages::Filter::VersionFilter, key "version"
		// (fixed_version_id), on every server version so far; newer
		// sources add TargetVersionsFilter (target_version_id), the same
		// for a work package with one version, which is all the fake
		// models.
		return idFilter(f, "version", func(wp *openproject.WorkPackage) int64 {
			if wp.Version == nil {
				return 0
			}
			return wp.Version.ID
		})
	}
	return nil, errInvalidQuery(msgFilterUnknown)
}

// statusFilter implements o (open), c (closed), * (all), = and !.
func (env wpFilterEnv) statusFilter(f openproject.Filter, name string) (wpPred, *apiError) {
	st := env.st
	switch f.Operator {
	case "o":
		return func(wp *openproject.WorkPackage) bool { return !st.isClosed(wp.Status.ID) }, nil
	case "c":
		return func(wp *openproject.WorkPackage) bool { return st.isClosed(wp.Status.ID) }, nil
	case "*":
		return nil, nil
	case "=", "!":
		return idFilter(f, name, func(wp *openproject.WorkPackage) int64 { return wp.Status.ID })
	}
	return nil, errOperator(name)
}

// assigneeFilter implements =, ! (user ids or "me"), * (set) and !* (unset).
func (env wpFilterEnv) assigneeFilter(f openproject.Filter, name string) (wpPred, *apiError) {
	id := func(wp *openproject.WorkPackage) int64 {
		if wp.Assignee == nil {
			return 0
		}
		return wp.Assignee.ID
	}
	switch f.Operator {
	case "*":
		return func(wp *openproject.WorkPackage) bool { return id(wp) != 0 }, nil
	case "!*":
		return func(wp *openproject.WorkPackage) bool { return id(wp) == 0 }, nil
	case "=", "!":
		vals := make([]string, len(f.Values))
		for i, v := range f.Values {
			if v == "me" {
				v = itoa(env.caller.ID)
			}
			vals[i] = v
		}
		f.Values = vals
		return idFilter(f, name, id)
	}
	return nil, errOperator(name)
}

// idFilter implements = and ! over a numeric attribute.
func idFilter[T any](f openproject.Filter, name string, get func(T) int64) (func(T) bool, *apiError) {
	if f.Operator != "=" && f.Operator != "!" {
		return nil, errOperator(name)
	}
	if len(f.Values) == 0 {
		return nil, errValues(name)
	}
	set := make(map[int64]bool, len(f.Values))
	for _, v := range f.Values {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, errValues(name)
		}
		set[id] = true
	}
	if f.Operator == "=" {
		return func(x T) bool { return set[get(x)] }, nil
	}
	return func(x T) bool { return !set[get(x)] }, nil
}

// textFilter implements ~ (contains) and !~ (does not contain),
// case-insensitively. Each value is split into words that must all occur,
// as OpenProject's contains operator tokenizes its input; several values
// are alternatives.
func textFilter(f openproject.Filter, name string) (func(string) bool, *apiError) {
	if f.Operator != "~" && f.Operator != "!~" {
		return nil, errOperator(name)
	}
	if len(f.Values) == 0 {
		return nil, errValues(name)
	}
	alts := make([][]string, len(f.Values))
	for i, v := range f.Values {
		alts[i] = strings.Fields(strings.ToLower(v))
	}
	match := func(s string) bool {
		s = strings.ToLower(s)
		for _, tokens := range alts {
			if containsAll(s, tokens) {
				return true
			}
		}
		return false
	}
	if f.Operator == "~" {
		return match, nil
	}
	return func(s string) bool { return !match(s) }, nil
}

// containsAll reports whether every token occurs in s.
func containsAll(s string, tokens []string) bool {
	for _, t := range tokens {
		if !strings.Contains(s, t) {
			return false
		}
	}
	return true
}

// dateFilter implements the datetime_past operators of updatedAt and
// createdAt:
//   - <>d: between two values, both inclusive; "" leaves that side open;
//   - >t-: less than N days ago (from the start of that day until now);
//   - <t-: more than N days ago (until the end of that day);
//   - t-: exactly N days ago; t: today; =d: on the given day.
//
// Days are UTC days.
func dateFilter[T any](f openproject.Filter, name string, now time.Time, get func(T) time.Time) (func(T) bool, *apiError) {
	today := now.UTC().Truncate(24 * time.Hour)
	between := func(from, to time.Time) func(T) bool {
		return func(x T) bool {
			t := get(x)
			if !from.IsZero() && t.Before(from) {
				return false
			}
			if !to.IsZero() && t.After(to) {
				return false
			}
			return true
		}
	}
	days := func() (int, *apiError) {
		if len(f.Values) != 1 {
			return 0, errValues(name)
		}
		n, err := strconv.Atoi(strings.TrimSpace(f.Values[0]))
		if err != nil {
			return 0, errValues(name)
		}
		return n, nil
	}
	endOf := func(day time.Time) time.Time { return day.Add(24*time.Hour - time.Nanosecond) }
	switch f.Operator {
	case "<>d":
		if len(f.Values) != 2 {
			return nil, errValues(name)
		}
		var bounds [2]time.Time
		for i, v := range f.Values {
			if strings.TrimSpace(v) == "" {
				continue
			}
			t, ok := parseFilterTime(v)
			if !ok {
				return nil, errInvalidQuery(humanName(name) + " is not a valid date time.")
			}
			bounds[i] = t
		}
		return between(bounds[0], bounds[1]), nil
	case ">t-":
		n, err := days()
		if err != nil {
			return nil, err
		}
		return between(today.AddDate(0, 0, -n), time.Time{}), nil
	case "<t-":
		n, err := days()
		if err != nil {
			return nil, err
		}
		return between(time.Time{}, endOf(today.AddDate(0, 0, -n))), nil
	case "t-":
		n, err := days()
		if err != nil {
			return nil, err
		}
		day := today.AddDate(0, 0, -n)
		return between(day, endOf(day)), nil
	case "t":
		return between(today, endOf(today)), nil
	case "=d":
		if len(f.Values) != 1 {
			return nil, errValues(name)
		}
		t, ok := parseFilterTime(f.Values[0])
		if !ok {
			return nil, errInvalidQuery(humanName(name) + " is not a valid date time.")
		}
		day := t.UTC().Truncate(24 * time.Hour)
		return between(day, endOf(day)), nil
	}
	return nil, errOperator(name)
}

// filterTimeLayouts are the ISO 8601 forms a filter value may take. Ruby's
// DateTime.parse accepts more; these are the ones clients send. RFC 3339
// parsing accepts fractional seconds even though the layout has none.
var filterTimeLayouts = []string{
	time.RFC3339,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02",
}

// parseFilterTime parses a filter value; values without a zone are UTC and
// a date alone means midnight at the start of that day.
func parseFilterTime(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	for _, layout := range filterTimeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// sortKey is one resolved sort criterion.
type sortKey[T any] struct {
	cmp  func(a, b T) int
	desc bool
}

// readSort parses sortBy and resolves each field with resolve, which
// returns nil for fields the endpoint cannot sort by.
func readSort[T any](q url.Values, resolve func(canonical string) func(a, b T) int) ([]sortKey[T], *apiError) {
	raw := q.Get("sortBy")
	sorts, err := openproject.ParseSortBy(raw)
	if err != nil {
		return nil, errInvalidQuery(err.Error())
	}
	keys := make([]sortKey[T], 0, len(sorts))
	for _, s := range sorts {
		c := resolve(canonicalFilterName(s.Field))
		if c == nil {
			// The real wording for an unknown order is not documented; this
			// mirrors the unknown-filter message.
			return nil, errInvalidQuery("Sort by Invalid order does not exist.")
		}
		keys = append(keys, sortKey[T]{cmp: c, desc: s.Direction == "desc"})
	}
	return keys, nil
}

// sortItems sorts by the keys, ties broken by id ascending. With no keys
// the slice, already in id order, is left alone.
func sortItems[T any](items []T, keys []sortKey[T], id func(T) int64) {
	if len(keys) == 0 {
		return
	}
	compare := func(a, b T) int {
		for _, k := range keys {
			c := k.cmp(a, b)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(id(a), id(b))
	}
	// Lists are scanned in id order, so sorting by id ascending (the
	// default a crawler asks for) finds them sorted already.
	if slices.IsSortedFunc(items, compare) {
		return
	}
	slices.SortStableFunc(items, compare)
}

// wpSortField resolves the work package sort fields.
func wpSortField(name string) func(a, b *openproject.WorkPackage) int {
	switch name {
	case "id":
		return func(a, b *openproject.WorkPackage) int { return cmp.Compare(a.ID, b.ID) }
	case "updated_at":
		return func(a, b *openproject.WorkPackage) int { return a.UpdatedAt.Compare(b.UpdatedAt) }
	case "created_at":
		return func(a, b *openproject.WorkPackage) int { return a.CreatedAt.Compare(b.CreatedAt) }
	case "subject":
		return func(a, b *openproject.WorkPackage) int {
			return cmp.Compare(strings.ToLower(a.Subject), strings.ToLower(b.Subject))
		}
	}
	return nil
}

// compileProjectFilters implements the project list filters the fake
// supports: id (=, !), active (= t/f), name_and_identifier (~, !~) and
// parent (=, !).
func compileProjectFilters(fs openproject.Filters) ([]func(*Project) bool, *apiError) {
	var preds []func(*Project) bool
	for _, f := range fs {
		name := canonicalFilterName(f.Name)
		var p func(*Project) bool
		var err *apiError
		switch name {
		case "id":
			p, err = idFilter(f, name, func(p *Project) int64 { return p.ID })
		case "parent":
			p, err = idFilter(f, name, func(p *Project) int64 {
				if p.Parent == nil {
					return 0
				}
				return p.Parent.ID
			})
		case "active":
			if f.Operator != "=" && f.Operator != "!" {
				return nil, errOperator(name)
			}
			if len(f.Values) != 1 {
				return nil, errValues(name)
			}
			want, ok := parseBoolValue(f.Values[0])
			if !ok {
				return nil, errValues(name)
			}
			if f.Operator == "!" {
				want = !want
			}
			p = func(p *Project) bool { return p.Active == want }
		case "name_and_identifier":
			var m func(string) bool
			m, err = textFilter(f, name)
			if err == nil {
				p = func(p *Project) bool { return m(p.Name + "\n" + p.Identifier) }
			}
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

// parseBoolValue reads the "t"/"f" booleans of filter values.
func parseBoolValue(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "t", "true", "1":
		return true, true
	case "f", "false", "0":
		return false, true
	}
	return false, false
}

// projectSortField resolves the project sort fields.
func projectSortField(name string) func(a, b *Project) int {
	switch name {
	case "id":
		return func(a, b *Project) int { return cmp.Compare(a.ID, b.ID) }
	case "name":
		return func(a, b *Project) int { return cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) }
	case "created_at":
		return func(a, b *Project) int { return a.CreatedAt.Compare(b.CreatedAt) }
	case "public":
		return func(a, b *Project) int { return cmp.Compare(boolInt(a.Public), boolInt(b.Public)) }
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compileMeetingFilters implements project (=), title (~), time
// (= upcoming | past) and invitedUserId (=). A meeting is upcoming until
// it has ended.
func compileMeetingFilters(fs openproject.Filters, now time.Time) ([]func(*openproject.Meeting) bool, *apiError) {
	var preds []func(*openproject.Meeting) bool
	for _, f := range fs {
		name := canonicalFilterName(f.Name)
		var p func(*openproject.Meeting) bool
		var err *apiError
		switch name {
		case "project":
			p, err = idFilter(f, name, func(m *openproject.Meeting) int64 { return m.Project.ID })
		case "title":
			var match func(string) bool
			match, err = textFilter(f, name)
			if err == nil {
				p = func(m *openproject.Meeting) bool { return match(m.Title) }
			}
		case "invited_user":
			p, err = invitedUserFilter(f, name)
		case "time":
			if f.Operator != "=" {
				return nil, errOperator(name)
			}
			if len(f.Values) != 1 || (f.Values[0] != "upcoming" && f.Values[0] != "past") {
				return nil, errValues(name)
			}
			upcoming := f.Values[0] == "upcoming"
			p = func(m *openproject.Meeting) bool {
				end := m.EndTime
				if end.IsZero() {
					end = m.StartTime
				}
				return !end.Before(now) == upcoming
			}
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

// invitedUserFilter is Queries::Meetings::Filters::InvitedUserFilter
// (key invited_user_id): = only, over an integer list of user ids (its
// IntegerListOptional strategy refuses anything else, "me" included),
// matching meetings with one of them among the invited participants. The
// fake's participants are the invited ones.
func invitedUserFilter(f openproject.Filter, name string) (func(*openproject.Meeting) bool, *apiError) {
	if f.Operator != "=" {
		return nil, errOperator(name)
	}
	if len(f.Values) == 0 {
		return nil, errValues(name)
	}
	ids := make(map[int64]bool, len(f.Values))
	for _, v := range f.Values {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, errValues(name)
		}
		ids[id] = true
	}
	return func(m *openproject.Meeting) bool {
		return slices.ContainsFunc(m.Participants, func(p openproject.Ref) bool { return ids[p.ID] })
	}, nil
}

// meetingSortField resolves the meeting sort fields.
func meetingSortField(name string) func(a, b *openproject.Meeting) int {
	switch name {
	case "id":
		return func(a, b *openproject.Meeting) int { return cmp.Compare(a.ID, b.ID) }
	case "title":
		return func(a, b *openproject.Meeting) int {
			return cmp.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title))
		}
	case "start_time":
		return func(a, b *openproject.Meeting) int { return a.StartTime.Compare(b.StartTime) }
	case "created_at":
		return func(a, b *openproject.Meeting) int { return a.CreatedAt.Compare(b.CreatedAt) }
	case "updated_at":
		return func(a, b *openproject.Meeting) int { return a.UpdatedAt.Compare(b.UpdatedAt) }
	}
	return nil
}

// compileQueryFilters implements project (=) and id (=, !).
func compileQueryFilters(fs openproject.Filters) ([]func(*openproject.Query) bool, *apiError) {
	var preds []func(*openproject.Query) bool
	for _, f := range fs {
		name := canonicalFilterName(f.Name)
		var p func(*openproject.Query) bool
		var err *apiError
		switch name {
		case "project":
			p, err = idFilter(f, name, func(q *openproject.Query) int64 {
				if q.Project == nil {
					return 0
				}
				return q.Project.ID
			})
		case "id":
			p, err = idFilter(f, name, func(q *openproject.Query) int64 { return q.ID })
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

// matchAll reports whether x passes every predicate.
func matchAll[T any](x T, preds []func(T) bool) bool {
	for _, p := range preds {
		if !p(x) {
			return false
		}
	}
	return true
}

// visiblePage is one page of a collection whose items each belong to a
// project: those of ids (in store order) the user holds perm in, matching
// preds, sorted by keys (ids break ties), rendered with render. It
// returns the page's elements and how many matched in all. The store's
// read lock is held by the caller.
func visiblePage[T any](s *Server, u *User, ids []int64, get func(int64) T, project, id func(T) int64, perm string,
	preds []func(T) bool, keys []sortKey[T], pg page, render func(T) obj) ([]obj, int) {
	seen := map[int64]bool{} // project id -> perm there
	var match []T
	for _, i := range ids {
		x := get(i)
		p := project(x)
		v, ok := seen[p]
		if !ok {
			v = s.st.allowed(u, p, perm)
			seen[p] = v
		}
		if v && matchAll(x, preds) {
			match = append(match, x)
		}
	}
	sortItems(match, keys, id)
	from, to := pg.window(len(match))
	elems := make([]obj, 0, to-from)
	for _, x := range match[from:to] {
		elems = append(elems, render(x))
	}
	return elems, len(match)
}
