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
