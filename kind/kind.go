package kind

// Kind names a kind of entity. Its value is the wire spelling: singular
// and snake_case. (OpenProject's API paths use the plural,
// /api/v3/work_packages; that is package openproject's business.)
type Kind string

// The kinds.
const (
	Project     Kind = "project"
	WorkPackage Kind = "work_package"
	// Activity is a work package's activity list: its comments and change
	// journals. It belongs to its work package and shares its id.
	Activity Kind = "activity"
	WikiPage Kind = "wiki_page"
	// Meeting carries its agenda items and their outcomes.
	Meeting Kind = "meeting"
	// Attachment is a file attached to a work package, wiki page or
	// meeting (its container), with the text extracted from it.
	Attachment Kind = "attachment"
)

// All returns every kind in a fixed order: projects first, since the other
// kinds refer to them, then work packages and their activities, wiki
// pages, meetings, and last the attachments of the three before. It is
// the order a sync crawls and a status lists them. The slice is new on
// each call.
func All() []Kind { return []Kind{Project, WorkPackage, Activity, WikiPage, Meeting, Attachment} }

// Valid reports whether k is one of All.
func (k Kind) Valid() bool {
	switch k {
	case Project, WorkPackage, Activity, WikiPage, Meeting, Attachment:
		return true
	}
	return false
}

// String returns k's wire spelling.
func (k Kind) String() string { return string(k) }

// aliases are the plural spellings that versions before one kind type
// printed (sync status and sync report keys, metrics labels) and that
// inputs therefore keep accepting.
var aliases = map[string]Kind{
	"projects":      Project,
	"work_packages": WorkPackage,
	"activities":    Activity,
	"wiki_pages":    WikiPage,
	"meetings":      Meeting,
	"attachments":   Attachment,
}

// Parse returns the kind s names, in the singular ("work_package") or in
// the plural earlier versions printed ("work_packages"); ok is false for
// anything else. It does not trim or fold case.
func Parse(s string) (k Kind, ok bool) {
	if k := Kind(s); k.Valid() {
		return k, true
	}
	k, ok = aliases[s]
	return k, ok
}

// UnmarshalText decodes a kind from JSON (a value or a map key), mapping
// a plural alias to its kind, so an answer from a process of an earlier
// version decodes to the same kinds. Any other text is kept as it is, for
// the caller to check with Valid: decoding never fails on a kind.
func (k *Kind) UnmarshalText(b []byte) error {
	if p, ok := Parse(string(b)); ok {
		*k = p
		return nil
	}
	*k = Kind(b)
	return nil
}

// Container reports whether k's entities can have attachments.
func (k Kind) Container() bool { return k == WorkPackage || k == WikiPage || k == Meeting }
