package opgen

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"image/png"
	"mime"
	"mime/multipart"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/extract"
	"github.com/opsearch/opsearch/openproject/optest"
)

// genFiles is the data set of the attachment tests: the default size.
var genFiles = GenOptions{Seed: 3}

// byKind returns the first generated attachment of every kind.
func byKind(t *testing.T, d *optest.Dataset) map[FileKind]optest.Attachment {
	t.Helper()
	out := map[FileKind]optest.Attachment{}
	for _, a := range d.Attachments {
		k := AttachmentKind(a)
		if k == "" {
			t.Fatalf("attachment %d: file name %q of no kind", a.ID, a.FileName)
		}
		if _, ok := out[k]; !ok {
			out[k] = a
		}
	}
	return out
}

func TestGenerateAttachments(t *testing.T) {
	d := Generate(genFiles)
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	kinds := map[FileKind]int{}
	withFiles := map[string]bool{}
	wps := map[int64]bool{}
	for _, wp := range d.WorkPackages {
		wps[wp.ID] = true
	}
	for i, a := range d.Attachments {
		if a.ID != int64(i+1) {
			t.Fatalf("attachment %d at position %d", a.ID, i)
		}
		kinds[AttachmentKind(a)]++
		withFiles[a.Container.Href] = true
		// Files are made on demand: the data set holds none.
		if a.Content != nil || a.Source == nil || a.FileSize != 0 || a.External {
			t.Errorf("attachment %d holds its file (or no recipe)", a.ID)
		}
		if a.Author.ID == 0 || a.CreatedAt.IsZero() || a.ContentType == "" || a.Container.Title == "" {
			t.Errorf("attachment %+v", a.Attachment)
		}
		if strings.Contains(a.Description, AttachmentPhrase(a.ID)) {
			t.Errorf("attachment %d: description %q gives the phrase away", a.ID, a.Description)
		}
	}
	for _, k := range append(fileKinds, FileCorrupt, FileOversized) {
		if kinds[k] == 0 {
			t.Errorf("no %s file", k)
		}
	}
	if kinds[FileCorrupt] != 1 || kinds[FileOversized] != 1 {
		t.Errorf("%d corrupt and %d oversized files, want one each", kinds[FileCorrupt], kinds[FileOversized])
	}
	// Roughly one work package in ten, one wiki page in five, one meeting
	// in four.
	share := func(prefix string, total int) float64 {
		n := 0
		for href := range withFiles {
			if strings.HasPrefix(href, prefix) {
				n++
			}
		}
		return float64(n) / float64(total)
	}
	for _, tt := range []struct {
		prefix   string
		total    int
		min, max float64
	}{
		{"/api/v3/work_packages/", len(d.WorkPackages), 0.08, 0.12},
		{"/api/v3/wiki_pages/", len(d.WikiPages), 0.08, 0.35},
		{"/api/v3/meetings/", len(d.Meetings), 0.1, 0.45},
	} {
		if s := share(tt.prefix, tt.total); s < tt.min || s > tt.max {
			t.Errorf("%s: %.2f of the containers have files", tt.prefix, s)
		}
	}

	// Deterministic, file by file; another seed gives other files.
	again := Generate(genFiles)
	other := Generate(GenOptions{Seed: 4})
	compare := len(d.Attachments)
	if testing.Short() {
		compare = 60
	}
	for i := range compare {
		a, b := &d.Attachments[i], &again.Attachments[i]
		if AttachmentKind(*a) == FileOversized {
			continue // compared below, once
		}
		if a.Attachment != b.Attachment || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("attachment %d differs between two runs", a.ID)
		}
		if i < len(other.Attachments) && bytes.Equal(a.Bytes(), other.Attachments[i].Bytes()) {
			t.Errorf("attachment %d is the same for another seed", a.ID)
		}
	}
	big, bigAgain := byKind(t, d)[FileOversized], byKind(t, again)[FileOversized]
	if md5.Sum(big.Bytes()) != md5.Sum(bigAgain.Bytes()) {
		t.Error("the oversized file differs between two runs")
	}
}

// TestGenerateAttachmentsExternal checks the option that keeps the files
// in the external storage.
func TestGenerateAttachmentsExternal(t *testing.T) {
	d := Generate(GenOptions{Seed: 3, WorkPackages: 200, ExternalAttachments: true})
	if len(d.Attachments) == 0 {
		t.Fatal("no attachments")
	}
	for _, a := range d.Attachments {
		if !a.External {
			t.Fatalf("attachment %d is not external", a.ID)
		}
	}
}

// TestGeneratedFiles reads every kind of generated file as the indexer
// will (package extract): each extractable one yields its phrase, the
// corrupt one is malformed, the oversized one too large, the PNG an image
// without text.
func TestGeneratedFiles(t *testing.T) {
	files := byKind(t, Generate(genFiles))
	tests := []struct {
		kind   FileKind
		format string // what extract reads it as
		err    error
		check  func(t *testing.T, b []byte)
	}{
		{kind: FileText, format: "text"},
		{kind: FileMarkdown, format: "markdown", check: func(t *testing.T, b []byte) {
			if !bytes.HasPrefix(b, []byte("# ")) || !bytes.Contains(b, []byte("\n## ")) || !bytes.Contains(b, []byte("\n| --- |")) {
				t.Errorf("not markdown: %.200s", b)
			}
		}},
		{kind: FileCSV, format: "csv", check: func(t *testing.T, b []byte) {
			if !bytes.HasPrefix(b, []byte("Item,Owner,Status,Due,Notes\n")) {
				t.Errorf("csv header: %.80s", b)
			}
		}},
		{kind: FileJSON, format: "json"},
		{kind: FileHTML, format: "html"},
		{kind: FileEML, format: "eml", check: checkEML},
		{kind: FileDOCX, format: "docx", check: zipHolds("[Content_Types].xml", "_rels/.rels", "word/document.xml")},
		{kind: FileXLSX, format: "xlsx", check: zipHolds("[Content_Types].xml", "xl/workbook.xml", "xl/worksheets/sheet1.xml", "xl/sharedStrings.xml")},
		{kind: FileODT, format: "odt", check: func(t *testing.T, b []byte) {
			zipHolds("mimetype", "META-INF/manifest.xml", "content.xml")(t, b)
			// The mimetype comes first, uncompressed, as the format asks.
			if !bytes.Equal(b[30:38], []byte("mimetype")) || !bytes.Contains(b[:100], []byte("application/vnd.oasis.opendocument.text")) {
				t.Errorf("odt starts %q", b[:80])
			}
		}},
		{kind: FilePDF, format: "pdf", check: checkPDF},
		{kind: FilePNG, err: extract.ErrUnsupported, check: func(t *testing.T, b []byte) {
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("not a PNG: %v", err)
			}
		}},
		{kind: FileCorrupt, err: extract.ErrMalformed, check: func(t *testing.T, b []byte) {
			if bytes.HasPrefix(b, []byte("%PDF")) {
				t.Error("the corrupt file is a PDF")
			}
		}},
		{kind: FileOversized, err: extract.ErrTooLarge, check: func(t *testing.T, b []byte) {
			if len(b) <= extract.DefaultMaxBytes || len(b) > 12<<20 {
				t.Errorf("oversized file of %d bytes", len(b))
			}
			if !bytes.Contains(b[:4096], []byte(AttachmentPhrase(files[FileOversized].ID))) {
				t.Error("the oversized file lacks its phrase")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			a, ok := files[tt.kind]
			if !ok {
				t.Fatalf("no %s file", tt.kind)
			}
			b := a.Bytes()
			if tt.check != nil {
				tt.check(t, b)
			}
			phrase := AttachmentPhrase(a.ID)
			res, err := extract.Text(context.Background(), a.FileName, a.ContentType, bytes.NewReader(b), extract.Options{})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("extract: %v, want %v", err, tt.err)
				}
				if tt.kind.Extractable() {
					t.Errorf("%s is extractable", tt.kind)
				}
				return
			}
			if err != nil {
				t.Fatalf("extract %s: %v", a.FileName, err)
			}
			if !tt.kind.Extractable() || res.Format != tt.format || !strings.Contains(res.Text, phrase) {
				t.Errorf("extracted as %s without %q:\n%.400s", res.Format, phrase, res.Text)
			}
			// On the container's topic, which all but the CSV export name
			// (the PDF as far as WinAnsiEncoding goes).
			topic := a.Container.Title
			if tt.kind == FilePDF {
				topic = strings.Trim(pdfString(topic), "()")
			}
			if tt.kind != FileCSV && !strings.Contains(res.Text, topic) {
				t.Errorf("the text does not name its container %q", topic)
			}
		})
	}
}

// checkEML reads the e-mail as a mail client would: headers, a
// multipart/alternative body, a quoted-printable text part.
func checkEML(t *testing.T, b []byte) {
	msg, err := mail.ReadMessage(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := msg.Header.AddressList("From"); err != nil {
		t.Errorf("From: %v", err)
	}
	if _, err := msg.Header.Date(); err != nil {
		t.Errorf("Date: %v", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %s: %v", mt, err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	p, err := mr.NextRawPart()
	if err != nil || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") || p.Header.Get("Content-Transfer-Encoding") != "quoted-printable" {
		t.Errorf("first part %v: %v", p.Header, err)
	}
}

// zipHolds checks that a file is a zip archive with the named entries.
func zipHolds(names ...string) func(t *testing.T, b []byte) {
	return func(t *testing.T, b []byte) {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, f := range zr.File {
			have[f.Name] = true
		}
		for _, n := range names {
			if !have[n] {
				t.Errorf("no %s in the archive", n)
			}
		}
	}
}

// checkPDF checks the structure a strict reader relies on: the header,
// and a cross-reference table whose every entry points at its object.
func checkPDF(t *testing.T, b []byte) {
	if !bytes.HasPrefix(b, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(b, []byte("%%EOF\n")) {
		t.Fatalf("PDF starts %q, ends %q", b[:10], b[len(b)-10:])
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(b[xref:], []byte("xref\n0 ")) {
		t.Fatalf("startxref %d points at %q", xref, b[xref:xref+10])
	}
	lines := strings.Split(string(b[xref:]), "\n")
	count, _ := strconv.Atoi(strings.Fields(lines[1])[1])
	if lines[2] != "0000000000 65535 f " {
		t.Errorf("free entry %q", lines[2])
	}
	for n := 1; n < count; n++ {
		e := lines[2+n]
		if len(e) != 19 || !strings.HasSuffix(e, " 00000 n ") {
			t.Fatalf("xref entry %d: %q", n, e)
		}
		off, _ := strconv.Atoi(e[:10])
		if want := strconv.Itoa(n) + " 0 obj\n"; !bytes.HasPrefix(b[off:], []byte(want)) {
			t.Errorf("object %d at %d starts %q", n, off, b[off:off+10])
		}
	}
	// Every stream's length is exact.
	for _, m := range regexp.MustCompile(`(?s)/Length (\d+) >>\nstream\n`).FindAllSubmatchIndex(b, -1) {
		n, _ := strconv.Atoi(string(b[m[2]:m[3]]))
		if !bytes.HasPrefix(b[m[1]+n:], []byte("endstream\n")) {
			t.Errorf("stream at %d is not %d bytes long", m[1], n)
		}
	}
}

// TestPDFDocument writes PDFs of one and of several pages and reads them
// back with extract.
func TestPDFDocument(t *testing.T) {
	long := make([]string, 3*pdfLinesPerPage+5)
	for i := range long {
		long[i] = "line " + strconv.Itoa(i)
	}
	tests := []struct {
		name  string
		title string
		lines []string
		want  []string
	}{
		{"empty", "Nothing", nil, []string{"Nothing"}},
		{"escapes", `Costs (net) \ gross`, []string{"a (b) c", `back\slash`, "Schröder – 5 €"}, []string{"Costs (net) \\ gross", "a (b) c", `back\slash`, "Schröder – 5 €"}},
		{"not in WinAnsi", "Łódź", []string{"Łukasz"}, []string{"?ód?", "?ukasz"}},
		{"pages", "Long", long, []string{"line 0", "line " + strconv.Itoa(pdfLinesPerPage), "line " + strconv.Itoa(len(long)-1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pdfDocument(tt.title, "Ada", genFiles.normalized().Start, tt.lines)
			checkPDF(t, b)
			res, err := extract.Text(context.Background(), "x.pdf", "application/pdf", bytes.NewReader(b), extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, res.Text)
				}
			}
			if pages := bytes.Count(b, []byte("/Type /Page ")); pages != max(1, (len(tt.lines)+pdfLinesPerPage-1)/pdfLinesPerPage) {
				t.Errorf("%d pages for %d lines", pages, len(tt.lines))
			}
		})
	}
}

// TestAttachmentPhrasesAreDistinctive: every id up to the range has a
// phrase of its own, and no phrase word occurs in any other generated
// text.
func TestAttachmentPhrasesAreDistinctive(t *testing.T) {
	n := len(phraseFirst)
	if len(phraseSecond) != n || len(phraseThird) != n {
		t.Fatalf("phrase lists of %d, %d and %d words", n, len(phraseSecond), len(phraseThird))
	}
	seen := make(map[string]bool, n*n*n)
	for id := int64(1); id <= int64(n*n*n); id++ {
		p := AttachmentPhrase(id)
		if seen[p] {
			t.Fatalf("phrase %q repeats at id %d", p, id)
		}
		seen[p] = true
	}
	if AttachmentPhrase(1) == AttachmentPhrase(2) || strings.Fields(AttachmentPhrase(1))[2] == strings.Fields(AttachmentPhrase(2))[2] {
		t.Errorf("neighbouring phrases %q and %q share words", AttachmentPhrase(1), AttachmentPhrase(2))
	}

	o := GenOptions{Seed: 5, WorkPackages: 3000, MixedPermissions: true}
	if testing.Short() {
		o.WorkPackages = 600
	}
	d := Generate(o)
	var all strings.Builder
	add := func(s ...string) {
		for _, x := range s {
			all.WriteString(x)
			all.WriteByte('\n')
		}
	}
	for _, u := range d.Users {
		add(u.Name, u.Login)
	}
	for _, p := range d.Projects {
		add(p.Name, p.Identifier, p.Description)
	}
	for _, wp := range d.WorkPackages {
		add(wp.Subject, wp.Description)
	}
	for _, a := range d.Activities {
		add(a.Comment)
		add(a.Details...)
	}
	for _, w := range d.WikiPages {
		add(w.Title, w.Text)
	}
	for _, m := range d.Meetings {
		add(m.Title, m.Location)
		for _, it := range m.AgendaItems {
			add(it.Title, it.Notes)
			for _, o := range it.Outcomes {
				add(o.Notes)
			}
		}
	}
	for _, te := range d.TimeEntries {
		add(te.Comment)
	}
	for _, a := range d.Attachments {
		add(a.FileName, a.Description)
	}
	text := strings.ToLower(all.String())
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r < 'a' || r > 'z' }) {
		words[w] = true
	}
	for _, list := range [][]string{phraseFirst, phraseSecond, phraseThird} {
		for _, w := range list {
			if words[w] {
				t.Errorf("phrase word %q occurs in the generated text", w)
			}
		}
	}
}

// TestGeneratedFilesAllExtract reads every file of a data set: each
// extractable one yields its own phrase.
func TestGeneratedFilesAllExtract(t *testing.T) {
	d := Generate(genFiles)
	if testing.Short() {
		d.Attachments = d.Attachments[:60]
	}
	for _, a := range d.Attachments {
		k := AttachmentKind(a)
		if !k.Extractable() {
			continue
		}
		res, err := extract.Text(context.Background(), a.FileName, a.ContentType, bytes.NewReader(a.Bytes()), extract.Options{})
		if err != nil || !strings.Contains(res.Text, AttachmentPhrase(a.ID)) {
			t.Errorf("attachment %d (%s, %s): %v, text without its phrase", a.ID, k, a.FileName, err)
		}
	}
}
