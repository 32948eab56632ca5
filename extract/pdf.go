package extract

import (
	"bytes"
	"fmt"

	"github.com/ledongthuc/pdf"
)

// readPDF keeps the text of every page, page by page, so a cancelled or
// timed-out extraction stops at the next page. The PDF reader was chosen
// by measurement (a 200-page generated PDF, 135 KB: github.com/ledongthuc/pdf
// read it in 111 ms with its words intact; rsc.io/pdf took 233 ms and ran
// words together); a damaged file can make it panic, which is the file's
// fault, reported as ErrMalformed.
func readPDF(w *textWriter, data []byte, _ Options) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: the PDF reader gave up: %v", ErrMalformed, p)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	fonts := map[string]*pdf.Font{}
	i := 0
	return eachPage(w, r.Trailer().Key("Root").Key("Pages"), 0, func(p pdf.Page) error {
		i++
		for _, name := range p.Fonts() {
			if _, ok := fonts[name]; !ok {
				f := p.Font(name)
				fonts[name] = &f
			}
		}
		text, err := p.GetPlainText(fonts)
		if err != nil {
			return fmt.Errorf("%w: page %d: %w", ErrMalformed, i, err)
		}
		return w.write("\n", text)
	})
}

// maxPageDepth bounds the page tree's depth: real trees are a few levels
// deep, and a cycle in a damaged file must not recurse forever.
const maxPageDepth = 64

// eachPage calls fn with the pages under node in document order, walking
// the page tree once. The reader's Page(i) walks it from the root for
// every page, resolving each kid again: quadratic in the page count (a
// 14,500-page PDF took over five minutes that way).
func eachPage(w *textWriter, node pdf.Value, depth int, fn func(pdf.Page) error) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	switch node.Key("Type").Name() {
	case "Page":
		return fn(pdf.Page{V: node})
	case "Pages":
		if depth >= maxPageDepth {
			return fmt.Errorf("%w: page tree deeper than %d levels", ErrMalformed, maxPageDepth)
		}
		kids := node.Key("Kids")
		for i := 0; i < kids.Len(); i++ {
			if err := eachPage(w, kids.Index(i), depth+1, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
