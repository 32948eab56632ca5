package optest

import (
	"cmp"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// renderer turns stored entities into HAL resources as one caller sees
// them. It caches the embedded resources (projects, users, statuses, ...)
// that every element of a page repeats. Its methods run under the store's
// read lock; the objects it returns are never modified afterwards, so
// elements may share cached sub-objects.
type renderer struct {
	st      *store
	caller  *User
	profile Profile
	// srv presigns the URLs of external attachments; host is the
	// request's Host, which they use when the storage listens on every
	// interface ("" when unknown).
	srv  *Server
	host string

	visible map[int64]bool
	// wpVisible memoizes, per project, whether the caller holds
	// view_work_packages there.
	wpVisible  map[int64]bool
	projects   map[int64]obj
	users      map[int64]obj
	statuses   map[int64]obj
	types      map[int64]obj
	priorities map[int64]obj
	// embeddedWPs memoizes, per work package, its rendering as embedded
	// in an activity: an activities answer embeds the same work package
	// in each of its activities, four times per answer in generated data.
	embeddedWPs map[int64]json.RawMessage
}

// newRenderer starts rendering for caller; the store's read lock must be
// held for the renderer's lifetime.
func (s *Server) newRenderer(caller *User) *renderer {
	return &renderer{
		st:         s.st,
		caller:     caller,
		profile:    s.opts.Profile,
		srv:        s,
		projects:   map[int64]obj{},
		users:      map[int64]obj{},
		statuses:   map[int64]obj{},
		types:      map[int64]obj{},
		priorities: map[int64]obj{},
	}
}

// canSee reports whether the caller sees project pid (memoized per request).
func (r *renderer) canSee(pid int64) bool {
	if r.visible == nil {
		r.visible = r.st.visibleProjects(r.caller)
	}
	return r.visible[pid]
}

// canSeeWP reports whether the caller sees wp (memoized per project).
func (r *renderer) canSeeWP(wp *openproject.WorkPackage) bool {
	if r.wpVisible == nil {
		r.wpVisible = map[int64]bool{}
	}
	v, ok := r.wpVisible[wp.Project.ID]
	if !ok {
		v = r.st.allowed(r.caller, wp.Project.ID, PermViewWorkPackages)
		r.wpVisible[wp.Project.ID] = v
	}
	return v || r.st.perm.sharedWPs[r.caller.ID][wp.ID]
}

// apiTimeLayout renders timestamps as the newer servers do: UTC with
// milliseconds.
const apiTimeLayout = "2006-01-02T15:04:05.000Z"

// fmtTime renders a timestamp, or null when it is unset.
func fmtTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(apiTimeLayout)
}

// fmtDate renders a YYYY-MM-DD date, or null when it is unset.
func fmtDate(d string) any {
	if d == "" {
		return nil
	}
	return d
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// link renders a HAL link; an empty title is left out.
func link(href, title string) obj {
	if title == "" {
		return obj{{"href", href}}
	}
	return obj{{"href", href}, {"title", title}}
}

// nullLink is a link that references nothing (href null), which the real
// server renders for unset optional links such as an unassigned assignee.
func nullLink() obj { return obj{{"href", nil}} }

// undisclosedLink references a resource the caller may not see.
func undisclosedLink() obj { return obj{{"href", openproject.UndisclosedHref}} }

// actionLink renders a link with a method, as the real action links.
func actionLink(href, method, title string) obj {
	o := obj{{"href", href}, {"method", method}}
	if title != "" {
		o = append(o, kv{"title", title})
	}
	return o
}

// formattable renders a Formattable {format, raw, html}.
func formattable(format, raw string) obj {
	h := ""
	switch format {
	case "markdown":
		h = markdownHTML(raw)
	case "plain":
		if raw != "" {
			h = "<p>" + html.EscapeString(raw) + "</p>"
		}
	default:
		h = html.EscapeString(raw)
	}
	return obj{{"format", format}, {"raw", raw}, {"html", h}}
}

// markdownHTML is a deliberately tiny markdown renderer: one paragraph per
// blank-line-separated block, HTML-escaped, with the CSS class the real
// server's CommonMark output uses. Search code should read raw, not html.
func markdownHTML(raw string) string {
	raw = strings.ReplaceAll(raw, "\r\n", "\n")
	var b strings.Builder
	for _, para := range strings.Split(raw, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		b.WriteString(`<p class="op-uc-p">`)
		b.WriteString(strings.ReplaceAll(html.EscapeString(para), "\n", "<br>"))
		b.WriteString("</p>")
	}
	return b.String()
}

// emptyCollection is an unpaginated collection without elements, used for
// the activity attachment and emoji-reaction lists the fake does not
// model.
func emptyCollection(self string) obj {
	return unpaginatedCollection(self, nil)
}

// unpaginatedCollection renders the shape of the real
// UnpaginatedCollection: no offset, no pageSize, only a self link.
func unpaginatedCollection(self string, elements []obj) obj {
	if elements == nil {
		elements = []obj{}
	}
	return obj{
		{"_type", "Collection"},
		{"total", len(elements)},
		{"count", len(elements)},
		{"_embedded", obj{{"elements", elements}}},
		{"_links", obj{{"self", link(self, "")}}},
	}
}

// root renders GET /api/v3.
func (r *renderer) root(instanceName, coreVersion string) obj {
	o := obj{{"_type", "Root"}, {"instanceName", instanceName}}
	if r.caller.Admin {
		o = append(o, kv{"coreVersion", coreVersion})
	}
	uid := itoa(r.caller.ID)
	return append(o, kv{"_links", obj{
		{"self", link("/api/v3", "")},
		{"configuration", link("/api/v3/configuration", "")},
		{"memberships", link("/api/v3/memberships", "")},
		{"priorities", link("/api/v3/priorities", "")},
		{"relations", link("/api/v3/relations", "")},
		{"statuses", link("/api/v3/statuses", "")},
		{"time_entries", link("/api/v3/time_entries", "")},
		{"types", link("/api/v3/types", "")},
		{"user", link("/api/v3/users/"+uid, r.caller.Name)},
		{"userPreferences", link("/api/v3/users/"+uid+"/preferences", "")},
		{"workPackages", link("/api/v3/work_packages", "")},
	}})
}

// userLink links a user, titled with their name; id 0 gives a null link.
func (r *renderer) userLink(id int64) obj {
	if id == 0 {
		return nullLink()
	}
	u, ok := r.st.users[id]
	if !ok {
		return link("/api/v3/users/"+itoa(id), "")
	}
	return link("/api/v3/users/"+itoa(id), u.Name)
}

// refUserLink links the user a Ref points at, or null.
func (r *renderer) refUserLink(ref *openproject.Ref) obj {
	if ref == nil {
		return nullLink()
	}
	return r.userLink(ref.ID)
}

// user renders a user as the caller sees them. Login, names, email,
// status, language and identityUrl are only shown to the user themself and
// to administrators, as the real UserRepresenter does; the admin flag is
// shown under the same condition (the spec says admins only; showing it to
// the user themself as well is the fake's choice).
func (r *renderer) user(id int64) (obj, bool) {
	if o, ok := r.users[id]; ok {
		return o, true
	}
	u, ok := r.st.users[id]
	if !ok {
		return nil, false
	}
	uid := itoa(u.ID)
	o := obj{
		{"_type", "User"},
		{"id", u.ID},
		{"name", u.Name},
		{"createdAt", fmtTime(u.CreatedAt)},
		{"updatedAt", fmtTime(u.UpdatedAt)},
	}
	private := r.caller.Admin || r.caller.ID == u.ID
	if private {
		status := cmp.Or(u.Status, "active")
		lang := cmp.Or(u.Language, "en")
		o = append(o,
			kv{"login", u.Login},
			kv{"admin", u.Admin},
			kv{"firstName", u.FirstName},
			kv{"lastName", u.LastName},
			kv{"email", u.Email},
		)
		o = append(o, kv{"avatar", avatarURL(&u.User)}, kv{"status", status}, kv{"identityUrl", nil}, kv{"language", lang})
	} else {
		o = append(o, kv{"avatar", avatarURL(&u.User)})
	}
	o = append(o, kv{"_links", obj{
		{"self", link("/api/v3/users/"+uid, u.Name)},
		{"memberships", link("/api/v3/memberships?filters=%5B%7B%22principal%22%3A%7B%22operator%22%3A%22%3D%22%2C%22values%22%3A%5B%22"+uid+"%22%5D%7D%7D%5D", "Memberships")},
		{"showUser", obj{{"href", "/users/" + uid}, {"type", "text/html"}}},
	}})
	r.users[id] = o
	return o, true
}

// avatarURL is the user's avatar, or a Gravatar URL as the real default.
func avatarURL(u *openproject.User) string {
	if u.Avatar != "" {
		return u.Avatar
	}
	sum := md5.Sum([]byte(strings.ToLower(strings.TrimSpace(u.Email))))
	return "https://secure.gravatar.com/avatar/" + hex.EncodeToString(sum[:]) + "?default=404&secure=true"
}

// projectLink links a project, undisclosed when the caller cannot see it.
func (r *renderer) projectLink(id int64) obj {
	if id == 0 {
		return nullLink()
	}
	p, ok := r.st.projects[id]
	if !ok {
		return link("/api/v3/projects/"+itoa(id), "")
	}
	if !r.canSee(id) {
		return undisclosedLink()
	}
	return link("/api/v3/projects/"+itoa(id), p.Name)
}

// project renders a project; the caller must be able to see it.
func (r *renderer) project(id int64) (obj, bool) {
	if o, ok := r.projects[id]; ok {
		return o, true
	}
	p, ok := r.st.projects[id]
	if !ok {
		return nil, false
	}
	pid := itoa(p.ID)
	self := "/api/v3/projects/" + pid
	links := obj{{"self", link(self, p.Name)}}
	if r.st.canWrite(r.caller, p.ID) {
		links = append(links,
			kv{"createWorkPackage", actionLink(self+"/work_packages/form", "post", "")},
			kv{"createWorkPackageImmediate", actionLink(self+"/work_packages", "post", "")},
		)
	}
	parent := nullLink()
	if p.Parent != nil && p.Parent.ID != 0 {
		parent = r.projectLink(p.Parent.ID)
	}
	ancestors := []obj{}
	for _, a := range r.st.projectAncestors(p) {
		ancestors = append(ancestors, r.projectLink(a.ID))
	}
	links = append(links,
		kv{"categories", link(self+"/categories", "")},
		kv{"types", link(self+"/types", "")},
		kv{"versions", link(self+"/versions", "")},
		kv{"workPackages", link(self+"/work_packages", "")},
		kv{"memberships", link(`/api/v3/memberships?filters=[{"project":{"operator":"=","values":["`+pid+`"]}}]`, "")},
		kv{"parent", parent},
		kv{"ancestors", ancestors},
		// The fake does not model project status; the real server renders
		// a null href when none is set.
		kv{"status", nullLink()},
	)
	o := obj{
		{"_type", "Project"},
		{"_links", links},
		{"id", p.ID},
		{"identifier", p.Identifier},
		{"name", p.Name},
		{"active", p.Active},
		{"public", p.Public},
		{"statusExplanation", formattable("markdown", p.StatusExplanation)},
		{"description", formattable("markdown", p.Description)},
		{"createdAt", fmtTime(p.CreatedAt)},
		{"updatedAt", fmtTime(p.UpdatedAt)},
	}
	r.projects[id] = o
	return o, true
}

// status renders a status. The model has no readonly, totals or done-ratio
// settings, so those take the real defaults.
func (r *renderer) status(id int64) (obj, bool) {
	if o, ok := r.statuses[id]; ok {
		return o, true
	}
	st, ok := r.st.statusByID(id)
	if !ok {
		return nil, false
	}
	done := 0
	if st.IsClosed {
		done = 100
	}
	o := obj{
		{"_type", "Status"},
		{"id", st.ID},
		{"name", st.Name},
		{"isClosed", st.IsClosed},
		{"color", st.Color},
		{"isDefault", st.IsDefault},
		{"isReadonly", false},
		{"excludedFromTotals", false},
		{"defaultDoneRatio", done},
		{"position", st.Position},
		{"_links", obj{{"self", link("/api/v3/statuses/"+itoa(st.ID), st.Name)}}},
	}
	r.statuses[id] = o
	return o, true
}

// typeEpoch stands in for the creation time of types, which the model does
// not carry.
func typeEpoch() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }

// typ renders a work package type.
func (r *renderer) typ(id int64) (obj, bool) {
	if o, ok := r.types[id]; ok {
		return o, true
	}
	t, ok := r.st.typeByID(id)
	if !ok {
		return nil, false
	}
	o := obj{
		{"_type", "Type"},
		{"id", t.ID},
		{"name", t.Name},
		{"color", t.Color},
		{"position", t.Position},
		{"isDefault", t.IsDefault},
		{"isMilestone", t.IsMilestone},
		{"createdAt", fmtTime(typeEpoch())},
		{"updatedAt", fmtTime(typeEpoch())},
		{"_links", obj{{"self", link("/api/v3/types/"+itoa(t.ID), t.Name)}}},
	}
	r.types[id] = o
	return o, true
}

// priority renders a priority.
func (r *renderer) priority(id int64) (obj, bool) {
	if o, ok := r.priorities[id]; ok {
		return o, true
	}
	p, ok := r.st.priorityByID(id)
	if !ok {
		return nil, false
	}
	o := obj{
		{"_type", "Priority"},
		{"id", p.ID},
		{"name", p.Name},
		{"position", p.Position},
		{"isDefault", p.IsDefault},
		{"isActive", p.IsActive},
		{"_links", obj{{"self", link("/api/v3/priorities/"+itoa(p.ID), p.Name)}}},
	}
	r.priorities[id] = o
	return o, true
}

// wpLink links a work package titled with its subject, undisclosed when
// the caller cannot see it.
func (r *renderer) wpLink(id int64) obj {
	if id == 0 {
		return nullLink()
	}
	wp, ok := r.st.wps[id]
	if !ok {
		return link("/api/v3/work_packages/"+itoa(id), "")
	}
	if !r.canSeeWP(wp) {
		return undisclosedLink()
	}
	return link("/api/v3/work_packages/"+itoa(id), wp.Subject)
}

// refLink renders a link to an entity kind the store does not index
// (versions), using the title the data set carries.
func refLink(base string, ref *openproject.Ref) obj {
	if ref == nil || ref.ID == 0 {
		return nullLink()
	}
	return link(base+itoa(ref.ID), ref.Title)
}

// embeddedWP is wp rendered as JSON, memoized per request.
func (r *renderer) embeddedWP(wp *openproject.WorkPackage) json.RawMessage {
	if enc, ok := r.embeddedWPs[wp.ID]; ok {
		return enc
	}
	if r.embeddedWPs == nil {
		r.embeddedWPs = map[int64]json.RawMessage{}
	}
	enc := json.RawMessage(appendJSON(nil, r.workPackage(wp)))
	r.embeddedWPs[wp.ID] = enc
	return enc
}

// workPackage renders the full work package representation with the
// resources the real server embeds.
func (r *renderer) workPackage(wp *openproject.WorkPackage) obj {
	id := itoa(wp.ID)
	self := "/api/v3/work_packages/" + id
	writable := r.st.canWrite(r.caller, wp.Project.ID)

	links := obj{
		{"self", link(self, wp.Subject)},
		{"schema", link(fmt.Sprintf("/api/v3/work_packages/schemas/%d-%d", wp.Project.ID, wp.Type.ID), "")},
	}
	if writable {
		links = append(links,
			kv{"update", actionLink(self, "patch", "Update "+wp.Subject)},
			kv{"delete", actionLink("/work_packages/bulk?ids="+id, "delete", "Delete "+wp.Subject)},
		)
	}
	links = append(links, kv{"attachments", link(self+"/attachments", "")})
	if writable {
		links = append(links, kv{"addAttachment", actionLink(self+"/attachments", "post", "")})
	}
	st, _ := r.st.statusByID(wp.Status.ID)
	typ, _ := r.st.typeByID(wp.Type.ID)
	prio, _ := r.st.priorityByID(wp.Priority.ID)
	links = append(links,
		kv{"author", r.userLink(wp.Author.ID)},
		kv{"responsible", r.refUserLink(wp.Responsible)},
		kv{"relations", link(self+"/relations", "Show relations")},
		kv{"revisions", link(self+"/revisions", "")},
		kv{"assignee", r.refUserLink(wp.Assignee)},
		kv{"priority", idLink("/api/v3/priorities/", wp.Priority.ID, prio.Name)},
		kv{"project", r.projectLink(wp.Project.ID)},
		kv{"status", idLink("/api/v3/statuses/", wp.Status.ID, st.Name)},
		kv{"type", idLink("/api/v3/types/", wp.Type.ID, typ.Name)},
		kv{"version", r.versionLink(wp.Version)},
	)
	cfProps, cfLinks := r.customFieldProps(wp)
	links = append(links, cfLinks...)
	if writable {
		links = append(links, kv{"addComment", actionLink(self+"/activities", "post", "Add comment")})
	}
	parent := nullLink()
	if wp.Parent != nil && wp.Parent.ID != 0 {
		parent = r.wpLink(wp.Parent.ID)
	}
	children := []obj{}
	for _, cid := range r.st.children[wp.ID] {
		if c, ok := r.st.wps[cid]; ok && r.canSeeWP(c) {
			children = append(children, link("/api/v3/work_packages/"+itoa(cid), c.Subject))
		}
	}
	ancestors := []obj{}
	for _, a := range r.st.ancestors(wp) {
		ancestors = append(ancestors, r.wpLink(a.ID))
	}
	links = append(links,
		kv{"parent", parent},
		// Categories are not modelled; the real server renders null.
		kv{"category", nullLink()},
		kv{"children", children},
		kv{"ancestors", ancestors},
		kv{"timeEntries", obj{{"href", "/work_packages/" + id + "/time_entries"}, {"type", "text/html"}, {"title", "Time entries"}}},
		kv{"watchers", link(self+"/watchers", "")},
	)

	emb := obj{}
	if o, ok := r.status(wp.Status.ID); ok {
		emb = append(emb, kv{"status", o})
	}
	if o, ok := r.typ(wp.Type.ID); ok {
		emb = append(emb, kv{"type", o})
	}
	if o, ok := r.priority(wp.Priority.ID); ok {
		emb = append(emb, kv{"priority", o})
	}
	if o, ok := r.project(wp.Project.ID); ok {
		emb = append(emb, kv{"project", o})
	}
	if o, ok := r.user(wp.Author.ID); ok {
		emb = append(emb, kv{"author", o})
	}
	if wp.Assignee != nil {
		if o, ok := r.user(wp.Assignee.ID); ok {
			emb = append(emb, kv{"assignee", o})
		}
	}
	if wp.Responsible != nil {
		if o, ok := r.user(wp.Responsible.ID); ok {
			emb = append(emb, kv{"responsible", o})
		}
	}

	var percentage any
	if wp.PercentageDone != nil {
		percentage = *wp.PercentageDone
	}
	o := obj{
		{"_type", "WorkPackage"},
		{"_embedded", emb},
		{"_links", links},
		{"id", wp.ID},
		{"lockVersion", wp.LockVersion},
		{"subject", wp.Subject},
		{"description", formattable("markdown", wp.Description)},
		{"scheduleManually", false},
		{"readonly", false},
		{"startDate", fmtDate(wp.StartDate)},
		{"dueDate", fmtDate(wp.DueDate)},
		{"derivedStartDate", nil},
		{"derivedDueDate", nil},
		// Estimates are not modelled; the real server renders null for a
		// work package without an estimate.
		{"estimatedTime", nil},
		{"derivedEstimatedTime", nil},
		{"percentageDone", percentage},
	}
	// Custom fields come between the standard properties and the
	// timestamps, as in the API's own example.
	o = append(o, cfProps...)
	return append(o,
		kv{"createdAt", fmtTime(wp.CreatedAt)},
		kv{"updatedAt", fmtTime(wp.UpdatedAt)},
	)
}

// idLink links base+id titled title, or null for id 0.
func idLink(base string, id int64, title string) obj {
	if id == 0 {
		return nullLink()
	}
	return link(base+itoa(id), title)
}

// activityVisible reports whether the caller may see an activity of a work
// package they see. Internal activities need view_internal_comments in the
// work package's project; without it the real server leaves them out of
// the journal (Journals::Scopes::InternalVisibleFor, where("internal:
// false"), app/models/journals/scopes/internal_visible_for.rb): they are
// omitted, not shown with their text hidden. A share never grants it: the
// scope asks user.allowed_in_project?, a project permission. The real
// scope also needs the Enterprise add-on and the project's
// enabled_internal_comments setting; the fake assumes both. Legacy
// servers have no internal comments, so there every activity is public.
func (r *renderer) activityVisible(a *openproject.Activity, wp *openproject.WorkPackage) bool {
	if !a.Internal || r.profile == ProfileLegacy {
		return true
	}
	return r.st.allowed(r.caller, wp.Project.ID, PermViewInternalComments)
}

// activity renders a journal entry. The current profile adds what 2025
// servers render: internal, attachment links and embedded resources.
func (r *renderer) activity(a *openproject.Activity) obj {
	typ := "Activity"
	if a.IsComment() {
		typ = "Activity::Comment"
	}
	self := "/api/v3/activities/" + itoa(a.ID)
	details := make([]obj, 0, len(a.Details))
	for _, d := range a.Details {
		details = append(details, obj{{"format", "custom"}, {"raw", d}, {"html", html.EscapeString(d)}})
	}
	o := obj{
		{"_type", typ},
		{"id", a.ID},
		{"comment", formattable("markdown", a.Comment)},
		{"details", details},
		{"version", a.Version},
	}
	current := r.profile == ProfileCurrent
	if current {
		o = append(o, kv{"internal", a.Internal})
	}
	updated := a.UpdatedAt
	if updated.IsZero() {
		updated = a.CreatedAt
	}
	o = append(o, kv{"createdAt", fmtTime(a.CreatedAt)}, kv{"updatedAt", fmtTime(updated)})
	wp := r.st.wps[a.WorkPackageID]
	own := r.caller.Admin || r.caller.ID == a.User.ID
	if current {
		emb := obj{{"attachments", emptyCollection(self + "/attachments")}}
		if wp != nil {
			emb = append(emb, kv{"workPackage", r.embeddedWP(wp)})
		}
		emb = append(emb, kv{"emojiReactions", emptyCollection(self + "/emoji_reactions")})
		o = append(o, kv{"_embedded", emb})
	}
	links := obj{}
	if current {
		links = append(links, kv{"attachments", link(self+"/attachments", "")})
		if own {
			links = append(links, kv{"addAttachment", actionLink(self+"/attachments", "post", "")})
		}
	}
	links = append(links,
		kv{"self", link(self, "")},
		kv{"workPackage", r.wpLink(a.WorkPackageID)},
		kv{"user", r.userLink(a.User.ID)},
	)
	if own && a.IsComment() {
		links = append(links, kv{"update", actionLink(self, "patch", "")})
	}
	return append(o, kv{"_links", links})
}

// wikiPage renders a wiki page. Legacy servers (13–17) expose only id,
// title and the project; the current profile adds what the newest
// WikiPageRepresenter renders: slug, text, lockVersion and timestamps.
func (r *renderer) wikiPage(w *openproject.WikiPage) obj {
	self := "/api/v3/wiki_pages/" + itoa(w.ID)
	o := obj{
		{"_type", "WikiPage"},
		{"id", w.ID},
		{"title", w.Title},
	}
	if r.profile == ProfileCurrent {
		slug := w.Slug
		if slug == "" {
			slug = wikiSlug(w.Title)
		}
		o = append(o,
			kv{"slug", slug},
			kv{"text", formattable("markdown", w.Text)},
			kv{"lockVersion", w.LockVersion},
			kv{"createdAt", fmtTime(w.CreatedAt)},
			kv{"updatedAt", fmtTime(w.UpdatedAt)},
		)
	}
	emb := obj{}
	if p, ok := r.project(w.Project.ID); ok {
		emb = append(emb, kv{"project", p})
	}
	links := obj{
		{"self", link(self, "")},
		{"attachments", link(self+"/attachments", "")},
	}
	if r.st.canWrite(r.caller, w.Project.ID) {
		links = append(links, kv{"addAttachment", actionLink(self+"/attachments", "post", "")})
	}
	links = append(links, kv{"project", r.projectLink(w.Project.ID)})
	return append(o, kv{"_embedded", emb}, kv{"_links", links})
}

// wikiSlug derives a wiki slug from a title the way OpenProject does in
// spirit: lower case, runs of non-alphanumerics become one dash.
func wikiSlug(title string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(title) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// meetingDuration is the duration number the profile's server sends:
// hours on current servers, minutes on older ones. It is computed from the
// start and end time when both are set, else taken from the data set.
func (r *renderer) meetingDuration(m *openproject.Meeting) float64 {
	if m.StartTime.IsZero() || m.EndTime.IsZero() {
		return m.Duration
	}
	d := m.EndTime.Sub(m.StartTime)
	if r.profile == ProfileLegacy {
		return d.Minutes()
	}
	return d.Hours()
}

// meeting renders a meeting.
//
// Participants: the real API's meeting representation does not document
// participants. The fake renders them as _links.participants, an array of
// user links titled with the user's name; this is our choice, chosen to
// look like the other multi-valued links (ancestors, children).
func (r *renderer) meeting(m *openproject.Meeting) obj {
	self := "/api/v3/meetings/" + itoa(m.ID)
	o := obj{
		{"_type", "Meeting"},
		{"id", m.ID},
		{"title", m.Title},
		{"location", m.Location},
		{"lockVersion", m.LockVersion},
		{"startTime", fmtTime(m.StartTime)},
		{"endTime", fmtTime(m.EndTime)},
		{"duration", r.meetingDuration(m)},
		{"createdAt", fmtTime(m.CreatedAt)},
		{"updatedAt", fmtTime(m.UpdatedAt)},
	}
	links := obj{{"attachments", link(self+"/attachments", "")}}
	if r.st.canWrite(r.caller, m.Project.ID) {
		links = append(links, kv{"addAttachment", actionLink(self+"/attachments", "post", "")})
	}
	participants := make([]obj, 0, len(m.Participants))
	for _, p := range m.Participants {
		participants = append(participants, r.userLink(p.ID))
	}
	links = append(links,
		kv{"self", link(self, m.Title)},
		kv{"author", r.userLink(m.Author.ID)},
		kv{"project", r.projectLink(m.Project.ID)},
		kv{"participants", participants},
	)
	emb := obj{{"attachments", r.attachmentCollection(container{containerMeeting, m.ID})}}
	if u, ok := r.user(m.Author.ID); ok {
		emb = append(emb, kv{"author", u})
	}
	if p, ok := r.project(m.Project.ID); ok {
		emb = append(emb, kv{"project", p})
	}
	return append(o, kv{"_links", links}, kv{"_embedded", emb})
}

// agendaItem renders one MeetingAgendaItem (schemas/meeting_agenda_item_model.yml)
// with its outcomes embedded and linked.
func (r *renderer) agendaItem(m *openproject.Meeting, it *openproject.AgendaItem) obj {
	self := "/api/v3/meeting_agenda_items/" + itoa(it.ID)
	itemType := it.ItemType
	if itemType == "" {
		itemType = "simple"
		if it.WorkPackage != nil {
			itemType = "work_package"
		}
	}
	var duration any
	if it.DurationMinutes != nil {
		duration = *it.DurationMinutes
	}
	created, updated := it.CreatedAt, it.UpdatedAt
	if created.IsZero() {
		created = m.CreatedAt
	}
	if updated.IsZero() {
		updated = created
	}
	outcomes := make([]obj, 0, len(it.Outcomes))
	outcomeLinks := make([]obj, 0, len(it.Outcomes))
	for _, oc := range it.Outcomes {
		href := "/api/v3/meeting_outcomes/" + itoa(oc.ID)
		kind := cmp.Or(oc.Kind, "information")
		outcomes = append(outcomes, obj{
			{"_type", "MeetingOutcome"},
			{"id", oc.ID},
			{"notes", formattable("markdown", oc.Notes)},
			{"kind", kind},
			{"_links", obj{{"self", link(href, "")}}},
		})
		outcomeLinks = append(outcomeLinks, link(href, ""))
	}
	wp := nullLink()
	if it.WorkPackage != nil && it.WorkPackage.ID != 0 {
		wp = r.wpLink(it.WorkPackage.ID)
	}
	section := nullLink()
	if it.Section != nil && it.Section.ID != 0 {
		section = link("/api/v3/meetings/"+itoa(m.ID)+"/sections/"+itoa(it.Section.ID), it.Section.Title)
	}
	return obj{
		{"_type", "MeetingAgendaItem"},
		{"id", it.ID},
		{"title", it.Title},
		{"notes", formattable("markdown", it.Notes)},
		{"position", it.Position},
		{"durationInMinutes", duration},
		{"itemType", itemType},
		{"lockVersion", it.LockVersion},
		{"createdAt", fmtTime(created)},
		{"updatedAt", fmtTime(updated)},
		{"_embedded", obj{{"outcomes", outcomes}}},
		{"_links", obj{
			{"self", link(self, it.Title)},
			{"meeting", link("/api/v3/meetings/"+itoa(m.ID), m.Title)},
			{"author", r.refUserLink(it.Author)},
			{"presenter", r.refUserLink(it.Presenter)},
			{"workPackage", wp},
			{"section", section},
			{"outcomes", outcomeLinks},
		}},
	}
}

// query renders a saved query. It is kept minimal: the fake has no query
// owner, columns or stored filters.
func (r *renderer) query(q *openproject.Query) obj {
	self := "/api/v3/queries/" + itoa(q.ID)
	project := nullLink()
	results := "/api/v3/work_packages?query_id=" + itoa(q.ID)
	if q.Project != nil && q.Project.ID != 0 {
		project = r.projectLink(q.Project.ID)
		results = "/api/v3/projects/" + itoa(q.Project.ID) + "/work_packages?query_id=" + itoa(q.ID)
	}
	return obj{
		{"_type", "Query"},
		{"id", q.ID},
		{"name", q.Name},
		{"public", q.Public},
		{"starred", q.Starred},
		{"hidden", false},
		{"createdAt", fmtTime(q.CreatedAt)},
		{"updatedAt", fmtTime(q.UpdatedAt)},
		{"_links", obj{
			{"self", link(self, q.Name)},
			{"project", project},
			{"results", link(results, "")},
		}},
	}
}
