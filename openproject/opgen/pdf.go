package opgen

import (
	"bytes"
	"strconv"
	"time"
)

// pdfLinesPerPage is how many 11-point lines fit an A4 page between the
// margins.
const pdfLinesPerPage = 52

// pdfDocument writes a minimal PDF 1.4 by hand (the binary links no PDF
// library): a catalog, a page tree, an A4 page per pdfLinesPerPage lines,
// each with the Helvetica font (WinAnsiEncoding) as resource F1 and a
// content stream that shows the lines with Tj, one T* between lines, the
// title first in a larger size; an information dictionary; and the
// cross-reference table with the byte offset of every object.
func pdfDocument(title, author string, date time.Time, lines []string) []byte {
	var pages [][]string
	for len(lines) > 0 {
		n := min(len(lines), pdfLinesPerPage)
		pages = append(pages, lines[:n])
		lines = lines[n:]
	}
	if len(pages) == 0 {
		pages = [][]string{nil}
	}
	// Objects: 1 catalog, 2 page tree, 3 font, 4 information, then a
	// page and its content stream for every page.
	var b bytes.Buffer
	offsets := []int{0} // object 0 is the head of the free list
	begin := func() int {
		offsets = append(offsets, b.Len())
		n := len(offsets) - 1
		b.WriteString(strconv.Itoa(n) + " 0 obj\n")
		return n
	}
	end := func() { b.WriteString("endobj\n") }

	// The comment of bytes above 127 marks the file as binary.
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	begin()
	b.WriteString("<< /Type /Catalog /Pages 2 0 R >>\n")
	end()
	begin()
	b.WriteString("<< /Type /Pages /Kids [")
	for i := range pages {
		b.WriteString(" " + strconv.Itoa(5+2*i) + " 0 R")
	}
	b.WriteString(" ] /Count " + strconv.Itoa(len(pages)) + " >>\n")
	end()
	begin()
	b.WriteString("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>\n")
	end()
	begin()
	b.WriteString("<< /Title " + pdfString(title) + " /Author " + pdfString(author) +
		" /Producer (opsearch opgen) /CreationDate (D:" + date.UTC().Format("20060102150405") + "Z) >>\n")
	end()
	for i, page := range pages {
		begin()
		b.WriteString("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents " +
			strconv.Itoa(6+2*i) + " 0 R >>\n")
		end()
		var s bytes.Buffer
		s.WriteString("BT\n/F1 11 Tf\n14 TL\n50 792 Td\n")
		if i == 0 {
			s.WriteString("/F1 16 Tf\n" + pdfString(title) + " Tj\nT*\nT*\n/F1 11 Tf\n")
		}
		for _, line := range page {
			s.WriteString(pdfString(line) + " Tj\nT*\n")
		}
		s.WriteString("ET\n")
		begin()
		b.WriteString("<< /Length " + strconv.Itoa(s.Len()) + " >>\nstream\n")
		b.Write(s.Bytes())
		b.WriteString("endstream\n")
		end()
	}
	xref := b.Len()
	b.WriteString("xref\n0 " + strconv.Itoa(len(offsets)) + "\n0000000000 65535 f \n")
	for _, off := range offsets[1:] {
		b.WriteString(pad10(off) + " 00000 n \n")
	}
	b.WriteString("trailer\n<< /Size " + strconv.Itoa(len(offsets)) + " /Root 1 0 R /Info 4 0 R >>\nstartxref\n" +
		strconv.Itoa(xref) + "\n%%EOF\n")
	return b.Bytes()
}

// pad10 writes n in ten digits, as cross-reference entries do.
func pad10(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 10 {
		s = "0" + s
	}
	return s
}

// pdfString writes s as a PDF literal string in WinAnsiEncoding:
// parentheses and backslashes escaped, characters outside the encoding
// as "?".
func pdfString(s string) string {
	b := []byte{'('}
	for _, r := range s {
		c, ok := winAnsi(r)
		if !ok {
			c = '?'
		}
		switch c {
		case '(', ')', '\\':
			b = append(b, '\\', c)
		case '\r', '\n':
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return string(append(b, ')'))
}

// winAnsi maps a rune to its WinAnsiEncoding byte.
func winAnsi(r rune) (byte, bool) {
	switch {
	case r < 0x80 || (r >= 0xa0 && r <= 0xff):
		return byte(r), true
	}
	switch r {
	case '€':
		return 0x80, true
	case '‚':
		return 0x82, true
	case '„':
		return 0x84, true
	case '…':
		return 0x85, true
	case 'Š':
		return 0x8a, true
	case 'Œ':
		return 0x8c, true
	case 'Ž':
		return 0x8e, true
	case '‘':
		return 0x91, true
	case '’':
		return 0x92, true
	case '“':
		return 0x93, true
	case '”':
		return 0x94, true
	case '•':
		return 0x95, true
	case '–':
		return 0x96, true
	case '—':
		return 0x97, true
	case 'š':
		return 0x9a, true
	case 'œ':
		return 0x9c, true
	case 'ž':
		return 0x9e, true
	case 'Ÿ':
		return 0x9f, true
	}
	return 0, false
}
