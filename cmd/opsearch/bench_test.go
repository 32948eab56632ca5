package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/eval"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{in: "10000,100000,1000000", want: []int{10000, 100000, 1000000}},
		{in: " 500 , 1_000 ", want: []int{500, 1000}},
		{in: "7", want: []int{7}},
		{in: "", err: "comma-separated"},
		{in: "10000,", err: `"" is not a number`},
		{in: "10k", err: `"10k" is not a number`},
		{in: "+5", err: `"+5" is not a number`},
		{in: "0", err: "at least one"},
		{in: "-3", err: "at least one"},
		{in: "20000000", err: "at most 10000000"},
		{in: "500,500", err: "named twice"},
	}
	for _, tt := range tests {
		got, err := parseSizes(tt.in)
		switch {
		case tt.err == "" && (err != nil || !slices.Equal(got, tt.want)):
			t.Errorf("parseSizes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseSizes(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
		}
	}
}

// TestBench_ScaleFlags: flags that contradict --scale are refused before
// anything runs.
func TestBench_ScaleFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--scale", "500", "--work-packages", "500"},
		{"bench", "--scale", "500,abc"},
		{"bench", "--scale", "500", "--direct-above", "0"},
		{"bench", "--direct-above", "100"},     // without --scale
		{"bench", "--scale", "500", "--reuse"}, // without --dir
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code == 0 {
			t.Errorf("opsearch %s: exit 0, want a usage error", strings.Join(args, " "))
		}
	}
}

// TestBench_Scale runs --scale at two small sizes, one synced over HTTP
// and one built straight from generated documents, and checks that every
// figure of both points is there and sensible.
func TestBench_Scale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two small indexes")
	}
	var out, errb bytes.Buffer
	args := []string{"bench", "--scale", "500,1000", "--direct-above", "600", "--latency", "1ms", "--queries", "20", "--json"}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("opsearch %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	var rep eval.ScaleReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(rep.Points) != 2 || rep.Machine == "" || rep.LatencyMS != 1 {
		t.Fatalf("report: %+v", rep)
	}
	for i, want := range []struct {
		n     int
		built string
	}{{500, eval.BuiltSync}, {1000, eval.BuiltDirect}} {
		p := rep.Points[i]
		if p.WorkPackages != want.n || p.Built != want.built {
			t.Errorf("point %d: %d work packages built by %q, want %d by %q", i, p.WorkPackages, p.Built, want.n, want.built)
		}
		if p.Comments < 2*want.n || p.Documents <= want.n || p.BuildMS <= 0 || p.DocsPerSec <= 0 ||
			p.IndexMB <= 0 || p.StoreMB <= 0 || p.Queries != 20 || p.LabelledOn != want.n ||
			p.SearchP50MS <= 0 || p.SearchP99MS < p.SearchP50MS || p.Recall10 < 0.8 || p.MRR10 <= 0 || p.MRR10 > p.Recall10 ||
			p.BuildRSSMB <= 0 || p.SearchRSSMB <= 0 {
			t.Errorf("point %d: a figure is missing or off: %+v", i, p)
		}
		synced := p.Built == eval.BuiltSync
		if synced != (p.Requests > 0 && p.Concurrency > 0 && p.FloorMS > 0) || synced == (p.IndexRSSMB > 0) {
			t.Errorf("point %d (%s): requests %d, concurrency %d, floor %.1f ms, index RSS %.0f MiB", i, p.Built, p.Requests, p.Concurrency, p.FloorMS, p.IndexRSSMB)
		}
	}

	out.Reset()
	args = []string{"bench", "--scale", "300", "--latency", "0", "--queries", "5"}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("opsearch %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	for _, s := range []string{"recall@10", "first sync over HTTP", "search RSS"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, out.String())
		}
	}
	t.Log("\n" + out.String())
}

// TestBench_ScaleReuse: --reuse searches what an earlier run kept in
// --dir, with that run's build figures and the same queries, and builds
// afresh what was built from another seed.
func TestBench_ScaleReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a small index")
	}
	dir := t.TempDir()
	bench := func(extra ...string) eval.ScalePoint {
		t.Helper()
		var out, errb bytes.Buffer
		args := append([]string{"bench", "--scale", "800", "--direct-above", "500", "--queries", "10", "--json", "--dir", dir}, extra...)
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Fatalf("opsearch %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		var rep eval.ScaleReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Points) != 1 {
			t.Fatalf("report: %v: %s", err, out.String())
		}
		return rep.Points[0]
	}
	first := bench()
	index := filepath.Join(dir, "wp-800", "index")
	before, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	again := bench("--reuse")
	if !again.Reused || first.Reused {
		t.Fatalf("reused: first %v, again %v", first.Reused, again.Reused)
	}
	if again.BuildMS != first.BuildMS || again.Documents != first.Documents || again.IndexMB != first.IndexMB ||
		again.Recall10 != first.Recall10 || again.MRR10 != first.MRR10 || again.Queries != first.Queries || again.LabelledOn != first.LabelledOn {
		t.Errorf("reused point differs from the build it reused:\nfirst %+v\nagain %+v", first, again)
	}
	if after, err := os.Stat(index); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the index directory was made again: %v", err)
	}
	if other := bench("--reuse", "--seed", "2"); other.Reused {
		t.Error("a point built from seed 1 was reused for seed 2")
	}
}
