// Package mcp is opsearch's MCP server: the tools an agent calls, and the
// HTTP server that carries them. Search tools answer from the user's local
// index, every other tool from the live OpenProject API, and writes update
// the index before they return (read-your-writes).
//
// The package owns:
//
//   - the search tools (openproject_search and its per-kind variants,
//     openproject_sync_status), answered from the local index through the
//     search package (Index, Searcher, UserIndex), never from the API;
//   - the live tools (list_* and get_*, one file per entity kind), which
//     call OpenProject as the key's user through API, an interface declared
//     here with only the methods the tools call, and turn the client's
//     model into compact answers with capped texts (normalize.go);
//   - the write tools, which re-read what they changed into the index
//     before answering, and the read-only mode that hides and refuses them;
//   - the resources (resources.go): each item by URI, read from the index
//     as the user may see it there, else live with the user's key; and
//     the MCP Apps view of a search answer (search_ui.go, ui/search.html);
//   - argument checking and error discipline: a bad argument is named in
//     the answer; any other failure becomes a short, user-safe message
//     with a request id, its cause going to the log only;
//   - the audit of tool calls: one middleware (auditCalls) gives every
//     call (and resource read), over every transport, its request id, and
//     records it in the
//     user's audit log (package audit: tool, argument digest, outcome
//     category, never argument text), which UserIndex keeps in the
//     user's own directory when asked to (UserIndexOptions.Audit);
//   - the HTTP server (NewHTTPHandler): stateless Streamable HTTP, legacy
//     SSE, the REST bridge POST /api/tools/{name} and the OpenAPI document
//     describing it, /health, Host and Origin checks, and one MCP server per
//     API key over each user's index. Stdio is the SDK's transport, which
//     cmd/opsearch runs on NewServer's server; /metrics and other extra
//     routes are mounted from outside (HTTPOptions.Extra).
//
// It must not know:
//
//   - HAL, or any OpenProject wire format: the openproject package decodes
//     every answer into its model once, and a field a tool needs is added
//     there. The one raw document read here is the instance's OpenAPI spec
//     (openproject_get_openapi_spec), which is not HAL and is shown in
//     parts as the server wrote it;
//   - how the index is built, stored or queried (bleve, mappings, the
//     store's files): it asks search and sync, and names entity kinds by
//     indexer and store constants only;
//   - where a user's data lives on disk: no answer shows the data
//     directory;
//   - how users are opened, synced and closed: that is sync's manager and
//     worker; the HTTP server only attaches its per-user state to them;
//   - an API key beyond the request that brought it: the key lives in its
//     server's client, servers are found by the key's hash, and a key sent
//     in the query string is stripped from the URL before anything else
//     sees it; no log line carries a key.
package mcp
