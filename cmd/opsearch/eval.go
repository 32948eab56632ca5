package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsearch/opsearch/eval"
	"github.com/opsearch/opsearch/indexer"
)

// runEval runs a labelled query set against the local index with several
// ranker variants side by side. It makes no API calls.
func runEval(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("eval")
	conn := bindConn(fs, e, 0)
	queriesFile := fs.String("queries", "", "labelled queries, JSONL: {\"id\",\"query\",\"kind\",\"expect\":[{\"type\",\"id\"}]} (required)")
	userID := fs.Int64("user", 0, "user id whose index to evaluate, when the data dir holds several")
	variantsFile := fs.String("variants", "", "JSON file of extra ranker variants: [{\"name\",\"params\":{...},\"weights\":{\"kind.field\":w},\"without\":[\"typos\"]}]")
	features := fs.Bool("features", false, "also run opsearch without each feature of retrieval in turn ("+strings.Join(indexer.FeatureNames(), ", ")+"): what each brings to recall and costs in time")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	detail := fs.Bool("detail", false, "show every query's rank and top results")
	trecDir := fs.String("trec", "", "write TREC run files (one per variant) and qrels.txt into this directory")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	if *queriesFile == "" {
		return errors.New("--queries FILE is required (generate one with: opsearch fakeop --queries FILE)")
	}
	if err := conn.finish(e, false); err != nil {
		return err
	}
	queries, err := eval.LoadQueries(*queriesFile)
	if err != nil {
		return err
	}
	if len(queries) == 0 {
		return eval.ErrNoQueries
	}
	variants := eval.DefaultVariants()
	if *features {
		variants = append(variants, eval.FeatureVariants()...)
	}
	if *variantsFile != "" {
		extra, err := eval.LoadVariants(*variantsFile)
		if err != nil {
			return err
		}
		variants = append(variants, extra...)
	}
	u, err := openFiles(ctx, e, conn, *userID, "opsearch eval")
	if err != nil {
		return err
	}
	defer u.Close()
	// Merged first, so the figures do not depend on when background
	// merges last ran (term statistics then count live documents only).
	if err := u.Index.Compact(ctx); err != nil {
		return err
	}
	rep, err := eval.Run(ctx, u.Store, u.Index, queries, eval.Options{Variants: variants, Detail: *detail})
	if err != nil {
		return err
	}
	if *trecDir != "" {
		if err := rep.WriteTREC(*trecDir, queries); err != nil {
			return err
		}
	}
	if *jsonOut {
		return printJSON(e.stdout, rep)
	}
	if *detail {
		if err := rep.WriteDetail(e.stdout); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout)
	}
	fmt.Fprintf(e.stdout, "%d queries against user %d's index (%s)\n\n", len(queries), u.Identity.UserID, u.Dir)
	return rep.WriteTable(e.stdout, true)
}
