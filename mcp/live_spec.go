package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/opsearch/opsearch/openproject"
)

// openproject_get_openapi_spec: the instance's own API v3 OpenAPI
// document, summarized or filtered to fit an answer. (openapi.go is the
// other way round: the OpenAPI document of this server's REST bridge.)

type specIn struct {
	Path   string `json:"path,omitempty" jsonschema:"only paths containing this text, e.g. /work_packages/{id}"`
	Tag    string `json:"tag,omitempty" jsonschema:"only operations with this tag, e.g. Work Packages"`
	Schema string `json:"schema,omitempty" jsonschema:"only component schemas whose name contains this text"`
	Full   bool   `json:"full,omitempty" jsonschema:"return the raw document (large; prefer the filters)"`
}

type specPath struct {
	Path       string         `json:"path"`
	Methods    []string       `json:"methods"`
	Operations map[string]any `json:"operations,omitempty"`
}

type specOut struct {
	Title       string         `json:"title"`
	Version     string         `json:"version"`
	OpenAPI     string         `json:"openapi"`
	PathCount   int            `json:"pathCount"`
	SchemaCount int            `json:"schemaCount"`
	Tags        []string       `json:"tags"`
	Paths       []specPath     `json:"paths"`
	Schemas     map[string]any `json:"schemas"`
	Document    string         `json:"document"`
	Truncated   bool           `json:"truncated"`
}

// Size caps of spec answers, in bytes of JSON: the full document of a
// current server is about 1.2 MB.
const (
	capSpecFull    = 100 << 10
	capSpecPart    = 60 << 10
	capSpecSummary = 24 << 10
)

var httpMethods = []string{"get", "put", "post", "patch", "delete", "head", "options", "trace"}

type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Swagger string `json:"swagger"`
	Info    struct {
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"info"`
	Tags []struct {
		Name string `json:"name"`
	} `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

func (s *server) getOpenAPISpec(ctx context.Context, in specIn) (specOut, error) {
	raw, err := s.api.OpenAPISpec(ctx)
	if err != nil {
		return specOut{}, err
	}
	var doc openAPIDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return specOut{}, &openproject.Error{Kind: openproject.ErrMalformed, Method: "GET", Path: "/api/v3/spec.json", Err: err}
	}
	out := specOut{Title: doc.Info.Title, Version: doc.Info.Version, OpenAPI: cmp.Or(doc.OpenAPI, doc.Swagger),
		PathCount: len(doc.Paths), SchemaCount: len(doc.Components.Schemas), Tags: []string{}, Paths: []specPath{}, Schemas: map[string]any{}}
	for _, t := range doc.Tags {
		out.Tags = append(out.Tags, t.Name)
	}
	paths := slices.Sorted(maps.Keys(doc.Paths))
	filtered := in.Path != "" || in.Tag != "" || in.Schema != ""
	switch {
	case in.Full:
		text := string(raw)
		if len(text) > capSpecFull {
			cut := capSpecFull
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text, out.Truncated = text[:cut], true
		}
		out.Document = text
	case !filtered:
		size := 0
		for _, p := range paths {
			sp := specPath{Path: p, Methods: methodsOf(doc.Paths[p], "")}
			size += len(p) + 8*len(sp.Methods) + 30
			if size > capSpecSummary {
				out.Truncated = true
				break
			}
			out.Paths = append(out.Paths, sp)
		}
	default:
		size := 0
		if in.Path != "" || in.Tag != "" {
			needle := strings.ToLower(in.Path)
			for _, p := range paths {
				if !strings.Contains(strings.ToLower(p), needle) {
					continue
				}
				sp := specPath{Path: p, Methods: methodsOf(doc.Paths[p], in.Tag), Operations: map[string]any{}}
				if len(sp.Methods) == 0 {
					continue
				}
				for _, m := range sp.Methods {
					var op any
					_ = json.Unmarshal(doc.Paths[p][m], &op)
					sp.Operations[m] = op
					size += len(doc.Paths[p][m])
				}
				if size > capSpecPart {
					out.Truncated = true
					break
				}
				out.Paths = append(out.Paths, sp)
			}
		}
		if in.Schema != "" {
			needle := strings.ToLower(in.Schema)
			for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
				if !strings.Contains(strings.ToLower(name), needle) {
					continue
				}
				size += len(doc.Components.Schemas[name])
				if size > capSpecPart {
					out.Truncated = true
					break
				}
				var sch any
				_ = json.Unmarshal(doc.Components.Schemas[name], &sch)
				out.Schemas[name] = sch
			}
		}
	}
	return out, nil
}

// methodsOf lists a path item's operations, only those tagged tag when it
// is not empty.
func methodsOf(item map[string]json.RawMessage, tag string) []string {
	var out []string
	for _, m := range httpMethods {
		raw, ok := item[m]
		if !ok {
			continue
		}
		if tag != "" {
			var op struct {
				Tags []string `json:"tags"`
			}
			_ = json.Unmarshal(raw, &op)
			if !slices.ContainsFunc(op.Tags, func(t string) bool { return strings.EqualFold(t, tag) }) {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
