package openproject

import (
	"cmp"
	"strings"
	"time"

	"github.com/opsearch/opsearch/kind"
)

// The store encodes work packages and activity lists with MessagePack
// code generated from these types (model_msgp.go: run go generate after
// changing a stored field; TestStoredFieldsEncode fails until then). The
// json tags name the fields, as they do for JSON and for the store's
// CBOR, and times decode in UTC (the store compares them with Equal). A
// damaged value claiming more elements than CBOR's decoder accepts is
// refused before anything is allocated for them.
//
//go:generate go run github.com/tinylib/msgp@v1.6.5 -file model.go -o model_msgp.go -tests=false -io=false
//msgp:tag json
//msgp:timezone utc
//msgp:clearomitted
//msgp:limit arrays:1048576 maps:1048576
//msgp:ignore Root User Project Status Type Priority CustomField Version Attachment WikiPage Meeting AgendaItem Outcome Query QueryFilter TimeEntry WikiPageLink Relation

// Ref is a link to another resource, normalized from a HAL link object.
// ID is parsed from the href's last path segment; it is 0 when the href is
// null, points at an undisclosed resource, or does not end in a number.
type Ref struct {
	ID    int64  `json:"id,omitempty"`
	Href  string `json:"href,omitempty"`
	Title string `json:"title,omitempty"`
}

// IsZero reports whether the link references nothing (href null or absent).
func (r Ref) IsZero() bool { return r.Href == "" }

// Undisclosed reports whether the server hid the linked resource from the
// caller (the urn:openproject-org:api:v3:undisclosed href).
func (r Ref) Undisclosed() bool { return r.Href == UndisclosedHref }

// UndisclosedHref is the href OpenProject uses for a linked resource the
// caller may not see.
const UndisclosedHref = "urn:openproject-org:api:v3:undisclosed"

// Root is the API root (GET /api/v3).
type Root struct {
	InstanceName string `json:"instanceName,omitempty"`
	// CoreVersion is only rendered for administrators.
	CoreVersion string `json:"coreVersion,omitempty"`
	UserID      int64  `json:"userId,omitempty"`
}

// User is a principal, normalized. Email, login and some other fields are
// only visible to the user themself and to administrators.
type User struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Login     string    `json:"login,omitempty"`
	FirstName string    `json:"firstName,omitempty"`
	LastName  string    `json:"lastName,omitempty"`
	Email     string    `json:"email,omitempty"`
	Admin     bool      `json:"admin,omitempty"`
	Status    string    `json:"status,omitempty"`
	Language  string    `json:"language,omitempty"`
	Avatar    string    `json:"avatar,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// Project is an OpenProject project (or workspace).
type Project struct {
	ID                int64     `json:"id"`
	Identifier        string    `json:"identifier"`
	Name              string    `json:"name"`
	Active            bool      `json:"active"`
	Public            bool      `json:"public"`
	Description       string    `json:"description,omitempty"`
	StatusExplanation string    `json:"statusExplanation,omitempty"`
	Parent            *Ref      `json:"parent,omitempty"`
	CreatedAt         time.Time `json:"createdAt,omitzero"`
	UpdatedAt         time.Time `json:"updatedAt,omitzero"`
}

// Status is a work package status.
type Status struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	IsClosed  bool   `json:"isClosed"`
	IsDefault bool   `json:"isDefault,omitempty"`
	Color     string `json:"color,omitempty"`
	Position  int    `json:"position,omitempty"`
}

// Type is a work package type (Task, Bug, ...).
type Type struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Color       string `json:"color,omitempty"`
	Position    int    `json:"position,omitempty"`
	IsDefault   bool   `json:"isDefault,omitempty"`
	IsMilestone bool   `json:"isMilestone,omitempty"`
}

// Priority is a work package priority.
type Priority struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Position  int    `json:"position,omitempty"`
	IsDefault bool   `json:"isDefault,omitempty"`
	IsActive  bool   `json:"isActive"`
}

// WorkPackage is a work package, normalized from HAL.
type WorkPackage struct {
	ID int64 `json:"id"`
	// DisplayID is the project-based id ("PROJ-12") newer servers render;
	// empty when the server has none. OpenProject's source renders it as
	// the property displayId (WorkPackageRepresenter, with semantic
	// identifiers, 17.9+); which release first sends it was not
	// confirmed, so it is decoded leniently (string or number) when
	// present, and older servers simply lack it.
	DisplayID   string `json:"displayId,omitempty"`
	LockVersion int    `json:"lockVersion"`
	Subject     string `json:"subject"`
	Description string `json:"description,omitempty"`

	Project Ref `json:"project"`
	Type    Ref `json:"type"`
	Status  Ref `json:"status"`
	// Closed is true when the status is a closed one. The client fills it
	// from the embedded status or, failing that, from the status list.
	Closed   bool `json:"closed"`
	Priority Ref  `json:"priority"`

	Author      Ref  `json:"author"`
	Assignee    *Ref `json:"assignee,omitempty"`
	Responsible *Ref `json:"responsible,omitempty"`
	Parent      *Ref `json:"parent,omitempty"`
	// Version is the version the work package is planned for: the
	// version link, or on 17.8+ servers, which replace it with the
	// multi-valued targetVersions, the first of those.
	Version *Ref `json:"version,omitempty"`

	StartDate      string `json:"startDate,omitempty"` // YYYY-MM-DD
	DueDate        string `json:"dueDate,omitempty"`   // YYYY-MM-DD
	PercentageDone *int   `json:"percentageDone,omitempty"`

	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`

	// CustomFields are the customFieldN properties and links, in key
	// order. Only Client.WorkPackage fills them (a list decodes no custom
	// fields: a crawl has no use for them), and they are not encoded, so
	// the stored work package, which the index is built from, is the
	// same however it was read.
	CustomFields []CustomField `json:"-"`
}

// CustomField is one custom field value of a work package. Name is empty
// until the caller fills it from the work package's schema
// (Client.WorkPackageSchemaNames): the work package itself carries only
// the key.
type CustomField struct {
	// Key is the property name, "customField12".
	Key  string `json:"key"`
	Name string `json:"name,omitempty"`
	// Value is the value as text: a formattable's raw text, a link's
	// title (its href when untitled), a list's items joined by ", ".
	Value string `json:"value"`
}

// Version is a version (a milestone or release that work packages are
// planned for).
type Version struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Status is open, locked or closed.
	Status string `json:"status"`
	// Sharing is none, descendants, hierarchy, tree or system: which
	// projects besides the defining one may use the version.
	Sharing   string `json:"sharing,omitempty"`
	StartDate string `json:"startDate,omitempty"` // YYYY-MM-DD
	EndDate   string `json:"endDate,omitempty"`   // YYYY-MM-DD
	// Project is the defining project; zero when the server hid it from
	// the caller.
	Project   Ref       `json:"definingProject"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// Activity is one journal entry of a work package: a comment, a change, or
// both.
type Activity struct {
	ID int64 `json:"id"`
	// Kind is the HAL _type: "Activity::Comment" or "Activity".
	Kind string `json:"kind"`
	// Version is the journal's sequence number, not a lock.
	Version       int       `json:"version"`
	Comment       string    `json:"comment,omitempty"`
	Details       []string  `json:"details,omitempty"`
	User          Ref       `json:"user"`
	WorkPackageID int64     `json:"workPackageId"`
	Internal      bool      `json:"internal,omitempty"`
	CreatedAt     time.Time `json:"createdAt,omitzero"`
	UpdatedAt     time.Time `json:"updatedAt,omitzero"`
}

// IsComment reports whether the activity carries a non-empty comment.
func (a Activity) IsComment() bool { return trimmedLen(a.Comment) > 0 }

// ActivityList is a work package's activities as the store encodes them
// (MessagePack, see model_msgp.go).
type ActivityList []Activity

// Attachment is attachment metadata (never the content).
type Attachment struct {
	ID          int64  `json:"id"`
	FileName    string `json:"fileName"`
	FileSize    int64  `json:"fileSize"`
	ContentType string `json:"contentType,omitempty"`
	Description string `json:"description,omitempty"`
	DownloadURL string `json:"downloadUrl,omitempty"`
	// Digest is the content's checksum as the server states it
	// ("md5:<hex>"); attachments are immutable, so an unchanged digest
	// means unchanged content.
	Digest    string    `json:"digest,omitempty"`
	Container Ref       `json:"container"`
	Author    Ref       `json:"author"`
	CreatedAt time.Time `json:"createdAt,omitzero"`

	// The fields below are not the API's: a sync fills them in.

	// Project is the container's project: an attachment is visible to
	// whoever sees its container.
	Project Ref `json:"project,omitzero"`
	// Text is the text extracted from the file, TextFormat what it was
	// read as (package extract), TextTruncated whether it was cut at the
	// sync's limit.
	Text          string `json:"text,omitempty"`
	TextFormat    string `json:"textFormat,omitempty"`
	TextTruncated bool   `json:"textTruncated,omitempty"`
	// Skipped says why the file's text is not indexed (too large, not a
	// format that holds text, malformed, ...): the attachment is then
	// found by its name and description only.
	Skipped string `json:"skipped,omitempty"`
}

// ContainerKind is the kind of entity the attachment belongs to, read
// from its container link ("" for a container opsearch does not index,
// such as a forum post).
func (a Attachment) ContainerKind() kind.Kind {
	for prefix, k := range map[string]kind.Kind{
		"/api/v3/work_packages/": kind.WorkPackage, "/api/v3/wiki_pages/": kind.WikiPage, "/api/v3/meetings/": kind.Meeting,
	} {
		if i := strings.Index(a.Container.Href, prefix); i >= 0 && a.Container.ID > 0 {
			return k
		}
	}
	return ""
}

// WikiPage is a wiki page. Servers of OpenProject 13-17 render only id,
// title and project; newer ones add text, slug and timestamps. HasText
// says which kind answered.
type WikiPage struct {
	ID          int64        `json:"id"`
	Title       string       `json:"title"`
	Slug        string       `json:"slug,omitempty"`
	Project     Ref          `json:"project"`
	Text        string       `json:"text,omitempty"`
	HasText     bool         `json:"hasText"`
	LockVersion int          `json:"lockVersion,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	CreatedAt   time.Time    `json:"createdAt,omitzero"`
	UpdatedAt   time.Time    `json:"updatedAt,omitzero"`
}

// Meeting is a meeting. AgendaItems is filled only when the caller fetched
// them (they come from a separate, unpaginated endpoint).
type Meeting struct {
	ID          int64     `json:"id"`
	Title       string    `json:"title"`
	Location    string    `json:"location,omitempty"`
	LockVersion int       `json:"lockVersion"`
	StartTime   time.Time `json:"startTime,omitzero"`
	EndTime     time.Time `json:"endTime,omitzero"`
	// Duration is the number the server sends: hours on current servers,
	// minutes on some older ones.
	Duration     float64      `json:"duration,omitempty"`
	Project      Ref          `json:"project"`
	Author       Ref          `json:"author"`
	Participants []Ref        `json:"participants,omitempty"`
	AgendaItems  []AgendaItem `json:"agendaItems,omitempty"`
	CreatedAt    time.Time    `json:"createdAt,omitzero"`
	UpdatedAt    time.Time    `json:"updatedAt,omitzero"`
}

// AgendaItem is one item on a meeting's agenda.
type AgendaItem struct {
	ID              int64     `json:"id"`
	MeetingID       int64     `json:"meetingId"`
	Title           string    `json:"title"`
	Notes           string    `json:"notes,omitempty"`
	Position        int       `json:"position"`
	DurationMinutes *int      `json:"durationInMinutes,omitempty"`
	ItemType        string    `json:"itemType"` // simple | work_package
	WorkPackage     *Ref      `json:"workPackage,omitempty"`
	Author          *Ref      `json:"author,omitempty"`
	Presenter       *Ref      `json:"presenter,omitempty"`
	Section         *Ref      `json:"section,omitempty"`
	Outcomes        []Outcome `json:"outcomes,omitempty"`
	LockVersion     int       `json:"lockVersion,omitempty"`
	CreatedAt       time.Time `json:"createdAt,omitzero"`
	UpdatedAt       time.Time `json:"updatedAt,omitzero"`
}

// Outcome is a recorded outcome (decision, result) of an agenda item.
type Outcome struct {
	ID    int64  `json:"id"`
	Notes string `json:"notes"`
	Kind  string `json:"kind,omitempty"`
}

// Query is a saved work package query (a "view").
type Query struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Project   *Ref      `json:"project,omitempty"`
	Public    bool      `json:"public"`
	Starred   bool      `json:"starred,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`

	// Filters and SortBy say what the query selects and in which order, in
	// the words the server shows people: display names and titles, not
	// the ids of the filter syntax.
	Filters []QueryFilter `json:"filters,omitempty"`
	SortBy  []string      `json:"sortBy,omitempty"` // e.g. "ID (Ascending)"
}

// QueryFilter is one filter of a saved query, as the server titles it.
type QueryFilter struct {
	// Name is the filter's display name ("Status", "Assignee").
	Name string `json:"name"`
	// Operator is the operator's title ("open", "is (OR)"); empty when
	// the server gave none.
	Operator string `json:"operator,omitempty"`
	// Values are the titles of the values that are resources ("Alice");
	// when none has a title, the literal values as text (a JSON string's
	// content, any other JSON value as written).
	Values []string `json:"values,omitempty"`
}

// TimeEntry is time logged by a user, on a work package or on a project.
type TimeEntry struct {
	ID int64 `json:"id"`
	// Hours is the logged time in hours; the API sends it as an ISO 8601
	// duration ("PT1H30M" is 1.5).
	Hours   float64 `json:"hours"`
	SpentOn string  `json:"spentOn,omitempty"` // YYYY-MM-DD
	// Comment is plain text (the API's comment format is "plain").
	Comment     string    `json:"comment,omitempty"`
	User        Ref       `json:"user"`
	WorkPackage *Ref      `json:"workPackage,omitempty"`
	Project     Ref       `json:"project"`
	Activity    *Ref      `json:"activity,omitempty"`
	CreatedAt   time.Time `json:"createdAt,omitzero"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
}

// WikiPageLink links a work package and a wiki page (only servers with
// /api/v3/wiki_page_links have them).
type WikiPageLink struct {
	ID          int64 `json:"id"`
	WorkPackage Ref   `json:"workPackage"`
	WikiPage    Ref   `json:"wikiPage"`
}

func trimmedLen(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r':
		default:
			n++
		}
	}
	return n
}

// Relation is a relation between two work packages. Type reads from From's
// side ("From blocks To") and ReverseType from To's ("To blocked by
// From"). The server stores a relation in one direction only: one created
// as "blocked" from A to B comes back as "blocks" from B to A.
type Relation struct {
	ID          int64  `json:"id"`
	Type        string `json:"type"`
	ReverseType string `json:"reverseType,omitempty"`
	Description string `json:"description,omitempty"`
	// Lag is the number of days between the end of one work package and
	// the start of the other; only follows/precedes relations have one.
	Lag  *int `json:"lag,omitempty"`
	From Ref  `json:"from"`
	To   Ref  `json:"to"`
}

// Side returns the relation as seen from work package id: the relation
// type from its side and the work package at the other end. ok is false
// when id is at neither end.
func (r Relation) Side(id int64) (typ string, other Ref, ok bool) {
	switch id {
	case r.From.ID:
		return r.Type, r.To, true
	case r.To.ID:
		return cmp.Or(r.ReverseType, ReverseRelationType(r.Type)), r.From, true
	}
	return "", Ref{}, false
}

// RelationTypes returns the relation types a relation can be created with,
// in the server's order (Relation::TYPES).
func RelationTypes() []string {
	return []string{"relates", "duplicates", "duplicated", "blocks", "blocked", "precedes", "follows", "includes", "partof", "requires", "required"}
}

// ReverseRelationType returns the type of a relation as seen from its
// other end ("blocks" -> "blocked"); "" for an unknown type.
func ReverseRelationType(t string) string {
	switch t {
	case "relates":
		return "relates"
	case "duplicates":
		return "duplicated"
	case "duplicated":
		return "duplicates"
	case "blocks":
		return "blocked"
	case "blocked":
		return "blocks"
	case "precedes":
		return "follows"
	case "follows":
		return "precedes"
	case "includes":
		return "partof"
	case "partof":
		return "includes"
	case "requires":
		return "required"
	case "required":
		return "requires"
	}
	return ""
}
