package access_test

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// Issue 14's cost goals for the shared index, for 20 users on 20,000 work
// packages.
const (
	goalDiskRatio   = 1.3 // shared disk / one user's disk
	goalNewUserReqs = 60  // requests of the first shared sync of users 2..N
	goalRefreshReqs = 5   // requests of a view refresh where nothing changed
)

// BenchmarkSharedCost measures what the shared index costs against a
// store per user: N users of the mixed-permissions set (default 20,
// OPSEARCH_COST_USERS) on OPSEARCH_COST_WPS work packages (default
// 2,000; the figure is 20,000), counted by the fake's request
// counter and on disk.
//
//  1. Per-user mode: each user syncs into a directory of their own.
//  2. Shared mode: one shared store; users crawl it one after another,
//     in the data set's order, each after their first view (as the team
//     server does: the view tells the crawl which wikis and internal
//     comments the user reads). With OPSEARCH_COST_ADMIN_FIRST=1 an
//     administrator is the first user (and counts as one of the N).
//  3. Views: each user's first view of the shared store, then a refresh
//     where nothing changed.
//
// It runs once whatever b.N is (run it with -benchtime 1x): the figures
// are requests and bytes, not time. Per user and per route tables go to
// the log (-v).
func BenchmarkSharedCost(b *testing.B) {
	if testing.Short() {
		b.Skip("syncs every user twice")
	}
	wps := envInt(b, "OPSEARCH_COST_WPS", 2000)
	n := envInt(b, "OPSEARCH_COST_USERS", 20)
	// Users beyond alice, bob, carol, dave and erin are generated ones.
	d := opgen.Generate(opgen.GenOptions{Seed: 11, WorkPackages: wps, Users: max(n-5, 1), MixedPermissions: true})
	var keys []string
	if os.Getenv("OPSEARCH_COST_ADMIN_FIRST") == "1" {
		keys = append(keys, optest.AdminKey)
	}
	for _, u := range d.Users {
		if !u.Admin && u.APIKey != "" && len(keys) < n {
			keys = append(keys, u.APIKey)
		}
	}
	if len(keys) < n {
		b.Logf("the data set has %d users who are not administrators, not %d", len(keys), n)
		n = len(keys)
	}
	srv, base := optesting.Start(b, d, optest.Options{})
	ctx := b.Context()
	b.Logf("%d users, %d work packages, %d activities, %d wiki pages, %d meetings, %d projects",
		n, len(d.WorkPackages), len(d.Activities), len(d.WikiPages), len(d.Meetings), len(d.Projects))

	type userCost struct {
		key                   string
		own                   map[kind.Kind]int // what the user's own store holds
		ownReqs, ownReport    int
		ownDisk               diskUse
		ownRoutes             map[string]int
		sharedReqs, sharedRep int
		sharedRoutes          map[string]int
		added                 map[kind.Kind]int // what the shared sync added to the store
		viewReqs, refreshReqs int
		missing               int
	}
	costs := make([]userCost, n)

	// 1. Per-user mode.
	for i, key := range keys {
		c := &costs[i]
		c.key = key
		dir := b.TempDir()
		u, err := sync.OpenUser(ctx, dir, client(b, base, key), sync.UserOptions{})
		if err != nil {
			b.Fatalf("open %s: %v", key, err)
		}
		before := srv.Requests()
		rep, err := u.Worker.Sync(ctx)
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			b.Fatalf("sync %s: %v", key, err)
		}
		c.ownRoutes = routesSince(before, srv.Requests())
		c.ownReqs, c.ownReport = sum(c.ownRoutes), rep.Requests
		c.own = map[kind.Kind]int{}
		for _, k := range []kind.Kind{kind.Project, kind.WorkPackage, kind.WikiPage, kind.Meeting} {
			if c.own[k], err = u.Store.Count(k); err != nil {
				b.Fatal(err)
			}
		}
		if err := u.Close(); err != nil {
			b.Fatal(err)
		}
		if c.ownDisk, err = diskUsage(dir); err != nil {
			b.Fatal(err)
		}
	}

	// 2. Shared mode.
	dir := b.TempDir()
	shared, err := sync.OpenShared(ctx, dir, base, sync.UserOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = shared.Close() })
	held := func() map[kind.Kind]int {
		m := map[kind.Kind]int{}
		for _, k := range []kind.Kind{kind.WorkPackage, kind.WikiPage, kind.Meeting} {
			var err error
			if m[k], err = shared.Store.Count(k); err != nil {
				b.Fatal(err)
			}
		}
		return m
	}
	for i, key := range keys {
		c := &costs[i]
		api := client(b, base, key)
		me, err := api.Me(ctx)
		if err != nil {
			b.Fatal(err)
		}
		// As the team server does: the user's view first, which tells
		// the crawl which wikis and internal comments the user reads.
		tr := access.NewTracker(api, access.NewHoldingsCache(shared.Store), me.ID, access.Options{})
		if _, err := tr.Refresh(ctx, true); err != nil {
			b.Fatal(err)
		}
		w, err := shared.SharedWorker(api, sync.Shared{Owner: me.ID, ReadsInternal: tr.ReadsInternal, ReadsWiki: tr.ReadsWiki, Admin: me.Admin}, sync.Options{})
		if err != nil {
			b.Fatal(err)
		}
		had, before := held(), srv.Requests()
		rep, err := w.Sync(ctx)
		if err == nil {
			err = rep.Err()
		}
		if err != nil {
			b.Fatalf("shared sync of %s: %v", key, err)
		}
		c.sharedRoutes = routesSince(before, srv.Requests())
		c.sharedReqs, c.sharedRep = sum(c.sharedRoutes), rep.Requests
		c.added = held()
		for k, v := range had {
			c.added[k] -= v
		}
	}

	// 3. Views.
	holdings, err := access.HoldingsOf(ctx, shared.Store)
	if err != nil {
		b.Fatal(err)
	}
	for i, key := range keys {
		c := &costs[i]
		api := client(b, base, key)
		before := srv.TotalRequests()
		v, err := access.Compute(ctx, api, holdings, nil, access.Options{})
		if err != nil {
			b.Fatalf("view of %s: %v", key, err)
		}
		c.viewReqs, c.missing = srv.TotalRequests()-before, len(v.Missing)
		before = srv.TotalRequests()
		if _, err := access.Compute(ctx, api, holdings, v, access.Options{}); err != nil {
			b.Fatalf("refresh of %s: %v", key, err)
		}
		c.refreshReqs = srv.TotalRequests() - before
	}
	if err := shared.Close(); err != nil {
		b.Fatal(err)
	}
	sharedDisk, err := diskUsage(dir)
	if err != nil {
		b.Fatal(err)
	}

	// Figures.
	var (
		tab                       strings.Builder
		maxOwn, sumOwn            diskUse
		newMax, newSum, refreshMx int
		viewMax, noWikiMax        int
		later                     = map[string][]int{} // route -> requests of users 2..N
	)
	fmt.Fprintf(&tab, "%-16s %4s %6s %4s %4s | %6s %6s %6s %7s %7s | %6s %6s %6s %6s %5s %5s | %4s %7s %7s\n",
		"user", "proj", "wps", "wiki", "meet", "reqs", "report", "wiki/", "MB", "MB al",
		"reqs", "report", "wiki/", "+wps", "+wiki", "+meet", "view", "refresh", "missing")
	for i, c := range costs {
		fmt.Fprintf(&tab, "%-16s %4d %6d %4d %4d | %6d %6d %6d %7.2f %7.2f | %6d %6d %6d %6d %5d %5d | %4d %7d %7d\n",
			c.key, c.own[kind.Project], c.own[kind.WorkPackage], c.own[kind.WikiPage], c.own[kind.Meeting],
			c.ownReqs, c.ownReport, c.ownRoutes[wikiProbe], mb(c.ownDisk.apparent), mb(c.ownDisk.allocated),
			c.sharedReqs, c.sharedRep, c.sharedRoutes[wikiProbe], c.added[kind.WorkPackage], c.added[kind.WikiPage], c.added[kind.Meeting],
			c.viewReqs, c.refreshReqs, c.missing)
		maxOwn.apparent = max(maxOwn.apparent, c.ownDisk.apparent)
		maxOwn.allocated = max(maxOwn.allocated, c.ownDisk.allocated)
		sumOwn.apparent += c.ownDisk.apparent
		sumOwn.allocated += c.ownDisk.allocated
		viewMax = max(viewMax, c.viewReqs)
		refreshMx = max(refreshMx, c.refreshReqs)
		if i == 0 {
			continue
		}
		newMax = max(newMax, c.sharedReqs)
		newSum += c.sharedReqs
		noWikiMax = max(noWikiMax, c.sharedReqs-c.sharedRoutes[wikiProbe])
		for r, k := range c.sharedRoutes {
			if later[r] == nil {
				later[r] = make([]int, n-1)
			}
			later[r][i-1] = k
		}
	}
	b.Logf("per user: what the user's own store holds | per-user mode: requests counted by the fake and by the sync's report, wiki probes (wiki_pages/{id}), disk apparent and allocated"+
		" | first sync into the shared store: requests (fake, report), wiki probes, what it added to the store | access.Compute: first view, unchanged refresh, documents missing from the store\n%s", tab.String())
	largest := slices.MaxFunc(costs, func(a, b userCost) int { return cmp.Compare(a.ownDisk.apparent, b.ownDisk.apparent) })
	b.Logf("disk by part, MB apparent / allocated:\n  shared:%s\n  %s (the largest own dir):%s", sharedDisk.parts(), largest.key, largest.ownDisk.parts())
	b.Logf("shared dir: %.2f MB apparent, %.2f MB allocated; the users' own dirs: largest %.2f / %.2f MB, mean %.2f / %.2f MB, sum %.2f / %.2f MB",
		mb(sharedDisk.apparent), mb(sharedDisk.allocated), mb(maxOwn.apparent), mb(maxOwn.allocated),
		mb(sumOwn.apparent)/float64(n), mb(sumOwn.allocated)/float64(n), mb(sumOwn.apparent), mb(sumOwn.allocated))
	b.Logf("first user's shared sync: %d requests by route\n%s", costs[0].sharedReqs, routeTable(costs[0].sharedRoutes))
	b.Logf("first user's own sync: %d requests by route\n%s", costs[0].ownReqs, routeTable(costs[0].ownRoutes))
	if n > 1 {
		b.Logf("users 2..%d, first shared sync, requests by route (sum, mean and max per user)\n%s", n, laterTable(later, n-1))
		var sb strings.Builder
		for _, c := range costs[1:] {
			fmt.Fprintf(&sb, "  %-16s %6d:", c.key, c.sharedReqs)
			var parts []string
			for _, r := range byCount(c.sharedRoutes) {
				parts = append(parts, fmt.Sprintf("%d %s", c.sharedRoutes[r], strings.TrimPrefix(r, "GET /api/v3/")))
			}
			fmt.Fprintf(&sb, " %s\n", strings.Join(parts, ", "))
		}
		b.Logf("users 2..%d, first shared sync, each user's requests by route\n%s", n, sb.String())
	}

	meanOwn := func(v int64) float64 { return float64(v) / float64(n) }
	ratio := func(a int64, b float64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / b
	}
	b.ReportMetric(ratio(sharedDisk.apparent, float64(maxOwn.apparent)), "disk/max-user")
	b.ReportMetric(ratio(sharedDisk.apparent, meanOwn(sumOwn.apparent)), "disk/mean-user")
	if sharedDisk.allocated >= 0 {
		b.ReportMetric(ratio(sharedDisk.allocated, float64(maxOwn.allocated)), "alloc/max-user")
		b.ReportMetric(ratio(sharedDisk.allocated, meanOwn(sumOwn.allocated)), "alloc/mean-user")
	}
	b.ReportMetric(float64(costs[0].sharedReqs), "reqs-user1")
	if n > 1 {
		b.ReportMetric(float64(newMax), "reqs-new-user-max")
		b.ReportMetric(float64(newSum)/float64(n-1), "reqs-new-user-mean")
		b.ReportMetric(float64(noWikiMax), "reqs-new-user-max-no-wiki-probe")
	}
	b.ReportMetric(float64(viewMax), "reqs-view-max")
	b.ReportMetric(float64(refreshMx), "reqs-refresh-max")

	verdict := func(ok bool) string {
		if ok {
			return "meets"
		}
		return "FAILS"
	}
	b.Logf("goals: disk %.2f× the largest user's %s ≤ %.1f×; new users' first sync at most %d requests %s ≤ %d; unchanged refresh at most %d requests %s ≤ %d",
		ratio(sharedDisk.apparent, float64(maxOwn.apparent)), verdict(ratio(sharedDisk.apparent, float64(maxOwn.apparent)) <= goalDiskRatio), goalDiskRatio,
		newMax, verdict(newMax <= goalNewUserReqs), goalNewUserReqs, refreshMx, verdict(refreshMx <= goalRefreshReqs), goalRefreshReqs)
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		b.Fatalf("%s=%q: want a positive number", name, s)
	}
	return v
}

// diskUse is a directory's size: the files' apparent sizes, and the
// blocks allocated to them (-1 where the system does not say), in all
// and by part (the index, other files by name).
type diskUse struct {
	apparent, allocated int64
	byPart              map[string][2]int64
}

func diskUsage(dir string) (diskUse, error) {
	du := diskUse{byPart: map[string][2]int64{}}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		part := e.Name()
		if strings.Contains(path, string(filepath.Separator)+sync.IndexDirName+string(filepath.Separator)) {
			part = sync.IndexDirName + string(filepath.Separator)
		}
		a := allocated(fi)
		du.apparent += fi.Size()
		if a < 0 || du.allocated < 0 {
			du.allocated = -1
		} else {
			du.allocated += a
		}
		p := du.byPart[part]
		du.byPart[part] = [2]int64{p[0] + fi.Size(), p[1] + a}
		return nil
	})
	return du, err
}

func (du diskUse) parts() string {
	var sb strings.Builder
	for _, p := range slices.Sorted(maps.Keys(du.byPart)) {
		fmt.Fprintf(&sb, " %s %.2f / %.2f;", p, mb(du.byPart[p][0]), mb(du.byPart[p][1]))
	}
	return strings.TrimSuffix(sb.String(), ";")
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// wikiProbe is the route of the wiki probe's requests.
const wikiProbe = "GET /api/v3/wiki_pages/{id}"

// number is a path segment that is an id.
var number = regexp.MustCompile(`/[0-9]+(/|$)`)

// routesSince returns the requests counted between two snapshots of the
// fake's counters, by route: "GET /api/v3/work_packages/{id}/activities".
func routesSince(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[route(k)] += d
		}
	}
	return out
}

func route(key string) string {
	for {
		r := number.ReplaceAllString(key, "/{id}$1")
		if r == key {
			return r
		}
		key = r
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func routeTable(m map[string]int) string {
	var sb strings.Builder
	for _, r := range byCount(m) {
		fmt.Fprintf(&sb, "  %7d  %s\n", m[r], r)
	}
	return sb.String()
}

// byCount returns m's routes, the most requested first.
func byCount(m map[string]int) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
}

// laterTable sums each route's requests over users, with the mean and
// the maximum per user.
func laterTable(later map[string][]int, users int) string {
	total := map[string]int{}
	for r, ks := range later {
		for _, k := range ks {
			total[r] += k
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "  %7s %7s %5s  %s\n", "sum", "mean", "max", "route")
	all := 0
	for _, r := range byCount(total) {
		fmt.Fprintf(&sb, "  %7d %7.1f %5d  %s\n", total[r], float64(total[r])/float64(users), slices.Max(later[r]), r)
		all += total[r]
	}
	fmt.Fprintf(&sb, "  %7d %7.1f %5s  all\n", all, float64(all)/float64(users), "")
	return sb.String()
}
