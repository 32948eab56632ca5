package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Line kinds.
const (
	// KindCall is a tool call.
	KindCall = "call"
	// KindRepair is what Open found wrong with the log and set right.
	KindRepair = "repair"
	// KindPrune records an old file deleted by rotation.
	KindPrune = "prune"
)

// Repair categories: the error field of a "repair" line says what Open
// found.
const (
	// RepairTorn: a torn last line was cut off.
	RepairTorn = "torn"
	// RepairUnreadable: lines at the end could not be read; the chain
	// goes on from the last one that could.
	RepairUnreadable = "unreadable"
	// RepairMissing: the head recorded lines the log no longer holds;
	// the chain goes on from the head's seq, so the gap stays visible.
	RepairMissing = "missing"
	// RepairRewritten: the line the head names has another hash: the log
	// was rewritten. Verify reports it as Altered.
	RepairRewritten = "rewritten"
	// RepairHead: the head could not be read.
	RepairHead = "head_unreadable"
)

// Outcomes of a call.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// User is whom a call was served for, as the server knows them.
type User struct {
	ID    int64  `json:"id"`
	Login string `json:"login,omitempty"`
	Name  string `json:"name,omitempty"`
}

// Link names one line of the chain by its seq and hash.
type Link struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// Line is one line of the log as written. Fields are in the order they
// are written in; see the package documentation for their meaning.
type Line struct {
	Seq        uint64  `json:"seq"`
	Time       string  `json:"time"`
	Kind       string  `json:"kind"`
	User       *User   `json:"user,omitempty"`
	Tool       string  `json:"tool,omitempty"`
	ArgsSHA256 string  `json:"args_sha256,omitempty"`
	Outcome    string  `json:"outcome,omitempty"`
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	RequestID  string  `json:"request_id,omitempty"`
	Note       string  `json:"note,omitempty"`
	Pruned     *Link   `json:"pruned,omitempty"`
	Prev       string  `json:"prev"`
	// Hash is left empty while the line is encoded: it is appended
	// after the rest (encodeLine).
	Hash string `json:"hash,omitempty"`
	// Raw is the line's bytes as read (Tail), never written.
	Raw []byte `json:"-"`
}

// hashSuffix opens the hash field that ends every line.
const hashSuffix = `,"hash":"`

// hashHexLen is the length of a hex SHA-256.
const hashHexLen = 2 * sha256.Size

// encodeLine returns l as a log line, newline included, and its hash.
// l.Hash is ignored.
func encodeLine(l Line) ([]byte, string, error) {
	l.Hash = ""
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Nothing here is HTML; the escapes would only make lines longer.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, "", fmt.Errorf("encode audit line: %w", err)
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	out := make([]byte, 0, len(body)+len(hashSuffix)+hashHexLen+3)
	out = append(out, body[:len(body)-1]...)
	out = append(out, hashSuffix...)
	out = append(out, h...)
	out = append(out, "\"}\n"...)
	return out, h, nil
}

// Errors of parseLine, told apart by Verify.
var (
	// ErrMalformed: the bytes are not an audit line at all.
	ErrMalformed = errors.New("not an audit line")
	// ErrHashMismatch: a well-formed line whose content does not match its hash.
	ErrHashMismatch = errors.New("the line does not match its hash")
)

// parseLine parses one line (without its newline). A line that is well
// formed but altered is returned with ErrHashMismatch, so that the caller still
// learns its seq and links.
func ParseLine(b []byte) (Line, error) {
	var l Line
	if len(b) < len(hashSuffix)+hashHexLen+3 || !bytes.HasSuffix(b, []byte(`"}`)) {
		return l, fmt.Errorf("%w: it does not end with a hash field", ErrMalformed)
	}
	cut := len(b) - 2 - hashHexLen - len(hashSuffix)
	if !bytes.Equal(b[cut:cut+len(hashSuffix)], []byte(hashSuffix)) {
		return l, fmt.Errorf("%w: it does not end with a hash field", ErrMalformed)
	}
	h := string(b[cut+len(hashSuffix) : len(b)-2])
	if !isHex(h) {
		return l, fmt.Errorf("%w: its hash is not 64 hex digits", ErrMalformed)
	}
	body := make([]byte, 0, cut+1)
	body = append(append(body, b[:cut]...), '}')
	if err := json.Unmarshal(body, &l); err != nil {
		return Line{}, fmt.Errorf("%w: %s", ErrMalformed, strings.TrimPrefix(err.Error(), "json: "))
	}
	if l.Hash != "" {
		// A second hash field inside the hashed part.
		return Line{}, fmt.Errorf("%w: it holds two hash fields", ErrMalformed)
	}
	if l.Seq == 0 {
		return Line{}, fmt.Errorf("%w: it has no seq", ErrMalformed)
	}
	l.Hash = h
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != h {
		return l, ErrHashMismatch
	}
	return l, nil
}

func isHex(s string) bool {
	if len(s) != hashHexLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ArgsDigest is the SHA-256, in hex, of a tool call's arguments as
// canonical JSON: object keys sorted, no insignificant space, numbers as
// written, strings escaped as encoding/json does without HTML escapes.
// Absent, empty and null arguments digest as {}; bytes that are not JSON
// are digested as they are.
func ArgsDigest(raw []byte) string {
	sum := sha256.Sum256(canonicalJSON(raw))
	return hex.EncodeToString(sum[:])
}

func canonicalJSON(raw []byte) []byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Files.
const (
	// DirName is the log's directory inside a user's own directory.
	DirName = "audit"
	// HeadFile holds the seq and hash of the last line written.
	HeadFile   = "audit.head"
	filePrefix = "audit-"
	fileSuffix = ".jsonl"
)

// fileName is the name of the file whose first line has seq.
func fileName(seq uint64) string {
	return fmt.Sprintf("%s%020d%s", filePrefix, seq, fileSuffix)
}

// fileSeq parses a log file's name; false for any other name.
func fileSeq(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, filePrefix)
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, fileSuffix); !ok || len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// formatTime is how times are written: UTC, RFC 3339 with nanoseconds.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
