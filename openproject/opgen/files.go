package opgen

import (
	"github.com/opsearch/opsearch/openproject/optest"
)

// FileKind is the kind of a generated attachment's file. Every generated
// data set of some size holds files of every kind; see AttachmentKind.
type FileKind string

// The kinds of generated files.
const (
	FileText      FileKind = "text"     // .txt, text/plain
	FileMarkdown  FileKind = "markdown" // .md
	FileCSV       FileKind = "csv"
	FileJSON      FileKind = "json"
	FileHTML      FileKind = "html"
	FileEML       FileKind = "eml"  // an RFC 822 e-mail, multipart, quoted-printable text
	FileDOCX      FileKind = "docx" // zipped XML: word/document.xml
	FileXLSX      FileKind = "xlsx" // zipped XML: xl/sharedStrings.xml
	FileODT       FileKind = "odt"  // zipped XML: content.xml
	FilePDF       FileKind = "pdf"  // PDF 1.4, Helvetica text
	FilePNG       FileKind = "png"  // a small chart: binary, no text
	FileCorrupt   FileKind = "corrupt"
	FileOversized FileKind = "oversized"
)

// Extractable reports whether a file of the kind holds text an extractor
// reads, its phrase among it (AttachmentPhrase). The PNG holds no text,
// the corrupt file is not what its name says (a .pdf that is no PDF), and
// the oversized one (a CSV export over 11 MB) is beyond the 10 MB an
// extractor reads.
func (k FileKind) Extractable() bool {
	switch k {
	case FilePNG, FileCorrupt, FileOversized, "":
		return false
	}
	return true
}

// fileKinds are the kinds attachments cycle through, in order. The
// corrupt and the oversized file are placed apart (genAttachments).
var fileKinds = []FileKind{FileText, FileMarkdown, FileCSV, FileJSON, FileHTML, FileEML, FileDOCX, FileXLSX, FileODT, FilePDF, FilePNG}

// fileType is how files of a kind are named and typed.
type fileType struct {
	kind        FileKind
	contentType string
	names       []string
}

// fileTypes names the files of each kind. A name belongs to one kind
// only, so that AttachmentKind can tell the kind by the name.
var fileTypes = []fileType{
	{FileText, "text/plain", []string{"notes.txt", "readme.txt", "todo.txt", "call-notes.txt"}},
	{FileMarkdown, "text/markdown", []string{"decision-log.md", "checklist.md", "summary.md", "handover.md"}},
	{FileCSV, "text/csv", []string{"export.csv", "budget.csv", "timesheet.csv", "inventory.csv"}},
	{FileJSON, "application/json", []string{"config.json", "api-response.json", "settings.json", "payload.json"}},
	{FileHTML, "text/html", []string{"report.html", "newsletter.html", "page-export.html", "status-report.html"}},
	{FileEML, "message/rfc822", []string{"customer-email.eml", "fwd-question.eml", "approval.eml", "escalation.eml"}},
	{FileDOCX, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", []string{"specification.docx", "minutes.docx", "proposal.docx", "requirements.docx"}},
	{FileXLSX, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", []string{"budget.xlsx", "risk-register.xlsx", "capacity-plan.xlsx", "test-matrix.xlsx"}},
	{FileODT, "application/vnd.oasis.opendocument.text", []string{"concept.odt", "handbook.odt", "protocol.odt", "offer.odt"}},
	{FilePDF, "application/pdf", []string{"contract-draft.pdf", "slides.pdf", "invoice.pdf", "audit-report.pdf"}},
	{FilePNG, "image/png", []string{"screenshot.png", "architecture-diagram.png", "mockup.png", "chart.png"}},
	{FileCorrupt, "application/pdf", []string{"scanned-signature.pdf"}},
	{FileOversized, "text/csv", []string{"full-audit-log-export.csv"}},
}

// typeOf returns the naming and typing of a kind.
func typeOf(k FileKind) fileType {
	for _, t := range fileTypes {
		if t.kind == k {
			return t
		}
	}
	return fileType{kind: k, contentType: "application/octet-stream", names: []string{"file.bin"}}
}

// AttachmentKind tells the kind of a generated attachment by its file
// name; "" for a name the generator does not use.
func AttachmentKind(a optest.Attachment) FileKind {
	for _, t := range fileTypes {
		for _, n := range t.names {
			if n == a.FileName {
				return t.kind
			}
		}
	}
	return ""
}

// Words of the attachment phrases: found in no other generated text
// (TestAttachmentPhrasesAreDistinctive) and, when this was written, in no
// test of the repository.
var (
	phraseFirst = []string{"quizzical", "velvety", "lopsided", "luminous", "gossamer", "burnished", "crinkled", "dappled",
		"frosted", "gilded", "hushed", "jaunty", "knobbly", "lacquered", "mottled", "nimble", "opaline", "pearly", "quilted",
		"rippled", "speckled", "tawny", "umber", "varnished", "wistful", "zesty", "brambly", "cobbled", "dusky", "embossed",
		"feathery", "glazed", "hammered", "inky", "jagged", "kindled", "lanky", "marbled", "nutty", "oaken", "peppery",
		"quaint", "rustic", "silken", "thorny", "unfurled", "vaulted", "woolly", "yawning", "zigzag", "briny", "chalky",
		"downy", "earthen", "flinty", "grainy", "honeyed", "jadeite", "knotted", "leafy", "mossy", "nubby", "plush", "tufted"}
	phraseSecond = []string{"marmalade", "wallaby", "accordion", "teapot", "lantern", "pretzel", "harpsichord", "gazebo",
		"porcupine", "toboggan", "kaleidoscope", "snorkel", "trombone", "zither", "parsnip", "armadillo", "bagpipe",
		"calliope", "dumpling", "eggplant", "flamingo", "gondola", "hedgehog", "igloo", "jellyfish", "kumquat", "lobster",
		"mandolin", "nautilus", "ocarina", "gibbon", "quince", "rhubarb", "saxophone", "tamarind", "ukulele", "vermouth",
		"weasel", "xylophone", "yak", "zucchini", "abacus", "banjo", "cuttlefish", "dromedary", "espresso", "fiddle",
		"gherkin", "hippo", "iguana", "jackal", "koala", "llama", "macaron", "nutmeg", "otter", "pistachio", "quagga",
		"raccoon", "sardine", "tortoise", "urchin", "vulture", "waffle"}
	phraseThird = []string{"almanac", "sonnet", "tapestry", "lightship", "orchard", "quarry", "citadel", "pagoda",
		"windmill", "observatory", "aqueduct", "obelisk", "labyrinth", "monastery", "amphitheatre", "belfry", "catacomb",
		"drawbridge", "escarpment", "fjord", "grotto", "hacienda", "isthmus", "jetty", "turret", "lagoon", "minaret", "nave",
		"outcrop", "parapet", "quayside", "rampart", "steeple", "terrace", "undercroft", "viaduct", "watchtower", "ziggurat",
		"archipelago", "barbican", "chapel", "dune", "estuary", "foundry", "glacier", "harbour", "inlet", "junction", "kiln",
		"lookout", "meadow", "nook", "outpost", "pavilion", "reef", "spire", "tundra", "uplands", "vineyard", "wharf",
		"causeway", "dovecote", "gatehouse", "rotunda"}
)

// AttachmentPhrase returns the phrase that the content of generated
// attachment id holds: three words found in no other generated text, a
// different combination for every id up to 262,144. Every extractable
// file (FileKind.Extractable) holds it in its text, and the oversized one
// in its bytes; descriptions and file names never do, so a search that
// finds it has read the file.
func AttachmentPhrase(id int64) string {
	n := uint64(len(phraseFirst))
	x := uint64(id-1) % (n * n * n)
	// Mixed radix with each digit offset by the ones before, so that
	// neighbouring ids differ in every word.
	i := x % n
	j := (x/n + i) % n
	k := (x/(n*n) + i + j) % n
	return phraseFirst[i] + " " + phraseSecond[j] + " " + phraseThird[k]
}
