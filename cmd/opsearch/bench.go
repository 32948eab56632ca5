package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/eval"
)

// runBench starts a fake OpenProject in-process, syncs it, and runs the
// same labelled queries through opsearch's index and through the
// reference's live search. With --scale it measures opsearch alone at
// each of several sizes instead (eval.BenchScale).
func runBench(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("bench")
	var o eval.BenchOptions
	fs.IntVar(&o.WorkPackages, "work-packages", 10000, "work packages in the generated data set")
	fs.DurationVar(&o.Latency, "latency", 20*time.Millisecond, "how long the fake server takes to answer each request (its own work included)")
	fs.IntVar(&o.Queries, "queries", 100, "labelled work package queries to run each way")
	fs.Int64Var(&o.Seed, "seed", 1, "generator seed for data and queries")
	fs.StringVar(&o.Dir, "dir", "", "keep the store and index in this directory (default: a temporary one, removed afterwards)")
	scale := fs.String("scale", "", "comma-separated work package counts, e.g. 10000,100000,1000000: build, size, search latency, recall and memory at each, opsearch alone")
	directAbove := fs.Int("direct-above", eval.DefaultDirectAbove, "with --scale: sizes above this are built straight from generated documents instead of synced over HTTP (-1: sync every size)")
	reuse := fs.Bool("reuse", false, "with --scale and --dir: search a size the directory already holds from an earlier run (same seed) instead of building it again")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	o.Latency = cmp.Or(o.Latency, -1) // explicit zero: no added latency
	o.Logger = e.logger
	if *reuse && (*scale == "" || o.Dir == "") {
		return errors.New("--reuse needs --scale and --dir: it searches the sizes an earlier --scale run kept in --dir")
	}
	if *scale != "" || flagSet(fs, "direct-above") {
		sizes, err := parseSizes(*scale)
		if err != nil {
			return fmt.Errorf("--scale: %w", err)
		}
		if flagSet(fs, "work-packages") {
			return errors.New("--scale and --work-packages exclude each other: --scale names every size")
		}
		if *directAbove == 0 || *directAbove < -1 {
			return fmt.Errorf("--direct-above %d: want a positive size, or -1 to sync every size", *directAbove)
		}
		rep, err := eval.BenchScale(ctx, eval.ScaleOptions{
			Sizes: sizes, Latency: o.Latency, Queries: o.Queries, Seed: o.Seed,
			DirectAbove: *directAbove, Dir: o.Dir, Reuse: *reuse, Logger: e.logger,
		})
		if err != nil {
			return err
		}
		if *jsonOut {
			return printJSON(e.stdout, rep)
		}
		rep.WriteText(e.stdout)
		return nil
	}
	rep, err := eval.Bench(ctx, o)
	if err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(e.stdout, rep)
	}
	rep.WriteText(e.stdout)
	fmt.Fprintln(e.stdout)
	return nil
}

// maxScaleSize bounds one --scale size: ten million work packages would
// take the better part of a day and a hundred GiB on disk.
const maxScaleSize = 10_000_000

// parseSizes reads --scale: work package counts separated by commas,
// each a positive integer (underscores allowed, 10_000) of at most
// maxScaleSize, none repeated.
func parseSizes(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("want a comma-separated list of work package counts, e.g. 10000,100000")
	}
	var sizes []int
	seen := map[int]bool{}
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		switch {
		case err != nil || f == "" || strings.HasPrefix(f, "+"):
			return nil, fmt.Errorf("%q is not a number of work packages", f)
		case n <= 0:
			return nil, fmt.Errorf("%d: want at least one work package", n)
		case n > maxScaleSize:
			return nil, fmt.Errorf("%d: at most %d work packages", n, maxScaleSize)
		case seen[n]:
			return nil, fmt.Errorf("%d is named twice", n)
		}
		seen[n] = true
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
