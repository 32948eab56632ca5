package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// POST /webhooks/openproject: OpenProject's webhooks (Administration,
// API and webhooks) tell of a change as it happens. The body is signed
// with the webhook's secret: X-OP-Signature: sha1=<hex HMAC-SHA1 of the
// body> (OpenProject's RepresentedWebhookJob). A work package event, a
// comment on one, or an attachment on one refreshes that work package
// for every active user, with their own key, before the answer; a
// project event starts every active user's sync; other events (time
// entries, which are not indexed) wait for the schedule, which stays the
// safety net.

// webhookTimeout bounds the refreshes one event starts: OpenProject waits
// for the answer.
const webhookTimeout = 20 * time.Second

// maxWebhookBody bounds a webhook's body; OpenProject sends one
// representation.
const maxWebhookBody = 4 << 20

func (h *httpHandler) webhook(w http.ResponseWriter, r *http.Request) {
	if h.opts.WebhookSecret == "" {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "Not Found: webhooks are off (start the server with --webhook-secret)"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil || len(body) > maxWebhookBody {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Bad Request: the body cannot be read or is over 4 MiB"})
		return
	}
	if !validSignature(h.opts.WebhookSecret, body, r.Header.Get("X-OP-Signature")) {
		// Nothing else: no hint of what was expected.
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "Unauthorized"})
		return
	}
	var ev webhookEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Bad Request: the body is not a webhook event: " + err.Error()})
		return
	}
	ids := ev.workPackages()
	if len(ids) == 0 {
		if strings.HasPrefix(ev.Action, "project:") {
			// A project's name or description: every active user's
			// next sync, started now, brings it.
			writeJSON(w, http.StatusOK, map[string]any{"action": ev.Action, "refreshed": 0, "syncsStarted": h.mgr.TriggerSyncs()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"action": ev.Action, "refreshed": 0, "note": "nothing to refresh now: the next scheduled sync picks this change up"})
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), webhookTimeout)
	defer cancel()
	users, err := h.mgr.RefreshWorkPackages(ctx, ids)
	out := map[string]any{"action": ev.Action, "workPackages": ids, "users": users}
	if err != nil {
		h.log.Warn("webhook refresh failed for some users; their next sync catches up", "action", ev.Action, "error", err)
		out["note"] = "some users' refresh failed; their next scheduled sync catches up"
	}
	writeJSON(w, http.StatusOK, out)
}

// validSignature checks OpenProject's X-OP-Signature header.
func validSignature(secret string, body []byte, header string) bool {
	sig, ok := strings.CutPrefix(strings.TrimSpace(header), "sha1=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// webhookEvent is what opsearch reads of OpenProject's webhook payload:
// the action and the representation it carries, under a key named for
// its kind.
type webhookEvent struct {
	Action      string       `json:"action"`
	WorkPackage *halResource `json:"work_package"`
	Activity    *halResource `json:"activity"`
	Attachment  *halResource `json:"attachment"`
}

// halResource is the part of a HAL representation a webhook needs.
type halResource struct {
	ID    int64 `json:"id"`
	Links map[string]struct {
		Href string `json:"href"`
	} `json:"_links"`
	Embedded struct {
		Container *struct {
			Type string `json:"_type"`
			ID   int64  `json:"id"`
		} `json:"container"`
	} `json:"_embedded"`
}

// workPackages are the work packages the event changed.
func (ev webhookEvent) workPackages() []int64 {
	var ids []int64
	add := func(id int64) {
		if id > 0 && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if ev.WorkPackage != nil {
		add(ev.WorkPackage.ID)
	}
	if ev.Activity != nil {
		add(hrefID(ev.Activity.Links["workPackage"].Href, "/work_packages/"))
	}
	if a := ev.Attachment; a != nil {
		if c := a.Embedded.Container; c != nil && c.Type == "WorkPackage" {
			add(c.ID)
		} else {
			add(hrefID(a.Links["container"].Href, "/work_packages/"))
		}
	}
	return ids
}

// hrefID is the id at the end of href after prefix, 0 if none.
func hrefID(href, prefix string) int64 {
	i := strings.LastIndex(href, prefix)
	if i < 0 {
		return 0
	}
	id, err := strconv.ParseInt(strings.TrimRight(href[i+len(prefix):], "/"), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
