package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoLog is returned by Verify and Tail for a directory that holds no
// audit log.
var ErrNoLog = errors.New("no audit log")

// ProblemKind says what is wrong with a line.
type ProblemKind string

// What Verify can find wrong.
const (
	// Altered: the line's bytes do not match its hash, or it does not
	// link to the line before it (one of the two was rewritten).
	Altered ProblemKind = "altered"
	// Removed: lines are missing before this one.
	Removed ProblemKind = "removed"
	// Reordered: the line is out of place: a line that comes later in
	// the chain stands before it, or it repeats an earlier one.
	Reordered ProblemKind = "reordered"
	// Malformed: the line is not an audit line (bad JSON, no hash).
	Malformed ProblemKind = "malformed"
	// Torn: the log's last line is incomplete, as a crash during a
	// write leaves it; the next Open cuts it off and records that.
	Torn ProblemKind = "torn"
	// Truncated: lines the head records, or the end of a file that is
	// not the last, are missing.
	Truncated ProblemKind = "truncated"
)

// Problem is the first thing wrong with a log.
type Problem struct {
	// File is the path of the file, Line the line's number in it (from
	// 1); past the last line for what is missing at the end.
	File string
	Line int
	Kind ProblemKind
	// Detail says what is wrong, in words.
	Detail string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Kind, p.Detail)
}

// Repair is a "repair" line: what Open found wrong and set right.
type Repair struct {
	File     string
	Line     int
	Seq      uint64
	Category string
	Note     string
}

// Report is what Verify found.
type Report struct {
	Dir   string
	Files []string
	// Lines is the number of lines checked.
	Lines int
	// First and Last are the seqs of the first and last lines checked.
	First, Last uint64
	// Head is the hash of the last line: kept elsewhere, it shows a
	// later rewrite of the whole log.
	Head string
	// NoHead says the head file is missing, so lines cut from the end of
	// the log would not show.
	NoHead bool
	// Repairs lists the repairs Open recorded, oldest first.
	Repairs []Repair
	// Problem is the first thing wrong, nil for an intact log.
	Problem *Problem
}

// OK reports whether the log is intact.
func (r Report) OK() bool { return r.Problem == nil }

// readLine is one line as Verify sees it.
type readLine struct {
	file   int // index in the report's Files
	no     int // 1-based
	line   Line
	err    error // from parseLine
	torn   bool  // no newline at its end
	size   int   // bytes, newline not counted
	parsed bool  // seq, prev and hash are known
}

// Verify checks the log in dir and reports the first line that breaks
// it. An intact log has a Report with no Problem; the error is for a log
// that could not be read (ErrNoLog when dir holds none).
func Verify(dir string) (Report, error) {
	rep := Report{Dir: dir}
	names, err := listFiles(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(names) == 0 {
		return rep, fmt.Errorf("verify audit log in %s: %w", dir, ErrNoLog)
	}
	if err != nil {
		return rep, fmt.Errorf("verify audit log: %w", err)
	}
	var lines []readLine
	for i, n := range names {
		rep.Files = append(rep.Files, filepath.Join(dir, n))
		data, err := os.ReadFile(rep.Files[i])
		if err != nil {
			return rep, fmt.Errorf("verify audit log: %w", err)
		}
		no := 0
		for len(data) > 0 {
			no++
			b, rest, ok := cutLine(data)
			data = rest
			rl := readLine{file: i, no: no, torn: !ok, size: len(b)}
			rl.line, rl.err = ParseLine(b)
			rl.parsed = rl.err == nil || errors.Is(rl.err, ErrHashMismatch)
			lines = append(lines, rl)
		}
	}
	v := verifier{rep: &rep, lines: lines, names: names}
	v.run()
	return rep, nil
}

func cutLine(data []byte) (line, rest []byte, complete bool) {
	for i, c := range data {
		if c == '\n' {
			return data[:i], data[i+1:], true
		}
	}
	return data, nil, false
}

type verifier struct {
	rep   *Report
	lines []readLine
	names []string
}

func (v *verifier) fail(rl readLine, kind ProblemKind, format string, args ...any) {
	v.rep.Problem = &Problem{File: v.rep.Files[rl.file], Line: rl.no, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

func (v *verifier) where(rl readLine) string {
	return fmt.Sprintf("%s:%d", v.names[rl.file], rl.no)
}

// run walks the lines in order and stops at the first problem.
func (v *verifier) run() {
	lastFile := len(v.names) - 1
	var prev *readLine
	for i := range v.lines {
		rl := v.lines[i]
		first := i == 0 || v.lines[i-1].file != rl.file
		switch {
		case rl.torn && rl.file == lastFile:
			v.fail(rl, Torn, "the last line is incomplete (%d bytes without a newline): a write was interrupted; the next start of the server cuts it off and records that", rl.size)
			return
		case rl.torn:
			v.fail(rl, Truncated, "the file ends in the middle of a line, and is not the last file")
			return
		case !rl.parsed:
			v.fail(rl, Malformed, "%v", rl.err)
			return
		case rl.err != nil:
			v.fail(rl, Altered, "the line does not match its hash: its bytes were changed")
			return
		}
		ln := rl.line
		if first {
			if want, _ := fileSeq(v.names[rl.file]); ln.Seq != want {
				if ln.Seq > want && !v.later(i, want) {
					v.fail(rl, Removed, "the file's first lines are missing: its name says it starts at seq %d, its first line is seq %d", want, ln.Seq)
				} else {
					v.fail(rl, Reordered, "the file's name says it starts at seq %d, its first line is seq %d", want, ln.Seq)
				}
				return
			}
		}
		if prev == nil {
			if !v.start(rl) {
				return
			}
		} else if !v.follows(*prev, rl, i) {
			return
		}
		if ln.Kind == KindRepair {
			v.rep.Repairs = append(v.rep.Repairs, Repair{File: v.rep.Files[rl.file], Line: rl.no, Seq: ln.Seq, Category: ln.Error, Note: ln.Note})
			if ln.Error == RepairRewritten {
				v.fail(rl, Altered, "when the log was last opened, it had been rewritten: %s", ln.Note)
				return
			}
		}
		v.rep.Lines++
		if v.rep.Lines == 1 {
			v.rep.First = ln.Seq
		}
		v.rep.Last, v.rep.Head = ln.Seq, ln.Hash
		prev = &v.lines[i]
	}
	v.checkHead(prev)
}

// start checks the log's first line: the chain's first, or the first
// after files rotation deleted (a prune line records its link).
func (v *verifier) start(rl readLine) bool {
	ln := rl.line
	if ln.Seq == 1 {
		if ln.Prev != "" {
			v.fail(rl, Altered, "the chain's first line (seq 1) links to a line before it")
			return false
		}
		return true
	}
	for _, o := range v.lines {
		if o.parsed && o.err == nil && o.line.Kind == KindPrune && o.line.Pruned != nil &&
			o.line.Pruned.Seq == ln.Seq-1 && o.line.Pruned.Hash == ln.Prev {
			return true
		}
	}
	v.fail(rl, Removed, "lines 1 to %d are missing, and no rotation recorded deleting them", ln.Seq-1)
	return false
}

// follows checks that rl (at index i) comes right after prev.
func (v *verifier) follows(prev, rl readLine, i int) bool {
	want := prev.line.Seq + 1
	ln := rl.line
	switch {
	case ln.Seq == want && ln.Prev == prev.line.Hash:
		return true
	case ln.Seq == want:
		v.fail(rl, Altered, "it does not link to the line before it (%s): one of the two was rewritten", v.where(prev))
	case ln.Seq > want && v.later(i, want):
		v.fail(rl, Reordered, "seq %d stands before seq %d, which comes later in the log", ln.Seq, want)
	case ln.Seq > want && want == ln.Seq-1:
		v.fail(rl, Removed, "line seq %d is missing before it", want)
	case ln.Seq > want:
		v.fail(rl, Removed, "lines seq %d to %d are missing before it", want, ln.Seq-1)
	default:
		v.fail(rl, Reordered, "seq %d comes after seq %d (%s): it repeats or was moved", ln.Seq, prev.line.Seq, v.where(prev))
	}
	return false
}

// later reports whether a line after index i has seq.
func (v *verifier) later(i int, seq uint64) bool {
	for _, o := range v.lines[i+1:] {
		if o.parsed && o.line.Seq == seq {
			return true
		}
	}
	return false
}

// checkHead compares the head with the log's last line.
func (v *verifier) checkHead(last *readLine) {
	head, err := readHead(v.rep.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		v.rep.NoHead = true
		return
	}
	lastFile := v.rep.Files[len(v.rep.Files)-1]
	end := 0
	if last != nil && v.rep.Files[last.file] == lastFile {
		end = last.no
	}
	if err != nil {
		v.rep.Problem = &Problem{File: filepath.Join(v.rep.Dir, HeadFile), Line: 1, Kind: Malformed, Detail: err.Error()}
		return
	}
	if last == nil {
		if head.Seq > 0 {
			v.rep.Problem = &Problem{File: lastFile, Line: 1, Kind: Truncated, Detail: fmt.Sprintf("the log is empty, but %s records lines through seq %d", HeadFile, head.Seq)}
		}
		return
	}
	switch {
	case head.Seq > last.line.Seq:
		v.rep.Problem = &Problem{File: lastFile, Line: end + 1, Kind: Truncated,
			Detail: fmt.Sprintf("the log ends at seq %d, but lines through seq %d were written (%s): they were cut off", last.line.Seq, head.Seq, HeadFile)}
	case head.Seq == last.line.Seq && head.Hash != last.line.Hash:
		v.rep.Problem = &Problem{File: v.rep.Files[last.file], Line: last.no, Kind: Altered,
			Detail: fmt.Sprintf("the last line is not the one written (%s records another hash): the log was rewritten", HeadFile)}
	case head.Seq < last.line.Seq:
		// The head lags by the lines appended since it was written
		// (a crash between the two); check the line it names.
		for _, o := range v.lines {
			if o.line.Seq == head.Seq && o.line.Hash != head.Hash {
				v.rep.Problem = &Problem{File: v.rep.Files[o.file], Line: o.no, Kind: Altered,
					Detail: fmt.Sprintf("the line is not the one written (%s records another hash): the log was rewritten from here on", HeadFile)}
				return
			}
		}
	}
}
