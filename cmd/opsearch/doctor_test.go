package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestDoctor runs doctor against the fake in four states, each output
// compared with its golden file (addresses, directories and ages
// normalized): healthy with an index synced, a wrong key, a wrong URL,
// and OpenProject down.
func TestDoctor(t *testing.T) {
	data := opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 40})
	op, base := optesting.Start(t, data, optest.Options{})
	// Private, as opsearch makes them (t.TempDir's are 0755).
	dataDir, emptyDir := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "empty")
	for _, d := range []string{dataDir, emptyDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := func(key, url string) []string {
		return []string{"--base-url", url, "--api-key", key, "--data-dir", dataDir}
	}
	// The healthy state has an index: sync it first.
	var out, errb bytes.Buffer
	if code := run(t.Context(), append([]string{"sync"}, env(optest.AliceKey, base)...), &out, &errb); code != 0 {
		t.Fatalf("sync: %d %s", code, errb.String())
	}
	for _, c := range []struct {
		name   string
		args   []string
		faults *optest.Faults
		code   int
	}{
		{"healthy", env(optest.AliceKey, base), nil, 0},
		{"wrong_key", env("not-a-key", base), nil, 1},
		{"wrong_url", env(optest.AliceKey, base+"/wrong/path"), nil, 1},
		{"down", env(optest.AliceKey, base), &optest.Faults{ErrorRate: 1, ErrorStatuses: []int{503}}, 1},
		{"no_index", []string{"--base-url", base, "--api-key", optest.BobKey, "--data-dir", emptyDir}, nil, 0},
		// Last: an index built by an older opsearch (its build record
		// says so), which the next open rebuilds.
		{"old_mapping", env(optest.AliceKey, base), nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "old_mapping" {
				metas, _ := filepath.Glob(filepath.Join(dataDir, "*", "2", "index", "opsearch_meta.json"))
				if len(metas) != 1 {
					t.Fatalf("the index's build record: %v", metas)
				}
				b, err := os.ReadFile(metas[0])
				if err != nil {
					t.Fatal(err)
				}
				old := regexp.MustCompile(`"mappingVersion":\d+`).ReplaceAll(b, []byte(`"mappingVersion":1`))
				if err := os.WriteFile(metas[0], old, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.faults != nil {
				op.SetFaults(*c.faults)
				defer op.SetFaults(optest.Faults{})
			}
			var out, errb bytes.Buffer
			// Cancelled by the test's end: a down server's retries
			// would otherwise take their full time.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			code := run(ctx, append([]string{"doctor"}, c.args...), &out, &errb)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errb.String())
			}
			got := out.String()
			got = strings.ReplaceAll(got, base, "BASE")
			got = strings.ReplaceAll(got, dataDir, "DATA")
			got = strings.ReplaceAll(got, emptyDir, "EMPTY")
			got = regexp.MustCompile(`last synced \S+ ago`).ReplaceAllString(got, "last synced N ago")
			got = regexp.MustCompile(`built \d{4}-\d\d-\d\d`).ReplaceAllString(got, "built DATE")
			got = regexp.MustCompile(`127\.0\.0\.1_\d+`).ReplaceAllString(got, "INSTANCE")
			golden := filepath.Join("testdata", "doctor_"+c.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("doctor output differs from %s (run with -update after checking):\n%s", golden, got)
			}
		})
	}
}

// TestDoctorLegacyServer: a server whose wiki pages carry no text (older
// OpenProject) is reported as such once a sync has seen it.
func TestDoctorLegacyServer(t *testing.T) {
	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 20}), optest.Options{Profile: optest.ProfileLegacy})
	dataDir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	args := []string{"--base-url", base, "--api-key", optest.AliceKey, "--data-dir", dataDir}
	var out, errb bytes.Buffer
	if code := run(t.Context(), append([]string{"sync"}, args...), &out, &errb); code != 0 {
		t.Fatalf("sync: %d %s", code, errb.String())
	}
	out.Reset()
	if code := run(t.Context(), append([]string{"doctor"}, args...), &out, &errb); code != 0 {
		t.Fatalf("doctor: %d %s", code, errb.String())
	}
	for _, want := range []string{"wiki text: no (this server sends wiki titles only)", "meetings list: no"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor on a legacy server does not say %q:\n%s", want, out.String())
		}
	}
}
