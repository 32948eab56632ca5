package eval

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/opsearch/opsearch/eval/querygen"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting/synced"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenData is the fixed data set of the golden evaluation.
func goldenData() *optest.Dataset {
	return opgen.Generate(opgen.GenOptions{Seed: 42, WorkPackages: 2000, Comments: 6000, WikiPages: 100, Meetings: 60})
}

// syncInto syncs d, as the admin, into a fresh store and index.
func syncInto(t *testing.T, d *optest.Dataset) (*store.Store, *indexer.Bleve) {
	t.Helper()
	return syncAs(t, d, optest.AdminKey)
}

// syncAs syncs d, as the user with key, into a fresh store and index.
func syncAs(t *testing.T, d *optest.Dataset, key string) (*store.Store, *indexer.Bleve) {
	t.Helper()
	s := synced.Start(t, d, key)
	st, idx := s.Store, s.Index
	// Reproducible figures: term statistics of live documents only.
	if err := idx.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st, idx
}

// checkGolden compares rep's table (no timings) with testdata/name, or
// rewrites it with -update.
func checkGolden(t *testing.T, rep *Report, name string) {
	t.Helper()
	var got bytes.Buffer
	if err := rep.WriteTable(&got, false); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("metrics differ from %s (run with -update if the change is intended):\n--- got\n%s--- want\n%s", golden, got.Bytes(), want)
	}
}

// TestGoldenMetrics evaluates the generated query set on a fixed data set
// and keeps the metrics in testdata/metrics.golden (rewrite with -update),
// so any ranking change shows up as a reviewable diff. It also holds
// opsearch to the acceptance thresholds.
func TestGoldenMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs 2,000 work packages")
	}
	d := goldenData()
	st, idx := syncInto(t, d)
	queries := querygen.Generate(d, querygen.Options{Seed: 42})
	rep, err := Run(context.Background(), st, idx, queries, Options{Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, rep, "metrics.golden")
	if testing.Verbose() && os.Getenv("EVAL_DETAIL") != "" {
		_ = rep.WriteDetail(os.Stdout)
	}

	op, _ := rep.Variant(VariantOpsearch)
	if op.Overall.Recall10 < 0.95 || op.Overall.MRR10 < 0.85 {
		t.Errorf("opsearch overall recall@10 %.4f (want >= 0.95), MRR@10 %.4f (want >= 0.85)", op.Overall.Recall10, op.Overall.MRR10)
	}
	for k, m := range op.Kinds {
		if m.Queries > 0 && m.Recall10 < 0.85 {
			t.Errorf("opsearch kind %s: recall@10 %.4f, want >= 0.85", k, m.Recall10)
		}
	}
	if m := op.Kinds[querygen.KindNegative]; m.NegativeClean < 0.9 {
		t.Errorf("opsearch answered %.0f%% of negative queries with nothing, want >= 90%%", m.NegativeClean*100)
	}
}
