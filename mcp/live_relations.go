package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/opsearch/opsearch/openproject"
)

// The relation tools: list_relations (live, read-only) and
// create_relation (a write). The local index does not store relations,
// so creating one refreshes nothing.

// relationType is a relation type argument; its schema is an enum of
// openproject.RelationTypes (see schemaOverrides).
type relationType string

// check validates an optional relation type argument and returns it in
// the API's spelling (lower case).
func (t relationType) check(param string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(string(t)))
	if s == "" || slices.Contains(openproject.RelationTypes(), s) {
		return s, nil
	}
	return "", argErr(param, "must be one of %s, got %q", strings.Join(openproject.RelationTypes(), ", "), string(t))
}

func relationTypeEnum() []any {
	var out []any
	for _, t := range openproject.RelationTypes() {
		out = append(out, t)
	}
	return out
}

type listRelationsIn struct {
	paging
	WorkPackageID int64        `json:"workPackageId" jsonschema:"work package id"`
	Type          relationType `json:"type,omitempty" jsonschema:"only this type, seen from this work package (blocked = blocked by the other)"`
}

// relationRow is one relation as seen from the work package asked about:
// "this work package <type> workPackage".
type relationRow struct {
	ID          int64  `json:"id"`
	Type        string `json:"type"`
	WorkPackage *ref   `json:"workPackage"`
	Description string `json:"description,omitempty"`
	Lag         *int   `json:"lag,omitempty"`
}

// relationRowOf presents r from work package id's side.
func relationRowOf(r openproject.Relation, id int64) (relationRow, bool) {
	typ, other, _ := r.Side(id)
	desc, cut := capText(r.Description, capRow)
	return relationRow{ID: r.ID, Type: typ, WorkPackage: refOf(other), Description: desc, Lag: r.Lag}, cut
}

// maxRelationsScanned bounds how many relations of one work package
// list_relations reads: the type filter is applied here, from the asked
// work package's side, which the API's own type filter (on the stored
// direction) cannot express.
const maxRelationsScanned = 1000

func (s *server) listRelations(ctx context.Context, in listRelationsIn) (listOut[relationRow], error) {
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return listOut[relationRow]{}, err
	}
	typ, err := in.Type.check("type")
	if err != nil {
		return listOut[relationRow]{}, err
	}
	opts, err := in.options(20)
	if err != nil {
		return listOut[relationRow]{}, err
	}
	var rows []relationRow
	var cuts []bool // whether a row's description was cut
	capped := false
	fetch := func(ctx context.Context, o openproject.ListOptions) (openproject.Page[openproject.Relation], error) {
		return s.api.Relations(ctx, in.WorkPackageID, o)
	}
	seen := 0
	err = openproject.EachPage(ctx, openproject.ListOptions{PageSize: maxPageSize}, fetch, func(p openproject.Page[openproject.Relation]) error {
		for _, r := range p.Items {
			if seen == maxRelationsScanned {
				capped = true
				return errStopPaging
			}
			seen++
			row, c := relationRowOf(r, in.WorkPackageID)
			if typ == "" || row.Type == typ {
				rows = append(rows, row)
				cuts = append(cuts, c)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopPaging) {
		return listOut[relationRow]{}, err
	}
	if seen == 0 {
		// The relations list does not check the work package: an unknown
		// or hidden one has no relations. Tell the agent which it is.
		if _, err := s.api.WorkPackage(ctx, in.WorkPackageID); err != nil {
			return listOut[relationRow]{}, err
		}
	}
	from := min((opts.Offset-1)*opts.PageSize, len(rows))
	to := min(from+opts.PageSize, len(rows))
	out := listOut[relationRow]{Total: len(rows), Count: to - from, PageSize: opts.PageSize, Offset: opts.Offset,
		Elements: append([]relationRow{}, rows[from:to]...), Truncated: capped || slices.Contains(cuts[from:to], true)}
	return out, nil
}

// errStopPaging ends EachPage early once enough relations were read.
var errStopPaging = fmt.Errorf("list relations: stop after %d relations", maxRelationsScanned)

type createRelationIn struct {
	confirmArg
	WorkPackageID int64        `json:"workPackageId" jsonschema:"work package the relation starts from"`
	ToID          int64        `json:"toId" jsonschema:"id of the other work package"`
	Type          relationType `json:"type" jsonschema:"e.g. blocks: workPackageId blocks toId"`
	Description   string       `json:"description,omitempty" jsonschema:"why they are related"`
	Lag           *int         `json:"lag,omitempty" jsonschema:"days between the two, precedes/follows only"`
}

// relationOut is the answer of create_relation: the relation as stored,
// seen from workPackageId.
type relationOut struct {
	WorkPackageID int64       `json:"workPackageId"`
	Relation      relationRow `json:"relation"`
	Note          string      `json:"note,omitempty"`
	Preview       *preview    `json:"preview,omitempty"`
}

func (s *server) createRelation(ctx context.Context, in createRelationIn) (relationOut, error) {
	if s.opts.ReadOnly {
		return relationOut{}, errReadOnly
	}
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return relationOut{}, err
	}
	if err := checkID("toId", in.ToID); err != nil {
		return relationOut{}, err
	}
	if in.ToID == in.WorkPackageID {
		return relationOut{}, argErr("toId", "must be another work package than workPackageId %d", in.WorkPackageID)
	}
	typ, err := in.Type.check("type")
	if err != nil {
		return relationOut{}, err
	}
	if typ == "" {
		return relationOut{}, argErr("type", "must not be empty: one of %s", strings.Join(openproject.RelationTypes(), ", "))
	}
	if in.Lag != nil {
		if typ != "precedes" && typ != "follows" {
			return relationOut{}, argErr("lag", "only applies to precedes and follows relations, not %s", typ)
		}
		if *in.Lag < 0 {
			return relationOut{}, argErr("lag", "must be 0 or more days, got %d", *in.Lag)
		}
	}
	if s.previewing(in.confirmArg) {
		// Both ends, read now: one the user cannot see fails here as
		// the write would.
		from, err := s.api.WorkPackage(ctx, in.WorkPackageID)
		if err != nil {
			return relationOut{}, err
		}
		to, err := s.api.WorkPackage(ctx, in.ToID)
		if err != nil {
			return relationOut{}, err
		}
		changes := map[string]any{"type": typ}
		if in.Description != "" {
			changes["description"] = in.Description
		}
		if in.Lag != nil {
			changes["lag"] = *in.Lag
		}
		return relationOut{WorkPackageID: in.WorkPackageID, Note: confirmNote, Preview: &preview{
			Action:  fmt.Sprintf("relate work package %d %q: it %s work package %d %q", from.ID, from.Subject, typ, to.ID, to.Subject),
			Changes: changes,
		}}, nil
	}
	r, err := s.api.CreateRelation(ctx, in.WorkPackageID, openproject.NewRelation{
		ToID: in.ToID, Type: typ, Description: strings.TrimSpace(in.Description), Lag: in.Lag})
	if err != nil {
		return relationOut{}, err
	}
	row, _ := relationRowOf(r, in.WorkPackageID)
	return relationOut{WorkPackageID: in.WorkPackageID, Relation: row}, nil
}
