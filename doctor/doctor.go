// Package doctor checks an opsearch setup from end to end: the
// configuration, OpenProject's reachability, whose the key is, what the
// server can do, the local index and its data directory. Each check says
// what it found and, for a problem, what to do about it. It owns the
// checks; the command only prints them.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// Status is a check's outcome.
type Status string

// The outcomes: fine, worth a look, broken.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "FAIL"
)

// Check is one check's outcome: what was checked, what was found, and
// for a problem what to do.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Index is the user's local index as the doctor reads it: opened here,
// or through the opsearch process holding it.
type Index interface {
	Freshness(ctx context.Context) (search.Freshness, error)
	Close()
}

// Config is what to check.
type Config struct {
	BaseURL, APIKey, DataDir string
	// Client talks to OpenProject with the key; nil when the
	// configuration lacks what it needs.
	Client *openproject.Client
	// OpenIndex opens the index of user in the data directory (sync.
	// FindLocalUser's choice), and names who serves it ("" when it was
	// opened here).
	OpenIndex func(ctx context.Context, user int64) (idx Index, dir, servedBy string, err error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StaleAfter is when a last sync counts as old (default a day).
	StaleAfter time.Duration
}

// Run runs every check, in order, each bounded by ctx; a check that
// cannot run because an earlier one failed says so.
func Run(ctx context.Context, c Config) []Check {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.StaleAfter <= 0 {
		c.StaleAfter = 24 * time.Hour
	}
	var out []Check
	add := func(ch Check) { out = append(out, ch) }

	cfg := configuration(c)
	add(cfg)
	if cfg.Status == Fail || c.Client == nil {
		return out
	}
	reach := Check{Name: "reachable", Status: OK}
	if err := openproject.Probe(ctx, nil, c.BaseURL); err != nil {
		reach.Status, reach.Detail = Fail, fmt.Sprintf("%s does not answer as OpenProject: %v", c.BaseURL, err)
		reach.Fix = fix(err, "check OPENPROJECT_BASE_URL and that the server is up and reachable from here")
		add(reach)
		return out
	}
	reach.Detail = c.BaseURL + " answers"
	add(reach)

	me, err := c.Client.Me(ctx)
	if err != nil {
		add(Check{Name: "key", Status: Fail, Detail: "OpenProject refused to say whose the key is: " + err.Error(),
			Fix: fix(err, "check OPENPROJECT_API_KEY")})
		return out
	}
	admin := "no"
	if me.Admin {
		admin = "yes"
	}
	add(Check{Name: "key", Status: OK, Detail: fmt.Sprintf("belongs to %s (%s, user %d), administrator: %s", me.Name, me.Login, me.ID, admin)})
	add(server(ctx, c.Client))
	add(dataDir(c.DataDir))
	out = append(out, index(ctx, c, me.ID)...)
	return out
}

// fix is what openproject.Hint says about err, or def.
func fix(err error, def string) string {
	if h := openproject.Hint(err); h != "" {
		return h
	}
	return def
}

func configuration(c Config) Check {
	ch := Check{Name: "configuration", Status: OK}
	var missing []string
	if c.BaseURL == "" {
		missing = append(missing, "OPENPROJECT_BASE_URL (--base-url)")
	}
	if c.APIKey == "" {
		missing = append(missing, "OPENPROJECT_API_KEY (--api-key)")
	}
	if len(missing) > 0 {
		ch.Status, ch.Detail = Fail, "not set: "+strings.Join(missing, ", ")
		ch.Fix = "set them in the environment (the key in the environment, not on the command line: arguments show in process lists)"
		return ch
	}
	if _, err := store.InstanceName(c.BaseURL); err != nil {
		ch.Status, ch.Detail = Fail, "OPENPROJECT_BASE_URL: "+err.Error()
		ch.Fix = "give the address you open OpenProject at in a browser, e.g. https://openproject.example.com"
		return ch
	}
	ch.Detail = fmt.Sprintf("OpenProject %s, data directory %s", c.BaseURL, c.DataDir)
	return ch
}

func server(ctx context.Context, c *openproject.Client) Check {
	ch := Check{Name: "server", Status: OK}
	root, err := c.Root(ctx)
	version := "version hidden (OpenProject shows it to administrators only)"
	switch {
	case err != nil:
		version = "version unknown (" + err.Error() + ")"
	case root.CoreVersion != "":
		version = "OpenProject " + root.CoreVersion
	}
	caps, err := c.Capabilities(ctx)
	if err != nil {
		ch.Status, ch.Detail = Warn, version+"; what it supports could not be asked: "+err.Error()
		ch.Fix = "run doctor again; a sync asks the same and records what it finds"
		return ch
	}
	meetings := "meetings list: yes"
	if !caps.MeetingsList {
		meetings = "meetings list: no (OpenProject before 17.4: meetings are found one by one)"
	}
	wiki := "wiki pages: found by id (no list endpoint, as on released servers)"
	if caps.WikiList {
		wiki = "wiki pages: listed"
	}
	ch.Detail = strings.Join([]string{version, meetings, wiki, "attachments: read per work package, wiki page and meeting"}, "; ")
	return ch
}

func dataDir(dir string) Check {
	ch := Check{Name: "data directory", Status: OK}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		ch.Status, ch.Detail = Warn, dir+" does not exist yet"
		ch.Fix = "opsearch sync or serve creates it (mode 0700)"
		return ch
	case err != nil:
		ch.Status, ch.Detail, ch.Fix = Fail, err.Error(), "make "+dir+" readable and writable by this user"
		return ch
	case !fi.IsDir():
		ch.Status, ch.Detail, ch.Fix = Fail, dir+" is not a directory", "point OPSEARCH_DATA_DIR (--data-dir) at a directory"
		return ch
	}
	// Anything others may read: indexes hold what the key may see.
	var open []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().Perm()&0o077 != 0 {
			open = append(open, fmt.Sprintf("%s (%s)", p, info.Mode().Perm()))
		}
		if len(open) >= 3 {
			return fs.SkipAll
		}
		return nil
	})
	if len(open) > 0 {
		ch.Status, ch.Detail = Warn, "readable by other users: "+strings.Join(open, ", ")
		ch.Fix = "chmod -R go-rwx " + dir
		return ch
	}
	ch.Detail = dir + ", private to this user"
	return ch
}

func index(ctx context.Context, c Config, user int64) []Check {
	ch := Check{Name: "index", Status: OK}
	if c.OpenIndex == nil {
		ch.Status, ch.Detail = Warn, "not checked"
		return []Check{ch}
	}
	// Read before the index is opened: opening one of an older mapping
	// starts its rebuild.
	var mapping *Check
	mappingNote := ""
	if lu, err := sync.FindLocalUser(c.DataDir, c.BaseURL, user); err == nil {
		switch v, at, found, err := indexer.BuiltMapping(filepath.Join(lu.Dir, sync.IndexDirName)); {
		case err != nil:
			mapping = &Check{Name: "index mapping", Status: Warn, Detail: err.Error(),
				Fix: "nothing to do now: an index whose build record is damaged is rebuilt from the store when it is opened"}
		case !found:
			mapping = &Check{Name: "index mapping", Status: Warn, Detail: "the index was never completely built",
				Fix: "let the first sync finish; the index is rebuilt from the store when it is opened"}
		case v != indexer.MappingVersion:
			mapping = &Check{Name: "index mapping", Status: Warn,
				Detail: fmt.Sprintf("built with mapping version %d, this opsearch uses %d", v, indexer.MappingVersion),
				Fix:    "nothing: it is rebuilt from the store (no OpenProject request) when this opsearch opens it, the old one answering meanwhile"}
		default:
			mappingNote = fmt.Sprintf("; mapping version %d (current), built %s", v, at.UTC().Format(time.DateOnly))
		}
	}
	idx, dir, servedBy, err := c.OpenIndex(ctx, user)
	switch {
	case errors.Is(err, sync.ErrNoLocalUser):
		ch.Status, ch.Detail = Warn, "no index for this key's user in "+c.DataDir+" yet"
		ch.Fix = "run opsearch sync once, or let opsearch serve sync in the background"
		return []Check{ch}
	case errors.Is(err, sync.ErrLocked):
		ch.Status, ch.Detail = Warn, err.Error()
		ch.Fix = "it is in use by that process, which does not answer on its control socket: wait for it to finish, or stop it"
		return []Check{ch}
	case err != nil:
		ch.Status, ch.Detail = Fail, "cannot open it: "+err.Error()
		ch.Fix = "if the files are damaged, move the user's directory aside and sync again (the index is rebuilt from OpenProject)"
		return []Check{ch}
	}
	defer idx.Close()
	f, err := idx.Freshness(ctx)
	if err != nil {
		ch.Status, ch.Detail = Fail, "cannot read its state: "+err.Error()
		return []Check{ch}
	}
	where := dir
	if servedBy != "" {
		where += ", served by " + servedBy
	}
	var incomplete, failed, stale []string
	var newest time.Time
	for _, k := range kind.All() {
		kf := f.Kinds[k]
		if kf.Unsupported {
			continue
		}
		if !kf.Complete {
			incomplete = append(incomplete, string(k))
		}
		if kf.LastError != nil {
			failed = append(failed, fmt.Sprintf("%s (%s)", k, *kf.LastError))
		}
		if kf.LastSync == nil || c.Now().Sub(*kf.LastSync) > c.StaleAfter {
			stale = append(stale, string(k))
		} else if kf.LastSync.After(newest) {
			newest = *kf.LastSync
		}
	}
	ch.Detail = where
	if !newest.IsZero() {
		ch.Detail += fmt.Sprintf("; last synced %s ago", c.Now().Sub(newest).Round(time.Second))
	}
	ch.Detail += mappingNote
	// What the server gave the last sync: wiki text (older servers send
	// titles only, which the sync notes on the kind).
	if wk := f.Kinds[kind.WikiPage]; wk.LastSync != nil {
		if strings.Contains(wk.Note, "carry no text") {
			ch.Detail += "; wiki text: no (this server sends wiki titles only)"
		} else {
			ch.Detail += "; wiki text: yes"
		}
	}
	// Attachments: how many, or that the sync leaves them out.
	if ak := f.Kinds[kind.Attachment]; ak.LastSync != nil {
		if strings.Contains(ak.Note, "turned off") {
			ch.Detail += "; attachments: not indexed (turned off)"
		} else {
			ch.Detail += fmt.Sprintf("; attachments: %d", ak.Store)
		}
	}
	checks := []Check{ch}
	if mapping != nil {
		checks = append(checks, *mapping)
	}
	if f.Rebuilding {
		checks = append(checks, Check{Name: "index rebuild", Status: Warn, Detail: "the index is being rebuilt from the store (a new mapping or a damaged index); the old one answers meanwhile",
			Fix: "nothing: it finishes by itself; opsearch status shows when"})
	}
	if len(incomplete) > 0 {
		checks = append(checks, Check{Name: "index complete", Status: Warn, Detail: "first crawl not finished for " + strings.Join(incomplete, ", ") + ": an empty search result may be wrong",
			Fix: "let the sync finish (opsearch sync, or opsearch serve in the background)"})
	}
	if len(failed) > 0 {
		checks = append(checks, Check{Name: "last sync", Status: Warn, Detail: "failed for " + strings.Join(failed, "; "),
			Fix: "see the error; the index keeps what it had, and the next sync tries again"})
	}
	if len(stale) > 0 {
		checks = append(checks, Check{Name: "index fresh", Status: Warn, Detail: fmt.Sprintf("not synced within %s: %s", c.StaleAfter, strings.Join(stale, ", ")),
			Fix: "run opsearch sync, or keep opsearch serve running (it syncs on its schedule)"})
	}
	return checks
}

// Worst is the worst status among checks.
func Worst(checks []Check) Status {
	w := OK
	for _, c := range checks {
		switch {
		case c.Status == Fail:
			return Fail
		case c.Status == Warn:
			w = Warn
		}
	}
	return w
}
