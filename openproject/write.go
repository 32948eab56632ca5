package openproject

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// NewWorkPackage is the input of CreateWorkPackage. Project and Subject are
// required; zero ids leave the server's defaults (default type, status and
// priority).
type NewWorkPackage struct {
	// Project is the numeric id or the identifier.
	Project     string
	Subject     string
	Description string
	TypeID      int64
	StatusID    int64
	PriorityID  int64
	AssigneeID  int64
	ParentID    int64
	StartDate   string // YYYY-MM-DD
	DueDate     string // YYYY-MM-DD
}

// WorkPackagePatch is the input of UpdateWorkPackage. LockVersion is
// required and must be the version last read; nil fields stay unchanged. A
// pointer to 0 for AssigneeID, ResponsibleID, ParentID or VersionID
// removes the link.
type WorkPackagePatch struct {
	LockVersion   int
	Subject       *string
	Description   *string
	TypeID        *int64
	StatusID      *int64
	PriorityID    *int64
	AssigneeID    *int64
	ResponsibleID *int64
	ParentID      *int64
	// VersionID is the version (release) the work package is planned
	// for: an open one its project may use, or the server refuses it.
	VersionID      *int64
	StartDate      *string
	DueDate        *string
	PercentageDone *int
}

// CreateWorkPackage creates a work package and returns it as the server
// stored it. Writes are never retried: a timed-out create may have been
// applied.
func (c *Client) CreateWorkPackage(ctx context.Context, n NewWorkPackage) (WorkPackage, error) {
	if err := checkPathParam("project", n.Project); err != nil {
		return WorkPackage{}, fmt.Errorf("create work package: %w", err)
	}
	if strings.TrimSpace(n.Subject) == "" {
		return WorkPackage{}, errors.New("create work package: subject is empty")
	}
	body := map[string]any{"subject": n.Subject}
	if n.Description != "" {
		body["description"] = map[string]any{"raw": n.Description}
	}
	if n.StartDate != "" {
		body["startDate"] = n.StartDate
	}
	if n.DueDate != "" {
		body["dueDate"] = n.DueDate
	}
	links := map[string]any{}
	c.setLink(links, "type", "types", n.TypeID)
	c.setLink(links, "status", "statuses", n.StatusID)
	c.setLink(links, "priority", "priorities", n.PriorityID)
	c.setLink(links, "assignee", "users", n.AssigneeID)
	c.setLink(links, "parent", "work_packages", n.ParentID)
	if len(links) > 0 {
		body["_links"] = links
	}
	var w wireWorkPackage
	r := request{method: http.MethodPost, path: "/api/v3/projects/" + url.PathEscape(n.Project) + "/work_packages", body: body}
	if err := c.do(ctx, r, &w); err != nil {
		return WorkPackage{}, err
	}
	return c.finishWorkPackage(ctx, w)
}

// UpdateWorkPackage applies a patch. A stale LockVersion fails with
// ErrConflict; the caller re-reads the work package and retries.
func (c *Client) UpdateWorkPackage(ctx context.Context, id int64, p WorkPackagePatch) (WorkPackage, error) {
	body := map[string]any{"lockVersion": p.LockVersion}
	if p.Subject != nil {
		if strings.TrimSpace(*p.Subject) == "" {
			return WorkPackage{}, errors.New("update work package: subject is empty")
		}
		body["subject"] = *p.Subject
	}
	if p.Description != nil {
		body["description"] = map[string]any{"raw": *p.Description}
	}
	if p.StartDate != nil {
		body["startDate"] = nullIfEmpty(*p.StartDate)
	}
	if p.DueDate != nil {
		body["dueDate"] = nullIfEmpty(*p.DueDate)
	}
	if p.PercentageDone != nil {
		body["percentageDone"] = *p.PercentageDone
	}
	links := map[string]any{}
	c.patchLink(links, "type", "types", p.TypeID)
	c.patchLink(links, "status", "statuses", p.StatusID)
	c.patchLink(links, "priority", "priorities", p.PriorityID)
	c.patchLink(links, "assignee", "users", p.AssigneeID)
	c.patchLink(links, "responsible", "users", p.ResponsibleID)
	c.patchLink(links, "parent", "work_packages", p.ParentID)
	c.patchLink(links, "version", "versions", p.VersionID)
	if len(links) > 0 {
		body["_links"] = links
	}
	var w wireWorkPackage
	if err := c.do(ctx, request{method: http.MethodPatch, path: wpPath(id), body: body}, &w); err != nil {
		return WorkPackage{}, err
	}
	return c.finishWorkPackage(ctx, w)
}

// AddComment adds a comment to a work package. Note that OpenProject moves
// the work package's updatedAt but not its lockVersion.
func (c *Client) AddComment(ctx context.Context, workPackageID int64, text string) (Activity, error) {
	if strings.TrimSpace(text) == "" {
		return Activity{}, errors.New("add comment: comment is empty")
	}
	var w wireActivity
	r := request{method: http.MethodPost, path: wpPath(workPackageID) + "/activities", body: map[string]any{"comment": map[string]any{"raw": text}}}
	if err := c.do(ctx, r, &w); err != nil {
		return Activity{}, err
	}
	a := w.model()
	a.WorkPackageID = cmp.Or(a.WorkPackageID, workPackageID)
	return a, nil
}

func (c *Client) finishWorkPackage(ctx context.Context, w wireWorkPackage) (WorkPackage, error) {
	wp, closed := w.model()
	if closed != nil {
		wp.Closed = *closed
		return wp, nil
	}
	one := []WorkPackage{wp}
	err := c.fillClosed(ctx, one)
	return one[0], err
}

// href builds a resource href the way the server renders them, below the
// instance's path prefix (servers deployed under /openproject expect it).
func (c *Client) href(collection string, id int64) string {
	return c.base.Path + "/api/v3/" + collection + "/" + strconv.FormatInt(id, 10)
}

func (c *Client) setLink(links map[string]any, name, collection string, id int64) {
	if id > 0 {
		links[name] = map[string]any{"href": c.href(collection, id)}
	}
}

func (c *Client) patchLink(links map[string]any, name, collection string, id *int64) {
	switch {
	case id == nil:
	case *id <= 0:
		links[name] = map[string]any{"href": nil}
	default:
		links[name] = map[string]any{"href": c.href(collection, *id)}
	}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// NewRelation is the input of CreateRelation: a relation of Type from the
// work package the call names to ToID. Lag (days) is only accepted for
// "precedes" and "follows".
type NewRelation struct {
	ToID        int64
	Type        string
	Description string
	Lag         *int
}

// CreateRelation creates a relation from work package fromID and returns
// it as the server stored it, which may be reversed: "follows" from A to B
// comes back as "precedes" from B to A on some versions, the reverse on
// others; Relation.Side reads it from either end. Writes are never
// retried.
func (c *Client) CreateRelation(ctx context.Context, fromID int64, n NewRelation) (Relation, error) {
	switch {
	case fromID <= 0:
		return Relation{}, fmt.Errorf("create relation: work package id %d is not positive", fromID)
	case n.ToID <= 0:
		return Relation{}, fmt.Errorf("create relation: target work package id %d is not positive", n.ToID)
	case ReverseRelationType(n.Type) == "":
		return Relation{}, fmt.Errorf("create relation: unknown relation type %q (want one of %s)", n.Type, strings.Join(RelationTypes(), ", "))
	case n.Lag != nil && n.Type != "precedes" && n.Type != "follows":
		return Relation{}, fmt.Errorf("create relation: a lag is only allowed for precedes and follows, not %s", n.Type)
	case n.Lag != nil && *n.Lag < 0:
		return Relation{}, fmt.Errorf("create relation: lag %d is negative", *n.Lag)
	}
	body := map[string]any{
		"type":   n.Type,
		"_links": map[string]any{"to": map[string]any{"href": c.href("work_packages", n.ToID)}},
	}
	if n.Description != "" {
		body["description"] = n.Description
	}
	if n.Lag != nil {
		body["lag"] = *n.Lag
	}
	var w wireRelation
	if err := c.do(ctx, request{method: http.MethodPost, path: wpPath(fromID) + "/relations", body: body}, &w); err != nil {
		return Relation{}, err
	}
	return w.model(), nil
}
