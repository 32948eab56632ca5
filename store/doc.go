// Package store is opsearch's on-disk source of truth: one bbolt file per
// OpenProject user, holding the entities the crawler fetched (projects, work
// packages, activities, wiki pages, meetings), the per-kind sync state, the
// user's identity and the schema version.
//
// The search index is derived from this store and can always be rebuilt from
// it without touching the API; the typed Scan* methods exist for that.
//
// # What it owns
//
//   - The file: its layout, the bucket names, the schema version and the
//     migrations between versions, the key counters behind O(1) Count.
//   - Entities by kind and id, as openproject's normalized model types,
//     encoded as JSON and copied out of bbolt's memory map.
//   - SyncState per kind, as plain data the crawler fills in; the store
//     persists it atomically with the entities it describes but does not
//     interpret cursors or retry lists.
//   - The user's identity, salted slow verifiers of the API keys
//     OpenProject confirmed for them (never a key), the per-user directory
//     (UserDir, InstanceName), and small caller-defined values (SetMeta).
//   - How a kind.Kind is named on disk: bucketOf (kind.go) is the one place
//     that maps a kind to its bucket name.
//
// # What it must not know
//
//   - The OpenProject API: it imports openproject for the model types only,
//     never the client, and makes no network request.
//   - The index, the scorer and searching; sync's crawl strategy; MCP,
//     HTTP or the CLI. Those packages use the store, never the other way.
//   - How kinds are spelled on the wire. The bucket names are the file
//     format and keep the plural of earlier versions ("work_packages");
//     callers only ever see kind.Kind, and the names stay inside.
//
// # Layout
//
// A user's files live under UserDir(dataDir, baseURL, userID), which is
// <dataDir>/<instance>/<userID>, created 0700. The store file is store.db
// in that directory, mode 0600. Inside it:
//
//	meta           schema_version (8-byte big-endian), created_at, identity (JSON),
//	               key_verifiers (JSON)
//	counts         <kind> -> 8-byte big-endian key count, kept in the same
//	               transaction as every put and delete so Count is O(1)
//	extra          small caller-defined values (WriteTx.SetMeta)
//	sync           <kind> -> SyncState (JSON; its "kind" is the bucket name)
//	<kind>         <id as 8-byte big-endian> -> entity (JSON), one bucket per
//	               kind; big-endian keys make byte order numeric order
//
// where <kind> is the kind's bucket name: projects, work_packages,
// activities, wiki_pages, meetings. These never change; a kind's wire
// spelling (kind.Kind, "work_package") is not its bucket name.
//
// Activities are stored per work package: the key is the work package id and
// the value is the work package's whole activity list.
//
// # Engines
//
// The layout above is kept by an engine (engine.go): the bbolt file Open
// opens, or a store in PostgreSQL that OpenPostgres opens by name, for
// several opsearch processes at once (postgres.go: one table of bucket,
// key and value rows, writers serialised per store, a change sequence per
// commit). Everything above the engine, the codec, counters, schema
// versions and migrations included, is the same for both, and the
// package's tests run against both (conformance_test.go).
//
// # Caveats
//
//   - One process per file. bbolt takes an exclusive file lock; a second Open
//     of the same directory, from this or another process, waits at most
//     Options.LockTimeout and then fails with a *LockedError (errors.Is
//     ErrLocked). Commands that need a running server's data talk to that
//     server instead of opening the file (package control).
//   - Copy-out semantics. bbolt's byte slices point into a memory map and are
//     only valid inside their transaction. Every read method decodes (and so
//     copies) inside the transaction; nothing handed to callers references
//     the map. Meta returns a copy too.
//   - Keep transactions short. There is one writer at a time, and a long read
//     transaction blocks any write that has to grow the memory map (measured:
//     seconds). Never call the network, stream a response or wait on a
//     channel inside View or Update. Write one Update per API page, not one
//     per entity (one commit costs two fsyncs). Use the Scan* methods, which
//     read each batch in its own short transaction, to walk a whole kind.
//   - The file never shrinks. Deleted entities free pages that later writes
//     reuse, but the file keeps its high-water size. CompactTo writes a
//     compacted copy; swap it in while no process has the store open.
//   - Not a secret store. There is no place for an API key: keys live in
//     memory only.
package store
