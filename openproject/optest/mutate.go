package optest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// maxBodyBytes bounds request bodies; real payloads are a few KiB.
const maxBodyBytes = 1 << 20

// readBody decodes a JSON object request body into v.
func (ex *exchange) readBody(v any) *apiError {
	b, err := io.ReadAll(io.LimitReader(ex.r.Body, maxBodyBytes))
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(b)).Decode(v)
	}
	if err != nil {
		// The wording of the real ParseError/InvalidRequestBody answer is
		// not documented.
		return &apiError{status: http.StatusBadRequest, identifier: "InvalidRequestBody",
			message: "The request body was not a single JSON object."}
	}
	return nil
}

// wpInput is the writable part of a work package request body.
type wpInput struct {
	LockVersion *int                       `json:"lockVersion"`
	Subject     *string                    `json:"subject"`
	Description *formattableInput          `json:"description"`
	StartDate   optDate                    `json:"startDate"`
	DueDate     optDate                    `json:"dueDate"`
	Links       map[string]json.RawMessage `json:"_links"`
}

// optDate is a date property of a request body: absent leaves the date
// alone, null clears it (as the real server does), a string sets it.
type optDate struct {
	set bool
	val string
}

func (d *optDate) UnmarshalJSON(b []byte) error {
	d.set = true
	if string(b) == "null" {
		d.val = ""
		return nil
	}
	return json.Unmarshal(b, &d.val)
}

// formattableInput is the writable part of a Formattable.
type formattableInput struct {
	Raw string `json:"raw"`
}

// linkInput is a link in a request body; Href nil means null.
type linkInput struct {
	Href *string `json:"href"`
}

// linkTarget reads the id a body link points at. It returns set=false when
// the link is absent, id=0 for an explicit null, and ok=false when the href
// is not a path below base.
func linkTarget(links map[string]json.RawMessage, name, base string) (id int64, set, ok bool) {
	raw, present := links[name]
	if !present {
		return 0, false, true
	}
	var l linkInput
	if err := json.Unmarshal(raw, &l); err != nil {
		return 0, true, false
	}
	if l.Href == nil || *l.Href == "" {
		return 0, true, true
	}
	rest, found := strings.CutPrefix(*l.Href, base)
	if !found {
		return 0, true, false
	}
	id, parsed := parseID(rest)
	return id, true, parsed
}

// attrNames are the attribute names the real server reports in
// _embedded.details of 422 answers.
var attrNames = map[string]string{
	"subject": "Subject", "status": "Status", "type": "Type", "priority": "Priority",
	"assignee": "Assignee", "responsible": "Accountable", "parent": "Parent", "project": "Project",
	"comment": "Comment", "startDate": "Start date", "dueDate": "Finish date", "version": "Version",
}

func errBlank(attr string) *apiError {
	return errConstraint(attrNames[attr], "The "+strings.ToLower(attrNames[attr])+" might not be blank.")
}

func errNotAllowed(attr string) *apiError {
	return errConstraint(attrNames[attr], attrNames[attr]+" is not set to one of the allowed values.")
}

// applyWPInput applies a request body to next. The caller holds the write
// lock.
func (s *Server) applyWPInput(u *User, next *openproject.WorkPackage, in *wpInput) *apiError {
	if in.Subject != nil {
		if strings.TrimSpace(*in.Subject) == "" {
			return errBlank("subject")
		}
		next.Subject = *in.Subject
	}
	if in.Description != nil {
		next.Description = in.Description.Raw
	}
	for _, f := range []struct {
		attr string
		in   optDate
		dst  *string
	}{{"startDate", in.StartDate, &next.StartDate}, {"dueDate", in.DueDate, &next.DueDate}} {
		if !f.in.set {
			continue
		}
		if f.in.val != "" {
			if _, err := time.Parse(time.DateOnly, f.in.val); err != nil {
				return &apiError{status: http.StatusUnprocessableEntity, identifier: "PropertyFormatError",
					message: attrNames[f.attr] + " is not a valid date.", attribute: attrNames[f.attr]}
			}
		}
		*f.dst = f.in.val
	}
	required := []struct {
		name, base string
		dst        *openproject.Ref
		exists     func(int64) bool
	}{
		{"status", "/api/v3/statuses/", &next.Status, func(id int64) bool { _, ok := s.st.statusByID(id); return ok }},
		{"type", "/api/v3/types/", &next.Type, func(id int64) bool { _, ok := s.st.typeByID(id); return ok }},
		{"priority", "/api/v3/priorities/", &next.Priority, func(id int64) bool { _, ok := s.st.priorityByID(id); return ok }},
	}
	for _, f := range required {
		id, set, ok := linkTarget(in.Links, f.name, f.base)
		switch {
		case !set:
			continue
		case !ok:
			return errNotAllowed(f.name)
		case id == 0:
			return errBlank(f.name)
		case !f.exists(id):
			return errNotAllowed(f.name)
		}
		*f.dst = openproject.Ref{ID: id, Href: f.base + itoa(id)}
	}
	for _, f := range []struct {
		name string
		dst  **openproject.Ref
	}{{"assignee", &next.Assignee}, {"responsible", &next.Responsible}} {
		id, set, ok := linkTarget(in.Links, f.name, "/api/v3/users/")
		switch {
		case !set:
			continue
		case !ok:
			return errNotAllowed(f.name)
		case id == 0:
			*f.dst = nil
			continue
		}
		if _, exists := s.st.users[id]; !exists {
			return errNotAllowed(f.name)
		}
		*f.dst = &openproject.Ref{ID: id, Href: "/api/v3/users/" + itoa(id)}
	}
	id, set, ok := linkTarget(in.Links, "parent", "/api/v3/work_packages/")
	if set {
		if !ok {
			return errNotAllowed("parent")
		}
		if id == 0 {
			next.Parent = nil
		} else {
			p, exists := s.st.wps[id]
			if !exists || !s.st.canSeeWP(u, p) || id == next.ID || s.isDescendant(id, next.ID) {
				return errNotAllowed("parent")
			}
			next.Parent = &openproject.Ref{ID: id, Href: "/api/v3/work_packages/" + itoa(id)}
		}
	}
	return s.applyVersion(next, in)
}

// applyVersion applies the version link of a request body. As
// WorkPackages::BaseContract#validate_fixed_version_is_assignable does, a
// new version must be one the work package's project may use (shared
// with it, Version#projects) and open (Project#assignable_versions);
// keeping the current one, even a closed one, is always allowed, and null
// removes it. The caller holds the write lock.
func (s *Server) applyVersion(next *openproject.WorkPackage, in *wpInput) *apiError {
	id, set, ok := linkTarget(in.Links, "version", "/api/v3/versions/")
	switch {
	case !set:
		return nil
	case !ok:
		return errNotAllowed("version")
	case id == 0:
		next.Version = nil
		return nil
	case id == refID(next.Version):
		return nil
	}
	v, exists := s.st.versions[id]
	if !exists || v.Status != "open" || !s.st.versionProjects(v)[next.Project.ID] {
		return errNotAllowed("version")
	}
	next.Version = &openproject.Ref{ID: id, Href: "/api/v3/versions/" + itoa(id), Title: v.Name}
	return nil
}

// isDescendant reports whether wp id lies below ancestor in the hierarchy.
func (s *Server) isDescendant(id, ancestor int64) bool {
	for cur, seen := id, map[int64]bool{}; cur != 0 && !seen[cur]; {
		if cur == ancestor {
			return true
		}
		seen[cur] = true
		wp, ok := s.st.wps[cur]
		if !ok || wp.Parent == nil {
			return false
		}
		cur = wp.Parent.ID
	}
	return false
}

// patchWorkPackage answers PATCH /work_packages/{id}. The body must carry
// the current lockVersion; a stale or missing one gives 409.
func (s *Server) patchWorkPackage(ex *exchange, args []string) {
	var in wpInput
	if err := ex.readBody(&in); err != nil {
		ex.sendAPIError(err)
		return
	}
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	wp, ok := s.visibleWP(ex.user, args[0])
	if !ok {
		ex.sendAPIError(errNotFound(msgWPNotFound))
		return
	}
	if !s.st.canWrite(ex.user, wp.Project.ID) {
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	if in.LockVersion == nil || *in.LockVersion != wp.LockVersion {
		ex.sendAPIError(&apiError{status: http.StatusConflict, identifier: "UpdateConflict", message: msgConflict})
		return
	}
	next := cloneWP(*wp)
	if err := s.applyWPInput(ex.user, &next, &in); err != nil {
		ex.sendAPIError(err)
		return
	}
	s.replaceWPLocked(wp, next, ex.user.ID, now)
	ex.sendHAL(http.StatusOK, s.newRenderer(ex.user).workPackage(wp))
}

func (s *Server) createWorkPackage(ex *exchange, _ []string) {
	s.createWP(ex, "")
}

func (s *Server) createProjectWorkPackage(ex *exchange, args []string) {
	s.createWP(ex, args[0])
}

// createWP answers POST /work_packages and POST /projects/{id}/work_packages
// with 201 and the new work package. Type, status and priority default to
// the default ones of the data set.
func (s *Server) createWP(ex *exchange, projectArg string) {
	var in wpInput
	if err := ex.readBody(&in); err != nil {
		ex.sendAPIError(err)
		return
	}
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	var pid int64
	if projectArg != "" {
		p, ok := s.visibleProject(ex.user, projectArg)
		if !ok {
			ex.sendAPIError(errNotFound(msgProjectMissing))
			return
		}
		pid = p.ID
	} else {
		id, set, ok := linkTarget(in.Links, "project", "/api/v3/projects/")
		if !set || id == 0 {
			ex.sendAPIError(errBlank("project"))
			return
		}
		if !ok || !s.st.canSee(ex.user, id) {
			ex.sendAPIError(errNotAllowed("project"))
			return
		}
		pid = id
	}
	if !s.st.canWrite(ex.user, pid) {
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	if in.Subject == nil || strings.TrimSpace(*in.Subject) == "" {
		ex.sendAPIError(errBlank("subject"))
		return
	}
	wp := openproject.WorkPackage{
		Project:   openproject.Ref{ID: pid, Href: "/api/v3/projects/" + itoa(pid)},
		Author:    openproject.Ref{ID: ex.user.ID, Href: "/api/v3/users/" + itoa(ex.user.ID)},
		Status:    openproject.Ref{ID: s.defaultStatus()},
		Type:      openproject.Ref{ID: s.defaultType()},
		Priority:  openproject.Ref{ID: s.defaultPriority()},
		CreatedAt: now,
		UpdatedAt: now,
	}
	if err := s.applyWPInput(ex.user, &wp, &in); err != nil {
		ex.sendAPIError(err)
		return
	}
	created := s.insertWPLocked(wp, now)
	ex.sendHAL(http.StatusCreated, s.newRenderer(ex.user).workPackage(created))
}

// defaultStatus, defaultType and defaultPriority pick the data set's
// default (or first) entry. The caller holds the store lock.
func (s *Server) defaultStatus() int64 {
	return defaultID(s.st.statuses, func(x openproject.Status) (int64, bool) { return x.ID, x.IsDefault })
}

func (s *Server) defaultType() int64 {
	return defaultID(s.st.types, func(x openproject.Type) (int64, bool) { return x.ID, x.IsDefault })
}

func (s *Server) defaultPriority() int64 {
	return defaultID(s.st.priorities, func(x openproject.Priority) (int64, bool) { return x.ID, x.IsDefault })
}

// defaultID returns the id of the entry marked default, else the first
// entry's, else 0.
func defaultID[T any](items []T, idOf func(T) (int64, bool)) int64 {
	for _, it := range items {
		if id, def := idOf(it); def {
			return id
		}
	}
	if len(items) > 0 {
		id, _ := idOf(items[0])
		return id
	}
	return 0
}

// deleteWorkPackage answers DELETE /work_packages/{id} with 204. Like the
// real server it also deletes the work package's descendants.
func (s *Server) deleteWorkPackage(ex *exchange, args []string) {
	s.st.mu.Lock()
	wp, ok := s.visibleWP(ex.user, args[0])
	var apiErr *apiError
	switch {
	case !ok:
		apiErr = errNotFound(msgWPNotFound)
	case !s.st.canWrite(ex.user, wp.Project.ID):
		apiErr = errForbidden(msgForbidden)
	default:
		s.deleteWPLocked(wp.ID)
	}
	s.st.mu.Unlock()
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	ex.respond(http.StatusNoContent)
}

// commentInput is the body of POST /work_packages/{id}/activities.
type commentInput struct {
	Comment  *formattableInput `json:"comment"`
	Internal bool              `json:"internal"`
}

// postComment answers POST /work_packages/{id}/activities with 201 and the
// new activity. As on the real server the comment moves the work package's
// updatedAt but not its lockVersion.
func (s *Server) postComment(ex *exchange, args []string) {
	var in commentInput
	if err := ex.readBody(&in); err != nil {
		ex.sendAPIError(err)
		return
	}
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	wp, ok := s.visibleWP(ex.user, args[0])
	if !ok {
		ex.sendAPIError(errNotFound(msgWPNotFound))
		return
	}
	if !s.st.canWrite(ex.user, wp.Project.ID) {
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	if in.Comment == nil || strings.TrimSpace(in.Comment.Raw) == "" {
		ex.sendAPIError(errBlank("comment"))
		return
	}
	// Writing an internal comment needs add_internal_comments
	// (activity_comment_write_model.yml); how the real server refuses
	// one without it is unverified, the fake answers 403.
	if in.Internal && s.opts.Profile == ProfileCurrent && !s.st.allowed(ex.user, wp.Project.ID, PermAddInternalComments) {
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	internal := in.Internal && s.opts.Profile == ProfileCurrent
	a := s.addCommentLocked(wp, ex.user.ID, in.Comment.Raw, internal, now)
	ex.sendHAL(http.StatusCreated, s.newRenderer(ex.user).activity(a))
}

// --- state changes shared by the HTTP handlers and the Go API ---

// journalLocked appends a journal (activity) to a work package.
func (s *Server) journalLocked(wpID, userID int64, comment string, details []string, internal bool, now time.Time) *openproject.Activity {
	version := 1
	if list := s.st.actsByWP[wpID]; len(list) > 0 {
		version = list[len(list)-1].Version + 1
	}
	s.st.nextActivity++
	a := &openproject.Activity{
		ID:            s.st.nextActivity,
		Kind:          "Activity",
		Version:       version,
		Comment:       comment,
		Details:       details,
		User:          openproject.Ref{ID: userID, Href: "/api/v3/users/" + itoa(userID)},
		WorkPackageID: wpID,
		Internal:      internal,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	if a.IsComment() {
		a.Kind = "Activity::Comment"
	}
	s.st.acts[a.ID] = a
	s.st.actsByWP[wpID] = append(s.st.actsByWP[wpID], a)
	return a
}

// addCommentLocked adds a comment and touches the work package's
// updatedAt without changing its lockVersion (Journals::CreateService
// touch_journable on the real server).
func (s *Server) addCommentLocked(wp *openproject.WorkPackage, userID int64, text string, internal bool, now time.Time) *openproject.Activity {
	a := s.journalLocked(wp.ID, userID, text, nil, internal, now)
	wp.UpdatedAt = now
	s.st.reindexSearch(wp.ID)
	return a
}

// replaceWPLocked stores next as the new state of wp if anything changed:
// lockVersion goes up by one, updatedAt becomes now, and a journal with
// the changes is written by actor. It reports whether anything changed.
func (s *Server) replaceWPLocked(wp *openproject.WorkPackage, next openproject.WorkPackage, actor int64, now time.Time) bool {
	next.ID = wp.ID
	next.LockVersion = wp.LockVersion
	next.UpdatedAt = wp.UpdatedAt
	details := s.diffWP(wp, &next)
	if len(details) == 0 {
		return false
	}
	oldParent := refID(wp.Parent)
	next.LockVersion++
	next.UpdatedAt = now
	*wp = next
	if newParent := refID(wp.Parent); newParent != oldParent {
		s.unlinkChild(oldParent, wp.ID)
		s.linkChild(newParent, wp.ID)
	}
	s.journalLocked(wp.ID, actor, "", details, false, now)
	s.st.reindexSearch(wp.ID)
	return true
}

// insertWPLocked stores a new work package, assigning the next id unless
// it carries an unused one, and writes its first journal.
func (s *Server) insertWPLocked(wp openproject.WorkPackage, now time.Time) *openproject.WorkPackage {
	if _, taken := s.st.wps[wp.ID]; wp.ID <= 0 || taken {
		wp.ID = 1
		if n := len(s.st.wpOrder); n > 0 {
			wp.ID = s.st.wpOrder[n-1].ID + 1
		}
	}
	if wp.CreatedAt.IsZero() {
		wp.CreatedAt = now
	}
	if wp.UpdatedAt.IsZero() {
		wp.UpdatedAt = wp.CreatedAt
	}
	p := &wp
	s.st.wps[wp.ID] = p
	i, _ := slices.BinarySearchFunc(s.st.wpOrder, wp.ID, func(w *openproject.WorkPackage, id int64) int {
		return cmp.Compare(w.ID, id)
	})
	s.st.wpOrder = slices.Insert(s.st.wpOrder, i, p)
	s.linkChild(refID(wp.Parent), wp.ID)
	s.journalLocked(wp.ID, wp.Author.ID, "", nil, false, wp.CreatedAt)
	s.st.reindexSearch(wp.ID)
	return p
}

// deleteWPLocked removes a work package, its descendants and their
// journals.
func (s *Server) deleteWPLocked(id int64) {
	wp, ok := s.st.wps[id]
	if !ok {
		return
	}
	for _, c := range slices.Clone(s.st.children[id]) {
		s.deleteWPLocked(c)
	}
	s.unlinkChild(refID(wp.Parent), id)
	delete(s.st.children, id)
	for _, a := range s.st.actsByWP[id] {
		delete(s.st.acts, a.ID)
	}
	delete(s.st.actsByWP, id)
	s.st.deleteTimeEntriesOfWP(id)
	// The real server deletes a work package's relations and
	// attachments with it.
	s.st.deleteRelationsOf(id)
	s.st.removeAttachmentsOf(container{containerWP, id})
	delete(s.st.wps, id)
	delete(s.st.search, id)
	if i := s.st.wpIndex(id); i >= 0 {
		s.st.wpOrder = slices.Delete(s.st.wpOrder, i, i+1)
	}
}

func (s *Server) linkChild(parent, child int64) {
	if parent == 0 {
		return
	}
	list := s.st.children[parent]
	i, found := slices.BinarySearch(list, child)
	if !found {
		s.st.children[parent] = slices.Insert(list, i, child)
	}
}

func (s *Server) unlinkChild(parent, child int64) {
	if parent == 0 {
		return
	}
	list := s.st.children[parent]
	if i, found := slices.BinarySearch(list, child); found {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(s.st.children, parent)
	} else {
		s.st.children[parent] = list
	}
}

func refID(r *openproject.Ref) int64 {
	if r == nil {
		return 0
	}
	return r.ID
}

// diffWP describes the changes from old to next in the plain-text form of
// journal details ("Subject changed from A to B").
func (s *Server) diffWP(old, next *openproject.WorkPackage) []string {
	var d []string
	change := func(attr, from, to string) {
		switch {
		case from == to:
		case from == "":
			d = append(d, attr+" set to "+to)
		case to == "":
			d = append(d, attr+" deleted ("+from+")")
		default:
			d = append(d, attr+" changed from "+from+" to "+to)
		}
	}
	userName := func(r *openproject.Ref) string {
		if r == nil || r.ID == 0 {
			return ""
		}
		if u, ok := s.st.users[r.ID]; ok {
			return u.Name
		}
		return "#" + itoa(r.ID)
	}
	change("Subject", old.Subject, next.Subject)
	if old.Description != next.Description {
		d = append(d, "Description changed")
	}
	st1, _ := s.st.statusByID(old.Status.ID)
	st2, _ := s.st.statusByID(next.Status.ID)
	change("Status", st1.Name, st2.Name)
	t1, _ := s.st.typeByID(old.Type.ID)
	t2, _ := s.st.typeByID(next.Type.ID)
	change("Type", t1.Name, t2.Name)
	p1, _ := s.st.priorityByID(old.Priority.ID)
	p2, _ := s.st.priorityByID(next.Priority.ID)
	change("Priority", p1.Name, p2.Name)
	if old.Project.ID != next.Project.ID {
		d = append(d, "Project changed")
	}
	change("Assignee", userName(old.Assignee), userName(next.Assignee))
	change("Accountable", userName(old.Responsible), userName(next.Responsible))
	if refID(old.Parent) != refID(next.Parent) {
		d = append(d, "Parent changed")
	}
	if refID(old.Version) != refID(next.Version) {
		d = append(d, "Version changed")
	}
	change("Start date", old.StartDate, next.StartDate)
	change("Finish date", old.DueDate, next.DueDate)
	pct := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	change("% Complete", pct(old.PercentageDone), pct(next.PercentageDone))
	if !old.CreatedAt.Equal(next.CreatedAt) {
		d = append(d, "Created on changed")
	}
	if old.Author.ID != next.Author.ID {
		d = append(d, "Author changed")
	}
	return d
}

// --- Go API for tests ---

// Errors returned by the mutation methods.
var (
	// ErrUnknownEntity: the id names nothing in the server's state.
	ErrUnknownEntity = errors.New("unknown entity")
	// ErrInvalidEntity: a reference inside the entity names nothing.
	ErrInvalidEntity = errors.New("invalid entity")
)

// checkWPRefsLocked validates the references a work package must carry.
func (s *Server) checkWPRefsLocked(wp *openproject.WorkPackage) error {
	if _, ok := s.st.projects[wp.Project.ID]; !ok {
		return fmt.Errorf("project %d: %w", wp.Project.ID, ErrInvalidEntity)
	}
	if _, ok := s.st.statusByID(wp.Status.ID); !ok {
		return fmt.Errorf("status %d: %w", wp.Status.ID, ErrInvalidEntity)
	}
	if _, ok := s.st.typeByID(wp.Type.ID); !ok {
		return fmt.Errorf("type %d: %w", wp.Type.ID, ErrInvalidEntity)
	}
	if p := refID(wp.Parent); p != 0 && (p == wp.ID || s.isDescendant(p, wp.ID)) {
		return fmt.Errorf("parent %d: %w", p, ErrInvalidEntity)
	}
	return nil
}

// CreateWorkPackage adds a work package as if created through the API and
// returns the stored copy. It gets the next free id unless wp.ID is set and
// unused; createdAt and updatedAt default to the server clock; a first
// journal (version 1, by the author) is written.
func (s *Server) CreateWorkPackage(wp openproject.WorkPackage) (openproject.WorkPackage, error) {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	wp = cloneWP(wp)
	if err := s.checkWPRefsLocked(&wp); err != nil {
		return openproject.WorkPackage{}, fmt.Errorf("create work package: %w", err)
	}
	p := s.insertWPLocked(wp, now)
	return cloneWP(*p), nil
}

// UpdateWorkPackage changes a work package through fn, as an API update by
// its author would: if fn changed anything, lockVersion goes up by one,
// updatedAt becomes the server time and a journal describing the change is
// written. fn cannot change the id, lockVersion or updatedAt.
func (s *Server) UpdateWorkPackage(id int64, fn func(*openproject.WorkPackage)) error {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	wp, ok := s.st.wps[id]
	if !ok {
		return fmt.Errorf("update work package %d: %w", id, ErrUnknownEntity)
	}
	next := cloneWP(*wp)
	fn(&next)
	next.ID = id
	if err := s.checkWPRefsLocked(&next); err != nil {
		return fmt.Errorf("update work package %d: %w", id, err)
	}
	s.replaceWPLocked(wp, next, wp.Author.ID, now)
	return nil
}

// AddComment adds a comment by userID to a work package. Like the real
// server it moves the work package's updatedAt to the server time and
// leaves its lockVersion alone.
func (s *Server) AddComment(wpID, userID int64, text string) (openproject.Activity, error) {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	wp, ok := s.st.wps[wpID]
	if !ok {
		return openproject.Activity{}, fmt.Errorf("add comment to work package %d: %w", wpID, ErrUnknownEntity)
	}
	if _, ok := s.st.users[userID]; !ok {
		return openproject.Activity{}, fmt.Errorf("add comment by user %d: %w", userID, ErrInvalidEntity)
	}
	if strings.TrimSpace(text) == "" {
		return openproject.Activity{}, fmt.Errorf("add comment to work package %d: empty text: %w", wpID, ErrInvalidEntity)
	}
	return *s.addCommentLocked(wp, userID, text, false, now), nil
}

// DeleteWorkPackage removes a work package with its descendants and their
// activities, as the real DELETE does.
func (s *Server) DeleteWorkPackage(id int64) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if _, ok := s.st.wps[id]; !ok {
		return fmt.Errorf("delete work package %d: %w", id, ErrUnknownEntity)
	}
	s.deleteWPLocked(id)
	return nil
}

// AddWikiPage adds a wiki page and returns the stored copy. It gets the
// next free id unless p.ID is set and unused; timestamps default to the
// server clock. Its inline Attachments are filed as the page's
// attachments (without content; see AddAttachment for files) and need
// ids of their own; the copy returned lists them.
func (s *Server) AddWikiPage(p openproject.WikiPage) (openproject.WikiPage, error) {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if _, ok := s.st.projects[p.Project.ID]; !ok {
		return openproject.WikiPage{}, fmt.Errorf("add wiki page: project %d: %w", p.Project.ID, ErrInvalidEntity)
	}
	seen := map[int64]bool{}
	for _, a := range p.Attachments {
		if _, taken := s.st.atts[a.ID]; taken || a.ID <= 0 || seen[a.ID] {
			return openproject.WikiPage{}, fmt.Errorf("add wiki page: attachment id %d: %w", a.ID, ErrInvalidEntity)
		}
		seen[a.ID] = true
	}
	p = cloneWiki(p)
	if _, taken := s.st.wikis[p.ID]; p.ID <= 0 || taken {
		p.ID = s.st.nextWiki + 1
	}
	s.st.nextWiki = max(s.st.nextWiki, p.ID)
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	inline := p.Attachments
	p.Attachments = nil
	s.st.wikis[p.ID] = &p
	out := cloneWiki(p)
	for _, a := range inline {
		sa := newStoredAttachment(Attachment{Attachment: a}, container{containerWiki, p.ID})
		s.st.addAttachment(sa)
		out.Attachments = append(out.Attachments, sa.Attachment.Attachment)
	}
	return out, nil
}

// UpdateWikiPage changes a wiki page through fn; lockVersion goes up by one
// and updatedAt becomes the server time. fn cannot change the id or the
// attachments (see AddAttachment and DeleteAttachment).
func (s *Server) UpdateWikiPage(id int64, fn func(*openproject.WikiPage)) error {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	w, ok := s.st.wikis[id]
	if !ok {
		return fmt.Errorf("update wiki page %d: %w", id, ErrUnknownEntity)
	}
	next := cloneWiki(*w)
	fn(&next)
	if _, ok := s.st.projects[next.Project.ID]; !ok {
		return fmt.Errorf("update wiki page %d: project %d: %w", id, next.Project.ID, ErrInvalidEntity)
	}
	next.ID = id
	next.Attachments = nil
	next.LockVersion = w.LockVersion + 1
	next.UpdatedAt = now
	*w = next
	return nil
}

// DeleteWikiPage removes a wiki page and its attachments.
func (s *Server) DeleteWikiPage(id int64) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if _, ok := s.st.wikis[id]; !ok {
		return fmt.Errorf("delete wiki page %d: %w", id, ErrUnknownEntity)
	}
	s.st.removeAttachmentsOf(container{containerWiki, id})
	delete(s.st.wikis, id)
	return nil
}

// indexAgendaLocked assigns ids to new agenda items of m and records which
// meeting each item belongs to.
func (s *Server) indexAgendaLocked(m *openproject.Meeting) {
	for i := range m.AgendaItems {
		it := &m.AgendaItems[i]
		if owner, taken := s.st.agenda[it.ID]; it.ID <= 0 || (taken && owner != m.ID) {
			s.st.nextAgenda++
			it.ID = s.st.nextAgenda
		}
		s.st.nextAgenda = max(s.st.nextAgenda, it.ID)
		it.MeetingID = m.ID
		s.st.agenda[it.ID] = m.ID
	}
}

// unindexAgendaLocked forgets the agenda items of m.
func (s *Server) unindexAgendaLocked(m *openproject.Meeting) {
	for _, it := range m.AgendaItems {
		if s.st.agenda[it.ID] == m.ID {
			delete(s.st.agenda, it.ID)
		}
	}
}

// AddMeeting adds a meeting with its agenda items and returns the stored
// copy. It gets the next free id unless m.ID is set and unused; agenda
// items without an id get one; timestamps default to the server clock.
func (s *Server) AddMeeting(m openproject.Meeting) (openproject.Meeting, error) {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if _, ok := s.st.projects[m.Project.ID]; !ok {
		return openproject.Meeting{}, fmt.Errorf("add meeting: project %d: %w", m.Project.ID, ErrInvalidEntity)
	}
	m = cloneMeeting(m)
	if _, taken := s.st.meetings[m.ID]; m.ID <= 0 || taken {
		m.ID = 1
		if n := len(s.st.meetingOrder); n > 0 {
			m.ID = s.st.meetingOrder[n-1] + 1
		}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	s.indexAgendaLocked(&m)
	s.st.meetings[m.ID] = &m
	i, _ := slices.BinarySearch(s.st.meetingOrder, m.ID)
	s.st.meetingOrder = slices.Insert(s.st.meetingOrder, i, m.ID)
	return cloneMeeting(m), nil
}

// UpdateMeeting changes a meeting (and its agenda) through fn; lockVersion
// goes up by one and updatedAt becomes the server time. New agenda items
// without an id get one.
func (s *Server) UpdateMeeting(id int64, fn func(*openproject.Meeting)) error {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	m, ok := s.st.meetings[id]
	if !ok {
		return fmt.Errorf("update meeting %d: %w", id, ErrUnknownEntity)
	}
	next := cloneMeeting(*m)
	fn(&next)
	if _, ok := s.st.projects[next.Project.ID]; !ok {
		return fmt.Errorf("update meeting %d: project %d: %w", id, next.Project.ID, ErrInvalidEntity)
	}
	next.ID = id
	next.LockVersion = m.LockVersion + 1
	next.UpdatedAt = now
	s.unindexAgendaLocked(m)
	s.indexAgendaLocked(&next)
	*m = next
	return nil
}

// DeleteMeeting removes a meeting, its agenda items and its attachments.
func (s *Server) DeleteMeeting(id int64) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	m, ok := s.st.meetings[id]
	if !ok {
		return fmt.Errorf("delete meeting %d: %w", id, ErrUnknownEntity)
	}
	s.unindexAgendaLocked(m)
	s.st.removeAttachmentsOf(container{containerMeeting, id})
	delete(s.st.meetings, id)
	if i, found := slices.BinarySearch(s.st.meetingOrder, id); found {
		s.st.meetingOrder = slices.Delete(s.st.meetingOrder, i, i+1)
	}
	return nil
}

// AddAttachment attaches a file to the work package, wiki page or meeting
// that a.Container.Href names, as an upload through the API would, and
// returns the stored metadata. It gets the next id when a.ID is 0;
// FileSize defaults to the content's length and CreatedAt to the server
// clock. Like Attachments::CreateService#touch_journable on the real
// server it moves the container's updatedAt to the server time and
// leaves its lockVersion alone.
func (s *Server) AddAttachment(a Attachment) (openproject.Attachment, error) {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	c, ok := parseContainer(a.Container)
	if !ok {
		return openproject.Attachment{}, fmt.Errorf("add attachment: container %q: %w", a.Container.Href, ErrInvalidEntity)
	}
	if _, _, ok := s.st.containerInfo(c); !ok {
		return openproject.Attachment{}, fmt.Errorf("add attachment: container %s: %w", c.href(), ErrInvalidEntity)
	}
	if _, taken := s.st.atts[a.ID]; a.ID < 0 || taken {
		return openproject.Attachment{}, fmt.Errorf("add attachment: id %d: %w", a.ID, ErrInvalidEntity)
	}
	if a.ID == 0 {
		a.ID = s.st.nextAttachment + 1
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	sa := newStoredAttachment(a, c)
	if sa.FileSize == 0 {
		sa.FileSize, _ = sa.sizeAndDigest()
	}
	s.st.addAttachment(sa)
	s.st.touchContainer(c, now)
	return sa.Attachment.Attachment, nil
}

// DeleteAttachment removes an attachment, as DELETE /attachments/{id}
// does, and moves its container's updatedAt to the server time.
func (s *Server) DeleteAttachment(id int64) error {
	now := s.clock()
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	a, ok := s.st.removeAttachment(id)
	if !ok {
		return fmt.Errorf("delete attachment %d: %w", id, ErrUnknownEntity)
	}
	s.st.touchContainer(a.in, now)
	return nil
}
