package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsearch/opsearch/doctor"
	"github.com/opsearch/opsearch/openproject"
)

// runDoctor checks the setup (package doctor) and prints a line per
// check, with what to do about each problem; it exits 1 when a check
// failed.
func runDoctor(ctx context.Context, e env, args []string) error {
	fs := newFlagSet("doctor")
	conn := bindConn(fs, e, withAPI)
	jsonOut := fs.Bool("json", false, "print the checks as JSON")
	if err := noArgs(e, fs, args); err != nil {
		return err
	}
	if err := conn.finish(e, false); err != nil {
		return err
	}
	var client *openproject.Client
	if conn.baseURL != "" && conn.apiKey != "" {
		var err error
		if client, err = newClient(conn, e); err != nil {
			return err
		}
	}
	checks := doctor.Run(ctx, doctor.Config{
		BaseURL: conn.baseURL, APIKey: conn.apiKey, DataDir: conn.dataDir, Client: client,
		OpenIndex: func(ctx context.Context, user int64) (doctor.Index, string, string, error) {
			li, dir, _, err := openLocal(ctx, e, conn, user, "opsearch doctor")
			if err != nil {
				return nil, "", "", err
			}
			servedBy := ""
			if rc, ok := li.(remoteUser); ok {
				servedBy = rc.Holder()
			}
			return li, dir, servedBy, nil
		},
	})
	if *jsonOut {
		if err := printJSON(e.stdout, checks); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			fmt.Fprintf(e.stdout, "%-4s  %-15s %s\n", c.Status, c.Name, c.Detail)
			if c.Fix != "" {
				fmt.Fprintf(e.stdout, "      %-15s → %s\n", "", c.Fix)
			}
		}
	}
	if doctor.Worst(checks) == doctor.Fail {
		var names []string
		for _, c := range checks {
			if c.Status == doctor.Fail {
				names = append(names, c.Name)
			}
		}
		return errors.New("failed: " + strings.Join(names, ", "))
	}
	return nil
}
