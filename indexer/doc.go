// Package indexer owns the full-text index that opsearch answers searches
// from: a small backend-neutral Index interface, the documents it holds,
// and its bleve implementation. The index is derived data: it can always be
// rebuilt from the store without touching the OpenProject API.
//
// # What it owns
//
//   - Index, the one producer-side interface in opsearch (index, delete,
//     search with neutral SearchOptions, count, close), so bleve can be
//     swapped for a distributed engine behind it.
//   - Document and how an entity becomes one (the From* builders, DocID
//     and ParseDocID: "work_package:12"), and which kinds have documents
//     (Kinds: every kind but activities, which are part of their work
//     package's document).
//   - The bleve implementation: mapping, analyzers and token filters, the
//     thesaurus, query building and the Plan of a fuzzy query, highlighting,
//     and MappingVersion with the metadata file that lets NeedsRebuild say
//     when an index must be rebuilt.
//   - Rebuild's mechanics: building a new index beside the old one, which
//     keeps answering, and swapping it in. What goes into it is the
//     caller's fill function.
//
// # What it must not know
//
//   - The store. The architecture has the indexer rebuild "from store"; in
//     the code the loop over the store is sync.RebuildIndex, which feeds
//     Bleve.Rebuild, so this package imports neither store nor sync.
//   - The OpenProject API (only openproject's model types and PlainText),
//     the crawl, the scorer's re-ranking (it returns candidates and their
//     coverage; package search ranks them), MCP and the CLI.
//   - A kind's bucket name in the store. Document ids and the indexed kind
//     field use kind.Kind's own spelling, which is also the wire spelling;
//     changing it would need a MappingVersion bump.
package indexer
