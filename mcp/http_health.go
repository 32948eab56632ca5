package mcp

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// GET /health: whether the process serves and OpenProject answers.

// Upstream probes of /health: a result is reused for probeTTL, and a
// probe waits at most probeTimeout.
const (
	probeTTL     = 10 * time.Second
	probeTimeout = 5 * time.Second
)

// upstream returns whether OpenProject answers, probing at most once per
// probeTTL however often /health is asked.
func (h *httpHandler) upstream(ctx context.Context) (time.Time, error) {
	h.upstreamMu.Lock()
	err, at := h.upstreamErr, h.upstreamAt
	h.upstreamMu.Unlock()
	ttl := h.opts.ProbeEvery
	if ttl <= 0 {
		ttl = probeTTL
	}
	if !at.IsZero() && time.Since(at) < ttl {
		return at, err
	}
	v, _, _ := h.probeFlight.Do("probe", func() (any, error) {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
		defer cancel()
		probe := h.opts.Probe
		if probe == nil {
			probe = func(ctx context.Context) error { return openproject.Probe(ctx, nil, h.opts.BaseURL) }
		}
		err := probe(pctx)
		now := time.Now()
		h.upstreamMu.Lock()
		h.upstreamErr, h.upstreamAt = err, now
		h.upstreamMu.Unlock()
		return [2]any{err, now}, nil
	})
	r := v.([2]any)
	err, _ = r[0].(error)
	return r[1].(time.Time), err
}

// health answers GET /health: no auth, no user data. status is "ok", or
// "degraded" with the reason while OpenProject does not answer (searches
// still answer from the local indexes; live tools and syncs fail). It
// stays HTTP 200 either way: the process itself is healthy, and
// restarting it would not bring OpenProject back.
func (h *httpHandler) health(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{
		"status": "ok", "mode": "http", "openproject": h.opts.BaseURL,
		"readOnly": h.opts.ReadOnly, "activeUsers": h.mgr.ActiveUsers(), "index": "per-user",
	}
	if h.mgr.SharedIndex() {
		out["index"] = "shared"
		if last, ok := h.mgr.CrawlReport(); ok {
			// When the crawl account last synced, and whether it
			// succeeded; no error text leaves without a key.
			out["crawl"] = map[string]any{"finishedAt": last.Report.Started.Add(last.Report.Duration).UTC().Format(time.RFC3339), "ok": last.Err == nil}
		}
		if f, ok := h.mgr.Follow(); ok {
			// A replica: how far its index is behind the shared store.
			st := map[string]any{"engine": "postgres", "appliedGeneration": f.Applied, "behind": f.Behind}
			if f.Err != nil {
				st["error"] = f.Err.Error()
				out["status"] = "degraded"
				out["reason"] = "the index cannot follow the shared store: " + f.Err.Error()
			}
			if f.Building {
				// Not ready: a load balancer's readiness check keeps
				// requests away until the index holds the store.
				st["building"] = map[string]any{"documents": f.Done, "total": f.Total}
				out["status"] = "starting"
				out["reason"] = fmt.Sprintf("building the index from the shared store: %d of %d documents", f.Done, f.Total)
				out["store"] = st
				writeJSON(w, http.StatusServiceUnavailable, out)
				return
			}
			out["store"] = st
		}
	}
	if h.opts.BaseURL != "" || h.opts.Probe != nil {
		at, err := h.upstream(r.Context())
		up := map[string]any{"reachable": err == nil, "checkedAt": at.UTC().Format(time.RFC3339)}
		if err != nil {
			out["status"] = "degraded"
			out["reason"] = "OpenProject does not answer: " + err.Error()
			up["error"] = err.Error()
		}
		out["upstream"] = up
	}
	writeJSON(w, http.StatusOK, out)
}
