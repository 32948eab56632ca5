package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress prints sync progress: a redrawn bar per kind on a terminal,
// occasional plain lines otherwise (logs, CI), so piped output stays
// readable.
type progress struct {
	w   io.Writer
	tty bool
	now func() time.Time

	mu       sync.Mutex
	kind     string
	lastLine time.Time
	lastPct  int
}

func newProgress(w io.Writer) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, now: time.Now}
}

// update reports that done of total items of kind are processed; total 0
// means unknown.
func (p *progress) update(kind string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if kind != p.kind {
		if p.tty && p.kind != "" {
			fmt.Fprintln(p.w)
		}
		p.kind, p.lastPct, p.lastLine = kind, -1, time.Time{}
	}
	pct := -1
	if total > 0 {
		pct = min(100, done*100/total)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r%-14s %s %s", kind, bar(pct, 30), counts(done, total))
		return
	}
	// Plain output: a line per 25% step or every 5 seconds.
	now := p.now()
	step := pct / 25
	if pct >= 0 && step == p.lastPct && now.Sub(p.lastLine) < 5*time.Second {
		return
	}
	if pct < 0 && now.Sub(p.lastLine) < 5*time.Second {
		return
	}
	p.lastPct, p.lastLine = step, now
	fmt.Fprintf(p.w, "%s: %s\n", kind, counts(done, total))
}

// finish ends the current bar's line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.kind != "" {
		fmt.Fprintln(p.w)
	}
	p.kind = ""
}

func bar(pct, width int) string {
	if pct < 0 {
		return "[" + strings.Repeat("?", width) + "]"
	}
	filled := pct * width / 100
	return "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]"
}

func counts(done, total int) string {
	if total <= 0 {
		return fmt.Sprintf("%d", done)
	}
	return fmt.Sprintf("%d/%d", done, total)
}
