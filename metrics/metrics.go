package metrics

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	gosync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/opsearch/opsearch/sync"
)

// Sync outcomes: the values of the outcome label of opsearch_syncs_total.
const (
	OutcomeOK          = "ok"
	OutcomeError       = "error"
	OutcomeUnsupported = "unsupported"
	OutcomeCanceled    = "canceled"
)

// KindAll is the kind label of a sync that failed before any kind ran
// (the identity check, a locked store).
const KindAll = "all"

// Status classes: the values of the class label of
// opsearch_openproject_requests_total. ClassError is a request that got
// no HTTP response (network failure, timeout, cancellation).
const (
	Class2xx   = "2xx"
	Class3xx   = "3xx"
	Class4xx   = "4xx"
	Class5xx   = "5xx"
	ClassError = "error"
)

// Metrics holds opsearch's metrics and the registry they are exported
// from. Its methods are safe for concurrent use, and a nil *Metrics
// ignores every call, so code paths need not check whether metrics are
// enabled.
type Metrics struct {
	reg *prometheus.Registry

	syncs        *prometheus.CounterVec
	syncDuration prometheus.Histogram
	requests     *prometheus.CounterVec
	search       *prometheus.HistogramVec
	documents    *prometheus.GaugeVec
	activeUsers  prometheus.Gauge

	// mu guards docs: per user (an opaque key that is never exported) the
	// last document count per kind, so the gauge can export their sum.
	mu   gosync.Mutex
	docs map[string]map[string]int
	// outcomes and lastErr are the sync outcomes per kind and the last
	// error of each kind, for the status page (Snapshot); latencies the
	// last searches' durations, oldest first.
	outcomes  map[string]map[string]int
	lastErr   map[string]string
	latencies []time.Duration
}

// maxLatencies is how many recent search durations Snapshot keeps.
const maxLatencies = 200

// Snapshot is what the status page shows of the metrics: sync outcomes
// and the last error per kind, documents per kind and the recent search
// latencies, oldest first. Error texts are the sync's own, which never
// hold a key.
type Snapshot struct {
	Syncs     map[string]map[string]int
	LastError map[string]string
	Documents map[string]int
	Latencies []time.Duration
}

// Snapshot returns the status page's figures.
func (m *Metrics) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Snapshot{Syncs: map[string]map[string]int{}, LastError: map[string]string{}, Documents: map[string]int{}, Latencies: slices.Clone(m.latencies)}
	for k, o := range m.outcomes {
		s.Syncs[k] = maps.Clone(o)
	}
	maps.Copy(s.LastError, m.lastErr)
	for _, kinds := range m.docs {
		for k, n := range kinds {
			s.Documents[k] += n
		}
	}
	return s
}

// record notes a kind's sync outcome for Snapshot.
func (m *Metrics) record(kind, outcome string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.outcomes[kind] == nil {
		m.outcomes[kind] = map[string]int{}
	}
	m.outcomes[kind][outcome]++
	if err != nil && outcome == OutcomeError {
		msg := err.Error()
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		m.lastErr[kind] = msg
	}
}

// New returns metrics registered with a new registry, together with the
// Go runtime and process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opsearch_syncs_total",
			Help: "Per-kind sync runs by kind (project, work_package, wiki_page, meeting; all when a sync failed before any kind ran) and outcome (ok, error, unsupported, canceled).",
		}, []string{"kind", "outcome"}),
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "opsearch_sync_duration_seconds",
			Help:    "Duration of whole sync runs, across users.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "opsearch_openproject_requests_total",
			Help: "Requests to the OpenProject API by response status class (2xx, 3xx, 4xx, 5xx; error when no response came).",
		}, []string{"class"}),
		search: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "opsearch_search_duration_seconds",
			Help:    "Latency of search tool calls answered from the local index, by tool.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		}, []string{"tool"}),
		documents: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "opsearch_documents",
			Help: "Documents in the local indexes by kind, summed over the users whose index is open (a document visible to two users counts twice).",
		}, []string{"kind"}),
		activeUsers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "opsearch_active_users",
			Help: "Users whose index is open on this server.",
		}),
		docs:     map[string]map[string]int{},
		outcomes: map[string]map[string]int{},
		lastErr:  map[string]string{},
	}
	reg.MustRegister(m.syncs, m.syncDuration, m.requests, m.search, m.documents, m.activeUsers,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the metrics are exported from, for callers
// that add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format (mount
// it at GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveSync counts one finished sync run: one sample per kind it ran,
// by outcome, and its duration. Its signature matches
// sync.SchedulerOptions.OnSync.
func (m *Metrics) ObserveSync(rep sync.Report, err error) {
	if m == nil {
		return
	}
	if rep.Duration > 0 {
		m.syncDuration.Observe(rep.Duration.Seconds())
	}
	if len(rep.Kinds) == 0 {
		if err != nil {
			m.syncs.WithLabelValues(KindAll, errOutcome(err)).Inc()
			m.record(KindAll, errOutcome(err), err)
		}
		return
	}
	for k, kr := range rep.Kinds {
		outcome := OutcomeOK
		switch {
		case kr == nil:
			continue
		case kr.Err != nil:
			outcome = errOutcome(kr.Err)
		case kr.Unsupported:
			outcome = OutcomeUnsupported
		}
		m.syncs.WithLabelValues(string(k), outcome).Inc()
		m.record(string(k), outcome, kr.Err)
	}
}

func errOutcome(err error) string {
	if errors.Is(err, context.Canceled) {
		return OutcomeCanceled
	}
	return OutcomeError
}

// ObserveSearch records the latency of one search tool call. tool is the
// MCP tool name (a fixed set).
func (m *Metrics) ObserveSearch(d time.Duration, tool string) {
	if m == nil {
		return
	}
	m.search.WithLabelValues(tool).Observe(d.Seconds())
	m.mu.Lock()
	if len(m.latencies) >= maxLatencies {
		m.latencies = slices.Delete(m.latencies, 0, len(m.latencies)-maxLatencies+1)
	}
	m.latencies = append(m.latencies, d)
	m.mu.Unlock()
}

// SetDocuments records that one user's index holds n documents of kind.
// user is any stable opaque key for the user (a user id, a data
// directory); it is never exported: the gauge shows the sum over users.
func (m *Metrics) SetDocuments(user, kind string, n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.docs[user] == nil {
		m.docs[user] = map[string]int{}
	}
	m.docs[user][kind] = n
	m.documents.WithLabelValues(kind).Set(float64(m.sumLocked(kind)))
}

// ForgetUser drops a user's document counts from the sums, when their
// index is closed (evicted after idle time, or at shutdown).
func (m *Metrics) ForgetUser(user string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kinds := m.docs[user]
	delete(m.docs, user)
	for kind := range kinds {
		m.documents.WithLabelValues(kind).Set(float64(m.sumLocked(kind)))
	}
}

func (m *Metrics) sumLocked(kind string) int {
	total := 0
	for _, kinds := range m.docs {
		total += kinds[kind]
	}
	return total
}

// SetActiveUsers records how many users' indexes are open.
func (m *Metrics) SetActiveUsers(n int) {
	if m == nil {
		return
	}
	m.activeUsers.Set(float64(n))
}

// Transport wraps base (nil: http.DefaultTransport) so that every request
// to OpenProject is counted by the class of its response status. Nothing
// of the request — URL, headers, credentials — reaches a label.
func (m *Metrics) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if m == nil {
		return base
	}
	return &countingTransport{base: base, requests: m.requests}
}

type countingTransport struct {
	base     http.RoundTripper
	requests *prometheus.CounterVec
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	class := ClassError
	if err == nil && resp != nil {
		class = statusClass(resp.StatusCode)
	}
	t.requests.WithLabelValues(class).Inc()
	return resp, err
}

// statusClass maps a status code to its class; codes outside 200..599
// (1xx never reaches a RoundTripper's caller) count as errors.
func statusClass(code int) string {
	switch {
	case code >= 200 && code < 300:
		return Class2xx
	case code >= 300 && code < 400:
		return Class3xx
	case code >= 400 && code < 500:
		return Class4xx
	case code >= 500 && code < 600:
		return Class5xx
	}
	return ClassError
}
