// Package openproject is the client of OpenProject's API v3: it
// authenticates (Basic "apikey:<key>" or Bearer), pages through
// collections, builds filters and sort orders, decodes HAL+JSON into one
// normalized model per entity (Project, WorkPackage, Activity, WikiPage,
// Meeting and the rest in model.go), and turns failures into typed errors
// callers branch on: ErrUnauthenticated, ErrPermission, ErrNotFound,
// ErrRateLimited (with Retry-After), ErrServer, ErrNetwork, ErrValidation,
// ErrConflict. Reads that fail transiently (network, 5xx, 429) are retried
// a bounded number of times with backoff; writes are not.
//
// It owns everything the wire teaches: which endpoints exist on which
// server versions (capability probing), how undisclosed links look, how
// markup becomes plain text (PlainText). Every other package uses its
// model and never decodes HAL itself.
//
// It must not know about storage, indexing, search or MCP: it depends on
// net/http alone, and the API key never leaves it (Redact strips it from
// any text that may echo a request).
package openproject
