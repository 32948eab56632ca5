package optest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/opsearch/opsearch/openproject"
)

// PermManageRelations lets a user create, change and delete the relations
// of a project's work packages (Relations::BaseContract checks it on the
// relation's from work package).
const PermManageRelations = "manage_work_package_relations"

// The rules below follow opf/openproject: app/models/relation.rb (the
// types, their reverses, reverse_if_needed), app/contracts/relations/
// base_contract.rb (visibility of both ends, the permission, relatable
// work packages, accepted types) and lib/api/v3/relations/ (the
// representer and the GET /relations collection, which lists only
// relations between work packages the caller sees).

// canonicalRelation returns how the server stores a relation of type typ
// from a to b: reverse types are stored as their forward type with the
// ends swapped (Relation#reverse_if_needed: duplicated, blocked,
// precedes, partof and required are reversed).
func canonicalRelation(typ string, from, to int64) (string, int64, int64) {
	switch typ {
	case "duplicated", "blocked", "precedes", "partof", "required":
		return openproject.ReverseRelationType(typ), to, from
	}
	return typ, from, to
}

// relationLabel is the English name the server renders (label_<type>).
func relationLabel(typ string) string {
	switch typ {
	case "relates":
		return "related to"
	case "duplicated":
		return "duplicated by"
	case "blocked":
		return "blocked by"
	case "partof":
		return "part of"
	case "required":
		return "required by"
	}
	return typ
}

func cloneRelation(r openproject.Relation) openproject.Relation {
	if r.Lag != nil {
		lag := *r.Lag
		r.Lag = &lag
	}
	return r
}

// validateRelations checks that relations have unique ids, known types
// and ends that are existing, distinct work packages.
func validateRelations(rels []openproject.Relation, wps map[int64]bool) error {
	ids := map[int64]bool{}
	for _, r := range rels {
		if r.ID <= 0 || ids[r.ID] {
			return fmt.Errorf("relation id %d is missing or duplicated", r.ID)
		}
		ids[r.ID] = true
		if openproject.ReverseRelationType(r.Type) == "" {
			return fmt.Errorf("relation %d: unknown type %q", r.ID, r.Type)
		}
		if !wps[r.From.ID] || !wps[r.To.ID] || r.From.ID == r.To.ID {
			return fmt.Errorf("relation %d: ends %d and %d must be two existing work packages", r.ID, r.From.ID, r.To.ID)
		}
	}
	return nil
}

// indexRelations stores the data set's relations in canonical form. Only
// newStore calls it, on a store it owns.
func (s *store) indexRelations(rels []openproject.Relation) {
	s.relations = make(map[int64]*openproject.Relation, len(rels))
	s.relationsByWP = map[int64][]int64{}
	for i := range rels {
		r := &rels[i]
		r.Type, r.From.ID, r.To.ID = canonicalRelation(r.Type, r.From.ID, r.To.ID)
		r.ReverseType = openproject.ReverseRelationType(r.Type)
		s.relations[r.ID] = r
		s.relationOrder = append(s.relationOrder, r.ID)
		s.relationsByWP[r.From.ID] = append(s.relationsByWP[r.From.ID], r.ID)
		s.relationsByWP[r.To.ID] = append(s.relationsByWP[r.To.ID], r.ID)
		s.nextRelation = max(s.nextRelation, r.ID)
	}
	slices.Sort(s.relationOrder)
	for _, list := range s.relationsByWP {
		slices.Sort(list)
	}
}

// insertRelation stores a new relation (canonical form). The caller holds
// the write lock.
func (s *store) insertRelation(r openproject.Relation) *openproject.Relation {
	s.nextRelation++
	r.ID = s.nextRelation
	p := &r
	s.relations[r.ID] = p
	s.relationOrder = append(s.relationOrder, r.ID)
	s.relationsByWP[r.From.ID] = append(s.relationsByWP[r.From.ID], r.ID)
	s.relationsByWP[r.To.ID] = append(s.relationsByWP[r.To.ID], r.ID)
	return p
}

// deleteRelationsOf removes the relations of a deleted work package. The
// caller holds the write lock.
func (s *store) deleteRelationsOf(wpID int64) {
	for _, id := range s.relationsByWP[wpID] {
		r, ok := s.relations[id]
		if !ok {
			continue
		}
		other := r.To.ID
		if other == wpID {
			other = r.From.ID
		}
		s.relationsByWP[other] = slices.DeleteFunc(s.relationsByWP[other], func(x int64) bool { return x == id })
		delete(s.relations, id)
		if i, found := slices.BinarySearch(s.relationOrder, id); found {
			s.relationOrder = slices.Delete(s.relationOrder, i, i+1)
		}
	}
	delete(s.relationsByWP, wpID)
}

// relationVisible reports whether u sees r: only when they see both work
// packages (Relation.visible).
func (s *store) relationVisible(u *User, r *openproject.Relation) bool {
	from, ok1 := s.wps[r.From.ID]
	to, ok2 := s.wps[r.To.ID]
	return ok1 && ok2 && s.canSeeWP(u, from) && s.canSeeWP(u, to)
}

// relation renders a relation as lib/api/v3/relations/relation_representer
// does. Current servers call the lag "lag", older ones "delay"; it is
// rendered (null when unset) for follows relations only, the type
// precedes relations are stored as.
func (r *renderer) relation(rel *openproject.Relation) obj {
	self := "/api/v3/relations/" + itoa(rel.ID)
	links := obj{
		{"self", link(self, "")},
		{"from", r.wpLink(rel.From.ID)},
		{"to", r.wpLink(rel.To.ID)},
	}
	if from, ok := r.st.wps[rel.From.ID]; ok && r.st.allowed(r.caller, from.Project.ID, PermManageRelations) {
		links = append(links,
			kv{"updateImmediately", actionLink(self, "patch", "")},
			kv{"delete", actionLink(self, "delete", "Remove relation")})
	}
	o := obj{
		{"_type", "Relation"},
		{"id", rel.ID},
		{"name", relationLabel(rel.Type)},
		{"type", rel.Type},
		{"reverseType", openproject.ReverseRelationType(rel.Type)},
	}
	if rel.Type == "follows" {
		var lag any
		if rel.Lag != nil {
			lag = *rel.Lag
		}
		name := "lag"
		if r.profile == ProfileLegacy {
			name = "delay"
		}
		o = append(o, kv{name, lag})
	}
	var desc any
	if rel.Description != "" {
		desc = rel.Description
	}
	o = append(o, kv{"description", desc}, kv{"_links", links})
	return o
}

// compileRelationFilters implements the filters of GET /relations: id,
// from, to, involved (either end) and type, each with = and !.
func compileRelationFilters(fs openproject.Filters) ([]func(*openproject.Relation) bool, *apiError) {
	var preds []func(*openproject.Relation) bool
	for _, f := range fs {
		name := canonicalFilterName(f.Name)
		var p func(*openproject.Relation) bool
		var err *apiError
		switch name {
		case "id":
			p, err = idFilter(f, name, func(r *openproject.Relation) int64 { return r.ID })
		case "from":
			p, err = idFilter(f, name, func(r *openproject.Relation) int64 { return r.From.ID })
		case "to":
			p, err = idFilter(f, name, func(r *openproject.Relation) int64 { return r.To.ID })
		case "involved":
			var fromP, toP func(*openproject.Relation) bool
			fromP, err = idFilter(f, name, func(r *openproject.Relation) int64 { return r.From.ID })
			if err == nil {
				toP, _ = idFilter(f, name, func(r *openproject.Relation) int64 { return r.To.ID })
				if f.Operator == "=" {
					p = func(r *openproject.Relation) bool { return fromP(r) || toP(r) }
				} else {
					p = func(r *openproject.Relation) bool { return fromP(r) && toP(r) }
				}
			}
		case "type":
			if f.Operator != "=" && f.Operator != "!" {
				return nil, errOperator(name)
			}
			if len(f.Values) == 0 {
				return nil, errValues(name)
			}
			for _, v := range f.Values {
				if openproject.ReverseRelationType(v) == "" {
					return nil, errValues(name)
				}
			}
			// The stored type is matched: reverse types are never stored,
			// so "blocked" matches nothing.
			in := f.Operator == "="
			vals := slices.Clone(f.Values)
			p = func(r *openproject.Relation) bool { return slices.Contains(vals, r.Type) == in }
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

// relationSortField resolves the relation sort fields.
func relationSortField(name string) func(a, b *openproject.Relation) int {
	switch name {
	case "id":
		return func(a, b *openproject.Relation) int { return cmp.Compare(a.ID, b.ID) }
	case "type":
		return func(a, b *openproject.Relation) int { return cmp.Compare(a.Type, b.Type) }
	}
	return nil
}

// listRelations answers GET /relations: the relations between work
// packages the caller sees, filtered, ordered by id, offset-paginated.
func (s *Server) listRelations(ex *exchange, _ []string) {
	q := ex.r.URL.Query()
	fs, _, apiErr := readFilters(q, false)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	preds, apiErr := compileRelationFilters(fs)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	keys, apiErr := readSort(q, relationSortField)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	pg := s.parsePage(q)
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	var match []*openproject.Relation
	for _, id := range s.st.relationOrder {
		rel := s.st.relations[id]
		if s.st.relationVisible(ex.user, rel) && matchAll(rel, preds) {
			match = append(match, rel)
		}
	}
	sortItems(match, keys, func(x *openproject.Relation) int64 { return x.ID })
	from, to := pg.window(len(match))
	elems := make([]obj, 0, to-from)
	for _, rel := range match[from:to] {
		elems = append(elems, r.relation(rel))
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, pagedCollection("Collection", "/api/v3/relations", q, pg, len(match), elems, nil, nil))
}

// getRelation answers GET /relations/{id}; a relation the caller may not
// see is not found.
func (s *Server) getRelation(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	rel, ok := visibleByID(args[0], s.st.relations, func(x *openproject.Relation) bool { return s.st.relationVisible(ex.user, x) })
	if ok {
		o = s.newRenderer(ex.user).relation(rel)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

// listWorkPackageRelations answers GET /work_packages/{id}/relations.
// Current servers redirect to the relations list filtered by involved
// (paths/work_package_relations.yml, 302); older ones answered with the
// unpaginated collection of the work package's visible relations.
func (s *Server) listWorkPackageRelations(ex *exchange, args []string) {
	s.st.mu.RLock()
	defer s.st.mu.RUnlock()
	wp, ok := s.visibleWP(ex.user, args[0])
	if !ok {
		ex.sendAPIError(errNotFound(msgWPNotFound))
		return
	}
	if s.opts.Profile != ProfileLegacy {
		filters := `[{"involved":{"operator":"=","values":["` + itoa(wp.ID) + `"]}}]`
		loc := "/api/v3/relations?filters=" + url.QueryEscape(filters)
		ex.send(http.StatusFound, "text/plain; charset=utf-8", []byte("You are being redirected to "+loc), map[string]string{"Location": loc})
		return
	}
	r := s.newRenderer(ex.user)
	var elems []obj
	for _, id := range s.st.relationsByWP[wp.ID] {
		if rel := s.st.relations[id]; s.st.relationVisible(ex.user, rel) {
			elems = append(elems, r.relation(rel))
		}
	}
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/work_packages/"+itoa(wp.ID)+"/relations", elems))
}

// relationInput is the body of POST /work_packages/{id}/relations
// (relation_write_model.yml). Servers before 15.0 called the lag "delay".
type relationInput struct {
	Type        *string                    `json:"type"`
	Description *string                    `json:"description"`
	Lag         *int                       `json:"lag"`
	Delay       *int                       `json:"delay"`
	Links       map[string]json.RawMessage `json:"_links"`
}

// Messages of relation validation errors. The real wording comes from
// OpenProject's locale (activerecord.errors.messages); the fake uses the
// English ones.
const (
	msgRelationType     = "Type is not set to one of the allowed values."
	msgRelationTo       = "Related work package does not exist."
	msgRelationSelf     = "Related work package is invalid."
	msgRelationCircular = "This relation would create a circular dependency."
	msgRelationExists   = "These work packages are already related."
	msgRelationAncestor = "A work package cannot be linked to one of its subtasks."
	msgRelationLag      = "Lag must be greater than or equal to 0."
)

// createRelation answers POST /work_packages/{id}/relations with 201 and
// the relation as stored. The checks follow the create contract: the
// from work package must be visible (404), the caller needs
// manage_work_package_relations there (403), the type must be known, the
// target visible and relatable: not the same work package, not already
// related in any direction, not an ancestor or descendant, and for
// follows/precedes not closing a cycle of follows relations (422).
func (s *Server) createRelation(ex *exchange, args []string) {
	var in relationInput
	if err := ex.readBody(&in); err != nil {
		ex.sendAPIError(err)
		return
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	from, ok := s.visibleWP(ex.user, args[0])
	if !ok {
		ex.sendAPIError(errNotFound(msgWPNotFound))
		return
	}
	if !s.st.allowed(ex.user, from.Project.ID, PermManageRelations) {
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	typ := ""
	if in.Type != nil {
		typ = *in.Type
	}
	if openproject.ReverseRelationType(typ) == "" {
		ex.sendAPIError(errConstraint("type", msgRelationType))
		return
	}
	toID, set, linkOK := linkTarget(in.Links, "to", "/api/v3/work_packages/")
	if !set || toID == 0 {
		ex.sendAPIError(errConstraint("to", msgRelationTo))
		return
	}
	to, exists := s.st.wps[toID]
	if !linkOK || !exists || !s.st.canSeeWP(ex.user, to) {
		ex.sendAPIError(errConstraint("to", msgRelationTo))
		return
	}
	lag := cmp.Or(in.Lag, in.Delay)
	if lag != nil && *lag < 0 {
		ex.sendAPIError(errConstraint("lag", msgRelationLag))
		return
	}
	if apiErr := s.checkRelatable(from.ID, to.ID, typ); apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	ctyp, cfrom, cto := canonicalRelation(typ, from.ID, to.ID)
	rel := openproject.Relation{
		Type: ctyp, ReverseType: openproject.ReverseRelationType(ctyp),
		From: openproject.Ref{ID: cfrom, Href: "/api/v3/work_packages/" + itoa(cfrom)},
		To:   openproject.Ref{ID: cto, Href: "/api/v3/work_packages/" + itoa(cto)},
	}
	if in.Description != nil {
		rel.Description = *in.Description
	}
	// Only follows relations keep a lag (Relation: lag is for scheduling).
	if ctyp == "follows" && lag != nil {
		l := *lag
		rel.Lag = &l
	}
	created := s.st.insertRelation(rel)
	ex.sendHAL(http.StatusCreated, s.newRenderer(ex.user).relation(created))
}

// checkRelatable applies WorkPackage.relatable to a relation of typ from
// a to b. The caller holds the store lock.
func (s *Server) checkRelatable(a, b int64, typ string) *apiError {
	if a == b {
		return errConstraint("to", msgRelationSelf)
	}
	for _, id := range s.st.relationsByWP[a] {
		r := s.st.relations[id]
		if r.From.ID == b || r.To.ID == b {
			return errConstraint("base", msgRelationExists)
		}
	}
	if s.isDescendant(a, b) || s.isDescendant(b, a) {
		return errConstraint("base", msgRelationAncestor)
	}
	if typ == "follows" || typ == "precedes" {
		// Stored as "succ follows pred"; a cycle arises when pred already
		// follows succ, directly or through other follows relations.
		_, succ, pred := canonicalRelation(typ, a, b)
		if s.follows(pred, succ) {
			return errConstraint("base", msgRelationCircular)
		}
	}
	return nil
}

// follows reports whether work package x follows y through a chain of
// follows relations. The caller holds the store lock.
func (s *Server) follows(x, y int64) bool {
	seen := map[int64]bool{}
	stack := []int64{x}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur == y {
			return true
		}
		if seen[cur] {
			continue
		}
		seen[cur] = true
		for _, id := range s.st.relationsByWP[cur] {
			if r := s.st.relations[id]; r.Type == "follows" && r.From.ID == cur {
				stack = append(stack, r.To.ID)
			}
		}
	}
	return false
}
