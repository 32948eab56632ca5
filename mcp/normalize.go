package mcp

import "github.com/opsearch/opsearch/openproject"

// The live tools answer in compact JSON shapes, built from the client's
// model (openproject decodes the HAL; nothing here does). Tool answers
// land in a model's context window, so they carry names next to ids (the
// agent should not need a second call to resolve "status 7"), leave out
// HAL plumbing (_links, _embedded, schemas, action links), and cap every
// text that can be long. This file holds the parts every shape shares;
// each tool's own shapes sit next to it, in live_<kind>.go.

// ref is a linked resource: its id and display name.
type ref struct {
	ID   int64  `json:"id"`
	Name string `json:"name,omitempty"`
}

// refOf converts a HAL link; nil when the link is empty (no assignee, no
// parent). An undisclosed link keeps a placeholder name, so the agent learns
// that something exists without seeing it.
func refOf(r openproject.Ref) *ref {
	if r.IsZero() && r.ID == 0 && r.Title == "" {
		return nil
	}
	if r.Undisclosed() {
		return &ref{Name: "(not visible to this API key)"}
	}
	return &ref{ID: r.ID, Name: r.Title}
}

func optRefOf(r *openproject.Ref) *ref {
	if r == nil {
		return nil
	}
	return refOf(*r)
}

// listOut is the shape of every list tool: the API's paging numbers, the
// thin rows of this page, and whether any text in them was cut.
type listOut[T any] struct {
	Total     int  `json:"total"`
	Count     int  `json:"count"`
	PageSize  int  `json:"pageSize"`
	Offset    int  `json:"offset"`
	Elements  []T  `json:"elements"`
	Truncated bool `json:"truncated"`
}

// pageOf builds a list answer from an API page.
func pageOf[T, R any](p openproject.Page[T], row func(T) (R, bool)) listOut[R] {
	out := listOut[R]{Total: p.Total, Count: len(p.Items), PageSize: p.PageSize, Offset: max(p.Offset, 1), Elements: make([]R, 0, len(p.Items))}
	for _, it := range p.Items {
		r, cut := row(it)
		out.Elements = append(out.Elements, r)
		out.Truncated = out.Truncated || cut
	}
	return out
}

// allOf builds a list answer from an unpaginated collection.
func allOf[T, R any](items []T, row func(T) R) listOut[R] {
	out := listOut[R]{Total: len(items), Count: len(items), PageSize: len(items), Offset: 1, Elements: make([]R, 0, len(items))}
	for _, it := range items {
		out.Elements = append(out.Elements, row(it))
	}
	return out
}
