package mcp_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	gosync "sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
)

// uiMarkup is the subject the UI test gives a work package: markup that
// would load /leak and run a script if the page inserted it as HTML.
const uiMarkup = `<img src=/leak onerror=alert(1)> <b>bold</b> Zanzibar flamingo census`

// TestSearchUI: the search tools name the MCP Apps view in their _meta
// (ui.resourceUri), and the view (ui://opsearch/search,
// text/html;profile=mcp-app) holds no URL, a CSP that allows no request,
// and no HTML insertion. Headless Chromium renders a real answer from a
// synced fake OpenProject in it, both as MCP Apps hosts deliver it (an
// iframe, the ui/initialize handshake and a ui/notifications/tool-result
// notification carrying the tools/call result) and embedded in the page:
// a title's markup shows as text, and the page requests nothing but
// itself. The screenshots' paths are in the test log.
func TestSearchUI(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnv(t, mcp.Options{})
	wps, meetings, wiki := e.storedWPs(t), e.storedMeetings(t), e.storedWiki(t)
	if err := e.fake.UpdateWorkPackage(wps[0].ID, func(w *openproject.WorkPackage) { w.Subject = uiMarkup }); err != nil {
		t.Fatal(err)
	}
	if err := e.fake.UpdateWorkPackage(wps[1].ID, func(w *openproject.WorkPackage) {
		w.Description = "Count the flamingo colony on Zanzibar before the census closes."
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.fake.UpdateMeeting(meetings[0].ID, func(m *openproject.Meeting) { m.Title = "Zanzibar flamingo census kickoff" }); err != nil {
		t.Fatal(err)
	}
	if err := e.fake.UpdateWikiPage(wiki[0].ID, func(p *openproject.WikiPage) { p.Title = "Zanzibar flamingo census: how we count" }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.user.Worker.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}

	// The tools name the view; the view is what the spec asks for.
	tools, err := e.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		ui, _ := tool.Meta["ui"].(map[string]any)
		search := strings.HasPrefix(tool.Name, "openproject_search")
		if got, _ := ui["resourceUri"].(string); search != (got == mcp.UISearchURI) {
			t.Errorf("%s: _meta %v", tool.Name, tool.Meta)
		}
	}
	rr, err := e.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: mcp.UISearchURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "text/html;profile=mcp-app" || rr.CacheScope != "public" || rr.TTLMs <= 0 {
		t.Fatalf("read the UI: %+v (cache %q %d)", rr.Contents, rr.CacheScope, rr.TTLMs)
	}
	page := rr.Contents[0].Text
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, `http-equiv="Content-Security-Policy" content="default-src 'none';`) {
		t.Errorf("the UI is not an HTML5 document with a CSP that allows nothing by default")
	}
	for _, bad := range []string{"://", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "fetch(", "XMLHttpRequest", "import "} {
		if strings.Contains(page, bad) {
			t.Errorf("the UI holds %q", bad)
		}
	}

	res, err := e.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "openproject_search", Arguments: map[string]any{"query": "Zanzibar flamingo census", "pageSize": 6}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %s", err, resultText(res))
	}
	if ui, _ := res.Meta[mcp.MetaIndexKey].(map[string]any); ui == nil {
		t.Errorf("the answer's _meta lacks %s", mcp.MetaIndexKey)
	}
	result, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := json.Marshal(res.StructuredContent) // escapes <, > and & as \u003c…
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(answer), `\u003cimg src=/leak`) {
		t.Fatalf("the answer does not hold the work package with markup: %.500s", answer)
	}

	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium for the browser test (.ci/run installs Debian's chromium)")
		}
		t.Skip("no chromium on the PATH (Debian: apt-get install chromium); the browser half of the test skips")
	}
	// Every request the pages make reaches this server (relative URLs),
	// or nowhere: the CSP allows no other.
	var mu gosync.Mutex
	asked := map[string]int{}
	embedded := strings.Replace(page, `<script type="application/json" id="opsearch-answer"></script>`,
		`<script type="application/json" id="opsearch-answer">`+string(answer)+`</script>`, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/ui":
			_, _ = w.Write([]byte(page))
		case "/embedded":
			_, _ = w.Write([]byte(embedded))
		case "/host":
			_, _ = w.Write([]byte(strings.Replace(uiHostPage, "RESULT_JSON", string(result), 1)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	browse := func(t *testing.T, path string, extra ...string) string {
		t.Helper()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--virtual-time-budget=10000", "--user-data-dir=" + t.TempDir()}, extra...)
		out, err := exec.CommandContext(t.Context(), chromium, append(args, srv.URL+path)...).Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return string(out)
	}
	shot := func(t *testing.T, path, name string) {
		t.Helper()
		file := filepath.Join(t.TempDir(), name)
		browse(t, path, "--screenshot="+file, "--window-size=720,520")
		fi, err := os.Stat(file)
		if err != nil || fi.Size() < 1000 {
			t.Errorf("no screenshot of %s: %v", path, err)
			return
		}
		// Kept for whoever runs the test: the rendered answer.
		keep := filepath.Join(os.TempDir(), name)
		if b, err := os.ReadFile(file); err == nil && os.WriteFile(keep, b, 0o600) == nil {
			t.Logf("screenshot of the search UI (%s, %d bytes): %s", path, fi.Size(), keep)
		}
	}
	// checkRendered checks the view's DOM as the browser built it.
	checkRendered := func(t *testing.T, dom string) {
		t.Helper()
		items := regexp.MustCompile(`<li>`).FindAllStringIndex(dom, -1)
		var want struct {
			Results []any `json:"results"`
		}
		_ = json.Unmarshal(answer, &want)
		if len(items) != len(want.Results) || len(items) < 3 {
			t.Errorf("%d results rendered, the answer has %d", len(items), len(want.Results))
		}
		// The markup is text: escaped once in the serialized DOM, and
		// no element of it exists.
		if !strings.Contains(dom, html.EscapeString(`<img src=/leak onerror=alert(1)> <b>bold</b> Zanzibar flamingo census`)) {
			t.Errorf("the title with markup is not shown as text:\n%s", dom)
		}
		if strings.Contains(dom, `<img src="/leak"`) || strings.Contains(dom, "<b>bold</b>") {
			t.Errorf("LEAK: the title's markup became elements:\n%s", dom)
		}
		for _, want := range []string{`class="kind k-work_package"`, `class="kind k-meeting"`, `class="kind k-wiki_page"`,
			`class="project"`, `class="status"`, `class="snippet"`, "index synced", "updated ", "openproject://work_packages/"} {
			if !strings.Contains(dom, want) {
				t.Errorf("the view lacks %q", want)
			}
		}
	}

	t.Run("mcp-apps-host", func(t *testing.T) {
		dom := browse(t, "/host", "--dump-dom")
		m := regexp.MustCompile(`(?s)<pre id="dump">(.*?)</pre>`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the host page did not capture the view:\n%s", dom)
		}
		checkRendered(t, html.UnescapeString(m[1]))
		log := regexp.MustCompile(`<p id="log">(.*?)</p>`).FindStringSubmatch(dom)
		if log == nil || !strings.Contains(log[1], "ui/initialize") || !strings.Contains(log[1], "ui/notifications/initialized") ||
			!strings.Contains(log[1], "ui/notifications/size-changed") {
			t.Errorf("the view did not talk MCP Apps to its host: %v", log)
		}
		shot(t, "/host", "opsearch-search-ui.png")
	})
	t.Run("embedded", func(t *testing.T) {
		checkRendered(t, browse(t, "/embedded", "--dump-dom"))
		shot(t, "/embedded", "opsearch-search-ui-embedded.png")
	})
	mu.Lock()
	defer mu.Unlock()
	for path, n := range asked {
		if path != "/host" && path != "/ui" && path != "/embedded" {
			t.Errorf("LEAK: the page requested %s (%d times)", path, n)
		}
	}
	t.Logf("requests the browser made: %v", asked)
}

// uiHostPage is a minimal MCP Apps host (SEP-1865): it shows /ui in a
// sandboxed iframe, answers its ui/initialize, and once the view says it
// is initialized sends the tool's input and its result (RESULT_JSON, the
// tools/call result as the server sent it). It then copies the view's
// DOM into #dump, as text, and the methods the view sent into #log.
const uiHostPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>host</title>
<style>body{margin:8px;font:12px sans-serif;background:#eee} iframe{width:690px;height:420px;border:1px solid #999;background:#fff} pre{display:none}</style></head>
<body><iframe id="view" sandbox="allow-scripts allow-same-origin" src="/ui"></iframe><p id="log"></p><pre id="dump"></pre>
<script>
var result = RESULT_JSON;
var methods = [];
var frame = document.getElementById("view");
function send(msg) { frame.contentWindow.postMessage(msg, "*"); }
window.addEventListener("message", function (ev) {
  if (ev.source !== frame.contentWindow) return;
  var m = ev.data;
  methods.push(m.method || "response");
  document.getElementById("log").textContent = methods.join(" ");
  if (m.method === "ui/initialize") {
    send({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2026-01-26", hostInfo: {name: "test-host", version: "0"},
      hostCapabilities: {openLinks: {}}, hostContext: {theme: "light", displayMode: "inline"}}});
  } else if (m.method === "ui/notifications/initialized") {
    send({jsonrpc: "2.0", method: "ui/notifications/tool-input", params: {arguments: {query: "Zanzibar flamingo census"}}});
    send({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result});
  }
});
(function poll() {
  var doc = frame.contentDocument;
  if (doc && doc.querySelector("#results li") && methods.indexOf("ui/notifications/size-changed") >= 0) {
    document.getElementById("dump").textContent = doc.documentElement.outerHTML;
    return;
  }
  setTimeout(poll, 50);
})();
</script></body></html>`
