package opgen

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"mime"
	"mime/quotedprintable"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject/optest"
)

// fileRecipe is what a generated file is made from. The file itself is
// made when it is needed (optest.Attachment.Source): the same bytes
// every time, from the recipe's seed, so a large data set holds recipes,
// not files.
type fileRecipe struct {
	g      *generator // read-only once Generate returns
	kind   FileKind
	seed   uint64
	id     int64     // the attachment's id, which picks the phrase
	proj   int       // project index: the domain of the words
	wpID   int       // {wp} references stay below this id
	topic  string    // the container's subject or title
	author int       // user index of the author
	date   time.Time // when the file was attached
}

// bytes makes the file.
func (rc *fileRecipe) bytes() []byte {
	switch rc.kind {
	case FileText:
		return rc.plainText()
	case FileMarkdown:
		return rc.markdown()
	case FileCSV:
		return rc.csv()
	case FileJSON:
		return rc.json()
	case FileHTML:
		return rc.html()
	case FileEML:
		return rc.eml()
	case FileDOCX:
		return rc.docx()
	case FileXLSX:
		return rc.xlsx()
	case FileODT:
		return rc.odt()
	case FilePDF:
		return rc.pdf()
	case FilePNG:
		return rc.png()
	case FileCorrupt:
		return rc.corrupt()
	case FileOversized:
		return rc.oversized()
	}
	return nil
}

// rand is the recipe's random stream, the same for every call.
func (rc *fileRecipe) rand() *rand.Rand {
	return rand.New(rand.NewPCG(splitmix64(rc.seed), splitmix64(rc.seed^0x66696c6573)))
}

// writer writes on the topic of the file's project.
func (rc *fileRecipe) writer(r *rand.Rand) *writer {
	w := newWriter(rc.g, r)
	w.setProject(&rc.g.projects[rc.proj], rc.wpID)
	return w
}

// fileText is the text of a generated file, laid out by each format.
type fileText struct {
	title string
	intro string
	// paras are paragraphs; one of them holds the phrase.
	paras []string
	items []string
	// rows is a table, its header first; one row's note holds the phrase.
	rows [][]string
}

// phraseSentences put an attachment's phrase into a sentence.
var phraseSentences = []string{
	"Internally this is tracked as the %s.",
	"Reference for the archive: %s.",
	"We agreed to call the follow-up the %s.",
	"Codeword for the review: %s.",
	"The working title stays %s until the next steering meeting.",
}

// fileTitles are the kinds of documents, for titles.
var fileTitles = []string{"Notes", "Summary", "Status report", "Review", "Plan", "Minutes", "Proposal", "Analysis"}

// text writes the file's words: on the container's topic, in the
// vocabulary of its project, with the phrase in one paragraph and one
// table row.
func (rc *fileRecipe) text(r *rand.Rand) fileText {
	w := rc.writer(r)
	t := fileText{title: fileTitles[r.IntN(len(fileTitles))] + ": " + rc.topic}
	t.intro = "Regarding " + rc.topic + ". " + w.text(w.pick(wikiParagraphs))
	for range 3 + r.IntN(3) {
		w.b.Reset()
		w.paragraph(2 + r.IntN(3))
		t.paras = append(t.paras, w.b.String())
	}
	phrase := fmt.Sprintf(phraseSentences[r.IntN(len(phraseSentences))], AttachmentPhrase(rc.id))
	k := r.IntN(len(t.paras))
	t.paras[k] += " " + phrase
	for range 3 + r.IntN(4) {
		t.items = append(t.items, w.text(w.pick(taskItems)))
	}
	t.rows = [][]string{{"Item", "Owner", "Status", "Due", "Notes"}}
	statuses := []string{"open", "in progress", "done", "blocked", "on hold"}
	for range 4 + r.IntN(8) {
		t.rows = append(t.rows, []string{w.text("{N}"), w.text("{u}"), statuses[r.IntN(len(statuses))], w.text("{date}"), w.text(w.pick(sentences))})
	}
	row := t.rows[1+r.IntN(len(t.rows)-1)]
	row[4] += " " + phrase
	return t
}

func (rc *fileRecipe) plainText() []byte {
	t := rc.text(rc.rand())
	var b strings.Builder
	b.WriteString(t.title + "\n\n" + t.intro + "\n\n")
	for _, p := range t.paras {
		b.WriteString(p + "\n\n")
	}
	b.WriteString("Open points:\n")
	for _, it := range t.items {
		b.WriteString("- " + it + "\n")
	}
	return []byte(b.String())
}

func (rc *fileRecipe) markdown() []byte {
	t := rc.text(rc.rand())
	var b strings.Builder
	b.WriteString("# " + t.title + "\n\n" + t.intro + "\n\n## Context\n\n")
	for i, p := range t.paras {
		if i == len(t.paras)/2 {
			b.WriteString("## Details\n\n")
		}
		b.WriteString(p + "\n\n")
	}
	b.WriteString("## Next steps\n\n")
	for _, it := range t.items {
		b.WriteString("- [ ] " + it + "\n")
	}
	b.WriteString("\n| " + strings.Join(t.rows[0], " | ") + " |\n|" + strings.Repeat(" --- |", len(t.rows[0])) + "\n")
	for _, row := range t.rows[1:] {
		b.WriteString("| " + strings.ReplaceAll(strings.Join(row, " | "), "\n", " ") + " |\n")
	}
	return []byte(b.String())
}

func (rc *fileRecipe) csv() []byte {
	t := rc.text(rc.rand())
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.WriteAll(t.rows) // a bytes.Buffer does not fail
	return b.Bytes()
}

func (rc *fileRecipe) json() []byte {
	t := rc.text(rc.rand())
	type item struct {
		ID     int    `json:"id"`
		Name   string `json:"name"`
		Owner  string `json:"owner"`
		Status string `json:"status"`
		Due    string `json:"due"`
		Note   string `json:"note"`
	}
	doc := struct {
		Title    string   `json:"title"`
		Project  string   `json:"project"`
		Exported string   `json:"exported"`
		Summary  string   `json:"summary"`
		Items    []item   `json:"items"`
		Notes    []string `json:"notes"`
		Open     []string `json:"openPoints"`
	}{Title: t.title, Project: rc.g.projects[rc.proj].name, Exported: rc.date.Format(time.RFC3339), Summary: t.intro, Notes: t.paras, Open: t.items}
	for i, row := range t.rows[1:] {
		doc.Items = append(doc.Items, item{ID: i + 1, Name: row[0], Owner: row[1], Status: row[2], Due: row[3], Note: row[4]})
	}
	b, _ := json.MarshalIndent(doc, "", "  ") // plain strings: no error
	return append(b, '\n')
}

func (rc *fileRecipe) html() []byte {
	t := rc.text(rc.rand())
	e := html.EscapeString
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + e(t.title) + "</title>\n")
	b.WriteString("<style>body{font-family:sans-serif;max-width:50em}td,th{border:1px solid #ccc;padding:2px 6px}</style>\n")
	b.WriteString("<script>document.documentElement.className='js';</script>\n</head>\n<body>\n")
	b.WriteString("<h1>" + e(t.title) + "</h1>\n<p>" + e(t.intro) + "</p>\n")
	for _, p := range t.paras {
		b.WriteString("<p>" + e(p) + "</p>\n")
	}
	b.WriteString("<h2>Open points</h2>\n<ul>\n")
	for _, it := range t.items {
		b.WriteString("<li>" + e(it) + "</li>\n")
	}
	b.WriteString("</ul>\n<table>\n")
	for i, row := range t.rows {
		cell := "td"
		if i == 0 {
			cell = "th"
		}
		b.WriteString("<tr>")
		for _, c := range row {
			b.WriteString("<" + cell + ">" + e(c) + "</" + cell + ">")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</body>\n</html>\n")
	return []byte(b.String())
}

// eml writes an e-mail (RFC 5322) from the author to another member of
// the project: multipart/alternative with a quoted-printable text/plain
// part and an HTML part, the subject encoded when it is not ASCII.
func (rc *fileRecipe) eml() []byte {
	r := rc.rand()
	t := rc.text(r)
	from := &rc.g.users[rc.author]
	to := from
	if m := rc.g.projects[rc.proj].members; len(m) > 1 {
		for to == from {
			to = &rc.g.users[m[r.IntN(len(m))]]
		}
	}
	addr := func(u *optest.User) string {
		return mime.QEncoding.Encode("utf-8", u.Name) + " <" + u.Email + ">"
	}
	boundary := fmt.Sprintf("=_opsearch_%016x", rc.seed)
	var b strings.Builder
	b.WriteString("From: " + addr(from) + "\r\n")
	b.WriteString("To: " + addr(to) + "\r\n")
	b.WriteString("Subject: " + mime.QEncoding.Encode("utf-8", "Re: "+rc.topic) + "\r\n")
	b.WriteString("Date: " + rc.date.Format(time.RFC1123Z) + "\r\n")
	b.WriteString(fmt.Sprintf("Message-ID: <%016x.%d@mail.example.com>\r\n", rc.seed, rc.id))
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/alternative; boundary=\"" + boundary + "\"\r\n\r\n")
	b.WriteString("This is a multi-part message in MIME format.\r\n\r\n")

	var plain strings.Builder
	plain.WriteString("Hi " + to.FirstName + ",\n\n" + t.intro + "\n\n")
	for _, p := range t.paras {
		plain.WriteString(p + "\n\n")
	}
	for _, it := range t.items {
		plain.WriteString("* " + it + "\n")
	}
	plain.WriteString("\nBest regards,\n" + from.Name + "\n")
	b.WriteString("--" + boundary + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
	b.WriteString(quotedPrintable(plain.String()))
	b.WriteString("\r\n--" + boundary + "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
	var h strings.Builder
	h.WriteString("<html><body><p>Hi " + html.EscapeString(to.FirstName) + ",</p>")
	for _, p := range append([]string{t.intro}, t.paras...) {
		h.WriteString("<p>" + html.EscapeString(p) + "</p>")
	}
	h.WriteString("<p>Best regards,<br>" + html.EscapeString(from.Name) + "</p></body></html>\n")
	b.WriteString(quotedPrintable(h.String()))
	b.WriteString("\r\n--" + boundary + "--\r\n")
	return []byte(b.String())
}

// quotedPrintable encodes text for a mail body, with CRLF line ends.
func quotedPrintable(s string) string {
	var b bytes.Buffer
	qw := quotedprintable.NewWriter(&b)
	_, _ = qw.Write([]byte(strings.ReplaceAll(s, "\n", "\r\n"))) // a bytes.Buffer does not fail
	_ = qw.Close()
	return b.String()
}

// zipFile is one entry of an office document.
type zipFile struct {
	name string
	body string
	// store leaves the entry uncompressed (ODT's mimetype must be).
	store bool
}

// zipped packs the entries, in order, stamped with the file's date.
func (rc *fileRecipe) zipped(files []zipFile) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		method := zip.Deflate
		if f.store {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: method, Modified: rc.date})
		if err == nil {
			_, err = w.Write([]byte(f.body))
		}
		if err != nil {
			return nil // writing to memory does not fail
		}
	}
	if zw.Close() != nil {
		return nil
	}
	return b.Bytes()
}

// xmlText escapes text for XML character data.
func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

const xmlHeader = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

// docx writes a WordprocessingML document: the title, paragraphs, a
// list and a table in word/document.xml.
func (rc *fileRecipe) docx() []byte {
	t := rc.text(rc.rand())
	var body strings.Builder
	para := func(style, text string) {
		body.WriteString("<w:p>")
		if style != "" {
			body.WriteString(`<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`)
		}
		body.WriteString(`<w:r><w:t xml:space="preserve">` + xmlText(text) + "</w:t></w:r></w:p>")
	}
	para("Title", t.title)
	para("", t.intro)
	for _, p := range t.paras {
		para("", p)
	}
	para("Heading1", "Open points")
	for _, it := range t.items {
		para("ListBullet", it)
	}
	body.WriteString("<w:tbl>")
	for _, row := range t.rows {
		body.WriteString("<w:tr>")
		for _, c := range row {
			body.WriteString(`<w:tc><w:p><w:r><w:t xml:space="preserve">` + xmlText(c) + "</w:t></w:r></w:p></w:tc>")
		}
		body.WriteString("</w:tr>")
	}
	body.WriteString("</w:tbl>")
	return rc.zipped([]zipFile{
		{name: "[Content_Types].xml", body: xmlHeader + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
			`</Types>`},
		{name: "_rels/.rels", body: xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>` +
			`</Relationships>`},
		{name: "word/document.xml", body: xmlHeader + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body.String() + `<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body></w:document>`},
	})
}

// xlsx writes a workbook of one sheet: the table, its text cells as
// shared strings (as spreadsheet programs store them), the row numbers
// as numbers.
func (rc *fileRecipe) xlsx() []byte {
	t := rc.text(rc.rand())
	var shared []string
	index := map[string]int{}
	ref := func(s string) int {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(shared)
		shared = append(shared, s)
		return len(shared) - 1
	}
	var sheet strings.Builder
	cols := "ABCDEFGHIJ"
	sheet.WriteString("<sheetData>")
	rows := append([][]string{{t.title}}, t.rows...)
	for i, row := range rows {
		n := strconv.Itoa(i + 1)
		sheet.WriteString(`<row r="` + n + `">`)
		for j, c := range row {
			sheet.WriteString(`<c r="` + cols[j:j+1] + n + `" t="s"><v>` + strconv.Itoa(ref(c)) + "</v></c>")
		}
		if i > 1 {
			sheet.WriteString(`<c r="` + cols[len(row):len(row)+1] + n + `"><v>` + strconv.Itoa(i-1) + "</v></c>")
		}
		sheet.WriteString("</row>")
	}
	sheet.WriteString("</sheetData>")
	var ss strings.Builder
	ss.WriteString(xmlHeader + `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="` +
		strconv.Itoa(len(shared)) + `" uniqueCount="` + strconv.Itoa(len(shared)) + `">`)
	for _, s := range shared {
		ss.WriteString(`<si><t xml:space="preserve">` + xmlText(s) + "</t></si>")
	}
	ss.WriteString("</sst>")
	const main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
	const rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	return rc.zipped([]zipFile{
		{name: "[Content_Types].xml", body: xmlHeader + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
			`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>` +
			`</Types>`},
		{name: "_rels/.rels", body: xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + rel + `/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{name: "xl/workbook.xml", body: xmlHeader + `<workbook xmlns="` + main + `" xmlns:r="` + rel + `">` +
			`<sheets><sheet name="Items" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{name: "xl/_rels/workbook.xml.rels", body: xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="` + rel + `/worksheet" Target="worksheets/sheet1.xml"/>` +
			`<Relationship Id="rId2" Type="` + rel + `/sharedStrings" Target="sharedStrings.xml"/></Relationships>`},
		{name: "xl/worksheets/sheet1.xml", body: xmlHeader + `<worksheet xmlns="` + main + `">` + sheet.String() + `</worksheet>`},
		{name: "xl/sharedStrings.xml", body: ss.String()},
	})
}

// odt writes an OpenDocument text: the mimetype first and stored, the
// manifest, and content.xml with headings, paragraphs and a list.
func (rc *fileRecipe) odt() []byte {
	t := rc.text(rc.rand())
	var body strings.Builder
	body.WriteString(`<text:h text:outline-level="1">` + xmlText(t.title) + "</text:h>")
	body.WriteString("<text:p>" + xmlText(t.intro) + "</text:p>")
	for _, p := range t.paras {
		body.WriteString("<text:p>" + xmlText(p) + "</text:p>")
	}
	body.WriteString(`<text:h text:outline-level="2">Open points</text:h><text:list>`)
	for _, it := range t.items {
		body.WriteString("<text:list-item><text:p>" + xmlText(it) + "</text:p></text:list-item>")
	}
	body.WriteString("</text:list>")
	for _, row := range t.rows[1:] {
		body.WriteString(`<text:p><text:span text:style-name="Strong">` + xmlText(row[0]) + "</text:span> " + xmlText(strings.Join(row[1:], ", ")) + "</text:p>")
	}
	const mimeType = "application/vnd.oasis.opendocument.text"
	return rc.zipped([]zipFile{
		{name: "mimetype", body: mimeType, store: true},
		{name: "META-INF/manifest.xml", body: xmlHeader + `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">` +
			`<manifest:file-entry manifest:full-path="/" manifest:media-type="` + mimeType + `"/>` +
			`<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`},
		{name: "content.xml", body: xmlHeader + `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ` +
			`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body><office:text>` +
			body.String() + `</office:text></office:body></office:document-content>`},
	})
}

// pdf writes the text as a PDF of Helvetica lines (pdf.go).
func (rc *fileRecipe) pdf() []byte {
	t := rc.text(rc.rand())
	// The phrase stays on one line: an extractor ends every line.
	phrase := AttachmentPhrase(rc.id)
	glued := strings.ReplaceAll(phrase, " ", "\x00")
	var lines []string
	for _, p := range append([]string{t.intro}, t.paras...) {
		for _, l := range wrap(strings.ReplaceAll(p, phrase, glued), 88) {
			lines = append(lines, strings.ReplaceAll(l, "\x00", " "))
		}
		lines = append(lines, "")
	}
	lines = append(lines, "Open points:")
	for _, it := range t.items {
		lines = append(lines, wrap("- "+it, 88)...)
	}
	return pdfDocument(t.title, rc.g.users[rc.author].Name, rc.date, lines)
}

// wrap breaks text into lines of at most width runes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var line strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		wn := len([]rune(word))
		if n > 0 && n+1+wn > width {
			lines = append(lines, line.String())
			line.Reset()
			n = 0
		}
		if n > 0 {
			line.WriteByte(' ')
			n++
		}
		line.WriteString(word)
		n += wn
	}
	if n > 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// png draws a small bar chart: binary content without text.
func (rc *fileRecipe) png() []byte {
	r := rc.rand()
	const w, h = 160, 96
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{
		color.White, color.RGBA{0x33, 0x33, 0x33, 0xff}, color.RGBA{0x1a, 0x67, 0xa3, 0xff},
		color.RGBA{0x35, 0xc5, 0x3f, 0xff}, color.RGBA{0xf0, 0x8c, 0x00, 0xff}, color.RGBA{0xd3, 0x29, 0x37, 0xff},
	})
	for x := 8; x < w-8; x++ {
		img.SetColorIndex(x, h-8, 1)
	}
	bars := 4 + r.IntN(6)
	for i := range bars {
		left := 12 + i*(w-24)/bars
		height := 8 + r.IntN(h-24)
		c := uint8(2 + r.IntN(4))
		for x := left; x < left+(w-24)/bars-4; x++ {
			for y := h - 9; y > h-9-height; y-- {
				img.SetColorIndex(x, y, c)
			}
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // a bytes.Buffer does not fail
	return b.Bytes()
}

// corrupt writes a ".pdf" that is no PDF: the bytes of a JPEG scan saved
// under the wrong name, cut off.
func (rc *fileRecipe) corrupt() []byte {
	r := rc.rand()
	b := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x48\x00\x48\x00\x00")
	for range 3000 + r.IntN(6000) {
		b = append(b, byte(r.Uint32()))
	}
	return b
}

// oversizedBytes is the least size of the oversized file: over the
// 10 MB an extractor reads (extract.DefaultMaxBytes).
const oversizedBytes = 11 << 20

// oversized writes an audit log export of some 11 MB: a CSV of log lines,
// the phrase in the first, the rest repeating a few hundred lines with
// later timestamps.
func (rc *fileRecipe) oversized() []byte {
	r := rc.rand()
	w := rc.writer(r)
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"}
	var pool bytes.Buffer
	cw := csv.NewWriter(&pool)
	var tails []string
	for i := range 300 {
		pool.Reset()
		msg := w.text(w.pick(sentences))
		if i == 0 {
			msg += " " + fmt.Sprintf(phraseSentences[0], AttachmentPhrase(rc.id))
		}
		_ = cw.Write([]string{levels[r.IntN(len(levels))], w.text("{c}"), w.text("{u}"), msg})
		cw.Flush()
		tails = append(tails, pool.String())
	}
	out := make([]byte, 0, oversizedBytes+4096)
	out = append(out, "timestamp,level,component,user,message\n"...)
	ts := rc.date.Add(-30 * 24 * time.Hour)
	for i := 0; len(out) < oversizedBytes; i++ {
		out = ts.AppendFormat(out, time.RFC3339)
		out = append(out, ',')
		out = append(out, tails[i%len(tails)]...)
		ts = ts.Add(time.Duration(1+r.IntN(20)) * time.Second)
	}
	return out
}
