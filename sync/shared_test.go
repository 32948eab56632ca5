package sync

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/opsearch/opsearch/store"
)

// TestDefaultShared: a team server keeps the shared store by default,
// except where the data dir holds only stores per user of the instance
// (kept, so an upgrade crawls nothing again), and never because of
// another instance's stores.
func TestDefaultShared(t *testing.T) {
	const base, other = "https://op.example.com", "https://other.example.com"
	userStore := func(t *testing.T, data, baseURL string, id string) string {
		t.Helper()
		inst, err := store.InstanceName(baseURL)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(data, inst, id)
		s, err := store.Open(dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name       string
		setup      func(t *testing.T, data string) []string // the stores kept
		wantShared bool
	}{
		{"empty data dir", func(*testing.T, string) []string { return nil }, true},
		{"stores per user", func(t *testing.T, data string) []string {
			return []string{userStore(t, data, base, "3"), userStore(t, data, base, "12")}
		}, false},
		{"another instance's stores", func(t *testing.T, data string) []string {
			userStore(t, data, other, "3")
			return nil
		}, true},
		{"a shared store beside stores per user", func(t *testing.T, data string) []string {
			userStore(t, data, base, "3")
			u, err := OpenShared(t.Context(), data, base, UserOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := u.Close(); err != nil {
				t.Fatal(err)
			}
			return nil
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			want := tc.setup(t, data)
			shared, kept, err := DefaultShared(data, base)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, lu := range kept {
				got = append(got, lu.Dir)
			}
			slices.Sort(got)
			slices.Sort(want)
			if shared != tc.wantShared || !slices.Equal(got, want) {
				t.Errorf("DefaultShared = %v, kept %v; want %v, kept %v", shared, got, tc.wantShared, want)
			}
		})
	}
	if _, _, err := DefaultShared(t.TempDir(), "not a url"); err == nil {
		t.Error("DefaultShared accepted a base URL that names no instance")
	}
}
