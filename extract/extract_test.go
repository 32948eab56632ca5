package extract_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"github.com/opsearch/opsearch/extract"
)

// pdfWith makes a PDF of pages pages of filler with line on the middle
// one, as a word processor would lay it out.
func pdfWith(t testing.TB, pages int, line string) []byte {
	t.Helper()
	p := fpdf.New("P", "mm", "A4", "")
	p.SetFont("Helvetica", "", 11)
	for i := range pages {
		p.AddPage()
		for j := range 40 {
			text := fmt.Sprintf("Page %d line %d: the quarterly report mentions budgets and timelines.", i+1, j+1)
			if i == pages/2 && j == 20 {
				text = line
			}
			p.CellFormat(0, 6, text, "", 1, "L", false, 0, "")
		}
	}
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// phrase is what every test file hides somewhere; the search must find it.
const phrase = "cormorant lighthouse quota"

// zipped builds an archive of the named entries.
func zipped(t testing.TB, entries map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type testFile struct {
	name, contentType, format string
	data                      []byte
}

// files are one small realistic file per supported format.
func files(t testing.TB) []testFile {
	return []testFile{
		{"notes.txt", "text/plain", "text", []byte("\xef\xbb\xbfMeeting notes\nThe " + phrase + " was raised.\n")},
		{"README.md", "", "markdown", []byte("# Plan\n\n- the **" + phrase + "** item\n")},
		{"budget.csv", "text/csv", "csv", []byte("item,owner\n\"" + phrase + "\",dana\n")},
		{"config.json", "application/json", "json", []byte(`{"items":[{"name":"` + phrase + `","n":3}]}`)},
		{"page.html", "text/html", "html", []byte("<html><head><style>.x{}</style><script>var " + strings.ReplaceAll(phrase, " ", "_") +
			"</script></head><body><p>About the</p><p>" + phrase + "</p></body></html>")},
		{"mail.eml", "message/rfc822", "eml", []byte("From: Dana <dana@example.com>\r\nTo: team@example.com\r\nSubject: =?UTF-8?Q?Quarterly_r=C3=A9view?=\r\nMIME-Version: 1.0\r\n" +
			"Content-Type: multipart/alternative; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nWe agreed on the " +
			strings.ReplaceAll(phrase, "quota", "quo=\r\nta") + ".\r\n--b1\r\nContent-Type: text/html\r\n\r\n<p>html part</p>\r\n--b1--\r\n")},
		{"report.docx", "", "docx", zipped(t, map[string]string{"word/document.xml": `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			`<w:p><w:r><w:t>First paragraph.</w:t></w:r></w:p><w:p><w:r><w:t>The cormorant </w:t></w:r><w:r><w:t>lighthouse quota</w:t></w:r></w:p></w:body></w:document>`})},
		{"sheet.xlsx", "", "xlsx", zipped(t, map[string]string{"xl/sharedStrings.xml": `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
			`<si><t>Owner</t></si><si><t>` + phrase + `</t></si></sst>`})},
		{"minutes.odt", "", "odt", zipped(t, map[string]string{"content.xml": `<?xml version="1.0"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ` +
			`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:h>Minutes</text:h><text:p>The <text:span>` + phrase +
			`</text:span> stays.</text:p></office:text></office:body></office:document-content>`})},
		{"slides.pdf", "application/pdf", "pdf", pdfWith(t, 3, "The "+phrase+" was agreed.")},
	}
}

// TestText: each supported format's phrase is found, named by its
// format; scripts and styles are not text.
func TestText(t *testing.T) {
	for _, f := range files(t) {
		t.Run(f.name, func(t *testing.T) {
			res, err := extract.Text(t.Context(), f.name, f.contentType, bytes.NewReader(f.data), extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != f.format || res.Truncated {
				t.Errorf("format %q truncated %v, want %q, not truncated", res.Format, res.Truncated, f.format)
			}
			if !strings.Contains(strings.Join(strings.Fields(res.Text), " "), phrase) {
				t.Errorf("the text lacks %q:\n%s", phrase, res.Text)
			}
			if strings.Contains(res.Text, "cormorant_lighthouse") || strings.Contains(res.Text, ".x{}") {
				t.Errorf("a script or style reached the text:\n%s", res.Text)
			}
		})
	}
	res, err := extract.Text(t.Context(), "mail.eml", "", bytes.NewReader(files(t)[5].data), extract.Options{})
	if err != nil || !strings.Contains(res.Text, "Quarterly réview") || strings.Contains(res.Text, "html part") {
		t.Errorf("e-mail: %q, %v; want the decoded subject and only the plain part", res.Text, err)
	}
}

// TestTextRefusals: what breaks the budget or the format is refused with
// the reason; nothing panics.
func TestTextRefusals(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 2048)
	bomb := zipped(t, map[string]string{"word/document.xml": strings.Repeat("<w:t>x</w:t>", 10000)})
	for _, c := range []struct {
		name, file string
		data       []byte
		opts       extract.Options
		want       error
	}{
		{"too large", "a.txt", big, extract.Options{MaxBytes: 1024}, extract.ErrTooLarge},
		{"unpacks too large", "a.docx", bomb, extract.Options{MaxBytes: 50000}, extract.ErrTooLarge},
		{"not a zip", "a.docx", []byte("hello"), extract.Options{}, extract.ErrMalformed},
		{"zip without the document", "a.docx", zipped(t, map[string]string{"other.xml": "<x/>"}), extract.Options{}, extract.ErrMalformed},
		{"broken json", "a.json", []byte(`{"a": [1, 2`), extract.Options{}, extract.ErrMalformed},
		{"damaged pdf", "a.pdf", []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"), extract.Options{}, extract.ErrMalformed},
		{"binary", "a.bin", []byte{0, 1, 2, 3, 0xff}, extract.Options{}, extract.ErrUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := extract.Text(t.Context(), c.file, "", bytes.NewReader(c.data), c.opts)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.file) {
				t.Errorf("err = %v, want %v naming %s", err, c.want, c.file)
			}
		})
	}
}

// TestTextCaps: text over MaxText is cut at a rune boundary and says so;
// a cancelled extraction stops.
func TestTextCaps(t *testing.T) {
	long := strings.Repeat("ünïcode words ", 1000)
	res, err := extract.Text(t.Context(), "a.txt", "", strings.NewReader(long), extract.Options{MaxText: 101})
	if err != nil || !res.Truncated || len(res.Text) > 101 || !strings.HasPrefix(long, res.Text) {
		t.Errorf("capped: %d bytes, truncated %v, %v", len(res.Text), res.Truncated, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = extract.Text(ctx, "a.csv", "", strings.NewReader(strings.Repeat("a,b\n", 100000)), extract.Options{Timeout: time.Minute})
	if err == nil {
		t.Error("a cancelled extraction finished")
	}
}

// FuzzText: no input crashes an extraction, whatever format it claims.
func FuzzText(f *testing.F) {
	for _, fl := range files(f) {
		f.Add(fl.name, fl.data)
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		for _, n := range []string{name, "a.txt", "a.csv", "a.json", "a.html", "a.eml", "a.docx", "a.xlsx", "a.odt", "a.pdf"} {
			res, err := extract.Text(context.Background(), n, "", bytes.NewReader(data), extract.Options{MaxBytes: 1 << 16, MaxText: 4096})
			if err == nil && len(res.Text) > 4096 {
				t.Fatalf("%s: %d bytes of text over the cap", n, len(res.Text))
			}
		}
	})
}

// BenchmarkText reports extraction throughput per format (MB/s of input).
func BenchmarkText(b *testing.B) {
	for _, f := range files(b) {
		// The text-like formats grown to about 1 MB; the others as they
		// are (their cost is mostly the fixed unpacking).
		data := f.data
		switch f.format {
		case "text", "markdown", "csv", "html":
			data = bytes.Repeat(f.data, (1<<20)/len(f.data))
		case "pdf":
			data = pdfWith(b, 200, "The "+phrase+" was agreed.")
		}
		b.Run(f.format, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := extract.Text(context.Background(), f.name, f.contentType, bytes.NewReader(data), extract.Options{MaxText: 64 << 20}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// scanPDF is a PDF of about 10 MB as they usually come: a few pages of
// text and a large scanned image (noise, which does not compress), with
// the phrase on a text page.
func scanPDF(b *testing.B) []byte {
	b.Helper()
	const side = 1900 // 1900×1900 RGB noise: 10.8 MB of pixels
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff
	}
	var pngBuf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(io.Writer(&pngBuf), img); err != nil {
		b.Fatal(err)
	}
	p := fpdf.New("P", "mm", "A4", "")
	p.SetFont("Helvetica", "", 11)
	for i := range 20 {
		p.AddPage()
		for j := range 40 {
			text := fmt.Sprintf("Page %d line %d: the inspection report lists findings and follow-ups.", i+1, j+1)
			if i == 10 && j == 20 {
				text = "The " + phrase + " was agreed."
			}
			p.CellFormat(0, 6, text, "", 1, "L", false, 0, "")
		}
	}
	p.AddPage()
	p.RegisterImageOptionsReader("scan", fpdf.ImageOptions{ImageType: "PNG"}, &pngBuf)
	p.ImageOptions("scan", 10, 10, 190, 190, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	var out bytes.Buffer
	if err := p.Output(&out); err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// BenchmarkPDF10MB reports the time and the peak memory (heap and
// stacks above the baseline, sampled every millisecond, as peak-MB) of
// extracting a 10 MB PDF's text.
//
// "scan" is scanPDF; "text" is 9.4 MB of text pages (pdfWith, about 14,000
// pages), the worst case for the PDF reader, which parses every page's
// content stream.
// "all" reads every page (MaxText lifted), "default" stops at the default
// 500 KB of text, as the sync does.
func BenchmarkPDF10MB(b *testing.B) {
	all := extract.Options{Timeout: 5 * time.Minute, MaxBytes: 20 << 20, MaxText: 64 << 20}
	def := extract.Options{MaxBytes: 20 << 20}
	scan := scanPDF(b)
	text := pdfWith(b, 14500, "The "+phrase+" was agreed.")
	b.Run("scan", func(b *testing.B) { benchPDF(b, scan, def) })
	b.Run("text/all", func(b *testing.B) { benchPDF(b, text, all) })
	b.Run("text/default", func(b *testing.B) { benchPDF(b, text, def) })
}

func benchPDF(b *testing.B, data []byte, opts extract.Options) {
	b.Logf("PDF of %.1f MB", float64(len(data))/(1<<20))
	b.SetBytes(int64(len(data)))
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak uint64
	for b.Loop() {
		runtime.GC()
		base := read()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var top uint64
		wg.Go(func() {
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					top = max(top, read())
				}
			}
		})
		res, err := extract.Text(context.Background(), "inspection.pdf", "application/pdf", bytes.NewReader(data), opts)
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		if !strings.Contains(res.Text, phrase) && !res.Truncated {
			b.Fatal("phrase not found")
		}
		if top > base {
			peak = max(peak, top-base)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
}
