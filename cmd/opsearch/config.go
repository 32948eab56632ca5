package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/extract"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/sync"
)

// connConfig is what every command that talks to OpenProject or opens a
// user's data needs. Flags override the environment.
type connConfig struct {
	baseURL  string
	apiKey   string
	bearer   bool
	dataDir  string
	timeout  time.Duration
	readOnly bool
	// confirmWrites makes each write answer with a preview first.
	confirmWrites bool
	synonyms      string
	// maxDeleteShare is the sync's sync.Options.MaxDeleteShare.
	maxDeleteShare float64
	// attachments configure the attachment sync (--attachments,
	// --attachment-max-bytes, --attachment-max-text).
	attachments     bool
	attachmentBytes int64
	attachmentText  int64
	// thesaurus is the built-in synonyms plus the --synonyms file's.
	thesaurus indexer.Thesaurus
}

// userOptions are the options every command opens a user's data with.
func (c *connConfig) userOptions(e env) sync.UserOptions {
	return sync.UserOptions{Logger: e.logger, Thesaurus: c.thesaurus,
		WorkerOptions: sync.Options{Logger: e.logger, MaxDeleteShare: c.maxDeleteShare, Attachments: sync.AttachmentOptions{
			Off:     !c.attachments,
			Extract: c.extractOptions(),
		}}}
}

// extractOptions is the budget of reading one attached file, for the
// sync and for get_attachment alike.
func (c *connConfig) extractOptions() extract.Options {
	return extract.Options{MaxBytes: c.attachmentBytes, MaxText: int(c.attachmentText)}
}

// connFlags say which groups of the shared flags a command takes, so
// its usage lists only what applies to it. Every command takes
// --base-url, --data-dir and --synonyms (which must match the index's to
// open it without a rebuild).
type connFlags int

const (
	// withAPI: the command talks to OpenProject (--api-key, --bearer,
	// --timeout).
	withAPI connFlags = 1 << iota
	// withSync: the command syncs (--max-delete-share, --attachments
	// and their limits).
	withSync
	// withTools: the command serves the MCP tools (--read-only,
	// --confirm-writes).
	withTools
)

// bindConn registers the shared flags the command takes (uses), with
// defaults from the environment; the others keep their defaults.
func bindConn(fs *flag.FlagSet, e env, uses connFlags) *connConfig {
	c := &connConfig{timeout: 30 * time.Second, maxDeleteShare: sync.DefaultMaxDeleteShare,
		attachments: true, attachmentBytes: extract.DefaultMaxBytes, attachmentText: extract.DefaultMaxText}
	fs.StringVar(&c.baseURL, "base-url", e.getenv("OPENPROJECT_BASE_URL"), "OpenProject URL (env OPENPROJECT_BASE_URL)")
	fs.StringVar(&c.dataDir, "data-dir", e.getenv("OPSEARCH_DATA_DIR"), "where indexes are kept (env OPSEARCH_DATA_DIR; default $XDG_DATA_HOME/opsearch or ~/.local/share/opsearch)")
	fs.StringVar(&c.synonyms, "synonyms", e.getenv("OPSEARCH_SYNONYMS"), "a team's own synonym groups, one per line: \"word, word, word\" (env OPSEARCH_SYNONYMS; added to the built-in thesaurus; changing them rebuilds the index)")
	if uses&withAPI != 0 {
		fs.StringVar(&c.apiKey, "api-key", "", "OpenProject API key or OAuth access token (env OPENPROJECT_API_KEY; prefer the environment: flags show up in process lists)")
		fs.BoolVar(&c.bearer, "bearer", envBool(e.getenv("OPENPROJECT_BEARER")), "send the key as a Bearer token only (by default it goes as Basic apikey, then as Bearer if refused) (env OPENPROJECT_BEARER)")
		fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "timeout of one OpenProject request")
	}
	if uses&withTools != 0 {
		fs.BoolVar(&c.readOnly, "read-only", envBool(e.getenv("OPENPROJECT_READ_ONLY")), "hide and refuse write tools (env OPENPROJECT_READ_ONLY=true|1|yes)")
		fs.BoolVar(&c.confirmWrites, "confirm-writes", envBool(e.getenv("OPSEARCH_CONFIRM_WRITES")), "each write tool first answers with a preview of what it would change, and applies it only when called again with confirm: true (env OPSEARCH_CONFIRM_WRITES)")
	}
	if uses&withSync != 0 {
		fs.Float64Var(&c.maxDeleteShare, "max-delete-share", envFloat(e, "OPSEARCH_MAX_DELETE_SHARE", sync.DefaultMaxDeleteShare),
			"the largest share of a kind one sync may delete; a sync that would delete more deletes nothing and reports it (env OPSEARCH_MAX_DELETE_SHARE; 1 disables the check)")
		fs.BoolVar(&c.attachments, "attachments", e.getenv("OPSEARCH_ATTACHMENTS") == "" || envBool(e.getenv("OPSEARCH_ATTACHMENTS")),
			"index the text of files attached to work packages, wiki pages and meetings (env OPSEARCH_ATTACHMENTS; --attachments=false turns it off)")
		fs.Int64Var(&c.attachmentBytes, "attachment-max-bytes", envInt64(e, "OPSEARCH_ATTACHMENT_MAX_BYTES", extract.DefaultMaxBytes),
			"files larger than this many bytes are indexed by name and description only (env OPSEARCH_ATTACHMENT_MAX_BYTES)")
		fs.Int64Var(&c.attachmentText, "attachment-max-text", envInt64(e, "OPSEARCH_ATTACHMENT_MAX_TEXT", extract.DefaultMaxText),
			"bytes of text kept of one file; the rest is cut (env OPSEARCH_ATTACHMENT_MAX_TEXT)")
	}
	return c
}

// envFloat reads a number from the environment; a malformed value is
// kept as NaN so finish names it.
func envFloat(e env, key string, def float64) float64 {
	v := strings.TrimSpace(e.getenv(key))
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// finish fills what the flags left empty and validates. needKey says
// whether the command must talk to the API.
func (c *connConfig) finish(e env, needKey bool) error {
	if c.apiKey == "" {
		c.apiKey = e.getenv("OPENPROJECT_API_KEY")
	}
	c.baseURL = strings.TrimSpace(c.baseURL)
	if c.dataDir == "" {
		d, err := defaultDataDir(e)
		if err != nil {
			return err
		}
		c.dataDir = d
	}
	if needKey {
		if c.baseURL == "" {
			return errors.New("OPENPROJECT_BASE_URL is not set (or pass --base-url)")
		}
		if c.apiKey == "" {
			return errors.New("OPENPROJECT_API_KEY is not set (or pass --api-key)")
		}
	}
	if !(c.maxDeleteShare > 0) {
		return fmt.Errorf("--max-delete-share (or OPSEARCH_MAX_DELETE_SHARE) must be a number above 0, e.g. 0.1 for 10 %%, not %v", c.maxDeleteShare)
	}
	if c.attachmentBytes <= 0 {
		return fmt.Errorf("--attachment-max-bytes (or OPSEARCH_ATTACHMENT_MAX_BYTES) must be a number of bytes above 0, e.g. 10485760 for 10 MB, not %d", c.attachmentBytes)
	}
	if c.attachmentText <= 0 || c.attachmentText > math.MaxInt32 {
		return fmt.Errorf("--attachment-max-text (or OPSEARCH_ATTACHMENT_MAX_TEXT) must be a number of bytes above 0, e.g. 512000, not %d", c.attachmentText)
	}
	if c.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, not %v", c.timeout)
	}
	c.thesaurus = indexer.BuiltinThesaurus()
	if c.synonyms != "" {
		extra, err := indexer.LoadThesaurus(c.synonyms)
		if err != nil {
			return fmt.Errorf("--synonyms: %w", err)
		}
		c.thesaurus = append(c.thesaurus, extra...)
	}
	return nil
}

func defaultDataDir(e env) (string, error) {
	if x := e.getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "opsearch"), nil
	}
	home := e.getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find a data directory: %w (set OPSEARCH_DATA_DIR)", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "opsearch"), nil
}

// envBool reads the reference server's boolean spelling: true, 1 or yes.
func envBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	}
	return false
}

// liveTimeout bounds one live tool call: one request at --timeout, and
// the start of a retry, never less than the MCP server's default.
func (c *connConfig) liveTimeout() time.Duration {
	return max(mcp.DefaultLiveTimeout, c.timeout+15*time.Second)
}
