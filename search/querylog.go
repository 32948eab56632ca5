package search

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	gosync "sync"
	"time"
)

// QueryLogFile is the name of the query log in a user's data directory.
const QueryLogFile = "queries.jsonl"

// QueryLog records searches and their results as JSON lines, to build
// labelled evaluation sets from real use. It is opt-in: an Engine logs
// only when Options.QueryLog is set. It is safe for concurrent use.
type QueryLog struct {
	mu     gosync.Mutex
	w      io.Writer
	closer io.Closer
	now    func() time.Time
}

// NewQueryLog logs to w.
func NewQueryLog(w io.Writer) *QueryLog {
	return &QueryLog{w: w, now: time.Now}
}

// OpenQueryLog appends to QueryLogFile in dir (normally the user's data
// directory), creating it readable by the owner only.
func OpenQueryLog(dir string) (*QueryLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, QueryLogFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open query log: %w", err)
	}
	l := NewQueryLog(f)
	l.closer = f
	return l, nil
}

// Close closes the file OpenQueryLog opened; it does nothing for a log
// made with NewQueryLog.
func (l *QueryLog) Close() error {
	if l == nil || l.closer == nil {
		return nil
	}
	return l.closer.Close()
}

type toolKey struct{}

// WithTool names the tool (for example an MCP tool) on whose behalf the
// searches under ctx run; the query log records it.
func WithTool(ctx context.Context, tool string) context.Context {
	return context.WithValue(ctx, toolKey{}, tool)
}

// LoggedQuery is one line of the query log.
type LoggedQuery struct {
	Time    time.Time      `json:"time"`
	Tool    string         `json:"tool,omitempty"`
	Query   string         `json:"query"`
	Filters map[string]any `json:"filters,omitempty"`
	Total   int            `json:"total"`
	Results []LoggedResult `json:"results"`
}

// LoggedResult is one result of a logged query.
type LoggedResult struct {
	Kind  string  `json:"kind"`
	ID    int64   `json:"id"`
	Score float64 `json:"score"`
}

// record writes one line; a failed write is not the search's problem and
// is dropped.
func (l *QueryLog) record(ctx context.Context, q Query, resp Response) {
	line := LoggedQuery{Time: l.now().UTC(), Query: q.Text, Total: resp.Total, Results: make([]LoggedResult, 0, len(resp.Results))}
	line.Tool, _ = ctx.Value(toolKey{}).(string)
	f := map[string]any{}
	if len(q.Kinds) > 0 {
		f["kinds"] = q.Kinds
	}
	if len(q.ProjectIDs) > 0 {
		f["projectIds"] = q.ProjectIDs
	}
	if q.Closed != nil {
		f["closed"] = *q.Closed
	}
	if len(q.Statuses) > 0 {
		f["statuses"] = q.Statuses
	}
	if len(q.Types) > 0 {
		f["types"] = q.Types
	}
	if len(q.AssigneeIDs) > 0 {
		f["assigneeIds"] = q.AssigneeIDs
	}
	if !q.UpdatedAfter.IsZero() {
		f["updatedAfter"] = q.UpdatedAfter
	}
	if !q.UpdatedBefore.IsZero() {
		f["updatedBefore"] = q.UpdatedBefore
	}
	if q.Exact {
		f["exact"] = true
	}
	if q.Page > 1 {
		f["page"] = q.Page
	}
	if len(f) > 0 {
		line.Filters = f
	}
	for _, r := range resp.Results {
		line.Results = append(line.Results, LoggedResult{Kind: string(r.Kind), ID: r.ID, Score: r.Score})
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(b)
}
