package optest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/opsearch/opsearch/openproject"
)

// CustomField is a work package custom field. Format is "string" (a
// property with a plain string), "text" (a formattable), "int", "bool",
// or "list" (a link to an option, with the option as title; Multi lists
// render an array of links).
type CustomField struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Format string `json:"format"`
	Multi  bool   `json:"multi,omitempty"`
}

// Key is the property name OpenProject renders the field under.
func (f CustomField) Key() string { return fmt.Sprintf("customField%d", f.ID) }

// CustomValue is the value of one custom field on one work package; a
// Multi list field has several Values, every other field one.
type CustomValue struct {
	WorkPackageID int64    `json:"workPackage"`
	FieldID       int64    `json:"field"`
	Values        []string `json:"values"`
}

// versionSharings are the Sharing values of the API, narrowest first.
var versionSharings = []string{"none", "descendants", "hierarchy", "tree", "system"}

// versionStatuses are the Status values of the API.
var versionStatuses = []string{"open", "locked", "closed"}

// validateVersions checks versions and custom fields: unique ids, known
// projects, statuses and sharings, work packages pointing at known
// versions (when there are any) and values at known work packages and fields.
func (d *Dataset) validateVersions(projects map[int64]bool) error {
	versions := map[int64]bool{}
	for _, v := range d.Versions {
		if v.ID <= 0 || versions[v.ID] {
			return fmt.Errorf("version id %d is missing or duplicated", v.ID)
		}
		versions[v.ID] = true
		if !projects[v.Project.ID] {
			return fmt.Errorf("version %d: unknown project %d", v.ID, v.Project.ID)
		}
		if !slices.Contains(versionStatuses, v.Status) {
			return fmt.Errorf("version %d: status %q is not one of %v", v.ID, v.Status, versionStatuses)
		}
		if v.Sharing != "" && !slices.Contains(versionSharings, v.Sharing) {
			return fmt.Errorf("version %d: sharing %q is not one of %v", v.ID, v.Sharing, versionSharings)
		}
	}
	wps := map[int64]bool{}
	for _, wp := range d.WorkPackages {
		wps[wp.ID] = true
		// A data set without versions may still link one by id (hand-written
		// ones do): the link renders as given.
		if len(versions) > 0 && wp.Version != nil && wp.Version.ID != 0 && !versions[wp.Version.ID] {
			return fmt.Errorf("work package %d: unknown version %d", wp.ID, wp.Version.ID)
		}
	}
	fields := map[int64]CustomField{}
	for _, f := range d.CustomFields {
		if _, dup := fields[f.ID]; f.ID <= 0 || dup {
			return fmt.Errorf("custom field id %d is missing or duplicated", f.ID)
		}
		fields[f.ID] = f
	}
	for _, cv := range d.CustomValues {
		f, ok := fields[cv.FieldID]
		if !ok {
			return fmt.Errorf("custom value of work package %d: unknown field %d", cv.WorkPackageID, cv.FieldID)
		}
		if !wps[cv.WorkPackageID] {
			return fmt.Errorf("custom value of field %d: unknown work package %d", cv.FieldID, cv.WorkPackageID)
		}
		if len(cv.Values) == 0 || (len(cv.Values) > 1 && !f.Multi) {
			return fmt.Errorf("custom value of field %d on work package %d: %d values", cv.FieldID, cv.WorkPackageID, len(cv.Values))
		}
	}
	return nil
}

// versionProjects returns the ids of the projects that may use v, by its
// sharing (Version#projects in OpenProject): the defining project alone,
// with its descendants, with its descendants and ancestors, the whole tree
// of its root, or every project. The caller holds the store lock.
func (s *store) versionProjects(v *openproject.Version) map[int64]bool {
	def, ok := s.projects[v.Project.ID]
	if !ok {
		return nil
	}
	out := map[int64]bool{def.ID: true}
	root := def
	ancestors := s.projectAncestors(def)
	if len(ancestors) > 0 {
		root = ancestors[0]
	}
	for _, id := range s.projectOrder {
		p := s.projects[id]
		chain := s.projectAncestors(p)
		under := func(x *Project) bool {
			return slices.ContainsFunc(chain, func(a *Project) bool { return a.ID == x.ID })
		}
		switch v.Sharing {
		case "system":
			out[id] = true
		case "tree":
			out[id] = out[id] || p.ID == root.ID || under(root)
		case "hierarchy":
			out[id] = out[id] || under(def) || slices.ContainsFunc(ancestors, func(a *Project) bool { return a.ID == id })
		case "descendants":
			out[id] = out[id] || under(def)
		}
		if !out[id] {
			delete(out, id)
		}
	}
	return out
}

// versionVisible reports whether u may see v: with view_work_packages in
// a project that may use it (the authorization of GET /versions/{id},
// authorize_in_projects over version.projects).
func (s *store) versionVisible(u *User, v *openproject.Version) bool {
	for pid := range s.versionProjects(v) {
		if s.allowed(u, pid, PermViewWorkPackages) {
			return true
		}
	}
	return false
}

// listVersions answers GET /versions: every version the caller may see,
// by id, unpaginated as the real collection is.
func (s *Server) listVersions(ex *exchange, _ []string) {
	preds, apiErr := versionFilters(ex)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	var elems []obj
	for _, id := range s.st.versionOrder {
		v := s.st.versions[id]
		if s.st.versionVisible(ex.user, v) && matchAll(v, preds) {
			elems = append(elems, r.version(v))
		}
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/versions", elems))
}

// listProjectVersions answers GET /projects/{id}/versions: the versions
// usable in the project (Project#shared_versions), for a caller with
// view_work_packages there; 403 without it, 404 for a project they cannot
// see.
func (s *Server) listProjectVersions(ex *exchange, args []string) {
	preds, apiErr := versionFilters(ex)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	s.st.mu.RLock()
	p, ok := s.visibleProject(ex.user, args[0])
	if !ok {
		s.st.mu.RUnlock()
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	if !s.st.allowed(ex.user, p.ID, PermViewWorkPackages) {
		s.st.mu.RUnlock()
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	r := s.newRenderer(ex.user)
	var elems []obj
	for _, id := range s.st.versionOrder {
		v := s.st.versions[id]
		if s.st.versionProjects(v)[p.ID] && matchAll(v, preds) {
			elems = append(elems, r.version(v))
		}
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/projects/"+itoa(p.ID)+"/versions", elems))
}

// getVersion answers GET /versions/{id}: 404 for a version the caller may
// not see, as for one that does not exist.
func (s *Server) getVersion(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	v, ok := visibleByID(args[0], s.st.versions, func(v *openproject.Version) bool {
		return s.st.versionVisible(ex.user, v)
	})
	if ok {
		o = s.newRenderer(ex.user).version(v)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

// versionFilters compiles the filters of the version lists: sharing (=
// and !), the one the API documents.
func versionFilters(ex *exchange) ([]func(*openproject.Version) bool, *apiError) {
	fs, _, apiErr := readFilters(ex.r.URL.Query(), false)
	if apiErr != nil {
		return nil, apiErr
	}
	var preds []func(*openproject.Version) bool
	for _, f := range fs {
		name := canonicalFilterName(f.Name)
		if name != "sharing" {
			return nil, errInvalidQuery(msgFilterUnknown)
		}
		if f.Operator != "=" && f.Operator != "!" {
			return nil, errOperator(name)
		}
		if len(f.Values) == 0 {
			return nil, errValues(name)
		}
		for _, v := range f.Values {
			if !slices.Contains(versionSharings, v) {
				return nil, errValues(name)
			}
		}
		want, values := f.Operator == "=", f.Values
		preds = append(preds, func(v *openproject.Version) bool {
			return slices.Contains(values, sharingOf(v)) == want
		})
	}
	return preds, nil
}

func sharingOf(v *openproject.Version) string {
	if v.Sharing == "" {
		return "none"
	}
	return v.Sharing
}

// version renders a version as VersionRepresenter does; definingProject
// is left out when the caller cannot see that project.
func (r *renderer) version(v *openproject.Version) obj {
	self := "/api/v3/versions/" + itoa(v.ID)
	links := obj{
		{"self", link(self, v.Name)},
		{"schema", link("/api/v3/versions/schema", "")},
	}
	if r.canSee(v.Project.ID) {
		links = append(links, kv{"definingProject", r.projectLink(v.Project.ID)})
	}
	links = append(links, kv{"availableInProjects", link(self+"/projects", "")})
	return obj{
		{"_type", "Version"},
		{"_links", links},
		{"id", v.ID},
		{"name", v.Name},
		{"description", formattable("plain", v.Description)},
		{"startDate", fmtDate(v.StartDate)},
		{"endDate", fmtDate(v.EndDate)},
		{"status", v.Status},
		{"sharing", sharingOf(v)},
		{"createdAt", fmtTime(v.CreatedAt)},
		{"updatedAt", fmtTime(v.UpdatedAt)},
	}
}

// versionLink links a work package's version with its name as title.
func (r *renderer) versionLink(ref *openproject.Ref) obj {
	if ref == nil || ref.ID == 0 {
		return nullLink()
	}
	if v, ok := r.st.versions[ref.ID]; ok {
		return link("/api/v3/versions/"+itoa(v.ID), v.Name)
	}
	return refLink("/api/v3/versions/", ref)
}

// customFieldProps renders a work package's custom field values: the
// properties (strings, formattables, numbers, booleans) and the links
// (list options, by title), as CustomFieldInjector does. Fields without
// a value render null.
func (r *renderer) customFieldProps(wp *openproject.WorkPackage) (props, links obj) {
	vals := map[int64][]string{}
	for _, cv := range r.st.customValues[wp.ID] {
		vals[cv.FieldID] = cv.Values
	}
	for _, f := range r.st.customFields {
		vs := vals[f.ID]
		switch f.Format {
		case "list":
			var ls []obj
			for _, v := range vs {
				ls = append(ls, link("/api/v3/custom_options/"+itoa(f.ID*1000+int64(optionIndex(v))), v))
			}
			switch {
			case f.Multi:
				if ls == nil {
					ls = []obj{}
				}
				links = append(links, kv{f.Key(), ls})
			case len(ls) > 0:
				links = append(links, kv{f.Key(), ls[0]})
			default:
				links = append(links, kv{f.Key(), nullLink()})
			}
		default:
			var val any
			if len(vs) > 0 {
				switch f.Format {
				case "text":
					val = formattable("markdown", vs[0])
				case "int":
					n, _ := strconv.ParseInt(vs[0], 10, 64)
					val = n
				case "bool":
					val = vs[0] == "true"
				default:
					val = vs[0]
				}
			}
			props = append(props, kv{f.Key(), val})
		}
	}
	return props, links
}

// optionIndex gives a custom option a stable number from its text, so
// its href stays the same between renders.
func optionIndex(s string) int {
	h := 0
	for _, c := range strings.ToLower(s) {
		h = (h*31 + int(c)) % 997
	}
	return h
}

// workPackageSchema answers GET /work_packages/schemas/{project}-{type}
// with the fields that name things: the standard ones opsearch reads and
// every custom field. The real schema describes every field in detail;
// only name and type are rendered here.
func (s *Server) workPackageSchema(ex *exchange, args []string) {
	pArg, tArg, ok := strings.Cut(args[0], "-")
	pid, ok1 := parseID(pArg)
	tid, ok2 := parseID(tArg)
	s.st.mu.RLock()
	defer s.st.mu.RUnlock()
	_, typeOK := s.st.typeByID(tid)
	if !ok || !ok1 || !ok2 || !typeOK || !s.st.seesWPsIn(ex.user, pid) {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	o := obj{
		{"_type", "Schema"},
		{"_dependencies", []obj{}},
		{"id", obj{{"type", "Integer"}, {"name", "ID"}}},
		{"subject", obj{{"type", "String"}, {"name", "Subject"}}},
		{"version", obj{{"type", "Version"}, {"name", "Version"}}},
	}
	for _, f := range s.st.customFields {
		typ := map[string]string{"string": "String", "text": "Formattable", "int": "Integer", "bool": "Boolean", "list": "CustomOption"}[f.Format]
		if f.Multi {
			typ = "[]" + typ
		}
		o = append(o, kv{f.Key(), obj{{"type", typ}, {"name", f.Name}, {"required", false}, {"hasDefault", false}, {"writable", true}}})
	}
	o = append(o, kv{"_links", obj{{"self", link(fmt.Sprintf("/api/v3/work_packages/schemas/%d-%d", pid, tid), "")}}})
	ex.sendHAL(http.StatusOK, o)
}
