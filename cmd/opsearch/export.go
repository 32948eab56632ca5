package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// runExport writes the user's store as JSONL, one file per kind, so an
// experiment can run outside opsearch. It makes no API calls.
func runExport(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("export")
	conn := bindConn(fs, e, 0)
	out := fs.String("out", "", "directory to write projects.jsonl, work_packages.jsonl, activities.jsonl, wiki_pages.jsonl and meetings.jsonl into (required)")
	userID := fs.Int64("user", 0, "user id whose data to export, when the data dir holds several")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("--out DIR is required")
	}
	if err := conn.finish(e, false); err != nil {
		return err
	}
	u, err := openFiles(ctx, e, conn, *userID, "opsearch export")
	if err != nil {
		return err
	}
	defer u.Close()
	counts, err := exportStore(ctx, u.Store, *out)
	if err != nil {
		return err
	}
	for _, name := range exportFiles {
		fmt.Fprintf(e.stdout, "%-20s %d\n", name, counts[name])
	}
	fmt.Fprintf(e.stdout, "exported user %d's data to %s\n", u.Identity.UserID, *out)
	return nil
}

// exportFiles are the files export writes, in order.
var exportFiles = []string{"projects.jsonl", "work_packages.jsonl", "activities.jsonl", "wiki_pages.jsonl", "meetings.jsonl"}

// exportStore writes st's entities to dir (created 0700, files 0600) and
// returns the lines written per file.
func exportStore(ctx context.Context, st *store.Store, dir string) (map[string]int, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	counts := map[string]int{}
	writers := map[string]*jsonlFile{}
	for _, name := range exportFiles {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		writers[name] = &jsonlFile{f: f, w: bw, enc: json.NewEncoder(bw)}
	}
	const batch = 500
	put := func(name string, v any) error {
		counts[name]++
		return writers[name].enc.Encode(v)
	}
	err := st.ScanProjects(ctx, batch, func(ps []openproject.Project) error { return putAll(put, "projects.jsonl", ps) })
	if err == nil {
		err = st.ScanWorkPackages(ctx, batch, func(wps []openproject.WorkPackage) error { return putAll(put, "work_packages.jsonl", wps) })
	}
	if err == nil {
		err = st.ScanActivities(ctx, batch, func(was []store.WorkPackageActivities) error {
			for _, wa := range was {
				if err := putAll(put, "activities.jsonl", wa.Activities); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		err = st.ScanWikiPages(ctx, batch, func(ws []openproject.WikiPage) error { return putAll(put, "wiki_pages.jsonl", ws) })
	}
	if err == nil {
		err = st.ScanMeetings(ctx, batch, func(ms []openproject.Meeting) error { return putAll(put, "meetings.jsonl", ms) })
	}
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, name := range exportFiles {
		jf := writers[name]
		if err := jf.w.Flush(); err != nil {
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
		if err := jf.f.Close(); err != nil {
			return nil, fmt.Errorf("close %s: %w", name, err)
		}
	}
	return counts, nil
}

func putAll[T any](put func(string, any) error, name string, items []T) error {
	for _, it := range items {
		if err := put(name, it); err != nil {
			return err
		}
	}
	return nil
}

type jsonlFile struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
}
