package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// buildInfo is what a binary knows about how it was built.
type buildInfo struct {
	version, commit, date, goVersion string
	modified                         bool
}

// readBuildInfo reads the build: the version set with -ldflags
// "-X main.version=…" (the image does), else the module's version ("go
// install …@v1.2.3"), and the commit and its date that the go command
// stamps into binaries built from a checkout.
func readBuildInfo() buildInfo {
	b := buildInfo{version: version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.goVersion = bi.GoVersion
	if v := bi.Main.Version; v != "" && v != "(devel)" && version == defaultVersion {
		b.version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.commit = s.Value
		case "vcs.time":
			b.date = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

func runVersion(_ context.Context, e env, args []string) error {
	fs := newFlagSet("version")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	b := readBuildInfo()
	commit := b.commit
	switch {
	case commit == "":
		commit = "unknown (the build recorded none: build from a git checkout, with -buildvcs=true if GOFLAGS turns it off)"
	case b.modified:
		commit += " (with uncommitted changes)"
	}
	date := b.date
	if date == "" {
		date = "unknown"
	}
	// Go records no build time (builds are reproducible): the date is
	// the commit's.
	_, err := fmt.Fprintf(e.stdout, "opsearch %s\ncommit:      %s\ncommit date: %s\ngo:          %s\n", b.version, commit, date, b.goVersion)
	return err
}
