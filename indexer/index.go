package indexer

import (
	"context"
	"time"

	"github.com/opsearch/opsearch/kind"
)

// Kinds lists the kinds the index holds documents of, in a fixed order.
// Activities are not documents of their own: comments are part of their
// work package's document, so a comment-only fact finds the work package.
func Kinds() []kind.Kind {
	return []kind.Kind{kind.WorkPackage, kind.WikiPage, kind.Meeting, kind.Project, kind.Attachment}
}

// Document is one searchable entity, flattened. Build documents with the
// From* functions so every producer (sync, writes, rebuilds) agrees.
type Document struct {
	// ID is "<kind>:<entity id>", unique across kinds.
	ID       string    `json:"id"`
	Kind     kind.Kind `json:"kind"`
	EntityID int64     `json:"entityId"`

	ProjectID   int64  `json:"projectId,omitempty"`
	ProjectName string `json:"projectName,omitempty"`

	// Title: work package subject, wiki title, meeting title, project name.
	Title string `json:"title"`
	// Body: description, wiki text, project description.
	Body string `json:"body,omitempty"`
	// Identifiers: "#123", display id "PROJ-12", project identifier, slug.
	Identifiers []string `json:"identifiers,omitempty"`

	// Work package facets.
	Type     string `json:"type,omitempty"`
	Status   string `json:"status,omitempty"`
	Closed   bool   `json:"closed,omitempty"`
	Assignee string `json:"assignee,omitempty"`
	// AssigneeID is 0 when unassigned.
	AssigneeID int64  `json:"assigneeId,omitempty"`
	Author     string `json:"author,omitempty"`
	// Comments are the work package's comments, each "Author: text".
	Comments []string `json:"comments,omitempty"`

	// Meeting fields.
	Location     string       `json:"location,omitempty"`
	Participants []string     `json:"participants,omitempty"`
	Agenda       []AgendaText `json:"agenda,omitempty"`

	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	// StartTime is a meeting's start.
	StartTime time.Time `json:"startTime,omitzero"`
	// PublicTwin marks a work package's document without its internal
	// comments (see WorkPackageDocs).
	PublicTwin bool `json:"publicTwin,omitempty"`

	// Container is an attachment's container's document id; the
	// attachment is visible exactly where its container is.
	Container string `json:"container,omitempty"`
}

// AgendaText is the searchable text of one agenda item.
type AgendaText struct {
	ID       int64    `json:"id"`
	Title    string   `json:"title"`
	Notes    string   `json:"notes,omitempty"`
	Outcomes []string `json:"outcomes,omitempty"`
}

// MatchMode selects how query text matches.
type MatchMode string

// Match modes.
const (
	// MatchFuzzy tolerates typos by term length, treats the last term as a
	// prefix, and boosts phrases and titles.
	MatchFuzzy MatchMode = "fuzzy"
	// MatchExact matches the words as written (case- and accent-
	// insensitive), no typos, no stems, no prefixes. Short fields match the
	// phrase; long fields (bodies, comments, agenda) only guarantee that
	// every word occurs, and the caller verifies the phrase on the entity
	// (search.Engine does, through the scorer's exact mode).
	MatchExact MatchMode = "exact"
)

// SearchOptions is a backend-neutral query. Zero values mean "no
// restriction"; pointers distinguish "unset" from false.
type SearchOptions struct {
	Query string
	Mode  MatchMode
	Kinds []kind.Kind
	// ProjectIDs restricts to these projects.
	ProjectIDs []int64
	// Closed restricts work packages to closed (true) or open (false).
	Closed        *bool
	Types         []string
	AssigneeIDs   []int64
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	// From and Size page through the results (Size default 20, max 1000).
	From, Size int
	// Federate names kinds whose FederateSize best documents by the same
	// query, restrictions and scores are returned too, in
	// Result.Federated: federated search, so a kind with few documents
	// is not drowned by one with many. Fuzzy and exact text queries only.
	Federate     []kind.Kind
	FederateSize int
	// Visible, when set, restricts the search to one user's documents in
	// an index several users share, with that user's statistics (see
	// Visibility): the answer is the one an index of those documents
	// alone would give.
	Visible *Visibility
	// IDs, when set, restricts the search to these documents: whether
	// they match the query, not how they rank among the rest (their hits
	// carry no Coverage).
	IDs []string
	// Reuse, when set, is Result.Plan of an earlier fuzzy search of the
	// same Query and Visible: its query runs again as that search built
	// it, under these options' restrictions, instead of being planned
	// anew. Planning looks up every word's forms, typo variants and
	// completions, and was most of the cost of asking whether a few
	// documents match (IDs) right after the search that found the
	// query's best. A plan of another query or view is ignored.
	Reuse *Plan
	// Without leaves features of fuzzy retrieval out (Features), to
	// measure what they bring; zero for every other search.
	Without Features
}

// Hit is one search result: the document id, its score, and where it
// matched. Callers hydrate full entities from the store.
type Hit struct {
	// ID is the document id, a public twin's (see WorkPackageDocs) as its
	// work package's: one user sees one of the two, and ranks it as the
	// work package.
	ID string `json:"id"`
	// Public marks a hit on a public twin: the work package without its
	// internal comments, which the caller must not show.
	Public   bool      `json:"public,omitempty"`
	Kind     kind.Kind `json:"kind"`
	EntityID int64     `json:"entityId"`
	Score    float64   `json:"score"`
	// Coverage is the share of a fuzzy query's information the document
	// holds (see Plan.Cover), and MatchedWords the query words it holds.
	Coverage     float64  `json:"coverage,omitempty"`
	MatchedWords []string `json:"matchedWords,omitempty"`
	// Fragments maps field names to highlighted excerpts, when available.
	Fragments map[string][]string `json:"fragments,omitempty"`
	// at is the document's number in the snapshot the search read, while
	// Bleve.Search measures coverage; nil once it returns.
	at []byte // an index.IndexInternalID
}

// DocID is the id of the document h hit: its ID, or the public twin's.
func (h Hit) DocID() string {
	if h.Public {
		return PublicDocID(h.EntityID)
	}
	return h.ID
}

// Result is a page of hits.
type Result struct {
	// Total counts the documents the query matched; with TotalIsLowerBound
	// only those holding one of its rarer words were counted (documents
	// holding only its most common words were not visited).
	Total             uint64        `json:"total"`
	TotalIsLowerBound bool          `json:"totalIsLowerBound,omitempty"`
	Hits              []Hit         `json:"hits"`
	Took              time.Duration `json:"took"`
	// Plan is how the index read a fuzzy query's words; nil in exact mode
	// and for filter-only queries.
	Plan *Plan `json:"-"`
	// Federated are the best hits of SearchOptions.Federate's kinds, by
	// score, then id.
	Federated []Hit `json:"federated,omitempty"`
}

// Index is the search backend. It is the one producer-side interface in
// opsearch: an operator who outgrows one machine swaps bleve for a
// distributed engine behind it. Implementations are safe for concurrent use.
type Index interface {
	// Index adds or replaces documents. It returns once all are durable;
	// a large call may be applied as several batches, so after a crash a
	// caller replays the whole call (sync keeps a pending marker for it).
	Index(ctx context.Context, docs ...Document) error
	// Delete removes documents by id; unknown ids are ignored.
	Delete(ctx context.Context, ids ...string) error
	// Search runs a query.
	Search(ctx context.Context, opts SearchOptions) (Result, error)
	// Count returns the number of documents, per kind.
	Count(ctx context.Context) (map[kind.Kind]uint64, error)
	// Settle reorganises the index for searching after many writes, if
	// they were many, and reports whether it did.
	Settle(ctx context.Context) (bool, error)
	// Close releases the index; it is safe to call twice.
	Close() error
}
