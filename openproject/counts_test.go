package openproject_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// allWorkPackageIDs lists every id the user sees the ordinary way, in full
// work packages.
func allWorkPackageIDs(t *testing.T, c *openproject.Client, filters openproject.Filters) []int64 {
	t.Helper()
	var ids []int64
	err := openproject.EachPage(context.Background(), openproject.ListOptions{Filters: filters, PageSize: 100}, c.ListWorkPackages, func(p openproject.Page[openproject.WorkPackage]) error {
		for _, wp := range p.Items {
			ids = append(ids, wp.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkCountsAndIDs holds the counts and the id list to what the ordinary
// lists say for one user.
func checkCountsAndIDs(t *testing.T, c *openproject.Client, projects []int64) {
	t.Helper()
	ctx := context.Background()
	for _, filters := range []openproject.Filters{{openproject.StatusAll()}, nil} {
		counts, err := c.WorkPackageCountsByProject(ctx, filters)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, n := range counts.ByProject {
			sum += n
		}
		want := allWorkPackageIDs(t, c, filters)
		if sum != counts.Total || counts.Total != len(want) {
			t.Errorf("filters %v: groups sum to %d, total %d, list has %d", filters, sum, counts.Total, len(want))
		}
		for _, pid := range projects {
			p, err := c.ListProjectWorkPackages(ctx, strconv.FormatInt(pid, 10), openproject.ListOptions{Filters: filters, PageSize: 1})
			if errors.Is(err, openproject.ErrNotFound) || errors.Is(err, openproject.ErrPermission) {
				p.Total = 0
			} else if err != nil {
				t.Fatal(err)
			}
			if counts.ByProject[pid] != p.Total {
				t.Errorf("filters %v, project %d: count %d, list total %d", filters, pid, counts.ByProject[pid], p.Total)
			}
		}
		ids, err := c.WorkPackageIDs(ctx, filters)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("filters %v: ids = %v\nwant %v", filters, ids, want)
		}
	}
}

func TestClient_CountsAndIDs(t *testing.T) {
	// A low maximum makes the id list take several pages.
	f := newFixture(t, optest.Options{MaxPageSize: 25})
	var projects []int64
	for _, p := range f.data.Projects {
		projects = append(projects, p.ID)
	}
	for _, key := range []string{optest.AdminKey, optest.AliceKey, optest.BobKey} {
		t.Run(key, func(t *testing.T) {
			before := f.srv.TotalRequests()
			c := f.client(t, key)
			if _, err := c.WorkPackageCountsByProject(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if n := f.srv.TotalRequests() - before; n != 1 {
				t.Errorf("counting took %d requests, want 1", n)
			}
			checkCountsAndIDs(t, c, projects)
		})
	}
}

// The spec's example collections carry no groups: a server that ignores
// groupBy is reported, not read as "no work packages".
func TestExamples_CountsAndIDs(t *testing.T) {
	ctx := context.Background()
	c := newExampleClient(t, map[string]exampleRoute{"/api/v3/work_packages": {file: "work_package_collection.json"}})
	ids, err := c.WorkPackageIDs(ctx, openproject.Filters{openproject.StatusAll()})
	if err != nil || !slices.Equal(ids, []int64{1, 2}) {
		t.Errorf("ids = %v, %v; want [1 2]", ids, err)
	}
	if _, err := c.WorkPackageCountsByProject(ctx, nil); !errors.Is(err, openproject.ErrUnsupported) {
		t.Errorf("counts of an ungrouped answer: err = %v, want unsupported", err)
	}
}
