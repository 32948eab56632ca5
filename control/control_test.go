package control

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/sync"
)

// syncedUser is alice's data in dataDir, synced from a fresh fake.
func syncedUser(t *testing.T, dataDir string) *sync.User {
	t.Helper()
	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 7, WorkPackages: 40, WikiPages: 5, Meetings: 4}), optest.Options{})
	c, err := openproject.New(openproject.Config{BaseURL: base, APIKey: optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	u, err := sync.OpenUser(t.Context(), dataDir, c, sync.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	if err := u.WaitRebuild(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Worker.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return u
}

func resultIDs(r search.Response) []string {
	var ids []string
	for _, x := range r.Results {
		ids = append(ids, string(x.Kind)+":"+x.Title)
	}
	return ids
}

// TestServeAndDial: a command reaching the holder of a user's files gets
// the holder's status, the same search answer as the index itself gives,
// and a sync run by the holder; after Close nothing answers and the
// socket is gone.
func TestServeAndDial(t *testing.T) {
	tests := []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"in the user directory", func(t *testing.T) string { return t.TempDir() }},
		// A socket path longer than Unix allows moves to a private
		// directory under the temporary directory.
		{"path too long for a socket", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), strings.Repeat("long-directory-name-", 6))
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			return d
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := syncedUser(t, tt.dir(t))
			syncs := 0
			srv, err := Listen(u, func(ctx context.Context) (sync.Report, error) {
				syncs++
				return u.Worker.Sync(ctx)
			}, Options{Command: "opsearch serve (test)"})
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(srv.Path()); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("socket %s: %v %v, want mode 0600", srv.Path(), fi.Mode(), err)
			}
			c, err := Dial(t.Context(), u.Dir)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			if c.Status.PID != os.Getpid() || c.Status.Login != "alice" || c.Status.Dir != u.Dir || !strings.Contains(c.Holder(), "opsearch serve (test)") {
				t.Errorf("status %+v", c.Status)
			}
			q := search.Query{Text: "report", PageSize: 20}
			got, err := c.Search(t.Context(), q)
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			want, err := search.New(u.Store, u.Index, search.Options{BaseURL: u.Identity.BaseURL}).Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Results) == 0 || !slices.Equal(resultIDs(got), resultIDs(want)) || got.Total != want.Total {
				t.Errorf("search through the socket %v (total %d), the index itself %v (total %d)", resultIDs(got), got.Total, resultIDs(want), want.Total)
			}
			if got.Index.Owner == nil || got.Index.Owner.Login != "alice" {
				t.Errorf("the answer does not say whose index it is: %+v", got.Index.Owner)
			}
			f, err := c.Freshness(t.Context())
			if err != nil || !f.Complete {
				t.Errorf("freshness %+v, %v", f, err)
			}
			rep, err := c.Sync(t.Context())
			if err != nil || syncs != 1 || len(rep.Kinds) != 5 || rep.Err() != nil {
				t.Errorf("sync through the socket: %+v, %v (%d syncs ran)", rep, err, syncs)
			}
			// Bad input is named, not crashed on.
			if _, err := c.Search(t.Context(), search.Query{Text: "x", PageSize: 1000}); err == nil || !strings.Contains(err.Error(), "pageSize must be between") {
				t.Errorf("search with pageSize 1000: %v", err)
			}
			if err := srv.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(srv.Path()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("socket left behind after Close: %v", err)
			}
			if _, err := Dial(t.Context(), u.Dir); !errors.Is(err, ErrNoServer) {
				t.Errorf("Dial after Close: %v, want ErrNoServer", err)
			}
		})
	}
}

// TestDialLeftovers: a socket file nobody listens on (a holder killed
// with -9) is no server; a socket directory open to other users is
// refused, since another user could have put their socket there.
func TestDialLeftovers(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil { // as the store makes user directories
		t.Fatal(err)
	}
	if _, err := Dial(t.Context(), dir); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial with no socket: %v", err)
	}
	path, _ := SocketPath(dir)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := Dial(t.Context(), dir); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial on a dead socket: %v, want ErrNoServer", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(t.Context(), dir); err == nil || errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "open to other users") {
		t.Fatalf("Dial in a directory open to others: %v", err)
	}
}

// TestNotSyncing: a holder that cannot sync yet says why, and the error
// matches sync.ErrNotSyncing; a malformed request gets a 400 naming it.
func TestNotSyncing(t *testing.T) {
	u := syncedUser(t, t.TempDir())
	srv, err := Listen(u, func(context.Context) (sync.Report, error) {
		return sync.Report{}, errors.Join(sync.ErrNotSyncing, errors.New("waiting for OpenProject to confirm the API key"))
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := Dial(t.Context(), u.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Sync(t.Context()); !errors.Is(err, sync.ErrNotSyncing) || !strings.Contains(err.Error(), "confirm the API key") {
		t.Errorf("Sync: %v", err)
	}

	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", srv.Path())
	}}}
	resp, err := hc.Post("http://opsearch/v1/search", "application/json", strings.NewReader(`{"Text":"x","Bogus":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `unknown field \"Bogus\"`) {
		t.Errorf("unknown field: %d %s", resp.StatusCode, body)
	}
}
