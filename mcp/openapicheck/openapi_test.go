// Package openapicheck_test validates the REST bridge's OpenAPI document
// with libopenapi. It is a package of its own so that the validator, a
// large dependency, is compiled only for these tests and not into every
// test and fuzz binary of package mcp.
package openapicheck_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	vErrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/opsearch/opsearch/mcp"
)

// writeTools are the tools read-only mode hides.
var writeTools = []string{"openproject_add_comment", "openproject_create_relation", "openproject_create_work_package", "openproject_log_time", "openproject_update_work_package"}

func listTools(t *testing.T) []string {
	t.Helper()
	tools, err := mcp.ListTools(context.Background(), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// openAPIValidator parses spec with libopenapi, builds its OAS 3 model,
// validates the document against the OpenAPI 3.1 schema and returns a
// request validator.
func openAPIValidator(t *testing.T, spec []byte) validator.Validator {
	t.Helper()
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatalf("libopenapi.NewDocument: %v", err)
	}
	if v := doc.GetSpecInfo().Version; v != "3.1.0" {
		t.Fatalf("spec version %q, want 3.1.0", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("BuildV3Model: %v", err)
	}
	if model == nil || model.Model.Paths == nil {
		t.Fatal("BuildV3Model: no paths")
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("NewValidator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("the document is not valid OpenAPI 3.1:\n%s", describe(verrs))
	}
	return v
}

func describe(errs []*vErrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error())
		for _, f := range e.SchemaValidationErrors {
			b.WriteString("\n  " + f.Reason + " at " + f.KeywordLocation)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func specPaths(t *testing.T, spec []byte) map[string]map[string]map[string]any {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Paths
}

func TestOpenAPISpecValid(t *testing.T) {
	tools, err := mcp.ListTools(context.Background(), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 33 {
		t.Fatalf("%d tools, want 33", len(tools))
	}
	spec, err := mcp.OpenAPISpec(tools, false, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	v := openAPIValidator(t, spec)

	paths := specPaths(t, spec)
	if len(paths) != 33 {
		t.Errorf("%d paths, want 33", len(paths))
	}
	for _, tl := range tools {
		op := paths["/api/tools/"+tl.Name]["post"]
		if op == nil {
			t.Errorf("no POST /api/tools/%s", tl.Name)
			continue
		}
		if op["operationId"] != tl.Name || op["description"] != tl.Description || op["summary"] == "" {
			t.Errorf("%s: operationId %v, summary %q", tl.Name, op["operationId"], op["summary"])
		}
		var codes []string
		for c := range op["responses"].(map[string]any) {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		if want := []string{"200", "400", "401", "403", "404", "500"}; !slices.Equal(codes, want) {
			t.Errorf("%s: responses %v, want %v", tl.Name, codes, want)
		}
	}
	for name, tag := range map[string]string{
		"openproject_search": "Search", "openproject_sync_status": "Search", "openproject_list_projects": "Projects",
		"openproject_get_work_package": "Work Packages", "openproject_list_work_package_activities": "Work Packages",
		"openproject_get_query": "Queries", "openproject_list_statuses": "Metadata", "openproject_list_users": "Metadata",
		"openproject_get_openapi_spec": "OpenAPI", "openproject_get_meeting": "Meetings", "openproject_list_wiki_page_links": "Wiki",
		"openproject_add_comment": "Writes", "openproject_list_time_entries": "Time Entries", "openproject_log_time": "Writes",
		"openproject_create_relation": "Writes", "openproject_list_relations": "Work Packages",
	} {
		if got := paths["/api/tools/"+name]["post"]["tags"].([]any)[0]; got != tag {
			t.Errorf("%s: tag %v, want %s", name, got, tag)
		}
	}
	var doc struct {
		Components struct {
			SecuritySchemes map[string]map[string]string `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Components.SecuritySchemes; s["BearerAuth"]["scheme"] != "bearer" || s["ApiKeyAuth"]["name"] != "X-OpenProject-Api-Key" || s["ApiKeyAuth"]["in"] != "header" {
		t.Errorf("security schemes %v", s)
	}

	// A REST request body validates against openproject_search's
	// operation; bodies that break its input schema do not.
	request := func(tool, body string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api/tools/"+tool, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-OpenProject-Api-Key", "opsearch-alice")
		return r
	}
	if ok, errs := v.ValidateHttpRequest(request("openproject_search",
		`{"query":"tls certifcate expird","kinds":["work_package","meeting"],"pageSize":5,"projectId":"website-relaunch"}`)); !ok {
		t.Errorf("a valid search body was rejected:\n%s", describe(errs))
	}
	for _, bad := range []string{
		`{"kinds":["work_package"]}`,               // query missing
		`{"query":"x","pageSize":1000}`,            // above the maximum
		`{"query":"x","kinds":["issue"]}`,          // not in the enum
		`{"query":"x","unknown":true}`,             // additionalProperties false
		`{"query":"x","projectId":{"id":1}}`,       // neither integer nor string
		`{"workPackageId":"12","comment":"hello"}`, // another tool's arguments
	} {
		if ok, _ := v.ValidateHttpRequest(request("openproject_search", bad)); ok {
			t.Errorf("invalid search body %s was accepted", bad)
		}
	}
	if ok, errs := v.ValidateHttpRequest(request("openproject_add_comment", `{"workPackageId":12,"comment":"hello"}`)); !ok {
		t.Errorf("a valid add_comment body was rejected:\n%s", describe(errs))
	}
}

func TestOpenAPISpecReadOnly(t *testing.T) {
	tools, err := mcp.ListTools(context.Background(), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := mcp.OpenAPISpec(tools, true, "")
	if err != nil {
		t.Fatal(err)
	}
	v := openAPIValidator(t, spec)
	paths := specPaths(t, spec)
	if len(paths) != 27 {
		t.Errorf("%d paths in read-only mode, want 27", len(paths))
	}
	for _, w := range writeTools {
		if _, ok := paths["/api/tools/"+w]; ok {
			t.Errorf("read-only spec offers %s", w)
		}
	}
	if strings.Contains(string(spec), `"Writes"`) {
		t.Error("read-only spec declares the Writes tag")
	}
	if strings.Contains(string(spec), `"servers"`) {
		t.Error("an empty base URL should leave servers out")
	}
	r := httptest.NewRequest(http.MethodPost, "/api/tools/openproject_add_comment", strings.NewReader(`{"workPackageId":12,"comment":"hello"}`))
	r.Header.Set("Content-Type", "application/json")
	if ok, _ := v.ValidateHttpRequest(r); ok {
		t.Error("the read-only spec accepts a write tool's request")
	}
	// The read-only server lists the same 24 tools as the spec.
	roTools, err := mcp.ListTools(context.Background(), mcp.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(roTools) != 27 {
		t.Errorf("read-only server lists %d tools, want 27", len(roTools))
	}
	for _, tl := range roTools {
		if _, ok := paths["/api/tools/"+tl.Name]; !ok {
			t.Errorf("read-only spec misses %s", tl.Name)
		}
	}
	if !slices.Contains(listTools(t), writeTools[0]) {
		t.Errorf("the full server does not list %s", writeTools[0])
	}
}

func TestOpenAPIHandler(t *testing.T) {
	tools, err := mcp.ListTools(context.Background(), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcp.OpenAPIHandler(tools, false, "")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for pattern, h := range mcp.OpenAPIRoutes(h) {
		mux.Handle(pattern, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var first []byte
	for _, path := range []string{"/openapi.json", "/swagger.json"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if first == nil {
			first = body
			openAPIValidator(t, body)
		} else if string(body) != string(first) {
			t.Errorf("%s differs from /openapi.json", path)
		}
	}
	resp, err := http.Post(srv.URL+"/openapi.json", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /openapi.json: %d, want 405", resp.StatusCode)
	}
	if _, err := mcp.OpenAPISpec(nil, false, ""); err == nil {
		t.Error("a spec without tools was built")
	}
}

// TestOpenAPIValidatorCatchesErrors guards the guard: the validator used
// above rejects a document that breaks the OpenAPI 3.1 schema.
func TestOpenAPIValidatorCatchesErrors(t *testing.T) {
	bad := []byte(`{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{"/a":{"post":{"responses":{"200":{"content":{}}}}}}}`)
	doc, err := libopenapi.NewDocument(bad)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, _ := v.ValidateDocument(); ok {
		t.Error("a response without a description passed as valid OpenAPI 3.1")
	}
}
