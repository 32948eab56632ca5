// Package audit is opsearch's tamper-evident record of tool calls: one
// JSON line per call in the user's own data directory, each line chained
// to the one before it by SHA-256, so that a changed, removed or moved
// line shows when the log is verified.
//
// # Format
//
// A log is a directory (mode 0700) of files (mode 0600) named
// audit-<first seq, 20 digits>.jsonl, read in name order, plus
// audit.head. Every line is one JSON object, its fields in this order:
//
//	{"seq":7,"time":"2026-12-04T10:00:00.123456789Z","kind":"call",
//	 "user":{"id":5,"login":"alice","name":"Alice"},
//	 "tool":"openproject_search","args_sha256":"<64 hex>","outcome":"ok",
//	 "duration_ms":1.25,"request_id":"3f2a9c01b7de",
//	 "prev":"<hash of line 6>","hash":"<64 hex>"}
//
// seq counts lines from 1 across all files; kind is "call" (a tool call),
// "repair" (what Open found wrong and set right, in note) or "prune"
// (rotation deleted an old file; pruned names the last line it held).
// A call has no argument text, only args_sha256, the SHA-256 of its
// arguments as canonical JSON (ArgsDigest); outcome is "ok" or "error",
// and error is then a category from a closed set (never a message, which
// may quote the arguments). The first line ever written has prev "".
//
// hash is the SHA-256, in hex, of the line's bytes up to the hash field
// with the closing brace put back: the line without its hash, which holds
// prev. A line therefore vouches for its own bytes and for every line
// before it. audit.head holds the seq and hash of the last line written,
// so that lines cut from the end show too.
//
// # Rotation
//
// When a line would take the current file past Options.MaxBytes, the
// next file starts with that line; the chain runs on across files (its
// prev is the last line of the file before). Past Options.Keep old files
// the oldest is deleted, and a "prune" line in the new file records the
// seq and hash of the last line it held, so Verify can tell a file
// rotation deleted from one someone else did.
//
// # Crashes
//
// Each line is appended with one write. A crash can leave the last line
// torn (no newline): Verify reports it as Torn; Open cuts it off and
// appends a "repair" line saying how many bytes it cut and their SHA-256,
// then goes on appending. Likewise, Open records a head that disagrees
// with the log (lines cut from its end, or rewritten) before the next
// line overwrites the head. Lines are not synced to disk one by one:
// after a power loss the last few may be missing, which the next Open
// records the same way.
//
// # What it protects against
//
// The chain shows any change to the log made without recomputing hashes
// from that line on, and Verify names the first line that breaks it.
// Someone able to write the directory can rewrite the whole chain after
// a point (and audit.head) consistently; keep Report.Head elsewhere to
// detect that. One process appends to a log at a time: the user's files
// are locked by the process that serves the user (sync.ErrLocked), and
// nothing else writes there.
//
// Argument digests are plain SHA-256, so that a user can show which
// arguments a call had; an argument from a small set of guessable values
// can be found from its digest by trying them all.
package audit
