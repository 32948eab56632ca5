package mcp

import (
	"context"
	_ "embed" // the search UI's HTML
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The search UI: an MCP Apps view (the io.modelcontextprotocol/ui
// extension, SEP-1865, stable 2026-01-26) that shows a search answer as
// a compact list. The search tools name it in their _meta as
// _meta.ui.resourceUri, the spec's key ("Tools are associated with UI
// resources through the _meta.ui field"; the flat "ui/resourceUri" is
// deprecated there, so it is not sent); a host that supports MCP Apps
// reads UISearchURI (text/html;profile=mcp-app), renders it in a
// sandboxed iframe and hands it the tool's result in a
// ui/notifications/tool-result notification. Other clients ignore the
// key and read the answer as before. The spec lets a server list its
// tools differently for clients without the io.modelcontextprotocol/ui
// capability; here tools/list is one answer for every client, cached as
// public (ListTTL), so the key is always there.
//
// The page is one self-contained document: inline style and script, no
// URL of any kind, a Content-Security-Policy that allows no request, and
// every text of the answer inserted as text (textContent), never as
// markup. It declares no CSP domains, so a host applies the spec's
// restrictive default.

//go:embed ui/search.html
var searchUIHTML string

// uiResourceMeta is the UI resource's _meta.ui: a border around it, and
// no domain to load from (no csp key: the host's default allows none).
func uiResourceMeta() map[string]any { return map[string]any{"prefersBorder": true} }

// searchToolMeta is the _meta of the search tools: MCP Apps hosts show
// their answers with the search UI.
func searchToolMeta() sdk.Meta { return sdk.Meta{"ui": map[string]any{"resourceUri": UISearchURI}} }

// readSearchUI answers resources/read of UISearchURI. The page is the
// same for everyone and for the life of the process: any cache may
// keep it for ListTTL.
func (s *server) readSearchUI(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	return &sdk.ReadResourceResult{
		Contents: []*sdk.ResourceContents{{URI: UISearchURI, MIMEType: mimeMCPApp, Text: searchUIHTML,
			Meta: sdk.Meta{"ui": uiResourceMeta()}}},
		Cacheable: sdk.Cacheable{TTLMs: int(ListTTL / time.Millisecond), CacheScope: "public"},
	}, nil
}
