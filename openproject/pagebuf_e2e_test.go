package openproject_test

import (
	"reflect"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestEachPageReusedBuffersDecode: pages listed through EachPage, whose
// answers are read into the two buffers it reuses, decode to exactly the
// work packages the same pages give when fetched one by one. Pages of
// generated text differ in length, so an answer read over the remains of
// a longer one would not decode, or would decode to other values.
func TestEachPageReusedBuffersDecode(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 95})
	srv, err := optest.Listen("127.0.0.1:0", d, optest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := openproject.New(openproject.Config{BaseURL: srv.URL, APIKey: optest.AdminKey})
	if err != nil {
		t.Fatal(err)
	}
	opts := openproject.ListOptions{
		Filters:  openproject.Filters{openproject.StatusAll()},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: 10,
	}
	var pages []openproject.Page[openproject.WorkPackage]
	if err := openproject.EachPage(t.Context(), opts, c.ListWorkPackages, func(p openproject.Page[openproject.WorkPackage]) error {
		pages = append(pages, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(pages) != 10 {
		t.Fatalf("EachPage gave %d pages, want 10", len(pages))
	}
	for _, p := range pages {
		o := opts
		o.Offset = p.Offset
		want, err := c.ListWorkPackages(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Items, want.Items) {
			t.Errorf("page %d through EachPage differs from the page fetched alone", p.Offset)
		}
	}
}
