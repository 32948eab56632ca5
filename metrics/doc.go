// Package metrics exposes opsearch's Prometheus metrics: syncs, OpenProject
// requests, search latency, indexed documents and active users.
//
// No metric carries a label that identifies a person, an API key or a
// URL: document counts are summed across users, OpenProject requests are
// counted by status class only, and every label takes its values from a
// small fixed set. Each Metrics has its own registry (there is no
// package-level state), so tests and several servers in one process do
// not share counters.
//
// It owns the metric names, their labels and the values those labels
// take, the registry, the /metrics handler and the transport that counts
// OpenProject requests. It must not know who a user is beyond the opaque
// key its callers pass (to forget a user's documents), nor how a sync
// runs or a search ranks: callers report what happened (ObserveSync with
// a sync.Report, ObserveSearch, SetDocuments), and nothing here calls back
// into them.
package metrics
