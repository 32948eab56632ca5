package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsearch/opsearch/openproject"
)

// The bulk update changes the status, assignee or version of up to
// maxBulkRows work packages in one call. Each row is one update, checked
// and applied as openproject_update_work_package applies one
// (updateWPIn.check, applyUpdate) and saved on its own: OpenProject has no
// transaction across work packages, so a row that fails (a stale
// lockVersion, a status the workflow refuses) leaves the rows before and
// after it applied, and the answer says which.

const toolBulkUpdate = "openproject_bulk_update_work_packages"

// maxBulkRows bounds one bulk update: enough for a board column or a
// sprint's leftovers, few enough that a preview stays readable and a
// mistaken call does bounded harm.
const maxBulkRows = 25

type bulkUpdateIn struct {
	confirmArg
	Rows []bulkRow `json:"rows" jsonschema:"1-25 changes"`
}

// bulkRow is one work package's change. LockVersion is a pointer so that
// a missing one is told from 0.
type bulkRow struct {
	ID          int64  `json:"id" jsonschema:"work package id"`
	LockVersion *int   `json:"lockVersion" jsonschema:"from its last read"`
	StatusID    *int64 `json:"statusId,omitempty" jsonschema:"status id"`
	AssigneeID  *int64 `json:"assigneeId,omitempty" jsonschema:"user id; 0 removes"`
	VersionID   *int64 `json:"versionId,omitempty" jsonschema:"version id; 0 removes"`
}

// update is the row as the single update's arguments.
func (r bulkRow) update() updateWPIn {
	in := updateWPIn{WorkPackageID: r.ID, StatusID: r.StatusID, AssigneeID: r.AssigneeID, VersionID: r.VersionID}
	if r.LockVersion != nil {
		in.LockVersion = *r.LockVersion
	}
	return in
}

// bulkOut is the answer of a bulk update: the rows saved, the rows that
// failed (by their index in rows, from 0), and whether every row was
// saved; or, on a server that asks for confirmation, the preview of each
// row.
type bulkOut struct {
	Updated        []bulkDone    `json:"updated"`
	Failed         []bulkFailure `json:"failed"`
	Complete       bool          `json:"complete"`
	IndexRefreshed bool          `json:"indexRefreshed"`
	Note           string        `json:"note,omitempty"`
	Preview        []bulkPreview `json:"preview,omitempty"`
}

type bulkDone struct {
	Index   int    `json:"index"`
	ID      int64  `json:"id"`
	Subject string `json:"subject"`
	// LockVersion is the work package's new one, for a next change.
	LockVersion int `json:"lockVersion"`
}

type bulkFailure struct {
	Index int    `json:"index"`
	ID    int64  `json:"id"`
	Error string `json:"error"`
}

// bulkPreview is what one row would change, or why it cannot be read.
type bulkPreview struct {
	Index int   `json:"index"`
	ID    int64 `json:"id"`
	*preview
	Error string `json:"error,omitempty"`
}

// bulkRowsChecked is a bulk update's rows as checked updates.
type bulkRowsChecked struct {
	in      []updateWPIn
	patch   []openproject.WorkPackagePatch
	changed [][]string
}

// checkBulkRows checks every row before anything is sent: a bad row is a
// bad call, fixed and sent again as a whole, rather than a failure among
// applied rows. Problems are named by row, as in rows[3].statusId.
func checkBulkRows(rows []bulkRow) (bulkRowsChecked, error) {
	var c bulkRowsChecked
	switch {
	case len(rows) == 0:
		return c, argErr("rows", "must hold at least one row")
	case len(rows) > maxBulkRows:
		return c, argErr("rows", "holds %d rows, at most %d are allowed per call: split the change into several calls", len(rows), maxBulkRows)
	}
	seen := make(map[int64]int, len(rows))
	for i, r := range rows {
		prefix := fmt.Sprintf("rows[%d].", i)
		if r.LockVersion == nil {
			return c, argErr(prefix+"lockVersion", "is required: the lockVersion from the last read of work package %d", r.ID)
		}
		in := r.update()
		patch, changed, err := in.check()
		var ae *ArgError
		if errors.As(err, &ae) {
			param := ae.Param
			if param == "workPackageId" {
				param = "id"
			}
			msg := ae.Msg
			if strings.HasPrefix(msg, "nothing to change") {
				msg = "nothing to change: give statusId, assigneeId or versionId"
			}
			return c, argErr(prefix+param, "%s", msg)
		}
		if err != nil {
			return c, err
		}
		if j, dup := seen[r.ID]; dup {
			// The second change of one work package would fail on the
			// lockVersion the first one moved.
			return c, argErr(prefix+"id", "work package %d is already in rows[%d]: give each work package once", r.ID, j)
		}
		seen[r.ID] = i
		c.in, c.patch, c.changed = append(c.in, in), append(c.patch, patch), append(c.changed, changed)
	}
	return c, nil
}

func (s *server) bulkUpdate(ctx context.Context, in bulkUpdateIn) (bulkOut, error) {
	if s.opts.ReadOnly {
		return bulkOut{}, errReadOnly
	}
	rows, err := checkBulkRows(in.Rows)
	if err != nil {
		return bulkOut{}, err
	}
	if s.previewing(in.confirmArg) {
		return s.previewBulk(ctx, rows)
	}
	out := bulkOut{Updated: []bulkDone{}, Failed: []bulkFailure{}}
	// One row at a time, in order: writes are never retried, and an
	// agent reading the answer sees them applied as it listed them.
	for i, row := range rows.in {
		wp, err := s.applyUpdate(ctx, toolBulkUpdate, row, rows.patch[i], rows.changed[i])
		if err == nil {
			out.Updated = append(out.Updated, bulkDone{Index: i, ID: wp.ID, Subject: wp.Subject, LockVersion: wp.LockVersion})
			continue
		}
		if !rowOwn(ctx, err) {
			// OpenProject is out of reach, refuses the key or limits the
			// rate, or the call ends: the rows left would fail the same
			// way, so none is tried.
			if len(out.Updated) == 0 {
				return bulkOut{}, err
			}
			msg := s.partMessage(ctx, toolBulkUpdate, err)
			out.Failed = append(out.Failed, bulkFailure{Index: i, ID: row.WorkPackageID, Error: msg})
			for j := i + 1; j < len(rows.in); j++ {
				out.Failed = append(out.Failed, bulkFailure{Index: j, ID: rows.in[j].WorkPackageID, Error: fmt.Sprintf("not tried: row %d failed with: %s", i, msg)})
			}
			break
		}
		out.Failed = append(out.Failed, bulkFailure{Index: i, ID: row.WorkPackageID, Error: s.partMessage(ctx, toolBulkUpdate, err)})
	}
	out.Complete = len(out.Failed) == 0
	out.IndexRefreshed = len(out.Updated) > 0
	for _, d := range out.Updated {
		if ok, note := s.refreshIndex(ctx, toolBulkUpdate, d.ID); !ok {
			out.IndexRefreshed, out.Note = false, note
		}
	}
	return out, nil
}

// rowOwn reports whether a row's failure is the row's own (OpenProject
// answered about this work package: a conflict, not found, not allowed,
// a refused value), after which the other rows are still worth trying.
func rowOwn(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var te *toolError
	if errors.As(err, &te) {
		return te.category == "conflict"
	}
	switch {
	case errors.Is(err, openproject.ErrNotFound), errors.Is(err, openproject.ErrPermission),
		errors.Is(err, openproject.ErrValidation), errors.Is(err, openproject.ErrConflict), errors.Is(err, openproject.ErrRequest):
		return true
	}
	return false
}

// partMessage is what an answer that goes on without one of its parts (a
// row of a bulk write, a part of a bundle) says of that part's failure:
// the tool's own message, or the user-safe one fail logs with a request
// id.
func (s *server) partMessage(ctx context.Context, tool string, err error) string {
	var te *toolError
	if errors.As(err, &te) {
		return te.msg
	}
	return s.fail(ctx, tool, err).Error()
}

// previewBulk reads every row's work package now and says what the row
// would change, warning of a stale lockVersion; a row whose work package
// cannot be read says why. Nothing is written.
func (s *server) previewBulk(ctx context.Context, rows bulkRowsChecked) (bulkOut, error) {
	out := bulkOut{Updated: []bulkDone{}, Failed: []bulkFailure{}, Note: confirmNote, Preview: make([]bulkPreview, 0, len(rows.in))}
	for i, row := range rows.in {
		cur, err := s.api.WorkPackage(ctx, row.WorkPackageID)
		switch {
		case err == nil:
			out.Preview = append(out.Preview, bulkPreview{Index: i, ID: row.WorkPackageID, preview: updatePreview(cur, row, rows.changed[i])})
		case rowOwn(ctx, err):
			out.Preview = append(out.Preview, bulkPreview{Index: i, ID: row.WorkPackageID, Error: s.partMessage(ctx, toolBulkUpdate, err)})
		default:
			return bulkOut{}, err
		}
	}
	return out, nil
}
