// Package search answers queries from a user's local index: the index
// finds candidates, the store supplies their full text, and the scorer
// re-ranks them into results with scores, matched fields and snippets.
// Every answer says how fresh and how complete the index is, so an empty
// result is never mistaken for "nothing exists" while a crawl is
// unfinished.
//
// The architecture's package table has no row for search; it is the
// "indexer + scorer" box of its data flow, between mcp and the index.
//
// # What it owns
//
//   - Query, its validation and its defaults; Engine, which turns a Query
//     into indexer.SearchOptions, hydrates candidates from the store
//     (through a size-bounded cache of decoded entities) and ranks them
//     with the scorer, with the relevance gate that answers "partial" or
//     "none" instead of confident noise.
//   - Result and Response: the answer as every front end shows it (MCP
//     tools, `opsearch search --json`, the control socket).
//   - Freshness: per kind, store and index counts, last sync, last error
//     and completeness, read from the store's sync states, with the note
//     that tells an agent when "nothing found" can be trusted. Its kinds
//     are keyed by kind.Kind, in the wire spelling.
//   - The opt-in query log (QueryLog) for building evaluation sets.
//
// # What it must not know
//
//   - OpenProject: it never calls the API. It uses openproject's model
//     types and PlainText only; whether OpenProject is reachable is the
//     server's to fill in (Freshness.Unreachable).
//   - Crawling and writing: it reads the store and the index and never
//     changes either; sync and mcp's writes keep them current.
//   - Bleve: it searches through its own small Index interface, which
//     indexer.Index satisfies. Nor store buckets, nor MCP, HTTP or the CLI
//     that present its answers.
package search
