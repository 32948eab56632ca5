package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListTools returns the tools a server built with opts offers, in the
// order of tools/list. It builds the server without an API or an index
// (listing tools calls neither) and asks it over an in-memory session, so
// the answer is exactly what an MCP client sees. Call it once at startup.
func ListTools(ctx context.Context, opts Options) ([]*sdk.Tool, error) {
	srv := NewServer(nil, nil, opts)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, fmt.Errorf("list tools: connect server: %w", err)
	}
	defer ss.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "opsearch-tools", Version: "0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("list tools: connect client: %w", err)
	}
	defer cs.Close()
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// OpenAPI tags, in the order the document lists them.
const (
	tagSearch       = "Search"
	tagProjects     = "Projects"
	tagWorkPackages = "Work Packages"
	tagQueries      = "Queries"
	tagMetadata     = "Metadata"
	tagOpenAPI      = "OpenAPI"
	tagMeetings     = "Meetings"
	tagWiki         = "Wiki"
	tagTimeEntries  = "Time Entries"
	tagWrites       = "Writes"
)

// tagDescriptions lists the tags with their descriptions, in order.
func tagDescriptions() [][2]string {
	return [][2]string{
		{tagSearch, "Fast, typo-tolerant search over the local index, and its freshness"},
		{tagProjects, "Projects from the live OpenProject API"},
		{tagWorkPackages, "Work packages and their activities from the live API"},
		{tagQueries, "Saved work package queries (views)"},
		{tagMetadata, "Statuses, types, priorities and users"},
		{tagOpenAPI, "OpenProject's own API specification"},
		{tagMeetings, "Meetings with agenda items and outcomes"},
		{tagWiki, "Wiki pages and their links"},
		{tagTimeEntries, "Time logged on work packages, from the live API"},
		{tagWrites, "Tools that change OpenProject (absent in read-only mode)"},
	}
}

// isWriteTool reports whether a tool changes OpenProject: every tool that
// does not declare readOnlyHint.
func isWriteTool(t *sdk.Tool) bool {
	return t.Annotations == nil || !t.Annotations.ReadOnlyHint
}

// toolTag files a tool under one tag by its name, like the reference
// server's spec; write tools all go under Writes.
func toolTag(t *sdk.Tool) string {
	n := t.Name
	switch {
	case isWriteTool(t):
		return tagWrites
	case strings.Contains(n, "search") || strings.Contains(n, "sync_status"):
		return tagSearch
	case strings.Contains(n, "openapi"):
		return tagOpenAPI
	case strings.Contains(n, "meeting"):
		return tagMeetings
	case strings.Contains(n, "wiki"):
		return tagWiki
	case strings.Contains(n, "time_entr"):
		return tagTimeEntries
	case strings.Contains(n, "quer"):
		return tagQueries
	case strings.HasSuffix(n, "_projects") || strings.HasSuffix(n, "_project"):
		return tagProjects
	case strings.Contains(n, "work_package") || strings.Contains(n, "relation"):
		return tagWorkPackages
	}
	return tagMetadata
}

// ToolPath is the REST path that runs a tool: POST it the tool's
// arguments as a JSON object.
func ToolPath(name string) string { return "/api/tools/" + name }

// OpenAPISpec returns an OpenAPI 3.1 document with one POST
// /api/tools/{name} operation per tool: operationId is the tool name, the
// request body is the tool's input schema (JSON Schema 2020-12, which OAS
// 3.1 accepts as is), and the responses are the REST layer's: 200 with the
// tool result, 400 for invalid arguments, 401 without a key, 403 for a
// write refused in read-only mode, 404 for an unknown tool, 500. In
// read-only mode the write tools (those without readOnlyHint) are left
// out. baseURL, when not empty, becomes the only server; empty leaves the
// servers out, which OpenAPI reads as "relative to where this document was
// fetched".
func OpenAPISpec(tools []*sdk.Tool, readOnly bool, baseURL string) ([]byte, error) {
	if len(tools) == 0 {
		return nil, errors.New("openapi: no tools")
	}
	paths := map[string]any{}
	used := map[string]bool{}
	for _, t := range tools {
		if t == nil || t.Name == "" {
			return nil, errors.New("openapi: a tool without a name")
		}
		if readOnly && isWriteTool(t) {
			continue
		}
		if _, dup := paths[ToolPath(t.Name)]; dup {
			return nil, fmt.Errorf("openapi: tool %q listed twice", t.Name)
		}
		op, err := toolOperation(t)
		if err != nil {
			return nil, err
		}
		used[op["tags"].([]string)[0]] = true
		paths[ToolPath(t.Name)] = map[string]any{"post": op}
	}
	var tags []map[string]string
	for _, td := range tagDescriptions() {
		if used[td[0]] {
			tags = append(tags, map[string]string{"name": td[0], "description": td[1]})
		}
	}
	desc := "Every MCP tool of opsearch as a plain HTTP operation: POST the tool's arguments as a JSON object to /api/tools/{name}. " +
		"Authenticate with your own OpenProject API key, as a Bearer token or in the X-OpenProject-Api-Key header."
	if readOnly {
		desc += " This server is read-only: the write tools are not offered."
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "opsearch: OpenProject search and tools",
			"version":     "1.0.0",
			"description": desc,
		},
		"tags":  tags,
		"paths": paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"BearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "your OpenProject API key as a Bearer token"},
				"ApiKeyAuth": map[string]any{"type": "apiKey", "in": "header", "name": "X-OpenProject-Api-Key", "description": "your OpenProject API key"},
			},
			"schemas": componentSchemas(),
		},
		"security": []map[string][]string{{"BearerAuth": {}}, {"ApiKeyAuth": {}}},
	}
	if baseURL != "" {
		doc["servers"] = []map[string]string{{"url": strings.TrimRight(baseURL, "/")}}
	}
	return json.MarshalIndent(doc, "", "  ")
}

// toolOperation is the OpenAPI operation of one tool.
func toolOperation(t *sdk.Tool) (map[string]any, error) {
	schema, err := toolInputSchema(t)
	if err != nil {
		return nil, err
	}
	summary := t.Title
	if summary == "" && t.Annotations != nil {
		summary = t.Annotations.Title
	}
	if summary == "" {
		summary = firstSentence(t.Description)
	}
	if summary == "" {
		summary = t.Name
	}
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	jsonBody := func(desc, schema string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": ref(schema)}}}
	}
	return map[string]any{
		"operationId": t.Name,
		"summary":     summary,
		"description": t.Description,
		"tags":        []string{toolTag(t)},
		"requestBody": map[string]any{
			"required": true,
			"content":  map[string]any{"application/json": map[string]any{"schema": schema}},
		},
		"responses": map[string]any{
			"200": jsonBody("The tool ran. isError says whether it failed (a tool-level error, e.g. OpenProject said not found).", "ToolResult"),
			"400": jsonBody("The body is not JSON or does not match the tool's input schema.", "ValidationError"),
			"401": jsonBody("No API key was given and the server has none configured.", "Error"),
			"403": jsonBody("A write tool was called on a read-only server (code SERVER_READ_ONLY).", "Error"),
			"404": jsonBody("No tool of this name.", "Error"),
			"500": jsonBody("The server failed.", "Error"),
		},
	}, nil
}

// toolInputSchema is the tool's input schema as a JSON value.
func toolInputSchema(t *sdk.Tool) (any, error) {
	if t.InputSchema == nil {
		return map[string]any{"type": "object"}, nil
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("openapi: input schema of %s: %w", t.Name, err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("openapi: input schema of %s is not an object: %w", t.Name, err)
	}
	// The dialect is OAS 3.1's default (2020-12); a $schema here would
	// only make some tools reject the document.
	delete(v, "$schema")
	return v, nil
}

func componentSchemas() map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return map[string]any{
		"ToolResult": map[string]any{
			"type":     "object",
			"required": []string{"content", "isError"},
			"properties": map[string]any{
				"content": map[string]any{
					"type":        "array",
					"description": "the MCP tool result's content blocks",
					"items": map[string]any{
						"type":     "object",
						"required": []string{"type"},
						"properties": map[string]any{
							"type": str("content type, normally text"),
							"text": str("the tool's answer; JSON for every opsearch tool"),
						},
					},
				},
				"isError": map[string]any{"type": "boolean", "description": "true when the tool failed"},
				"data":    map[string]any{"description": "the first text content parsed as JSON, when it is JSON"},
			},
		},
		"ValidationError": map[string]any{
			"type":     "object",
			"required": []string{"error"},
			"properties": map[string]any{
				"error":   str(`"Validation error", or what is wrong with the body`),
				"details": map[string]any{"description": "which arguments are wrong and why"},
			},
		},
		"Error": map[string]any{
			"type":     "object",
			"required": []string{"error"},
			"properties": map[string]any{
				"error": str("what went wrong"),
				"code":  map[string]any{"type": "string", "description": "a machine-readable code, e.g. SERVER_READ_ONLY", "examples": []string{"SERVER_READ_ONLY"}},
			},
		},
	}
}

// firstSentence returns the text up to the first ". " or newline.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// OpenAPIHandler serves the document of OpenAPISpec, built once here, to
// GET and HEAD requests. Mount it with OpenAPIRoutes.
func OpenAPIHandler(tools []*sdk.Tool, readOnly bool, baseURL string) (http.Handler, error) {
	spec, err := OpenAPISpec(tools, readOnly, baseURL)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = w.Write([]byte(`{"error":"Method Not Allowed"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(spec)
	}), nil
}

// OpenAPIRoutes mounts h at GET /openapi.json and GET /swagger.json (the
// reference server's two names), as patterns for http.ServeMux.
func OpenAPIRoutes(h http.Handler) map[string]http.Handler {
	return map[string]http.Handler{"GET /openapi.json": h, "GET /swagger.json": h}
}
