package optest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// groupCounts returns a grouped answer's groups as value href -> count,
// failing on a group that does not have the AggregationGroup shape.
func groupCounts(t *testing.T, body map[string]any) map[string]int {
	t.Helper()
	gs, ok := body["groups"].([]any)
	if !ok {
		t.Fatalf("no groups in %v", body)
	}
	out := map[string]int{}
	for _, g := range gs {
		m, _ := g.(map[string]any)
		keys := sortedMapKeys(m)
		if !slices.Equal(keys, []string{"_links", "count", "value"}) {
			t.Errorf("group keys = %v", keys)
		}
		if links := sortedMapKeys(jget(m, "_links").(map[string]any)); !slices.Equal(links, []string{"groupBy", "valueLink"}) {
			t.Errorf("group links = %v", links)
		}
		href, _ := jget(m, "_links", "valueLink", 0, "href").(string)
		out[href] = jnum(m["count"])
	}
	return out
}

// Grouped counts count what each user may see, honour filters, equal the
// per-project list totals, and do not depend on the page size.
func TestGroupByProject(t *testing.T) {
	_, base := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	for _, key := range []string{AdminKey, AliceKey, BobKey, srvCarolKey, permDaveKey, permErinKey} {
		for _, filters := range []string{"[]", `[{"status":{"operator":"o","values":[]}}]`} {
			t.Run(key+filters, func(t *testing.T) {
				var first map[string]int
				for _, size := range []string{"0", "1", "7"} {
					r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", filters, "groupBy", "project", "pageSize", size), key)
					if r.status != http.StatusOK {
						t.Fatalf("pageSize %s: %d %s", size, r.status, r.raw)
					}
					got := groupCounts(t, r.body)
					sum := 0
					for _, n := range got {
						sum += n
					}
					if sum != jnum(r.body["total"]) {
						t.Errorf("pageSize %s: groups sum to %d, total %v", size, sum, r.body["total"])
					}
					if first == nil {
						first = got
					} else if fmt.Sprint(got) != fmt.Sprint(first) {
						t.Errorf("pageSize %s: groups %v, pageSize 0 gave %v", size, got, first)
					}
				}
				// Each group's count is the total of that project's
				// visible list with the same filters.
				for _, pid := range []int64{1, 2, 3, 4} {
					href := fmt.Sprintf("/api/v3/projects/%d", pid)
					list := fmt.Sprintf(`[{"project":{"operator":"=","values":["%d"]}},`, pid) + filters[1:]
					if filters == "[]" {
						list = fmt.Sprintf(`[{"project":{"operator":"=","values":["%d"]}}]`, pid)
					}
					r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", list, "pageSize", "0"), key)
					if got, want := first[href], jnum(r.body["total"]); got != want {
						t.Errorf("project %d: group count %d, list total %d", pid, got, want)
					}
				}
			})
		}
	}
}

func TestGroupByShapeAndColumns(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/projects/1/work_packages"+srvQ("filters", "[]", "groupBy", "project", "pageSize", "0"))
	want := `[{"_links":{"valueLink":[{"href":"/api/v3/projects/1"}],"groupBy":{"href":"/api/v3/queries/group_bys/project","title":"Project"}},"value":"Demo","count":3}]`
	// The raw answer, to see the order of the keys too.
	if !strings.Contains(string(r.raw), `"offset":1,"groups":`+want+`,"_embedded"`) {
		t.Errorf("answer = %s\nwant groups %s after offset", r.raw, want)
	}
	if got := len(elementIDs(r.body)); got != 0 {
		t.Errorf("pageSize=0 has %d elements", got)
	}
	// An unassigned group has a null value and a null link.
	r = srvGet(t, base, "/api/v3/projects/1/work_packages"+srvQ("filters", "[]", "groupBy", "assignee"))
	counts := groupCounts(t, r.body)
	if counts[""] != 2 || counts["/api/v3/users/2"] != 1 {
		t.Errorf("assignee groups = %v", counts)
	}
	for _, col := range []string{"status", "type", "priority"} {
		r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "groupBy", col, "pageSize", "0"))
		sum := 0
		for _, n := range groupCounts(t, r.body) {
			sum += n
		}
		if sum == 0 || sum != jnum(r.body["total"]) {
			t.Errorf("groupBy %s: groups sum to %d, total %v", col, sum, r.body["total"])
		}
	}
	// No groupBy, no groups, as before.
	if r := srvGet(t, base, "/api/v3/work_packages"); r.body["groups"] != nil {
		t.Errorf("ungrouped list has groups")
	}
	wantError(t, srvGet(t, base, "/api/v3/work_packages"+srvQ("groupBy", "bogus")), 400, "InvalidQuery", "")
	// select prunes groups away, as the real server's SQL representer
	// (used whenever select is given) renders none.
	r = srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "groupBy", "project", "select", "elements/id,total,count"))
	if r.body["groups"] != nil || r.body["total"] == nil {
		t.Errorf("select with groupBy = %s", r.raw)
	}
}

// Id-only listing with select gives exactly the visible ids, page by page.
func TestSelectIDsPerUser(t *testing.T) {
	_, base := Start(t, permDataset(), Options{Now: func() time.Time { return srvClock }})
	for _, key := range []string{AliceKey, permDaveKey, permErinKey} {
		t.Run(key, func(t *testing.T) {
			want := allIDs(t, base, "/api/v3/work_packages?"+srvQ("filters", "[]")[1:], key)
			var got []int64
			for off := 1; ; off++ {
				r := srvGet(t, base, "/api/v3/work_packages"+srvQ("filters", "[]", "select", "elements/id,total,count", "pageSize", "20", "offset", fmt.Sprint(off)), key)
				keys := sortedMapKeys(r.body)
				if !slices.Equal(keys, []string{"_embedded", "count", "total"}) {
					t.Fatalf("keys = %v", keys)
				}
				page := elementIDs(r.body)
				got = append(got, page...)
				if len(page) < 20 {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("ids = %v, want %v", got, want)
			}
		})
	}
}
