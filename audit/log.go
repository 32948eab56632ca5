package audit

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/internal/private"
)

// Rotation defaults.
const (
	// DefaultMaxBytes is the size past which a new file is started.
	DefaultMaxBytes = 10 << 20
	// DefaultKeep is how many old files are kept beside the current one.
	DefaultKeep = 9
)

// ErrClosed is returned by Record after Close.
var ErrClosed = errors.New("the audit log is closed")

// Options configure Open.
type Options struct {
	// MaxBytes is the size a file may reach before the next line starts
	// a new one (0: DefaultMaxBytes). A line longer than that still goes
	// into a file of its own.
	MaxBytes int64
	// Keep is how many old files are kept beside the current one; older
	// ones are deleted (0: DefaultKeep; negative: none kept).
	Keep int
	// Logger receives what Open repaired; nil discards.
	Logger *slog.Logger
	// Now is the clock of repair and prune lines (nil: time.Now).
	Now func() time.Time
}

// Entry is one tool call, as Record takes it.
type Entry struct {
	// Time is when the call arrived (zero: now).
	Time time.Time
	// User is whom the call was served for.
	User User
	// Tool is the tool's name: letters, digits and _.:/()- only.
	Tool string
	// ArgsSHA256 is ArgsDigest of the call's arguments; never the
	// arguments themselves.
	ArgsSHA256 string
	// Outcome is OutcomeOK or OutcomeError.
	Outcome string
	// Error is, for OutcomeError, the failure's category: lower-case
	// letters and underscores, never a message.
	Error string
	// Duration is how long the call took.
	Duration time.Duration
	// RequestID is the id the server's log lines about the call carry.
	RequestID string
}

// Tokens an entry's fields must match: nothing free-form that could
// carry what a caller typed.
var (
	toolToken     = regexp.MustCompile(`^[A-Za-z0-9_.:/()-]{1,128}$`)
	categoryToken = regexp.MustCompile(`^[a-z][a-z_]{0,63}$`)
	idToken       = regexp.MustCompile(`^[A-Za-z0-9_-]{0,64}$`)
)

// check refuses an entry that could carry text it must not.
func (e *Entry) check() error {
	switch {
	case !toolToken.MatchString(e.Tool):
		return fmt.Errorf("record audit entry: tool %q is not a tool name", e.Tool)
	case e.ArgsSHA256 != "" && !isHex(e.ArgsSHA256):
		return errors.New("record audit entry: the argument digest is not a hex SHA-256")
	case e.Outcome != OutcomeOK && e.Outcome != OutcomeError:
		return fmt.Errorf("record audit entry: outcome %q is not ok or error", e.Outcome)
	case e.Outcome == OutcomeOK && e.Error != "":
		return errors.New("record audit entry: a call that succeeded has no error category")
	case e.Error != "" && !categoryToken.MatchString(e.Error):
		return errors.New("record audit entry: the error must be a category (lower-case letters and _), not a message")
	case !idToken.MatchString(e.RequestID):
		return errors.New("record audit entry: the request id is not a token")
	}
	return nil
}

// Log appends to one log directory. It is safe for concurrent use; lines
// are appended one at a time, in the order Record is called.
type Log struct {
	dir  string
	opts Options
	log  *slog.Logger

	// lock is held (a token in the channel) while a line is appended:
	// a channel, so that a Record waiting for it can give up with ctx.
	lock chan struct{}
	// Guarded by lock:
	f      *os.File
	size   int64
	seq    uint64 // of the last line written; 0 before the first
	prev   string // its hash
	files  []fileStart
	closed bool
	// broken, once set, fails every Record: a failed append could not
	// be undone, and a line after a torn one would be lost to readers.
	broken error

	// headMu orders head writes, which happen after the append, outside
	// lock; headSeq is the seq of the head last written.
	headMu  gosync.Mutex
	headSeq uint64
}

// fileStart is what rotation needs of a file: its name and the link to
// the line before its first.
type fileStart struct {
	name      string
	firstSeq  uint64
	firstPrev string // "" when unknown (or the chain's first line)
}

// Open opens (creating) the log in dir and readies it for appending.
//
// A torn last line, left by a crash in the middle of a write, is cut off,
// and the cut recorded in a "repair" line; so is a head that disagrees
// with the log (lines missing at its end, or rewritten). Lines that
// cannot be read at the end of the log are left in place for Verify to
// report; the chain continues from the last line that can be.
func Open(dir string, opts Options) (*Log, error) {
	opts.MaxBytes = cmp.Or(opts.MaxBytes, DefaultMaxBytes)
	if opts.Keep == 0 {
		opts.Keep = DefaultKeep
	}
	opts.Keep = max(opts.Keep, 0)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Log{dir: dir, opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)), lock: make(chan struct{}, 1)}
	if err := private.Dir(dir); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	names, err := listFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	repairs, err := l.recover(names)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if len(names) == 0 {
		names = []string{fileName(l.seq + 1)}
	}
	for _, n := range names {
		l.files = append(l.files, readStart(filepath.Join(dir, n)))
	}
	last := filepath.Join(dir, names[len(names)-1])
	if err := private.File(last); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	l.f, l.size = f, fi.Size()
	if l.size == 0 {
		// Its first line will follow the chain's last.
		cur := &l.files[len(l.files)-1]
		cur.firstSeq, cur.firstPrev = l.seq+1, l.prev
	}
	for _, r := range repairs {
		l.log.Warn("audit log repaired", "dir", dir, "repair", r.category, "note", r.note)
		if _, err := l.appendLine(Line{Time: formatTime(opts.Now()), Kind: KindRepair, Error: r.category, Note: r.note}); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("open audit log: %w", err)
		}
	}
	l.writeHead(Link{Seq: l.seq, Hash: l.prev})
	return l, nil
}

// repair is what Open found wrong and set right: a category
// (Repair...) and what happened, in words.
type repair struct{ category, note string }

// recover finds where the chain goes on from: it cuts a torn last line
// off the last file, finds the last line that can be read, and compares
// it with the head. It returns the repairs to record.
func (l *Log) recover(names []string) ([]repair, error) {
	var repairs []repair
	var data []byte
	if len(names) > 0 {
		lastName := names[len(names)-1]
		lastPath := filepath.Join(l.dir, lastName)
		var err error
		if data, err = os.ReadFile(lastPath); err != nil {
			return nil, err
		}
		if n := len(data); n > 0 && data[n-1] != '\n' {
			cut := bytes.LastIndexByte(data, '\n') + 1
			torn := data[cut:]
			if err := os.Truncate(lastPath, int64(cut)); err != nil {
				return nil, fmt.Errorf("cut the torn last line: %w", err)
			}
			sum := sha256.Sum256(torn)
			repairs = append(repairs, repair{RepairTorn, fmt.Sprintf("cut a torn last line of %d bytes (sha256 %s) from %s: a write was interrupted (a crash?)",
				len(torn), hex.EncodeToString(sum[:]), lastName)})
			data = data[:cut]
		}
	}
	// The last line that can be read, in the last file or an earlier one.
	found, unreadable := false, 0
	for i := len(names) - 1; i >= 0 && !found; i-- {
		if i < len(names)-1 {
			var err error
			if data, err = os.ReadFile(filepath.Join(l.dir, names[i])); err != nil {
				return nil, err
			}
		}
		lines := splitLines(data)
		for j := len(lines) - 1; j >= 0; j-- {
			ln, err := ParseLine(lines[j])
			if err != nil && !errors.Is(err, ErrHashMismatch) {
				unreadable++
				continue
			}
			l.seq, l.prev, found = ln.Seq, ln.Hash, true
			break
		}
	}
	if !found && len(names) > 0 {
		// No line to link to: the chain starts where the first file's
		// name says.
		first, _ := fileSeq(names[0])
		l.seq = first - 1
	}
	if unreadable > 0 {
		repairs = append(repairs, repair{RepairUnreadable, fmt.Sprintf("%d unreadable lines at the end of the log; the chain goes on from the last readable one (seq %d)", unreadable, l.seq)})
	}
	head, err := readHead(l.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		repairs = append(repairs, repair{RepairHead, fmt.Sprintf("%s cannot be read (%v); the chain goes on from the log's last line", HeadFile, err)})
	case head.Seq > l.seq:
		// The chain goes on from the head's seq: the gap stays in the
		// log, and no seq is used twice.
		repairs = append(repairs, repair{RepairMissing, fmt.Sprintf("the log ends at seq %d but %s records seq %d (hash %s): lines %d to %d are missing (cut from the log, or lost in a crash before they reached the disk)",
			l.seq, HeadFile, head.Seq, head.Hash, l.seq+1, head.Seq)})
		l.seq = head.Seq
	default:
		// Mostly the last line (a clean close), else the head lags (a
		// crash between the append and the head's write).
		got, ok := l.prev, head.Seq == l.seq
		if !ok {
			var ln Line
			ln, ok = findLine(l.dir, names, head.Seq)
			got = ln.Hash
		}
		if ok && got != head.Hash {
			repairs = append(repairs, repair{RepairRewritten, fmt.Sprintf("line seq %d is not the one written (%s records hash %s, the line has %s): the log was rewritten from there on",
				head.Seq, HeadFile, head.Hash, got)})
		}
	}
	return repairs, nil
}

// splitLines splits data into its complete lines, without newlines; a
// last line without one is left out.
func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		ln, rest, ok := bytes.Cut(data, []byte("\n"))
		if !ok {
			break
		}
		out = append(out, ln)
		data = rest
	}
	return out
}

// findLine returns the line with seq, looking in the file whose name
// says it holds it.
func findLine(dir string, names []string, seq uint64) (Line, bool) {
	for i := len(names) - 1; i >= 0; i-- {
		first, _ := fileSeq(names[i])
		if first > seq {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, names[i]))
		if err != nil {
			return Line{}, false
		}
		for _, b := range splitLines(data) {
			if ln, err := ParseLine(b); (err == nil || errors.Is(err, ErrHashMismatch)) && ln.Seq == seq {
				return ln, true
			}
		}
		return Line{}, false
	}
	return Line{}, false
}

// readStart reads what rotation needs of a file from its first line.
func readStart(path string) fileStart {
	name := filepath.Base(path)
	seq, _ := fileSeq(name)
	fst := fileStart{name: name, firstSeq: seq}
	f, err := os.Open(path)
	if err != nil {
		return fst
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	first, _, ok := bytes.Cut(buf[:n], []byte("\n"))
	if !ok {
		return fst
	}
	if ln, err := ParseLine(first); err == nil || errors.Is(err, ErrHashMismatch) {
		fst.firstSeq, fst.firstPrev = ln.Seq, ln.Prev
	}
	return fst
}

// Record appends one call. It waits for the lines before it only as
// long as ctx allows; pass a context that outlives the call recorded
// (context.WithoutCancel), or a call the client gave up on goes
// unrecorded.
func (l *Log) Record(ctx context.Context, e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("record audit entry: %w", err)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	ms := math.Round(float64(e.Duration)/float64(time.Microsecond)) / 1000
	ln := Line{
		Time: formatTime(e.Time), Kind: KindCall, User: &e.User, Tool: e.Tool, ArgsSHA256: e.ArgsSHA256,
		Outcome: e.Outcome, Error: e.Error, DurationMS: ms, RequestID: e.RequestID,
	}
	select {
	case l.lock <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("record audit entry: %w", context.Cause(ctx))
	}
	link, err := l.appendLine(ln)
	<-l.lock
	if err != nil {
		return fmt.Errorf("record audit entry: %w", err)
	}
	l.writeHead(link)
	return nil
}

// appendLine writes ln as the next line, rotating first if it would not
// fit; l.lock is held. It returns the link to the new line.
func (l *Log) appendLine(ln Line) (Link, error) {
	switch {
	case l.closed:
		return Link{}, ErrClosed
	case l.broken != nil:
		return Link{}, l.broken
	}
	ln.Seq, ln.Prev = l.seq+1, l.prev
	b, h, err := encodeLine(ln)
	if err != nil {
		return Link{}, err
	}
	if l.size > 0 && l.size+int64(len(b)) > l.opts.MaxBytes {
		if err := l.rotate(); err != nil {
			return Link{}, err
		}
		ln.Seq, ln.Prev = l.seq+1, l.prev
		if b, h, err = encodeLine(ln); err != nil {
			return Link{}, err
		}
	}
	if err := l.write(b); err != nil {
		return Link{}, err
	}
	l.seq, l.prev = ln.Seq, h
	return Link{Seq: l.seq, Hash: h}, nil
}

// write appends b with one write. If that fails, the file is cut back
// to where it was, so no torn line is left for the next one to follow;
// if that fails too, the log is broken until reopened.
func (l *Log) write(b []byte) error {
	n, err := l.f.Write(b)
	if err == nil {
		l.size += int64(n)
		return nil
	}
	err = fmt.Errorf("append: %w", err)
	if n > 0 {
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = fmt.Errorf("%w; cutting the partial line off failed too (%v): reopen the log", err, terr)
			return l.broken
		}
	}
	return err
}

// rotate starts the next file and deletes the files past Keep, first
// recording what they held; l.lock is held.
func (l *Log) rotate() error {
	name := fileName(l.seq + 1)
	f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	// The old file is complete: it reaches the disk before anything
	// refers to it as the past.
	if err := l.f.Sync(); err != nil {
		l.log.Warn("audit log: sync before rotation", "error", err)
	}
	if err := l.f.Close(); err != nil {
		l.log.Warn("audit log: close before rotation", "error", err)
	}
	l.f, l.size = f, 0
	l.files = append(l.files, fileStart{name: name, firstSeq: l.seq + 1, firstPrev: l.prev})
	for len(l.files) > l.opts.Keep+1 {
		gone, next := l.files[0], l.files[1]
		prune := Line{
			Time: formatTime(l.opts.Now()), Kind: KindPrune,
			Note:   fmt.Sprintf("rotation deleted %s (seq %d to %d)", gone.name, gone.firstSeq, next.firstSeq-1),
			Pruned: &Link{Seq: next.firstSeq - 1, Hash: next.firstPrev},
		}
		prune.Seq, prune.Prev = l.seq+1, l.prev
		b, h, err := encodeLine(prune)
		if err != nil {
			return err
		}
		if err := l.write(b); err != nil {
			return fmt.Errorf("rotate: %w", err)
		}
		l.seq, l.prev = prune.Seq, h
		if err := os.Remove(filepath.Join(l.dir, gone.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Recorded as deleted but still there: the next rotation
			// tries again, Verify accepts it.
			l.log.Warn("audit log: delete an old file", "file", gone.name, "error", err)
		}
		l.files = l.files[1:]
	}
	return nil
}

// Close syncs and closes the log; Record fails with ErrClosed after it.
func (l *Log) Close() error {
	l.lock <- struct{}{}
	defer func() { <-l.lock }()
	if l.closed {
		return nil
	}
	l.closed = true
	serr := l.f.Sync()
	cerr := l.f.Close()
	l.writeHead(Link{Seq: l.seq, Hash: l.prev})
	if err := cmp.Or(serr, cerr); err != nil {
		return fmt.Errorf("close audit log: %w", err)
	}
	return nil
}

// Dir is the directory the log is in.
func (l *Log) Dir() string { return l.dir }

// writeHead records link as the last line written, unless a later one
// was recorded already. A head that cannot be written is logged: the
// line it would name is in the log, and Verify only loses a check.
func (l *Log) writeHead(link Link) {
	l.headMu.Lock()
	defer l.headMu.Unlock()
	if link.Seq < l.headSeq || link.Seq == 0 {
		return
	}
	b, _ := json.Marshal(link)
	tmp := filepath.Join(l.dir, HeadFile+".tmp")
	err := os.WriteFile(tmp, append(b, '\n'), 0o600)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(l.dir, HeadFile))
	}
	if err != nil {
		l.log.Warn("audit log: write the head", "dir", l.dir, "error", err)
		return
	}
	l.headSeq = link.Seq
}

// readHead reads the head file.
func readHead(dir string) (Link, error) {
	b, err := os.ReadFile(filepath.Join(dir, HeadFile))
	if err != nil {
		return Link{}, err
	}
	var h Link
	if err := json.Unmarshal(b, &h); err != nil || !isHex(h.Hash) {
		return Link{}, fmt.Errorf("%s is not a head", HeadFile)
	}
	return h, nil
}

// listFiles returns the names of dir's log files in chain order.
func listFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if _, ok := fileSeq(e.Name()); ok && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	// Fixed-width numbers: name order is seq order.
	slices.Sort(names)
	return names, nil
}
