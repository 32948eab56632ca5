package optest_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

func TestDataset_SaveLoadRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 11, WorkPackages: 40, Comments: 60, WikiPages: 8, Meetings: 4})
	path := filepath.Join(t.TempDir(), "data.json")
	if err := optest.SaveDataset(path, d); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved file mode = %v, %v; want 0600 (it holds API keys)", fi.Mode().Perm(), err)
	}
	back, err := optest.LoadDataset(path)
	if err != nil {
		t.Fatal(err)
	}
	// Files made on demand are saved as their content.
	if len(d.Attachments) == 0 {
		t.Fatal("no attachments to save")
	}
	for i := range d.Attachments {
		a := &d.Attachments[i]
		a.Content, a.Source = a.Bytes(), nil
		if a.FileSize == 0 {
			a.FileSize = int64(len(a.Content))
		}
	}
	if !reflect.DeepEqual(back, d) {
		t.Error("loaded data set differs from the saved one")
	}
}

func TestLoadDataset_Errors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "nope.json"), "read dataset"},
		{"not json", write("bad.json", "{"), "decode dataset"},
		{"dangling project", write("dangling.json", `{"users":[{"id":1,"name":"A","apiKey":"k"}],"projects":[],
			"statuses":[{"id":1,"name":"New"}],"types":[{"id":1,"name":"Task"}],
			"workPackages":[{"id":1,"subject":"x","project":{"id":9},"status":{"id":1},"type":{"id":1}}]}`), "unknown project 9"},
		{"duplicate key", write("dup.json", `{"users":[{"id":1,"name":"A","apiKey":"k"},{"id":2,"name":"B","apiKey":"k"}]}`), "duplicated API key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := optest.LoadDataset(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
