// Package extract turns the bytes of an attached file into the text a
// search index holds: plain text, Markdown, CSV, JSON, HTML, the text of
// an e-mail (EML), the office formats that are zipped XML (DOCX, XLSX,
// ODT) and PDF. It owns the formats, their detection, and the budget
// every extraction runs under (input size, text size, time): a file that
// breaks the budget or its format is refused with the reason, never
// crashing the caller or holding it up.
package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults of Options.
const (
	DefaultMaxBytes = 10 << 20  // files over 10 MB are skipped
	DefaultMaxText  = 500 << 10 // at most 500 KB of text per file
	DefaultTimeout  = 10 * time.Second
)

// Options bound an extraction.
type Options struct {
	// MaxBytes is the largest file read (default DefaultMaxBytes); a
	// larger one is ErrTooLarge. For zipped formats it also bounds the
	// bytes unpacked, so a small archive cannot unpack into gigabytes.
	MaxBytes int64
	// MaxText bounds the text kept (default DefaultMaxText); beyond it
	// the text is cut at a rune boundary and Result.Truncated is set.
	MaxText int
	// Timeout bounds the extraction (default DefaultTimeout).
	Timeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxText <= 0 {
		o.MaxText = DefaultMaxText
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Result is a file's text.
type Result struct {
	Text string
	// Format is what the file was read as: text, markdown, csv, json,
	// html, eml, docx, xlsx, odt or pdf.
	Format string
	// Truncated says the text was cut at Options.MaxText.
	Truncated bool
}

// Errors callers branch on (wrapped, with the file's name and the
// reason).
var (
	// ErrUnsupported: a format this package does not read; the caller
	// indexes the file by name and description only.
	ErrUnsupported = errors.New("format not supported")
	// ErrTooLarge: the file, or what it unpacks to, is over MaxBytes.
	ErrTooLarge = errors.New("file too large")
	// ErrMalformed: the file is not what its name or type says.
	ErrMalformed = errors.New("file malformed")
	// ErrTimeout: the extraction ran out of time.
	ErrTimeout = errors.New("extraction took too long")
)

// Text reads a file's text. name and contentType (either may be empty)
// choose the format, the content itself where they say nothing useful.
func Text(ctx context.Context, name, contentType string, r io.Reader, opts Options) (Result, error) {
	opts = opts.withDefaults()
	data, err := io.ReadAll(io.LimitReader(r, opts.MaxBytes+1))
	if err != nil {
		return Result{}, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > opts.MaxBytes {
		return Result{}, fmt.Errorf("extract %s: %w: over %d bytes", name, ErrTooLarge, opts.MaxBytes)
	}
	format := Detect(name, contentType, data)
	read := reader(format)
	if read == nil {
		return Result{}, fmt.Errorf("extract %s: %w: %s", name, ErrUnsupported, format)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	w := &textWriter{max: opts.MaxText, ctx: ctx}
	err = read(w, data, opts)
	switch {
	case errors.Is(err, errFull):
	case errors.Is(err, context.DeadlineExceeded):
		return Result{}, fmt.Errorf("extract %s: %w (%s)", name, ErrTimeout, opts.Timeout)
	case err != nil:
		return Result{}, fmt.Errorf("extract %s as %s: %w", name, format, err)
	}
	return Result{Text: strings.TrimSpace(w.b.String()), Format: format, Truncated: w.full}, nil
}

// Detect names the format of a file: by its extension, else its content
// type, else what its first bytes look like ("unknown" when none says).
func Detect(name, contentType string, data []byte) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".txt", ".text", ".log":
		return "text"
	case ".md", ".markdown":
		return "markdown"
	case ".csv":
		return "csv"
	case ".json":
		return "json"
	case ".html", ".htm":
		return "html"
	case ".eml":
		return "eml"
	case ".docx":
		return "docx"
	case ".xlsx":
		return "xlsx"
	case ".odt":
		return "odt"
	case ".pdf":
		return "pdf"
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "text/plain":
		return "text"
	case "text/markdown":
		return "markdown"
	case "text/csv":
		return "csv"
	case "application/json":
		return "json"
	case "text/html":
		return "html"
	case "message/rfc822":
		return "eml"
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return "docx"
	case "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":
		return "xlsx"
	case "application/vnd.oasis.opendocument.text":
		return "odt"
	case "application/pdf":
		return "pdf"
	}
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(data))
	switch sniffed {
	case "text/plain":
		return "text"
	case "text/html":
		return "html"
	case "application/pdf":
		return "pdf"
	}
	return "unknown"
}

// errFull stops a reader once the text is at its cap.
var errFull = errors.New("text full")

// textWriter collects text up to max bytes, a space or line between
// pieces, and checks the context now and then.
type textWriter struct {
	b    strings.Builder
	max  int
	full bool
	ctx  context.Context
	n    int
}

// write appends s, and sep first if text is already there and does not
// end with white space. It returns errFull when the cap is reached, and
// the context's error when it ended.
func (w *textWriter) write(sep, s string) error {
	if w.n++; w.n%256 == 0 {
		if err := w.ctx.Err(); err != nil {
			return err
		}
	}
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if s == "" {
		return nil
	}
	if w.b.Len() > 0 {
		w.b.WriteString(sep)
	}
	if room := w.max - w.b.Len(); len(s) > room {
		cut := room
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		w.b.WriteString(s[:cut])
		w.full = true
		return errFull
	}
	w.b.WriteString(s)
	return nil
}

func readPlain(w *textWriter, data []byte, _ Options) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	for line := range strings.Lines(string(data)) {
		if err := w.write("\n", line); err != nil {
			return err
		}
	}
	return nil
}
