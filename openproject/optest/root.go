package optest

import (
	"net/http"
)

func (s *Server) getRoot(ex *exchange, _ []string) {
	s.st.mu.RLock()
	o := s.newRenderer(ex.user).root(s.st.instanceName, s.opts.CoreVersion)
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, o)
}

// getSpec answers GET /spec.json with a small OpenAPI document in the
// shape of the real one (the real document is about 1.2 MB), enough for
// clients that summarise or filter it.
func (s *Server) getSpec(ex *exchange, _ []string) {
	op := func(tag, summary, id string) obj {
		return obj{{"tags", []string{tag}}, {"summary", summary}, {"operationId", id},
			{"responses", obj{{"200", obj{{"description", "OK"}}}}}}
	}
	schema := func(props ...string) obj {
		p := obj{}
		for _, name := range props {
			p = append(p, kv{name, obj{{"type", "string"}}})
		}
		return obj{{"type", "object"}, {"properties", p}}
	}
	ex.sendHAL(http.StatusOK, obj{
		{"openapi", "3.0.3"},
		{"info", obj{{"title", "OpenProject API V3 (Stable)"}, {"version", "3"}}},
		{"tags", []obj{{{"name", "Projects"}}, {{"name", "Work Packages"}}, {{"name", "Meetings"}}}},
		{"paths", obj{
			{"/api/v3/projects", obj{{"get", op("Projects", "List projects", "list_projects")}}},
			{"/api/v3/projects/{id}", obj{{"get", op("Projects", "View project", "view_project")}}},
			{"/api/v3/work_packages", obj{
				{"get", op("Work Packages", "List work packages", "list_work_packages")},
				{"post", op("Work Packages", "Create work package", "create_work_package")},
			}},
			{"/api/v3/work_packages/{id}", obj{
				{"get", op("Work Packages", "View work package", "view_work_package")},
				{"patch", op("Work Packages", "Update a work package", "update_work_package")},
			}},
			{"/api/v3/meetings/{id}", obj{{"get", op("Meetings", "View meeting", "view_meeting")}}},
		}},
		{"components", obj{{"schemas", obj{
			{"ProjectModel", schema("identifier", "name")},
			{"WorkPackageModel", schema("subject", "startDate", "dueDate")},
			{"WorkPackagePatchModel", schema("subject", "lockVersion")},
		}}}},
	})
}
