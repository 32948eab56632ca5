package extract

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"

	"golang.org/x/net/html"
)

// reader returns the function that reads format's text, nil for one this
// package does not read.
func reader(format string) func(w *textWriter, data []byte, opts Options) error {
	switch format {
	case "text", "markdown":
		return readPlain
	case "csv":
		return readCSV
	case "json":
		return readJSON
	case "html":
		return readHTML
	case "eml":
		return readEML
	case "docx":
		return readDOCX
	case "xlsx":
		return readXLSX
	case "odt":
		return readODT
	case "pdf":
		return readPDF
	}
	return nil
}

func readCSV(w *textWriter, data []byte, _ Options) error {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	r.FieldsPerRecord, r.LazyQuotes, r.ReuseRecord = -1, true, true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if err := w.write("\n", strings.Join(rec, " ")); err != nil {
			return err
		}
	}
}

// readJSON keeps the strings of a JSON document, keys and values: what a
// person would search for in it.
func readJSON(w *textWriter, data []byte, _ Options) error {
	// The tokenizer ends a cut-off document with io.EOF, as a whole one.
	if !json.Valid(data) {
		return fmt.Errorf("%w: not valid JSON", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if s, ok := tok.(string); ok {
			if err := w.write(" ", s); err != nil {
				return err
			}
		}
	}
}

// blockElements end a line of text.
func blockElement(tag string) bool {
	switch tag {
	case "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section", "article", "pre", "blockquote", "title":
		return true
	}
	return false
}

// readHTML keeps the text a browser shows: not scripts, styles or
// templates, a line per block element.
func readHTML(w *textWriter, data []byte, _ Options) error {
	return htmlText(w, bytes.NewReader(data))
}

func htmlText(w *textWriter, r io.Reader) error {
	z := html.NewTokenizer(r)
	skip := 0
	sep := " "
	for {
		switch z.Next() {
		case html.ErrorToken:
			if errors.Is(z.Err(), io.EOF) {
				return nil
			}
			return fmt.Errorf("%w: %w", ErrMalformed, z.Err())
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch tag := string(name); {
			case tag == "script" || tag == "style" || tag == "template" || tag == "noscript":
				skip++
			case blockElement(tag):
				sep = "\n"
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch tag := string(name); {
			case (tag == "script" || tag == "style" || tag == "template" || tag == "noscript") && skip > 0:
				skip--
			case blockElement(tag):
				sep = "\n"
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if err := w.write(sep, string(z.Text())); err != nil {
				return err
			}
			sep = " "
		}
	}
}

// readEML keeps an e-mail's subject, sender and recipients, and its text:
// the plain part where there is one, else the HTML part's text;
// attachments inside it are not read.
func readEML(w *textWriter, data []byte, opts Options) error {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	dec := new(mime.WordDecoder)
	for _, h := range []string{"Subject", "From", "To", "Cc", "Date"} {
		v := msg.Header.Get(h)
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		if err := w.write("\n", v); err != nil {
			return err
		}
	}
	return mailBody(w, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, 0, opts)
}

// mailBody writes one MIME entity's text; depth bounds nested multiparts.
func mailBody(w *textWriter, contentType, encoding string, body io.Reader, depth int, opts Options) error {
	if depth > 8 {
		return fmt.Errorf("%w: MIME parts nested too deep", ErrMalformed)
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if contentType == "" || err != nil {
		mt = "text/plain"
	}
	body = decodeTransfer(body, encoding)
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		var plain, htmlPart []byte
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("%w: %w", ErrMalformed, err)
			}
			pt := p.Header.Get("Content-Type")
			if strings.HasPrefix(pt, "multipart/") {
				if err := mailBody(w, pt, p.Header.Get("Content-Transfer-Encoding"), p, depth+1, opts); err != nil {
					return err
				}
				continue
			}
			if disp, _, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition")); disp == "attachment" {
				continue
			}
			b, err := io.ReadAll(io.LimitReader(decodeTransfer(p, p.Header.Get("Content-Transfer-Encoding")), opts.MaxBytes))
			if err != nil {
				return fmt.Errorf("%w: %w", ErrMalformed, err)
			}
			switch ptm, _, _ := mime.ParseMediaType(pt); {
			case (ptm == "text/plain" || pt == "") && plain == nil:
				plain = b
			case ptm == "text/html" && htmlPart == nil:
				htmlPart = b
			}
		}
		switch {
		case plain != nil:
			return readPlain(w, plain, opts)
		case htmlPart != nil:
			return htmlText(w, bytes.NewReader(htmlPart))
		}
		return nil
	}
	switch mt {
	case "text/html":
		return htmlText(w, body)
	case "text/plain":
		b, err := io.ReadAll(io.LimitReader(body, opts.MaxBytes))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		return readPlain(w, b, opts)
	}
	return nil
}

func decodeTransfer(r io.Reader, encoding string) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	case "base64":
		return base64Reader(r)
	}
	return r
}

// zipEntry opens the archive entry name, bounded by opts.MaxBytes
// unpacked (a small archive may claim, or hold, gigabytes).
func zipEntry(data []byte, name string, opts Options) (io.Reader, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: not a zip archive: %w", ErrMalformed, err)
	}
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		if f.UncompressedSize64 > uint64(opts.MaxBytes) {
			return nil, fmt.Errorf("%w: %s unpacks to %d bytes", ErrTooLarge, name, f.UncompressedSize64)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err)
		}
		return &limitedEntry{r: rc, left: opts.MaxBytes, name: name}, nil
	}
	return nil, fmt.Errorf("%w: no %s in the archive", ErrMalformed, name)
}

// limitedEntry fails, instead of reading on, once an entry unpacks to
// more than it said (or than the budget allows).
type limitedEntry struct {
	r    io.ReadCloser
	left int64
	name string
}

func (l *limitedEntry) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("%w: %s unpacks to more than the budget", ErrTooLarge, l.name)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// xmlText writes the character data of the elements named text (local
// names), a separator at the end of each element named para.
func xmlText(w *textWriter, r io.Reader, text, para map[string]bool) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	in := 0
	var buf strings.Builder
	flush := func(sep string) error {
		s := buf.String()
		buf.Reset()
		return w.write(sep, s)
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return flush("\n")
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return err
			}
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if text[t.Name.Local] {
				in++
			}
		case xml.EndElement:
			if text[t.Name.Local] && in > 0 {
				in--
			}
			if para[t.Name.Local] {
				if err := flush("\n"); err != nil {
					return err
				}
			}
		case xml.CharData:
			if in > 0 {
				buf.Write(t)
			}
		}
	}
}

func readDOCX(w *textWriter, data []byte, opts Options) error {
	r, err := zipEntry(data, "word/document.xml", opts)
	if err != nil {
		return err
	}
	return xmlText(w, r, map[string]bool{"t": true}, map[string]bool{"p": true, "tr": true})
}

// readXLSX keeps a workbook's shared strings: the text of its cells
// (numbers are left out: they are rarely what a search is for).
func readXLSX(w *textWriter, data []byte, opts Options) error {
	r, err := zipEntry(data, "xl/sharedStrings.xml", opts)
	if errors.Is(err, ErrMalformed) && strings.Contains(err.Error(), "no xl/sharedStrings.xml") {
		return nil // a workbook of numbers only
	}
	if err != nil {
		return err
	}
	return xmlText(w, r, map[string]bool{"t": true}, map[string]bool{"si": true})
}

func readODT(w *textWriter, data []byte, opts Options) error {
	r, err := zipEntry(data, "content.xml", opts)
	if err != nil {
		return err
	}
	return xmlText(w, r, map[string]bool{"p": true, "h": true, "span": true}, map[string]bool{"p": true, "h": true})
}

// base64Reader decodes a base64 body, ignoring the line breaks mail
// wraps it in.
func base64Reader(r io.Reader) io.Reader {
	return base64.NewDecoder(base64.StdEncoding, &stripNewlines{r: r})
}

type stripNewlines struct{ r io.Reader }

func (s *stripNewlines) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}
