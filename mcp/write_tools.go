package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject"
)

// Write tools change OpenProject as the API key's user. After a successful
// write the changed work package is re-read into the local store and index
// before the tool returns, so the agent's next search sees its own write.

// errReadOnly is the answer to any write on a read-only server.
var errReadOnly = &toolError{msg: "this server is read-only (OPENPROJECT_READ_ONLY): writes are disabled", category: "read_only"}

// writeToolNames are refused by a read-only server even though they are not
// listed there.
var writeToolNames = []string{"openproject_create_work_package", "openproject_update_work_package", "openproject_add_comment", "openproject_log_time", "openproject_create_relation",
	toolBulkUpdate}

// writeAnnotations: writes reach the outside world and are not idempotent
// (a repeated create makes two work packages; an update moves lockVersion,
// so the same call fails the second time). Only update overwrites data.
func writeAnnotations(destructive bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: ptr(destructive), OpenWorldHint: ptr(true)}
}

func (s *server) registerWriteTools(srv *sdk.Server) {
	addTool(s, srv, &sdk.Tool{Name: writeToolNames[0], Annotations: writeAnnotations(false),
		Description: "Create a work package in a project. Returns it as stored (with its id and lockVersion)."}, s.createWorkPackage)
	addTool(s, srv, &sdk.Tool{Name: writeToolNames[1], Annotations: writeAnnotations(true),
		Description: "Change fields of a work package; omitted ones stay. Needs its lockVersion (openproject_get_work_package); " +
			"on a conflict the error gives the current one and values."}, s.updateWorkPackage)
	addTool(s, srv, &sdk.Tool{Name: writeToolNames[2], Annotations: writeAnnotations(false),
		Description: "Add a comment to a work package's activity (Markdown)."}, s.addComment)
	addTool(s, srv, &sdk.Tool{Name: writeToolNames[3], Annotations: writeAnnotations(false),
		Description: "Log time spent on a work package, as the API key's user."}, s.logTime)
	addTool(s, srv, &sdk.Tool{Name: writeToolNames[4], Annotations: writeAnnotations(false),
		Description: "Relate two work packages (blocks, follows, relates, ...). Returns the relation as seen from workPackageId."}, s.createRelation)
	addTool(s, srv, &sdk.Tool{Name: toolBulkUpdate, Annotations: writeAnnotations(true),
		Description: "Change status, assignee or version of up to 25 work packages, each row saved on its own with its lockVersion. " +
			"Answers updated and failed rows (a conflict gives the current lockVersion)."}, s.bulkUpdate)
}

// writeOut is the answer of a write: the changed item and whether the local
// index already reflects it; or, on a server that asks for confirmation
// (Options.ConfirmWrites), the preview of a write not yet applied.
type writeOut struct {
	WorkPackage    wpDetail     `json:"workPackage"`
	Comment        *activityRow `json:"comment"`
	IndexRefreshed bool         `json:"indexRefreshed"`
	Note           string       `json:"note"`
	Preview        *preview     `json:"preview,omitempty"`
}

// confirmArg is the argument every write tool takes for --confirm-writes.
type confirmArg struct {
	Confirm bool `json:"confirm,omitempty" jsonschema:"with --confirm-writes: true applies, else preview only"`
}

// preview is what a write would do, answered instead of doing it until
// the call comes again with confirm: true.
type preview struct {
	// Action says what would happen, in words.
	Action string `json:"action"`
	// Changes are the fields the write would set: for an update, each
	// field's current value and the new one.
	Changes map[string]any `json:"changes,omitempty"`
	// Warning names what would make the write fail as it stands.
	Warning string `json:"warning,omitempty"`
}

// confirmNote is the note of every preview.
const confirmNote = "PREVIEW ONLY: nothing was changed. Show this to the user; to apply it, call the same tool again with the same arguments and confirm: true"

// previewing reports whether a write must answer with a preview: the
// server asks for confirmation and the call did not give it.
func (s *server) previewing(c confirmArg) bool { return s.opts.ConfirmWrites && !c.Confirm }

// refresh upserts the written work package into the local index. Its
// failure does not undo the write, which OpenProject has already applied,
// so it is reported as a note and logged, not as a tool error.
func (s *server) refresh(ctx context.Context, tool string, id int64, out *writeOut) {
	out.IndexRefreshed, out.Note = s.refreshIndex(ctx, tool, id)
}

// refreshIndex upserts a written work package into the local index and
// reports whether it did, or the note that says why not.
func (s *server) refreshIndex(ctx context.Context, tool string, id int64) (bool, string) {
	if s.idx == nil {
		return false, "saved in OpenProject; the local search index is not available and will catch up on its next sync"
	}
	if err := s.idx.RefreshWorkPackage(ctx, id); err != nil {
		rid := callID(ctx)
		s.log.ErrorContext(ctx, "index refresh after write failed", "tool", tool, "request_id", rid, "work_package", id, "error", err.Error())
		return false, fmt.Sprintf("saved in OpenProject, but the local search index could not be updated yet (request id %s); searches may show the old state until the next sync", rid)
	}
	return true, ""
}

func checkDate(param, v string) error {
	if v == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, v); err != nil {
		return argErr(param, "must be a date YYYY-MM-DD, got %q", v)
	}
	return nil
}

// --- create ---

type createWPIn struct {
	confirmArg
	ProjectID   idOrSlug `json:"projectId" jsonschema:"project id or identifier"`
	Subject     string   `json:"subject" jsonschema:"title"`
	Description string   `json:"description,omitempty" jsonschema:"Markdown"`
	TypeID      int64    `json:"typeId,omitempty" jsonschema:"type id (default: the project's)"`
	StatusID    int64    `json:"statusId,omitempty" jsonschema:"status id"`
	PriorityID  int64    `json:"priorityId,omitempty" jsonschema:"priority id"`
	AssigneeID  int64    `json:"assigneeId,omitempty" jsonschema:"assignee user id"`
	ParentID    int64    `json:"parentId,omitempty" jsonschema:"parent work package id"`
	StartDate   string   `json:"startDate,omitempty" jsonschema:"YYYY-MM-DD"`
	DueDate     string   `json:"dueDate,omitempty" jsonschema:"YYYY-MM-DD"`
}

func (s *server) createWorkPackage(ctx context.Context, in createWPIn) (writeOut, error) {
	if s.opts.ReadOnly {
		return writeOut{}, errReadOnly
	}
	project, err := in.ProjectID.project("projectId")
	if err != nil {
		return writeOut{}, err
	}
	if strings.TrimSpace(in.Subject) == "" {
		return writeOut{}, argErr("subject", "must not be empty")
	}
	for _, c := range []struct {
		param string
		id    int64
	}{{"typeId", in.TypeID}, {"statusId", in.StatusID}, {"priorityId", in.PriorityID}, {"assigneeId", in.AssigneeID}, {"parentId", in.ParentID}} {
		if c.id < 0 {
			return writeOut{}, argErr(c.param, "must be a positive id, got %d", c.id)
		}
	}
	if err := checkDates(in.StartDate, in.DueDate); err != nil {
		return writeOut{}, err
	}
	if s.previewing(in.confirmArg) {
		return s.previewCreate(ctx, in, project)
	}
	wp, err := s.api.CreateWorkPackage(ctx, openproject.NewWorkPackage{
		Project: project, Subject: in.Subject, Description: in.Description,
		TypeID: in.TypeID, StatusID: in.StatusID, PriorityID: in.PriorityID, AssigneeID: in.AssigneeID, ParentID: in.ParentID,
		StartDate: in.StartDate, DueDate: in.DueDate,
	})
	if err != nil {
		return writeOut{}, err
	}
	out := writeOut{WorkPackage: wpDetailOf(wp, s.baseURL())}
	s.refresh(ctx, "openproject_create_work_package", wp.ID, &out)
	return out, nil
}

func checkDates(start, due string) error {
	if err := checkDate("startDate", start); err != nil {
		return err
	}
	if err := checkDate("dueDate", due); err != nil {
		return err
	}
	if start != "" && due != "" && due < start {
		return argErr("dueDate", "%s is before startDate %s", due, start)
	}
	return nil
}

// --- update ---

type updateWPIn struct {
	confirmArg
	WorkPackageID  int64   `json:"workPackageId" jsonschema:"work package id"`
	LockVersion    int     `json:"lockVersion" jsonschema:"from the last read"`
	Subject        *string `json:"subject,omitempty" jsonschema:"new title"`
	Description    *string `json:"description,omitempty" jsonschema:"Markdown; replaces the old one"`
	TypeID         *int64  `json:"typeId,omitempty" jsonschema:"type id"`
	StatusID       *int64  `json:"statusId,omitempty" jsonschema:"status id"`
	PriorityID     *int64  `json:"priorityId,omitempty" jsonschema:"priority id"`
	AssigneeID     *int64  `json:"assigneeId,omitempty" jsonschema:"user id; 0 removes"`
	ResponsibleID  *int64  `json:"responsibleId,omitempty" jsonschema:"accountable user id; 0 removes"`
	ParentID       *int64  `json:"parentId,omitempty" jsonschema:"work package id; 0 removes"`
	VersionID      *int64  `json:"versionId,omitempty" jsonschema:"version id; 0 removes"`
	StartDate      *string `json:"startDate,omitempty" jsonschema:"YYYY-MM-DD; empty clears"`
	DueDate        *string `json:"dueDate,omitempty" jsonschema:"YYYY-MM-DD; empty clears"`
	PercentageDone *int    `json:"percentageDone,omitempty" jsonschema:"0-100"`
}

func (s *server) updateWorkPackage(ctx context.Context, in updateWPIn) (writeOut, error) {
	const tool = "openproject_update_work_package"
	if s.opts.ReadOnly {
		return writeOut{}, errReadOnly
	}
	patch, changed, err := in.check()
	if err != nil {
		return writeOut{}, err
	}
	if s.previewing(in.confirmArg) {
		return s.previewUpdate(ctx, in, changed)
	}
	wp, err := s.applyUpdate(ctx, tool, in, patch, changed)
	if err != nil {
		return writeOut{}, err
	}
	out := writeOut{WorkPackage: wpDetailOf(wp, s.baseURL())}
	s.refresh(ctx, tool, wp.ID, &out)
	return out, nil
}

// check validates an update's arguments, before anything is sent, and
// returns the patch and the fields it sets. The bulk update checks each
// of its rows with it too.
func (in updateWPIn) check() (openproject.WorkPackagePatch, []string, error) {
	var zero openproject.WorkPackagePatch
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return zero, nil, err
	}
	if in.LockVersion < 0 {
		return zero, nil, argErr("lockVersion", "must be 0 or more, got %d", in.LockVersion)
	}
	changed := in.changedFields()
	if len(changed) == 0 {
		return zero, nil, argErr("workPackageId", "nothing to change: give at least one field to update")
	}
	if in.Subject != nil && strings.TrimSpace(*in.Subject) == "" {
		return zero, nil, argErr("subject", "must not be empty")
	}
	for _, c := range []struct {
		param string
		id    *int64
	}{{"typeId", in.TypeID}, {"statusId", in.StatusID}, {"priorityId", in.PriorityID}} {
		if c.id != nil && *c.id <= 0 {
			return zero, nil, argErr(c.param, "must be a positive id, got %d", *c.id)
		}
	}
	for _, c := range []struct {
		param string
		id    *int64
	}{{"assigneeId", in.AssigneeID}, {"responsibleId", in.ResponsibleID}, {"parentId", in.ParentID}, {"versionId", in.VersionID}} {
		if c.id != nil && *c.id < 0 {
			return zero, nil, argErr(c.param, "must be an id, or 0 to remove, got %d", *c.id)
		}
	}
	for _, c := range []struct {
		param string
		v     *string
	}{{"startDate", in.StartDate}, {"dueDate", in.DueDate}} {
		if c.v != nil {
			if err := checkDate(c.param, *c.v); err != nil {
				return zero, nil, err
			}
		}
	}
	if in.PercentageDone != nil && (*in.PercentageDone < 0 || *in.PercentageDone > 100) {
		return zero, nil, argErr("percentageDone", "must be between 0 and 100, got %d", *in.PercentageDone)
	}
	return openproject.WorkPackagePatch{LockVersion: in.LockVersion, Subject: in.Subject, Description: in.Description,
		TypeID: in.TypeID, StatusID: in.StatusID, PriorityID: in.PriorityID, AssigneeID: in.AssigneeID,
		ResponsibleID: in.ResponsibleID, ParentID: in.ParentID, VersionID: in.VersionID, StartDate: in.StartDate, DueDate: in.DueDate,
		PercentageDone: in.PercentageDone}, changed, nil
}

// applyUpdate sends a checked update. A stale lockVersion comes back as
// the conflict error that tells the agent how to retry.
func (s *server) applyUpdate(ctx context.Context, tool string, in updateWPIn, patch openproject.WorkPackagePatch, changed []string) (openproject.WorkPackage, error) {
	wp, err := s.api.UpdateWorkPackage(ctx, in.WorkPackageID, patch)
	if errors.Is(err, openproject.ErrConflict) {
		return openproject.WorkPackage{}, s.conflict(ctx, tool, in, changed, err)
	}
	return wp, err
}

// changedFields names the fields the update sets, in argument order.
func (in updateWPIn) changedFields() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("subject", in.Subject != nil)
	add("description", in.Description != nil)
	add("typeId", in.TypeID != nil)
	add("statusId", in.StatusID != nil)
	add("priorityId", in.PriorityID != nil)
	add("assigneeId", in.AssigneeID != nil)
	add("responsibleId", in.ResponsibleID != nil)
	add("parentId", in.ParentID != nil)
	add("versionId", in.VersionID != nil)
	add("startDate", in.StartDate != nil)
	add("dueDate", in.DueDate != nil)
	add("percentageDone", in.PercentageDone != nil)
	return out
}

// conflict re-reads a work package whose update hit a stale lockVersion
// and returns a tool error carrying what the agent needs to retry: the
// current lockVersion and the current values of the fields it tried to set.
func (s *server) conflict(ctx context.Context, tool string, in updateWPIn, changed []string, cause error) error {
	rid := callID(ctx)
	s.log.WarnContext(ctx, "update conflict", "tool", tool, "request_id", rid, "work_package", in.WorkPackageID, "error", cause.Error())
	cur, err := s.api.WorkPackage(ctx, in.WorkPackageID)
	if err != nil {
		s.log.ErrorContext(ctx, "re-read after conflict failed", "tool", tool, "request_id", rid, "error", err.Error())
		return &toolError{msg: fmt.Sprintf("conflict: work package %d was changed by someone else since lockVersion %d was read, and re-reading it failed: %s (request id %s)",
			in.WorkPackageID, in.LockVersion, userMessage(err), rid), category: "conflict"}
	}
	vals := make([]string, 0, len(changed))
	for _, f := range changed {
		vals = append(vals, f+"="+currentValue(cur, f))
	}
	return &toolError{msg: fmt.Sprintf("conflict: work package %d was changed by someone else since lockVersion %d was read; nothing was saved. "+
		"Current lockVersion is %d. Current values: %s. Retry with lockVersion %d if your change still applies (request id %s)",
		in.WorkPackageID, in.LockVersion, cur.LockVersion, strings.Join(vals, "; "), cur.LockVersion, rid), category: "conflict"}
}

// currentValue renders one field of a work package for a conflict message.
func currentValue(wp openproject.WorkPackage, field string) string {
	link := func(r *openproject.Ref) string {
		if r == nil || r.IsZero() {
			return "none"
		}
		if r.Title == "" {
			return strconv.FormatInt(r.ID, 10)
		}
		return fmt.Sprintf("%d (%s)", r.ID, r.Title)
	}
	str := func(v string, n int) string {
		if v == "" {
			return "none"
		}
		c, _ := capText(v, n)
		return strconv.Quote(c)
	}
	switch field {
	case "subject":
		return str(wp.Subject, capRow)
	case "description":
		return str(wp.Description, capRow)
	case "typeId":
		return link(&wp.Type)
	case "statusId":
		return link(&wp.Status)
	case "priorityId":
		return link(&wp.Priority)
	case "assigneeId":
		return link(wp.Assignee)
	case "responsibleId":
		return link(wp.Responsible)
	case "parentId":
		return link(wp.Parent)
	case "versionId":
		return link(wp.Version)
	case "startDate":
		return str(wp.StartDate, capRow)
	case "dueDate":
		return str(wp.DueDate, capRow)
	case "percentageDone":
		if wp.PercentageDone == nil {
			return "none"
		}
		return strconv.Itoa(*wp.PercentageDone)
	}
	return "?"
}

// --- comment ---

type commentIn struct {
	confirmArg
	WorkPackageID int64  `json:"workPackageId" jsonschema:"work package id"`
	Comment       string `json:"comment" jsonschema:"comment text (Markdown)"`
}

func (s *server) addComment(ctx context.Context, in commentIn) (writeOut, error) {
	const tool = "openproject_add_comment"
	if s.opts.ReadOnly {
		return writeOut{}, errReadOnly
	}
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return writeOut{}, err
	}
	if strings.TrimSpace(in.Comment) == "" {
		return writeOut{}, argErr("comment", "must not be empty")
	}
	if s.previewing(in.confirmArg) {
		wp, err := s.api.WorkPackage(ctx, in.WorkPackageID)
		if err != nil {
			return writeOut{}, err
		}
		text, _ := capText(in.Comment, capDetail)
		return writeOut{WorkPackage: wpDetailOf(wp, s.baseURL()), Note: confirmNote, Preview: &preview{
			Action:  fmt.Sprintf("add a comment to work package %d %q as you", wp.ID, wp.Subject),
			Changes: map[string]any{"comment": text},
		}}, nil
	}
	a, err := s.api.AddComment(ctx, in.WorkPackageID, in.Comment)
	if err != nil {
		return writeOut{}, err
	}
	row, _ := activityRowOf(a)
	out := writeOut{Comment: &row}
	// The comment answer does not carry the work package; read it so the
	// agent sees the state its comment landed on (and its lockVersion).
	wp, err := s.api.WorkPackage(ctx, in.WorkPackageID)
	if err != nil {
		rid := callID(ctx)
		s.log.ErrorContext(ctx, "re-read after comment failed", "tool", tool, "request_id", rid, "error", err.Error())
		out.WorkPackage = wpDetail{ID: in.WorkPackageID}
		out.Note = fmt.Sprintf("comment saved; re-reading the work package failed: %s (request id %s)", userMessage(err), rid)
		return out, nil
	}
	out.WorkPackage = wpDetailOf(wp, s.baseURL())
	s.refresh(ctx, tool, in.WorkPackageID, &out)
	return out, nil
}

// previewCreate is the preview of a create: the project it would land
// in (read, so a project the user cannot see fails here as the create
// would) and the fields it would set.
func (s *server) previewCreate(ctx context.Context, in createWPIn, project string) (writeOut, error) {
	p, err := s.api.Project(ctx, project)
	if err != nil {
		return writeOut{}, err
	}
	changes := map[string]any{"subject": in.Subject}
	if in.Description != "" {
		d, _ := capText(in.Description, capDetail)
		changes["description"] = d
	}
	for name, id := range map[string]int64{"typeId": in.TypeID, "statusId": in.StatusID, "priorityId": in.PriorityID, "assigneeId": in.AssigneeID, "parentId": in.ParentID} {
		if id != 0 {
			changes[name] = id
		}
	}
	for name, v := range map[string]string{"startDate": in.StartDate, "dueDate": in.DueDate} {
		if v != "" {
			changes[name] = v
		}
	}
	return writeOut{Note: confirmNote, Preview: &preview{
		Action:  fmt.Sprintf("create a work package in project %d %q (%s)", p.ID, p.Name, p.Identifier),
		Changes: changes,
	}}, nil
}

// previewUpdate is the preview of an update: each field's current value
// and the new one, read from OpenProject now, and a warning if the
// lockVersion given is no longer current (the update would fail).
func (s *server) previewUpdate(ctx context.Context, in updateWPIn, changed []string) (writeOut, error) {
	cur, err := s.api.WorkPackage(ctx, in.WorkPackageID)
	if err != nil {
		return writeOut{}, err
	}
	return writeOut{WorkPackage: wpDetailOf(cur, s.baseURL()), Note: confirmNote, Preview: updatePreview(cur, in, changed)}, nil
}

// updatePreview says what an update would change of cur, the work
// package as read now.
func updatePreview(cur openproject.WorkPackage, in updateWPIn, changed []string) *preview {
	changes := make(map[string]any, len(changed))
	for _, f := range changed {
		changes[f] = map[string]any{"from": currentValue(cur, f), "to": newValue(in, f)}
	}
	pv := &preview{Action: fmt.Sprintf("change %s of work package %d %q", strings.Join(changed, ", "), cur.ID, cur.Subject), Changes: changes}
	if cur.LockVersion != in.LockVersion {
		pv.Warning = fmt.Sprintf("lockVersion %d is stale: the work package is at %d, so this update would fail; read it again", in.LockVersion, cur.LockVersion)
	}
	return pv
}

// newValue renders the value an update sets for field, as currentValue
// renders the current one.
func newValue(in updateWPIn, field string) string {
	id := func(v *int64) string {
		if *v == 0 {
			return "none"
		}
		return strconv.FormatInt(*v, 10)
	}
	str := func(v *string) string {
		if *v == "" {
			return "none"
		}
		c, _ := capText(*v, capRow)
		return strconv.Quote(c)
	}
	switch field {
	case "subject":
		return str(in.Subject)
	case "description":
		return str(in.Description)
	case "typeId":
		return id(in.TypeID)
	case "statusId":
		return id(in.StatusID)
	case "priorityId":
		return id(in.PriorityID)
	case "assigneeId":
		return id(in.AssigneeID)
	case "responsibleId":
		return id(in.ResponsibleID)
	case "parentId":
		return id(in.ParentID)
	case "versionId":
		return id(in.VersionID)
	case "startDate":
		return str(in.StartDate)
	case "dueDate":
		return str(in.DueDate)
	case "percentageDone":
		return strconv.Itoa(*in.PercentageDone)
	}
	return "?"
}
