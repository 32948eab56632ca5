package openproject

import (
	"bytes"
	"cmp"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	json "github.com/go-json-experiment/json/v1"
)

// The wire types below decode exactly the HAL fields opsearch uses. Unknown
// properties, custom fields and action links are ignored by encoding/json,
// and fields whose type varies between OpenProject versions are decoded
// leniently, so a newer or older server never breaks decoding.

type halLink struct {
	Href  *string `json:"href"`
	Title string  `json:"title"`
}

// halLinks holds _links; each value is a link object or an array of them.
type halLinks map[string]json.RawMessage

func (l halLinks) ref(name string) Ref {
	raw, ok := l[name]
	if !ok {
		return Ref{}
	}
	var hl halLink
	if err := json.Unmarshal(raw, &hl); err != nil {
		return Ref{}
	}
	return refFrom(hl)
}

// optRef returns nil for an absent link or one whose href is null, which is
// how OpenProject renders "no assignee".
func (l halLinks) optRef(name string) *Ref {
	r := l.ref(name)
	if r.IsZero() {
		return nil
	}
	return &r
}

// titles returns the titles of an array of links, in order, empty ones
// included; nil when the link is absent or not an array.
func (l halLinks) titles(name string) []string {
	raw, ok := l[name]
	if !ok {
		return nil
	}
	var hls []halLink
	if err := json.Unmarshal(raw, &hls); err != nil || len(hls) == 0 {
		return nil
	}
	out := make([]string, len(hls))
	for i, hl := range hls {
		out[i] = hl.Title
	}
	return out
}

func (l halLinks) refs(name string) []Ref {
	raw, ok := l[name]
	if !ok {
		return nil
	}
	var hls []halLink
	if err := json.Unmarshal(raw, &hls); err != nil {
		return nil
	}
	out := make([]Ref, 0, len(hls))
	for _, hl := range hls {
		if r := refFrom(hl); !r.IsZero() {
			out = append(out, r)
		}
	}
	return out
}

func refFrom(hl halLink) Ref {
	if hl.Href == nil || *hl.Href == "" {
		return Ref{}
	}
	return Ref{ID: idFromHref(*hl.Href), Href: *hl.Href, Title: hl.Title}
}

// idFromHref parses the trailing numeric path segment of an href, ignoring
// any query string: "/api/v3/users/11" gives 11.
func idFromHref(href string) int64 {
	if i := strings.IndexAny(href, "?#"); i >= 0 {
		href = href[:i]
	}
	href = strings.TrimRight(href, "/")
	seg := href[strings.LastIndexByte(href, '/')+1:]
	id, err := strconv.ParseInt(seg, 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// formattable is {format, raw, html}; some servers send a plain string
// where newer ones send the object, so both decode.
type formattable struct {
	Raw string
}

// UnmarshalJSONFrom reads the value where it stands: decoding each
// formattable, time and number again from its own bytes (UnmarshalJSON
// and encoding/json) took half of an activities answer's decoding.
func (f *formattable) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		f.Raw = tok.String()
		return nil
	case '{':
		// Only a string or null "raw" is an answer; any other shape of
		// it is not worth failing a whole page for, and leaves f as it was.
		var raw *string
		shaped := true
		err := eachMember(dec, func(name string) error {
			if !strings.EqualFold(name, "raw") {
				return dec.SkipValue()
			}
			switch dec.PeekKind() {
			case '"':
				tok, err := dec.ReadToken()
				s := tok.String()
				raw = &s
				return err
			case 'n':
				raw = nil
			default:
				shaped = false
			}
			return dec.SkipValue()
		})
		if err == nil && shaped && raw != nil {
			f.Raw = *raw
		}
		return err
	default:
		return dec.SkipValue()
	}
}

// eachMember reads the object that starts at dec, calling member with
// each member's name; member must read the member's value.
func eachMember(dec *jsontext.Decoder, member func(name string) error) error {
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if err := member(tok.String()); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// lenientTime decodes ISO 8601 with or without fractional seconds, and
// tolerates null, empty strings and date-only values.
type lenientTime struct{ time.Time }

func (t *lenientTime) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '"' {
		return dec.SkipValue()
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if v, ok := parseLenientTime(tok.String()); ok {
		t.Time = v
	}
	return nil
}

// parseLenientTime parses the layouts lenientTime takes; ok is false for
// an empty string, another layout, or a time that an offset pushes out
// of the years time.Time encodes as JSON (0 to 9999), which the store
// could not save.
func parseLenientTime(s string) (v time.Time, ok bool) {
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", time.DateOnly} {
		if v, err := time.Parse(layout, s); err == nil {
			v = v.UTC()
			return v, v.Year() >= 0 && v.Year() <= 9999
		}
	}
	return time.Time{}, false
}

// lenientNumber decodes a JSON number, a numeric string, or nothing. A
// string spelling a non-finite number ("Infinity", "NaN") counts as
// nothing: JSON cannot encode it, so the store could not save the item.
type lenientNumber struct {
	Value float64
	Set   bool
}

func (n *lenientNumber) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '0', '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		f, err := strconv.ParseFloat(tok.String(), 64)
		if err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			n.Value, n.Set = f, true
		}
		return nil
	case 'n':
		// encoding/json leaves a number as it is for null, without an
		// error, and this type has always counted that as a zero.
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		n.Value, n.Set = 0, true
		return nil
	default:
		return dec.SkipValue()
	}
}

// lenientInt decodes an integer that some versions send as a string.
type lenientInt int64

func (n *lenientInt) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var ln lenientNumber
	if err := ln.UnmarshalJSONFrom(dec); err != nil {
		return err
	}
	*n = lenientInt(ln.Value)
	return nil
}

// halCollection is a collection whose elements are decoded later, one by
// one.
type halCollection = halCollectionOf[json.RawMessage]

// halCollectionOf is halCollection with its elements decoded as W.
type halCollectionOf[W any] struct {
	Type     string `json:"_type"`
	Total    int    `json:"total"`
	Count    int    `json:"count"`
	PageSize int    `json:"pageSize"`
	Offset   int    `json:"offset"`
	Embedded struct {
		Elements []W `json:"elements"`
	} `json:"_embedded"`
}

type halError struct {
	Type            string `json:"_type"`
	ErrorIdentifier string `json:"errorIdentifier"`
	Message         string `json:"message"`
	Embedded        struct {
		Details struct {
			Attribute string `json:"attribute"`
		} `json:"details"`
		Errors []halError `json:"errors"`
	} `json:"_embedded"`
}

type wireUser struct {
	ID        lenientInt  `json:"id"`
	Name      string      `json:"name"`
	Login     string      `json:"login"`
	FirstName string      `json:"firstName"`
	LastName  string      `json:"lastName"`
	Email     string      `json:"email"`
	Admin     bool        `json:"admin"`
	Status    string      `json:"status"`
	Language  string      `json:"language"`
	Avatar    string      `json:"avatar"`
	CreatedAt lenientTime `json:"createdAt"`
	UpdatedAt lenientTime `json:"updatedAt"`
}

func (w wireUser) model() User {
	return User{
		ID: int64(w.ID), Name: w.Name, Login: w.Login, FirstName: w.FirstName, LastName: w.LastName,
		Email: w.Email, Admin: w.Admin, Status: w.Status, Language: w.Language, Avatar: w.Avatar,
		CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
}

type wireProject struct {
	ID                lenientInt  `json:"id"`
	Identifier        string      `json:"identifier"`
	Name              string      `json:"name"`
	Active            *bool       `json:"active"`
	Public            bool        `json:"public"`
	Description       formattable `json:"description"`
	StatusExplanation formattable `json:"statusExplanation"`
	CreatedAt         lenientTime `json:"createdAt"`
	UpdatedAt         lenientTime `json:"updatedAt"`
	Links             halLinks    `json:"_links"`
}

func (w wireProject) model() Project {
	active := true // servers before "active" existed only listed active projects
	if w.Active != nil {
		active = *w.Active
	}
	return Project{
		ID: int64(w.ID), Identifier: w.Identifier, Name: w.Name, Active: active, Public: w.Public,
		Description: w.Description.Raw, StatusExplanation: w.StatusExplanation.Raw,
		Parent: w.Links.optRef("parent"), CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
}

type wireStatus struct {
	ID        lenientInt `json:"id"`
	Name      string     `json:"name"`
	IsClosed  bool       `json:"isClosed"`
	IsDefault bool       `json:"isDefault"`
	Color     string     `json:"color"`
	Position  int        `json:"position"`
}

type wireType struct {
	ID          lenientInt `json:"id"`
	Name        string     `json:"name"`
	Color       string     `json:"color"`
	Position    int        `json:"position"`
	IsDefault   bool       `json:"isDefault"`
	IsMilestone bool       `json:"isMilestone"`
}

type wirePriority struct {
	ID        lenientInt `json:"id"`
	Name      string     `json:"name"`
	Position  int        `json:"position"`
	IsDefault bool       `json:"isDefault"`
	IsActive  *bool      `json:"isActive"`
}

type wireWorkPackage struct {
	ID             lenientInt      `json:"id"`
	DisplayID      json.RawMessage `json:"displayId"`
	LockVersion    int             `json:"lockVersion"`
	Subject        string          `json:"subject"`
	Description    formattable     `json:"description"`
	StartDate      string          `json:"startDate"`
	DueDate        string          `json:"dueDate"`
	Date           string          `json:"date"` // milestones carry one date
	PercentageDone *lenientNumber  `json:"percentageDone"`
	CreatedAt      lenientTime     `json:"createdAt"`
	UpdatedAt      lenientTime     `json:"updatedAt"`
	Links          halLinks        `json:"_links"`
	Embedded       struct {
		Status *struct {
			IsClosed *bool `json:"isClosed"`
		} `json:"status"`
	} `json:"_embedded"`
}

// model converts; closed reports whether the embedded status said if the
// work package is closed (nil when the server did not embed it).
func (w wireWorkPackage) model() (WorkPackage, *bool) {
	wp := WorkPackage{
		ID: int64(w.ID), DisplayID: rawScalar(w.DisplayID), LockVersion: w.LockVersion,
		Subject: w.Subject, Description: w.Description.Raw,
		Project: w.Links.ref("project"), Type: w.Links.ref("type"), Status: w.Links.ref("status"),
		Priority: w.Links.ref("priority"), Author: w.Links.ref("author"),
		Assignee: w.Links.optRef("assignee"), Responsible: w.Links.optRef("responsible"),
		Parent: w.Links.optRef("parent"), Version: w.Links.version(),
		StartDate: w.StartDate, DueDate: w.DueDate,
		CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
	if wp.StartDate == "" && wp.DueDate == "" && w.Date != "" {
		wp.StartDate, wp.DueDate = w.Date, w.Date
	}
	if w.PercentageDone != nil && w.PercentageDone.Set {
		p := int(w.PercentageDone.Value)
		wp.PercentageDone = &p
	}
	var closed *bool
	if w.Embedded.Status != nil {
		closed = w.Embedded.Status.IsClosed
	}
	return wp, closed
}

// rawScalar renders a JSON string or number as text ("" for null/absent).
func rawScalar(b json.RawMessage) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return s
	}
	return string(b)
}

type wireActivity struct {
	Type      string        `json:"_type"`
	ID        lenientInt    `json:"id"`
	Version   int           `json:"version"`
	Comment   formattable   `json:"comment"`
	Details   []formattable `json:"details"`
	Internal  bool          `json:"internal"`
	CreatedAt lenientTime   `json:"createdAt"`
	UpdatedAt lenientTime   `json:"updatedAt"`
	Links     halLinks      `json:"_links"`
	// Embedded is passed over whole: newer servers embed the work
	// package, its project and its status in every activity, five
	// sixths of an activities answer, and encoding/json's way of
	// passing over an unknown member, token by token, was the other
	// half of its decoding.
	Embedded skipped `json:"_embedded"`
}

// skipped is a value read and thrown away in one scan.
type skipped struct{}

func (*skipped) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	_, err := dec.ReadValue()
	return err
}

func (w wireActivity) model() Activity {
	a := Activity{
		ID: int64(w.ID), Kind: w.Type, Version: w.Version, Comment: w.Comment.Raw,
		User: w.Links.ref("user"), WorkPackageID: w.Links.ref("workPackage").ID, Internal: w.Internal,
		CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
	for _, d := range w.Details {
		if d.Raw != "" {
			a.Details = append(a.Details, d.Raw)
		}
	}
	return a
}

type wireAttachment struct {
	ID          lenientInt  `json:"id"`
	FileName    string      `json:"fileName"`
	FileSize    *lenientInt `json:"fileSize"`
	LegacySize  *lenientInt `json:"filesize"` // spec examples spell it so
	ContentType string      `json:"contentType"`
	Description formattable `json:"description"`
	// Digest is {algorithm, hash} as the code renders it; the spec
	// types it a string.
	Digest    json.RawMessage `json:"digest"`
	CreatedAt lenientTime     `json:"createdAt"`
	Links     halLinks        `json:"_links"`
}

// digest normalises a digest to "algorithm:hash" ("" when absent).
func (w wireAttachment) digest() string {
	var d struct {
		Algorithm string `json:"algorithm"`
		Hash      string `json:"hash"`
	}
	if json.Unmarshal(w.Digest, &d) == nil && d.Hash != "" {
		return cmp.Or(d.Algorithm, "md5") + ":" + d.Hash
	}
	var s string
	if json.Unmarshal(w.Digest, &s) == nil {
		return s
	}
	return ""
}

func (w wireAttachment) model() Attachment {
	a := Attachment{
		ID: int64(w.ID), FileName: w.FileName, ContentType: w.ContentType, Description: w.Description.Raw,
		Container: w.Links.ref("container"), Author: w.Links.ref("author"), CreatedAt: w.CreatedAt.Time,
		Digest: w.digest(),
	}
	switch {
	case w.FileSize != nil:
		a.FileSize = int64(*w.FileSize)
	case w.LegacySize != nil:
		a.FileSize = int64(*w.LegacySize)
	}
	if dl := w.Links.ref("downloadLocation"); !dl.IsZero() {
		a.DownloadURL = dl.Href
	} else if dl := w.Links.ref("staticDownloadLocation"); !dl.IsZero() {
		a.DownloadURL = dl.Href
	}
	return a
}

type wireWikiPage struct {
	ID          lenientInt       `json:"id"`
	Title       string           `json:"title"`
	Slug        string           `json:"slug"`
	Text        *json.RawMessage `json:"text"`
	LockVersion int              `json:"lockVersion"`
	CreatedAt   lenientTime      `json:"createdAt"`
	UpdatedAt   lenientTime      `json:"updatedAt"`
	Links       halLinks         `json:"_links"`
	Embedded    struct {
		Project *struct {
			ID   lenientInt `json:"id"`
			Name string     `json:"name"`
		} `json:"project"`
		Attachments *struct {
			Embedded struct {
				Elements []wireAttachment `json:"elements"`
			} `json:"_embedded"`
		} `json:"attachments"`
	} `json:"_embedded"`
}

func (w wireWikiPage) model() WikiPage {
	p := WikiPage{
		ID: int64(w.ID), Title: w.Title, Slug: w.Slug, Project: w.Links.ref("project"),
		LockVersion: w.LockVersion, CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
	if w.Text != nil {
		var f formattable
		_ = decodeBody(*w.Text, &f)
		p.Text, p.HasText = f.Raw, true
	}
	if ep := w.Embedded.Project; ep != nil {
		p.Project.ID = cmp.Or(p.Project.ID, int64(ep.ID))
		p.Project.Title = cmp.Or(p.Project.Title, ep.Name)
	}
	if ea := w.Embedded.Attachments; ea != nil {
		for _, a := range ea.Embedded.Elements {
			p.Attachments = append(p.Attachments, a.model())
		}
	}
	return p
}

type wireMeeting struct {
	ID          lenientInt    `json:"id"`
	Title       string        `json:"title"`
	Location    string        `json:"location"`
	LockVersion int           `json:"lockVersion"`
	StartTime   lenientTime   `json:"startTime"`
	EndTime     lenientTime   `json:"endTime"`
	Duration    lenientNumber `json:"duration"`
	CreatedAt   lenientTime   `json:"createdAt"`
	UpdatedAt   lenientTime   `json:"updatedAt"`
	Links       halLinks      `json:"_links"`
	Embedded    struct {
		Participants []struct {
			ID   lenientInt `json:"id"`
			Name string     `json:"name"`
			// Some versions embed participant records that link the user.
			Links halLinks `json:"_links"`
		} `json:"participants"`
	} `json:"_embedded"`
}

func (w wireMeeting) model() Meeting {
	m := Meeting{
		ID: int64(w.ID), Title: w.Title, Location: w.Location, LockVersion: w.LockVersion,
		StartTime: w.StartTime.Time, EndTime: w.EndTime.Time, Duration: w.Duration.Value,
		Project: w.Links.ref("project"), Author: w.Links.ref("author"),
		Participants: w.Links.refs("participants"),
		CreatedAt:    w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
	if len(m.Participants) == 0 {
		for _, p := range w.Embedded.Participants {
			r := p.Links.ref("user")
			if r.IsZero() {
				r = Ref{ID: int64(p.ID), Title: p.Name}
			}
			r.Title = cmp.Or(r.Title, p.Name)
			m.Participants = append(m.Participants, r)
		}
	}
	return m
}

type wireOutcome struct {
	ID    lenientInt  `json:"id"`
	Notes formattable `json:"notes"`
	Kind  string      `json:"kind"`
}

type wireAgendaItem struct {
	ID          lenientInt     `json:"id"`
	Title       string         `json:"title"`
	Notes       formattable    `json:"notes"`
	Position    int            `json:"position"`
	Duration    *lenientNumber `json:"durationInMinutes"`
	ItemType    string         `json:"itemType"`
	LockVersion int            `json:"lockVersion"`
	CreatedAt   lenientTime    `json:"createdAt"`
	UpdatedAt   lenientTime    `json:"updatedAt"`
	Links       halLinks       `json:"_links"`
	Embedded    struct {
		Outcomes []wireOutcome `json:"outcomes"`
	} `json:"_embedded"`
}

func (w wireAgendaItem) model() AgendaItem {
	it := AgendaItem{
		ID: int64(w.ID), MeetingID: w.Links.ref("meeting").ID, Title: w.Title, Notes: w.Notes.Raw,
		Position: w.Position, ItemType: w.ItemType, LockVersion: w.LockVersion,
		WorkPackage: w.Links.optRef("workPackage"), Author: w.Links.optRef("author"),
		Presenter: w.Links.optRef("presenter"), Section: w.Links.optRef("section"),
		CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
	if it.Title == "" && it.WorkPackage != nil {
		it.Title = it.WorkPackage.Title // work package items take the subject
	}
	if w.Duration != nil && w.Duration.Set {
		d := int(w.Duration.Value)
		it.DurationMinutes = &d
	}
	for _, o := range w.Embedded.Outcomes {
		it.Outcomes = append(it.Outcomes, Outcome{ID: int64(o.ID), Notes: o.Notes.Raw, Kind: o.Kind})
	}
	if len(it.Outcomes) == 0 {
		// Only links: the outcome text is not available without more requests.
		for _, r := range w.Links.refs("outcomes") {
			it.Outcomes = append(it.Outcomes, Outcome{ID: r.ID, Notes: r.Title})
		}
	}
	return it
}

type wireQuery struct {
	ID        lenientInt  `json:"id"`
	Name      string      `json:"name"`
	Public    bool        `json:"public"`
	Starred   bool        `json:"starred"`
	CreatedAt lenientTime `json:"createdAt"`
	UpdatedAt lenientTime `json:"updatedAt"`
	Links     halLinks    `json:"_links"`

	Filters wireQueryFilters `json:"filters"`
}

func (w wireQuery) model() Query {
	q := Query{
		ID: int64(w.ID), Name: w.Name, Public: w.Public, Starred: w.Starred,
		Project: w.Links.optRef("project"), SortBy: w.Links.titles("sortBy"),
		CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
	for _, f := range w.Filters {
		q.Filters = append(q.Filters, f.model())
	}
	return q
}

// wireQueryWithResults is GET /queries/{id}, which embeds a page of the
// query's work packages.
type wireQueryWithResults struct {
	wireQuery
	Embedded struct {
		Results *halCollection `json:"results"`
	} `json:"_embedded"`
}

// wireQueryFilters decodes leniently: a filter of a shape this client does
// not know is not worth failing a list of queries for, so what decodes is
// kept and the rest left empty.
type wireQueryFilters []wireQueryFilter

func (f *wireQueryFilters) UnmarshalJSON(b []byte) error {
	var fs []wireQueryFilter
	_ = json.Unmarshal(b, &fs)
	*f = fs
	return nil
}

// wireQueryFilter is one filter of a saved query. Values that are
// resources (statuses, users) are links with titles; the others (dates,
// text) are literals in values.
type wireQueryFilter struct {
	Name  string `json:"name"`
	Links struct {
		Operator halLink   `json:"operator"`
		Values   []halLink `json:"values"`
	} `json:"_links"`
	Values []json.RawMessage `json:"values"`
}

func (w wireQueryFilter) model() QueryFilter {
	f := QueryFilter{Name: w.Name, Operator: w.Links.Operator.Title}
	for _, v := range w.Links.Values {
		if v.Title != "" {
			f.Values = append(f.Values, v.Title)
		}
	}
	if len(f.Values) == 0 {
		for _, raw := range w.Values {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				f.Values = append(f.Values, s)
			} else {
				f.Values = append(f.Values, string(raw))
			}
		}
	}
	return f
}

type wireWikiPageLink struct {
	ID    lenientInt `json:"id"`
	Links halLinks   `json:"_links"`
}

func (w wireWikiPageLink) model() WikiPageLink {
	return WikiPageLink{ID: int64(w.ID), WorkPackage: w.Links.ref("workPackage"), WikiPage: w.Links.ref("wikiPage")}
}

type wireRoot struct {
	InstanceName string   `json:"instanceName"`
	CoreVersion  string   `json:"coreVersion"`
	Links        halLinks `json:"_links"`
}

// wireRelation is a Relation as the server renders it. Servers before 15.0
// call the lag "delay".
type wireRelation struct {
	ID          lenientInt     `json:"id"`
	Type        string         `json:"type"`
	ReverseType string         `json:"reverseType"`
	Description *string        `json:"description"`
	Lag         *lenientNumber `json:"lag"`
	Delay       *lenientNumber `json:"delay"`
	Links       halLinks       `json:"_links"`
}

func (w wireRelation) model() Relation {
	r := Relation{
		ID: int64(w.ID), Type: w.Type, ReverseType: w.ReverseType,
		From: w.Links.ref("from"), To: w.Links.ref("to"),
	}
	if w.Description != nil {
		r.Description = *w.Description
	}
	for _, n := range []*lenientNumber{w.Lag, w.Delay} {
		if n != nil && n.Set {
			lag := int(n.Value)
			r.Lag = &lag
			break
		}
	}
	return r
}
