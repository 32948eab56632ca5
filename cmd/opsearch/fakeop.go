package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/eval"
	"github.com/opsearch/opsearch/eval/querygen"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
)

// runFakeOp serves a fake OpenProject until ctx is cancelled.
func runFakeOp(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("fakeop")
	addr := fs.String("addr", "127.0.0.1:8090", "listen address (host:port; port 0 picks a free one)")
	var gen opgen.GenOptions
	fs.Int64Var(&gen.Seed, "seed", 1, "generator seed; the same seed gives the same data")
	fs.IntVar(&gen.Projects, "projects", opgen.DefaultProjects, "number of projects")
	fs.IntVar(&gen.Users, "users", opgen.DefaultUsers, "number of users besides admin, alice and bob")
	fs.IntVar(&gen.WorkPackages, "work-packages", opgen.DefaultWorkPackages, "number of work packages")
	fs.IntVar(&gen.Comments, "comments", 0, "number of comments (default 3 per work package)")
	fs.IntVar(&gen.WikiPages, "wiki-pages", opgen.DefaultWikiPages, "number of wiki pages")
	fs.IntVar(&gen.Meetings, "meetings", opgen.DefaultMeetings, "number of meetings")
	fs.BoolVar(&gen.MixedPermissions, "mixed-permissions", false, "add roles, memberships, work package shares, internal comments and the users carol, dave and erin (keys opsearch-carol, opsearch-dave, opsearch-erin), who see different things")
	profile := fs.String("profile", string(optest.ProfileCurrent), "API version profile: current (meetings list, wiki text) or legacy (neither)")
	dataFile := fs.String("data", "", "load the data set from this JSON file (a saved data set, or a neutral corpus such as ../shared/devset/corpus.json) instead of generating one")
	saveFile := fs.String("save", "", "write the data set to this JSON file and continue serving")
	latency := fs.Duration("latency", 0, "how long each request takes to be answered, the fake's own work included, e.g. 20ms")
	maxPage := fs.Int("max-page-size", optest.DefaultMaxPageSize, "largest page size the server allows (larger requests are capped silently)")
	errorRate := fs.Float64("error-rate", 0, "share of requests answered with a 5xx error, 0..1")
	errorStatuses := fs.String("error-statuses", "500,502,503", "the statuses --error-rate answers with, comma-separated (e.g. 500 for a server whose failures are all exceptions)")
	notFoundRate := fs.Float64("not-found-rate", 0, "share of requests for existing resources answered 404 anyway (a transient fault), 0..1")
	queriesFile := fs.String("queries", "", "write a labelled query set for the data (JSONL, for opsearch eval) to this file and continue serving")
	queriesPerKind := fs.Int("queries-per-kind", querygen.DefaultPerKind, "queries per kind in the --queries set")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	p := optest.Profile(*profile)
	if p != optest.ProfileCurrent && p != optest.ProfileLegacy {
		return fmt.Errorf("--profile must be current or legacy, not %q", *profile)
	}
	if *errorRate < 0 || *errorRate > 1 {
		return fmt.Errorf("--error-rate must be between 0 and 1, not %v", *errorRate)
	}
	if *notFoundRate < 0 || *notFoundRate > 1 {
		return fmt.Errorf("--not-found-rate must be between 0 and 1, not %v", *notFoundRate)
	}
	var statuses []int
	for f := range strings.SplitSeq(*errorStatuses, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 500 || n > 599 {
			return fmt.Errorf("--error-statuses must list 5xx statuses, not %q", f)
		}
		statuses = append(statuses, n)
	}
	if *maxPage < 1 {
		return fmt.Errorf("--max-page-size must be at least 1, not %d", *maxPage)
	}
	if *latency < 0 {
		return fmt.Errorf("--latency must not be negative, not %v", *latency)
	}

	var data *optest.Dataset
	if *dataFile != "" {
		d, err := opgen.LoadAny(*dataFile)
		if err != nil {
			return err
		}
		data = d
	} else {
		start := time.Now()
		data = opgen.Generate(gen)
		e.logger.Info("generated data set", "work_packages", len(data.WorkPackages), "activities", len(data.Activities),
			"wiki_pages", len(data.WikiPages), "meetings", len(data.Meetings), "projects", len(data.Projects), "took", time.Since(start).Round(time.Millisecond))
	}
	if *saveFile != "" {
		if err := optest.SaveDataset(*saveFile, data); err != nil {
			return err
		}
	}
	if *queriesFile != "" {
		qs := querygen.Generate(data, querygen.Options{Seed: gen.Seed, PerKind: *queriesPerKind})
		if err := writeQueryFile(*queriesFile, qs); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %d labelled queries (as the admin sees the data) to %s\n", len(qs), *queriesFile)
	}
	fake, err := optest.Listen(*addr, data, optest.Options{
		MaxPageSize: *maxPage, Profile: p, Latency: *latency,
		Faults: optest.Faults{ErrorRate: *errorRate, ErrorStatuses: statuses, NotFoundRate: *notFoundRate, Seed: uint64(gen.Seed)},
	})
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	defer fake.Server.Close()

	base := fake.URL
	fmt.Fprintf(e.stdout, "fake OpenProject (%s profile) at %s\n", p, base)
	fmt.Fprintf(e.stdout, "API keys: admin=%s alice=%s bob=%s\n", optest.AdminKey, optest.AliceKey, optest.BobKey)
	if gen.MixedPermissions && *dataFile == "" {
		fmt.Fprintf(e.stdout, "mixed permissions: carol=%s dave=%s erin=%s\n", opgen.CarolKey, opgen.DaveKey, opgen.ErinKey)
	}
	fmt.Fprintf(e.stdout, "try: curl -u apikey:%s '%s/api/v3/work_packages?pageSize=2'\n", optest.AliceKey, base)

	select {
	case err := <-fake.Err():
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Shutdown releases hanging requests first, so it can drain.
	if err := fake.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// writeQueryFile writes a labelled query set as JSONL.
func writeQueryFile(path string, qs []scorer.LabelledQuery) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := eval.WriteQueries(f, qs); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
