// Package sync keeps one user's store and index in step with OpenProject.
//
// A Worker (NewWorker) crawls the five kinds in order (projects, work
// packages with their activities, wiki pages, meetings with their agenda
// items); a Scheduler runs it on a jittered cron schedule and on demand.
// A Runner does that for the one user of a single-user process, a Manager
// for the many users of an HTTP server (lazy open, idle close).
//
// # What it owns
//
//   - The crawl plan per kind, incremental cursors, wiki id probing,
//     deletion reconciliation (and the refusal of mass deletions), per-item
//     retries, progress and the per-run Report, whose Summary is what
//     `opsearch sync --json` prints and the control socket carries.
//   - The order of writes that makes a crash harmless: store first, then
//     index, with a pending marker between (below).
//   - The one place per kind where an entity becomes an index document
//     (docs.go), for the crawl, the recovery and RebuildIndex alike, and
//     the check that the index reflects the store (IndexMismatch).
//   - Opening a user's files (OpenUser, OpenLocal) with their lock
//     timeouts, identity check and background rebuild; one worker per
//     user, scheduling with jitter, and what is known about reaching
//     OpenProject (Upstream).
//
// # What it must not know
//
//   - MCP, HTTP routes, the CLI or the control socket: they drive it
//     through Worker, Scheduler, Runner and Manager and the hooks in their
//     options (OnSync, OnOpen).
//   - Searching and ranking: package search and the scorer read what sync
//     wrote; sync never queries the index for results.
//   - Store buckets or bleve internals: it speaks store's typed API,
//     indexer's Document and Index, and kind.Kind. It talks to OpenProject
//     only through the API interface that openproject.Client satisfies.
//
// # Crawl plan
//
//   - Projects and meetings are re-listed whole (they are few); changed
//     ones are written, and stored ids no longer listed are deleted once a
//     single GET confirms the 404. Agenda items are fetched only for
//     meetings whose lockVersion or updatedAt moved. Servers without the
//     meetings list mark the kind unsupported with a note.
//   - Work packages come from the global list with status "*", sorted by
//     id, at the largest page size the server allows, filtered by
//     updatedAt <>d [cursor - CursorMargin, ""]. Items whose lockVersion
//     and updatedAt equal the stored copy are skipped; for the others the
//     activities are fetched (a comment moves updatedAt, not lockVersion).
//     Each sync compares the server's total with the store's count; a
//     difference, or FullListingEvery passing, triggers an id-only listing
//     whose missing ids are confirmed with an id-filtered listing and
//     deleted.
//   - Wiki pages can only be read by id: a full probe from id 1 up to
//     WikiDeepMissRun ids past the highest page (first sync, then every
//     WikiFullProbeEvery), otherwise a round-robin re-check of WikiRecheck
//     known pages plus a probe of WikiMissRun ids past the highest.
//
// # Crash safety
//
// Every batch is written store first (entities plus a "pending index"
// marker in one transaction), then to the index, then the marker is cleared
// together with the kind's progress (cursor, probe position). A sync that
// starts with a marker left re-indexes those documents from the store. The
// work package cursor advances only after a whole pass over its window
// finished without the list changing size, because the list is sorted by
// id and later pages may hold older timestamps. A cancelled or crashed sync
// therefore loses nothing and duplicates nothing; the next one converges.
//
// # Read-your-writes
//
// Worker.RefreshWorkPackage re-reads one work package and its activities
// after a write through the MCP server and commits them like a sync batch.
// It does not wait for a running sync: commits are serialised (commitMu),
// and a sync never replaces a stored work package with an older listed
// copy, so the two converge in either order.
//
// # Cost of a sync without changes
//
// Options.UnchangedSyncRequests: UnchangedSyncBaseRequests (4) plus
// WikiRecheck plus WikiMissRun, 24 with the defaults (10 and 10), whatever
// the corpus size. The id-only work package listing (one request per 1000
// work packages) runs hourly or when the count differs, the full wiki
// probe daily.
//
// # Opening a user
//
// OpenUser resolves the user behind an API key (/users/me), opens their
// store and bleve index under store.UserDir, records or checks the
// store's identity and returns a User with a Worker. OpenLocal opens the
// same files for offline commands without any API request. Both recover an
// interrupted commit and compare the index with the store (NeedsRebuild,
// then per-kind document counts); a mismatch rebuilds the index from the
// store alone (RebuildIndex), in the background for OpenUser (syncs wait
// for it, searches keep using the old index) and before returning for
// OpenLocal. The crawl, the recovery and the rebuild build documents with
// the same per-kind functions (docs.go).
package sync
