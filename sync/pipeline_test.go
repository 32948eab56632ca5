package sync

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// slowIndex is a memIndex whose writes take perDoc of (fake) time per
// document.
type slowIndex struct {
	*memIndex
	perDoc time.Duration
}

func (s slowIndex) Index(ctx context.Context, docs ...indexer.Document) error {
	time.Sleep(time.Duration(len(docs)) * s.perDoc)
	return s.memIndex.Index(ctx, docs...)
}

// slowAPI is a client of the fake serving d in memory, inside the
// calling test's synctest bubble, whose answers under prefix take
// latency of fake time. The fake is closed with the test.
func slowAPI(t *testing.T, d *optest.Dataset, prefix string, latency time.Duration) *openproject.Client {
	t.Helper()
	srv := optest.NewServer(d, optest.Options{})
	t.Cleanup(srv.Close)
	srv.SetFaults(optest.Faults{PathPrefix: prefix, Latency: latency})
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		return rec.Result(), nil
	})
	c, err := openproject.New(openproject.Config{BaseURL: "http://op.test", APIKey: optest.AdminKey, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSync_CommitsOverlapFetches: a page of work packages is stored and
// indexed while the next page's activities are fetched, so a first sync
// takes about the fetches' time, not the fetches' and the commits' added
// up. The fake answers in memory, within a synctest bubble, with 20 ms of
// fake time per activities request; indexing takes 1 ms of fake time per
// document.
func TestSync_CommitsOverlapFetches(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 1000, WikiPages: -1, Meetings: -1})
	synctest.Test(t, func(t *testing.T) {
		c := slowAPI(t, d, "/api/v3/work_packages/", 20*time.Millisecond)
		idx := slowIndex{memIndex: newMemIndex(), perDoc: time.Millisecond}
		const pageSize, conc = 100, 4
		// Attachments off: their lists would double the latency this
		// test measures the overlap of.
		w := NewWorker(c, openStore(t), idx, Options{PageSize: pageSize, Concurrency: conc, WikiDeepMissRun: 1, Attachments: AttachmentOptions{Off: true}})
		start := time.Now()
		rep, err := w.Sync(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		pages := 1000 / pageSize
		fetch := time.Duration(pageSize/conc) * 20 * time.Millisecond // per page
		commit := time.Duration(pageSize) * time.Millisecond
		if rep.Kinds[kind.WorkPackage].Updated != 1000 {
			t.Fatalf("updated %d work packages", rep.Kinds[kind.WorkPackage].Updated)
		}
		// In turn: pages × (fetch + commit) = 6 s; overlapped: pages ×
		// fetch + the last commit = 5.1 s.
		if limit := time.Duration(pages)*fetch + 2*commit; took > limit {
			t.Errorf("first sync took %v of fake time, want at most %v (fetching %v per page, committing %v)", took, limit, fetch, commit)
		}
	})
}

// TestSync_WikiProbeRoundsFillTheSlots: a wiki probe asks its ids in
// rounds of whole multiples of the requests in flight at once, so no
// round ends with a few requests alone in flight while the others wait
// for the next round. The fake answers in memory, within a synctest
// bubble, with 20 ms of fake time per wiki request.
func TestSync_WikiProbeRoundsFillTheSlots(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 1, WikiPages: -1, Meetings: -1})
	synctest.Test(t, func(t *testing.T) {
		const latency = 20 * time.Millisecond
		c := slowAPI(t, d, "/api/v3/wiki_pages/", latency)
		const conc, deep = 16, 400
		w := NewWorker(c, openStore(t), newMemIndex(), Options{Concurrency: conc, WikiDeepMissRun: deep, Attachments: AttachmentOptions{Off: true}})
		start := time.Now()
		rep, err := w.Sync(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if kr := rep.Kinds[kind.WikiPage]; kr.Err != nil || kr.Fetched != 0 {
			t.Fatalf("wiki: %+v", kr)
		}
		// 400 ids, 16 at a time: 25 rounds of 20 ms. In rounds of 100
		// ids, each of 7 (the last with 4 requests), it took 28.
		if want := time.Duration((deep+conc-1)/conc) * latency; took > want {
			t.Errorf("wiki probe of %d ids took %v of fake time, want %v (%d at a time)", deep, took, want, conc)
		}
	})
}

// TestSync_ReportsRequestLatency: each kind's report says how long its
// requests took. The fake answers in memory, within a synctest bubble,
// with 20 ms of fake time for the requests under /api/v3/work_packages/
// (each work package's activities) and at once for the rest.
func TestSync_ReportsRequestLatency(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 200, WikiPages: -1, Meetings: -1})
	synctest.Test(t, func(t *testing.T) {
		c := slowAPI(t, d, "/api/v3/work_packages/", 20*time.Millisecond)
		w := NewWorker(c, openStore(t), newMemIndex(), Options{PageSize: 100, Concurrency: 4, WikiDeepMissRun: 1, Attachments: AttachmentOptions{Off: true}})
		rep, err := w.Sync(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// 200 activity requests of 20 ms and two listings at once.
		wp := rep.Kinds[kind.WorkPackage]
		if wp.Requests < 200 || !near(wp.Latency.Median, 20*time.Millisecond) || !near(wp.Latency.P90, 20*time.Millisecond) {
			t.Errorf("work packages: %d requests, latency %+v, want a median and p90 of 20 ms", wp.Requests, wp.Latency)
		}
		if want := 200 * 20 * time.Millisecond / time.Duration(wp.Requests); wp.Latency.Mean != want {
			t.Errorf("work packages: mean latency %v, want %v", wp.Latency.Mean, want)
		}
		if p := rep.Kinds[kind.Project]; p.Requests != 1 || p.Latency.Median > time.Millisecond {
			t.Errorf("projects: %d requests, latency %+v, want one answered at once", p.Requests, p.Latency)
		}
	})
}
