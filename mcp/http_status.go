package mcp

import (
	"crypto/subtle"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/opsearch/opsearch/kind"
)

// GET /status: a page for the people who run the team server, behind the
// operator token (HTTPOptions.AdminToken): upstream health, how many
// users are active (a count, no identities), sync outcomes and the last
// error per kind, documents per kind, the data directory's size, and a
// chart of recent search latencies. Server-rendered, self-contained
// (no script, no external asset), every value escaped by html/template.

// OperatorStats are the process-wide figures the status page shows
// beside what the handler knows itself; the command fills them from its
// metrics.
type OperatorStats struct {
	// Syncs counts sync outcomes (ok, error, unsupported, canceled) per
	// kind since the process started; LastError is each kind's last
	// failure, as the sync reported it (never holding a key).
	Syncs     map[string]map[string]int
	LastError map[string]string
	// Documents are the documents per kind in the open indexes.
	Documents map[string]int
	// Latencies are recent search durations, oldest first.
	Latencies []time.Duration
	// DiskBytes is the size of the data directory (-1: unknown).
	DiskBytes int64
}

type statusKind struct {
	Kind                              string
	OK, Errors, Unsupported, Canceled int
	Documents                         int
	LastError                         string
}

type statusPage struct {
	Status, Reason, OpenProject, Index string
	Reachable                          bool
	CheckedAt, UpstreamError           string
	ActiveUsers                        int
	Crawl                              string
	Store                              string
	Kinds                              []statusKind
	Disk                               string
	Searches                           int
	P50, P99                           string
	Chart                              template.HTML // an SVG built from numbers only
	Now                                string
	Version                            string
}

var statusTemplate = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>opsearch status</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:60em}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}
table{border-collapse:collapse}td,th{padding:.25em .8em;border-bottom:1px solid #ddd;text-align:left}
th{background:#f4f4f4}.ok{color:#17702f}.bad{color:#b3261e}.muted{color:#777}
.badge{display:inline-block;padding:.1em .6em;border-radius:.8em;background:#eee}
</style></head><body>
<h1>opsearch status <span class="badge {{if eq .Status "ok"}}ok{{else}}bad{{end}}" id="status">{{.Status}}</span></h1>
{{if .Reason}}<p class="bad" id="reason">{{.Reason}}</p>{{end}}
<table>
<tr><th>OpenProject</th><td id="openproject">{{.OpenProject}}: {{if .Reachable}}<span class="ok">reachable</span>{{else}}<span class="bad">not reachable</span> {{.UpstreamError}}{{end}} <span class="muted">(checked {{.CheckedAt}})</span></td></tr>
<tr><th>Index</th><td id="index">{{.Index}}</td></tr>
<tr><th>Active users</th><td id="active-users">{{.ActiveUsers}}</td></tr>
{{if .Crawl}}<tr><th>Crawl account</th><td id="crawl">{{.Crawl}}</td></tr>{{end}}
{{if .Store}}<tr><th>Shared store</th><td id="store">{{.Store}}</td></tr>{{end}}
<tr><th>Data directory</th><td id="disk">{{.Disk}}</td></tr>
</table>
<h2>Syncs since start, by kind</h2>
<table id="syncs"><tr><th>kind</th><th>documents</th><th>ok</th><th>errors</th><th>unsupported</th><th>cancelled</th><th>last error</th></tr>
{{range .Kinds}}<tr><td>{{.Kind}}</td><td>{{.Documents}}</td><td>{{.OK}}</td><td>{{.Errors}}</td><td>{{.Unsupported}}</td><td>{{.Canceled}}</td><td class="bad">{{.LastError}}</td></tr>
{{end}}</table>
<h2>Search latency</h2>
<p id="latency">{{if .Searches}}last {{.Searches}} searches: median {{.P50}}, p99 {{.P99}}{{else}}no search yet{{end}}</p>
{{.Chart}}
<p class="muted">opsearch{{with .Version}} {{.}}{{end}}, {{.Now}}. No user, key or query is shown here.</p>
</body></html>
`))

// status answers GET /status.
func (h *httpHandler) status(w http.ResponseWriter, r *http.Request) {
	if h.opts.AdminToken == "" {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "Not Found: the status page is off (start the server with --admin-token)"})
		return
	}
	if !h.operator(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="opsearch status"`)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>opsearch status</title></head>`+
			`<body><h1>opsearch status</h1><p id="denied">The operator token is required: send it as Authorization: Bearer, or add ?token= to the address.</p></body></html>`)
		return
	}
	p := statusPage{Status: "ok", OpenProject: h.opts.BaseURL, Index: "per-user", ActiveUsers: h.mgr.ActiveUsers(),
		Now: time.Now().UTC().Format(time.RFC3339), Version: h.opts.Version, Disk: "unknown"}
	if h.mgr.SharedIndex() {
		p.Index = "shared (one copy for all users, each searching through their own view)"
		if last, ok := h.mgr.CrawlReport(); ok {
			p.Crawl = "last sync finished " + last.Report.Started.Add(last.Report.Duration).UTC().Format(time.RFC3339)
			if last.Err != nil {
				p.Crawl += ", failed"
			}
		}
		if f, ok := h.mgr.Follow(); ok {
			p.Store = fmt.Sprintf("PostgreSQL, this replica's index %d changes behind", f.Behind)
			if f.Building {
				p.Status, p.Reason = "starting", fmt.Sprintf("building the index from the shared store: %d of %d documents", f.Done, f.Total)
			}
		}
	}
	if h.opts.BaseURL != "" || h.opts.Probe != nil {
		at, err := h.upstream(r.Context())
		p.Reachable, p.CheckedAt = err == nil, at.UTC().Format(time.RFC3339)
		if err != nil {
			p.Status, p.Reason, p.UpstreamError = "degraded", "OpenProject does not answer", err.Error()
		}
	}
	var st OperatorStats
	if h.opts.Stats != nil {
		st = h.opts.Stats()
	}
	if st.DiskBytes >= 0 && h.opts.Stats != nil {
		p.Disk = fmt.Sprintf("%.1f MB", float64(st.DiskBytes)/1e6)
	}
	kinds := []string{string(kind.Project), string(kind.WorkPackage), string(kind.WikiPage), string(kind.Meeting)}
	if _, ok := st.Syncs["all"]; ok {
		kinds = append(kinds, "all")
	}
	for _, k := range kinds {
		o := st.Syncs[k]
		p.Kinds = append(p.Kinds, statusKind{Kind: k, OK: o["ok"], Errors: o["error"], Unsupported: o["unsupported"], Canceled: o["canceled"],
			Documents: st.Documents[k], LastError: st.LastError[k]})
	}
	if n := len(st.Latencies); n > 0 {
		sorted := slices.Clone(st.Latencies)
		slices.Sort(sorted)
		p.Searches = n
		p.P50, p.P99 = ms(sorted[n/2]), ms(sorted[min(n-1, n*99/100)])
		p.Chart = latencyChart(st.Latencies)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := statusTemplate.Execute(w, p); err != nil {
		h.log.Warn("render the status page", "error", err)
	}
}

// operator reports whether r carries the operator token.
func (h *httpHandler) operator(r *http.Request) bool {
	tok := ""
	if a := strings.TrimSpace(r.Header.Get("Authorization")); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		tok = strings.TrimSpace(a[7:])
	} else {
		tok = r.URL.Query().Get("token")
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(h.opts.AdminToken)) == 1
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// latencyChart draws the latencies, oldest first, as an inline SVG
// polyline: numbers only, so it is safe to mark as HTML.
func latencyChart(ds []time.Duration) template.HTML {
	const w, hgt = 600, 120
	top := slices.Max(ds)
	if top <= 0 {
		top = 1
	}
	var pts strings.Builder
	for i, d := range ds {
		x := float64(i) * w / float64(max(1, len(ds)-1))
		y := hgt - float64(d)/float64(top)*hgt
		fmt.Fprintf(&pts, "%.1f,%.1f ", x, y)
	}
	return template.HTML(fmt.Sprintf(`<svg id="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="search latency, highest %s">`+
		`<rect width="100%%" height="100%%" fill="#fafafa"/><polyline fill="none" stroke="#1a73e8" stroke-width="1.5" points="%s"/></svg>`,
		w, hgt+10, w, hgt+10, ms(top), strings.TrimSpace(pts.String())))
}
