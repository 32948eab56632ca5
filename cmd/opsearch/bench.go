package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/opsearch/opsearch/eval"
)

// runBench starts a fake OpenProject in-process, syncs it, and runs the
// same labelled queries through opsearch's index and through the
// reference's live search.
func runBench(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var o eval.BenchOptions
	fs.IntVar(&o.WorkPackages, "work-packages", 10000, "work packages in the generated data set")
	fs.DurationVar(&o.Latency, "latency", 20*time.Millisecond, "latency the fake server adds to every request")
	fs.IntVar(&o.Queries, "queries", 100, "labelled work package queries to run each way")
	fs.Int64Var(&o.Seed, "seed", 1, "generator seed for data and queries")
	fs.StringVar(&o.Dir, "dir", "", "keep the store and index in this directory (default: a temporary one, removed afterwards)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	o.Latency = cmp.Or(o.Latency, -1) // explicit zero: no added latency
	o.Logger = e.logger
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
