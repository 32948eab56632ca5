package indexer

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/opsearch/opsearch/openproject"
)

// segments is the number of segments the live index searches.
func segments(t *testing.T, b *Bleve) uint64 {
	t.Helper()
	adv, err := b.idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	return segmentsAtRoot(adv.(*scorch.Scorch))
}

// segmentsAtRoot is the number of segments s's searches read.
func segmentsAtRoot(s *scorch.Scorch) uint64 {
	m := s.StatsMap()
	files, _ := m["TotFileSegmentsAtRoot"].(uint64)
	mem, _ := m["TotMemorySegmentsAtRoot"].(uint64)
	return files + mem
}

// signingKey is work package id's document: "Rotate the signing key <id>".
func signingKey(id int64) Document {
	return FromWorkPackage(openproject.WorkPackage{ID: id, Subject: fmt.Sprintf("Rotate the signing key %d", id),
		Project: ref(1, "Platform"), Type: ref(2, "Task"), Status: ref(1, "New")}, nil)
}

// writePages indexes work packages 1 to pages×perPage in pages calls, as
// a first crawl's pages come: each call leaves a segment.
func writePages(t *testing.T, b *Bleve, pages, perPage int) {
	t.Helper()
	for p := range pages {
		docs := make([]Document, 0, perPage)
		for i := range perPage {
			docs = append(docs, signingKey(int64(p*perPage+i+1)))
		}
		if err := b.Index(context.Background(), docs...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSettle: many writes in small calls (a first crawl's pages) leave
// several segments, which Settle merges into one; a few writes after
// that are left to scorch, and a search finds the same either way.
func TestSettle(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "index")
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if merged, err := b.Settle(ctx); err != nil || merged {
		t.Fatalf("Settle on an empty index = %v, %v; want false, nil", merged, err)
	}
	const pages, perPage = 12, 100
	writePages(t, b, pages, perPage)
	before := search(t, b, SearchOptions{Query: "signing key 1107", Size: 5})
	if n := segments(t, b); n < 2 {
		t.Fatalf("%d pages left %d segments; the test needs several", pages, n)
	}
	merged, err := b.Settle(ctx)
	if err != nil || !merged {
		t.Fatalf("Settle after %d documents = %v, %v; want true, nil", pages*perPage, merged, err)
	}
	if n := segments(t, b); n != 1 {
		t.Errorf("after Settle the index has %d segments, want 1", n)
	}
	// The replaced segments' files are gone when Settle returns, not at
	// the next open: a sync that exits after it leaves one index's size.
	files, err := os.ReadDir(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	if len(names) != 2 {
		t.Errorf("after Settle the index directory holds %v; want root.bolt and one segment", names)
	}
	// Ties below the first may come in another order (the engine orders
	// them by id); the match itself must stay first.
	if after := search(t, b, SearchOptions{Query: "signing key 1107", Size: 5}); len(after) == 0 || after[0] != before[0] || before[0] != "work_package:1107" {
		t.Errorf("search after Settle = %v, before %v", after, before)
	}

	// A handful of updates is not worth rewriting the index for.
	if err := b.Index(ctx, signingKey(1), signingKey(2), signingKey(3)); err != nil {
		t.Fatal(err)
	}
	if merged, err := b.Settle(ctx); err != nil || merged {
		t.Errorf("Settle after 3 updates = %v, %v; want false, nil", merged, err)
	}
	_ = b.Close()
	if _, err := b.Settle(ctx); err != ErrClosed {
		t.Errorf("Settle on a closed index: %v, want ErrClosed", err)
	}
}

// TestMergeSegmentsMakesOne: a force merge makes one segment of every
// ten at most, so an index of more than ten segments (scorch merged the
// crawl's in tiers, and more than ten stood at its end) was left with
// several (a first sync of 100,000 work packages at 20 ms per request
// ended with two). Here scorch's own merging takes one segment at a
// time, which merges none, so the index holds one per batch.
func TestMergeSegmentsMakesOne(t *testing.T) {
	ctx := context.Background()
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := bleve.NewUsing(filepath.Join(t.TempDir(), "index"), m, scorch.Name, scorch.Name,
		map[string]any{"scorchMergePlanOptions": map[string]any{"SegmentsPerMergeTask": 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	adv, err := idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	s := adv.(*scorch.Scorch)
	const batches, perBatch = 25, 20
	for b := range batches {
		docs := make([]Document, 0, perBatch)
		for i := range perBatch {
			id := int64(b*perBatch + i + 1)
			docs = append(docs, FromWorkPackage(openproject.WorkPackage{ID: id, Subject: fmt.Sprintf("Rotate the signing key %d", id),
				Project: ref(1, "Platform"), Type: ref(2, "Task"), Status: ref(1, "New")}, nil))
		}
		if err := indexBatch(ctx, idx, docs); err != nil {
			t.Fatal(err)
		}
	}
	if n := segmentsAtRoot(s); n <= 10 {
		t.Fatalf("%d batches left %d segments; the test needs more than ten", batches, n)
	}
	if err := mergeSegments(ctx, idx); err != nil {
		t.Fatal(err)
	}
	if n := segmentsAtRoot(s); n != 1 {
		t.Errorf("after mergeSegments the index has %d segments, want 1", n)
	}
	if n, err := idx.DocCount(); err != nil || n != batches*perBatch {
		t.Errorf("DocCount = %d, %v; want %d", n, err, batches*perBatch)
	}
}

// A search that holds the segments a merge replaces, and lets them go
// only after scorch's persister has gone idle, would keep their files on
// disk until the next write; awaitReclaim wakes the persister, so they
// are gone when it returns.
func TestReclaimAfterLateRelease(t *testing.T) {
	ctx := context.Background()
	b, err := Open(filepath.Join(t.TempDir(), "index"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	writePages(t, b, 6, 50)
	adv, err := b.idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	s := adv.(*scorch.Scorch)
	if n := segmentsAtRoot(s); n < 2 {
		t.Fatalf("6 writes left %d segments; the test needs several", n)
	}
	held, err := s.Reader() // a search in flight across the merge
	if err != nil {
		t.Fatal(err)
	}
	plan := mergeplan.SingleSegmentMergePlanOptions
	plan.SegmentsPerMergeTask = math.MaxInt32
	if err := s.ForceMerge(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	// Let the persister persist the merge and go idle (it counts a wait
	// right after its idle clean-up) while the search still holds the
	// old segments.
	var waits any
	for range 20_000 {
		m := s.StatsMap()
		if m["LastPersistedEpoch"] == m["CurRootEpoch"] {
			if waits == nil {
				waits = m["TotPersistLoopWait"]
			} else if m["TotPersistLoopWait"] != waits {
				break
			}
		}
		runtime.Gosched()
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	awaitReclaim(ctx, s)
	m := s.StatsMap()
	if files, atRoot := m["CurOnDiskFiles"].(uint64), m["TotFileSegmentsAtRoot"].(uint64); files != atRoot+1 {
		t.Errorf("after awaitReclaim %d files on disk for %d segments: the replaced ones stayed", files, atRoot)
	}
}
