package openproject_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestClient_CustomFieldShapes decodes every shape a custom field takes
// on the wire: strings, numbers, booleans, formattables, lists, links
// with and without titles, lists of links, nulls; and a version that
// only 17.8+ targetVersions names.
func TestClient_CustomFieldShapes(t *testing.T) {
	body := `{"_type":"WorkPackage","id":9,"subject":"Shapes","lockVersion":1,
	  "customField1":"Acme","customField2":42,"customField3":true,"customField4":{"format":"markdown","raw":"**bold**","html":"<b>bold</b>"},
	  "customField5":null,"customField6":["a","b"],"customField7":2.5,"customFieldX":"not a field","customField10":"",
	  "_embedded":{"status":{"isClosed":false}},
	  "_links":{"self":{"href":"/api/v3/work_packages/9"},"project":{"href":"/api/v3/projects/1","title":"Demo"},"type":{"href":"/api/v3/types/2","title":"Bug"},
	    "status":{"href":"/api/v3/statuses/1","title":"New"},
	    "targetVersions":[{"href":"/api/v3/versions/4","title":"4.0"},{"href":"/api/v3/versions/5","title":"5.0"}],
	    "customField8":{"href":"/api/v3/custom_options/3","title":"Backend"},
	    "customField9":[{"href":"/api/v3/users/2","title":"Alice"},{"href":"/api/v3/users/3","title":""}],
	    "customField11":{"href":null},"customField12":[]}}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/hal+json")
		if strings.HasPrefix(r.URL.Path, "/api/v3/work_packages/schemas/") {
			_, _ = w.Write([]byte(`{"_type":"Schema","_dependencies":[],"subject":{"type":"String","name":"Subject"},
			  "customField1":{"type":"String","name":"Customer"},"customField8":{"type":"CustomOption","name":"Component"},"customField2":"odd","_links":{}}`))
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	c, err := openproject.New(openproject.Config{BaseURL: ts.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	wp, err := c.WorkPackage(t.Context(), 9)
	if err != nil {
		t.Fatal(err)
	}
	want := []openproject.CustomField{
		{Key: "customField1", Value: "Acme"},
		{Key: "customField2", Value: "42"},
		{Key: "customField3", Value: "true"},
		{Key: "customField4", Value: "**bold**"},
		{Key: "customField6", Value: "a, b"},
		{Key: "customField7", Value: "2.5"},
		{Key: "customField8", Value: "Backend"},
		{Key: "customField9", Value: "Alice, /api/v3/users/3"},
	}
	if !reflect.DeepEqual(wp.CustomFields, want) {
		t.Errorf("custom fields =\n%+v\nwant\n%+v", wp.CustomFields, want)
	}
	if wp.Version == nil || wp.Version.ID != 4 || wp.Version.Title != "4.0" {
		t.Errorf("version from targetVersions = %+v, want 4 (4.0)", wp.Version)
	}
	names, err := c.WorkPackageSchemaNames(t.Context(), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"subject": "Subject", "customField1": "Customer", "customField8": "Component"}; !reflect.DeepEqual(names, want) {
		t.Errorf("schema names = %v, want %v", names, want)
	}
	if _, err := c.WorkPackageSchemaNames(t.Context(), 0, 2); err == nil {
		t.Error("schema of project 0: no error")
	}
}

// TestClient_Versions lists and reads versions from the fake as alice
// and as the administrator, and reads custom fields it renders.
func TestClient_Versions(t *testing.T) {
	f := newFixture(t, optest.Options{})
	admin := f.client(t, optest.AdminKey)
	alice := f.client(t, optest.AliceKey)
	all, err := admin.ListVersions(t.Context(), "", openproject.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != len(f.data.Versions) || all.Total != len(f.data.Versions) {
		t.Fatalf("admin lists %d versions (total %d), want %d", len(all.Items), all.Total, len(f.data.Versions))
	}
	for i, v := range all.Items {
		w := f.data.Versions[i]
		if v.ID != w.ID || v.Name != w.Name || v.Status != w.Status || v.Sharing != w.Sharing || v.EndDate != w.EndDate ||
			v.StartDate != w.StartDate || v.Description != w.Description || v.Project.ID != w.Project.ID || !v.UpdatedAt.Equal(w.UpdatedAt) {
			t.Errorf("version %d = %+v, want %+v", w.ID, v, w)
		}
	}
	mine, err := alice.ListVersions(t.Context(), "alice-private", openproject.ListOptions{Filters: openproject.Filters{{Name: "sharing", Operator: "=", Values: []string{"system"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range mine.Items {
		if v.Sharing != "system" {
			t.Errorf("sharing filter let version %d (%s) through", v.ID, v.Sharing)
		}
	}
	// A version of bob's private project, not shared: alice gets 404.
	bob := f.projectID(t, "bob-private")
	for _, w := range f.data.Versions {
		if w.Project.ID == bob && w.Sharing != "system" {
			if _, err := alice.Version(t.Context(), w.ID); !errors.Is(err, openproject.ErrNotFound) {
				t.Errorf("alice reading version %d of bob's project: err = %v, want not found", w.ID, err)
			}
			if v, err := admin.Version(t.Context(), w.ID); err != nil || v.Name != w.Name {
				t.Errorf("admin reading version %d: %+v, %v", w.ID, v, err)
			}
			break
		}
	}
	if _, err := admin.ListVersions(t.Context(), "a/b", openproject.ListOptions{}); err == nil {
		t.Error("project a/b: no error")
	}
	// Custom fields as the fake renders them, named by the schema.
	if len(f.data.CustomValues) == 0 {
		t.Fatal("data set has no custom field values")
	}
	{
		wp, err := admin.WorkPackage(t.Context(), f.data.CustomValues[0].WorkPackageID)
		if err != nil {
			t.Fatal(err)
		}
		if len(wp.CustomFields) == 0 {
			t.Fatalf("work package %d: no custom fields decoded", wp.ID)
		}
		names, err := admin.WorkPackageSchemaNames(t.Context(), wp.Project.ID, wp.Type.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, cf := range wp.CustomFields {
			if names[cf.Key] == "" {
				t.Errorf("schema does not name %s", cf.Key)
			}
		}
	}
}
