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
	for i := 1; i <= r.NumPage(); i++ {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
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
		if err := w.write("\n", text); err != nil {
			return err
		}
	}
	return nil
}
