package search_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting/synced"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// TestFreshness_FailedSyncKeepsCompleteness (issue 11, item 5):
// completeness and freshness are separate facts. A sync that fails after
// a complete crawl leaves the index complete, and the note says "complete
// as of T; last sync failed at T2: reason"; a first crawl that fails is
// not complete.
func TestFreshness_FailedSyncKeepsCompleteness(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	tests := []struct {
		name         string
		crawledFirst bool
		wantComplete bool
		wantNote     []string // fragments, with {ok} and {failed} for the kind's times
		notNote      string
	}{
		{
			name: "incremental sync fails", crawledFirst: true, wantComplete: true,
			wantNote: []string{"work_package: complete as of {ok}; last sync failed at {failed}: list work packages: "},
			notNote:  "first crawl has not finished",
		},
		{
			name: "first crawl fails", wantComplete: false,
			wantNote: []string{"the first crawl has not finished for work_package", "work_package: not complete yet; last sync failed at {failed}: list work packages: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Backoff between retries does not sleep: no time passes in
			// this test.
			e := synced.Open(t, opgen.Generate(opgen.GenOptions{Seed: 4, WorkPackages: 60, WikiPages: 10, Meetings: 5}), openproject.Config{
				APIKey: optest.AliceKey, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
			srv, url, st, idx, w := e.Server, e.URL, e.Store, e.Index, e.Worker
			if tt.crawledFirst {
				if _, err := w.Sync(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			srv.SetFaults(optest.Faults{PathPrefix: "/api/v3/work_packages", FailNext: 1 << 30, FailStatus: 500})
			if _, err := w.Sync(t.Context()); err == nil {
				t.Fatal("sync during the outage succeeded")
			}

			f, err := search.New(st, idx, search.Options{BaseURL: url}).Freshness(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			kf := f.Kinds[kind.WorkPackage]
			if f.Complete != tt.wantComplete || kf.Complete != tt.wantComplete {
				t.Errorf("complete: index %t, work packages %t; want %t", f.Complete, kf.Complete, tt.wantComplete)
			}
			if kf.LastError == nil || kf.LastAttempt == nil {
				t.Fatalf("failure not reported: %+v", kf)
			}
			if tt.crawledFirst == (kf.LastSync == nil) {
				t.Errorf("last sync = %v", kf.LastSync)
			}
			for _, frag := range tt.wantNote {
				frag = strings.ReplaceAll(frag, "{failed}", kf.LastAttempt.UTC().Format(time.RFC3339))
				if kf.LastSync != nil {
					frag = strings.ReplaceAll(frag, "{ok}", kf.LastSync.UTC().Format(time.RFC3339))
				}
				if !strings.Contains(f.Note, frag) {
					t.Errorf("note %q lacks %q", f.Note, frag)
				}
			}
			if tt.notNote != "" && strings.Contains(f.Note, tt.notNote) {
				t.Errorf("note %q says %q", f.Note, tt.notNote)
			}
			// Other kinds synced fine and say nothing about failures.
			if strings.Contains(f.Note, "wiki_page:") || f.Kinds[kind.WikiPage].LastError != nil {
				t.Errorf("wiki pages reported failed: %q", f.Note)
			}
		})
	}
}

// TestFreshnessFollowsTheStore: an engine's freshness is cached between
// searches, and every write to the store (a sync that fails, one that
// succeeds) shows in the next answer; a caller changing its copy does not
// change the next caller's.
func TestFreshnessFollowsTheStore(t *testing.T) {
	e := synced.Open(t, opgen.Generate(opgen.GenOptions{Seed: 4, WorkPackages: 40, WikiPages: 5, Meetings: 3}), openproject.Config{
		APIKey: optest.AliceKey, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	ctx := t.Context()
	if _, err := e.Worker.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	eng := search.New(e.Store, e.Index, search.Options{BaseURL: e.URL})
	fresh := func() search.Freshness {
		t.Helper()
		f, err := eng.Freshness(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := fresh()
	if kf := f.Kinds[kind.WorkPackage]; kf.LastError != nil || !f.Complete {
		t.Fatalf("after a good sync: complete %t, work package error %v", f.Complete, kf.LastError)
	}
	// A caller's copy is its own.
	delete(f.Kinds, kind.WorkPackage)
	if _, ok := fresh().Kinds[kind.WorkPackage]; !ok {
		t.Fatal("changing one answer's kinds changed the next answer's")
	}

	e.Server.SetFaults(optest.Faults{PathPrefix: "/api/v3/work_packages", FailNext: 1 << 30, FailStatus: 500})
	if _, err := e.Worker.Sync(ctx); err == nil {
		t.Fatal("sync during the outage succeeded")
	}
	if kf := fresh().Kinds[kind.WorkPackage]; kf.LastError == nil {
		t.Error("the failed sync does not show in the next freshness")
	}
	e.Server.SetFaults(optest.Faults{})
	if _, err := e.Worker.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if kf := fresh().Kinds[kind.WorkPackage]; kf.LastError != nil {
		t.Errorf("the recovered sync does not show in the next freshness: %s", *kf.LastError)
	}
}
