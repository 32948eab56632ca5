package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/opsearch/opsearch/openproject"
)

// The arguments the live tools share: paging, sorting, raw filters, ids
// and project references, and the input schemas derived from them.

// paging are the paging arguments of list tools; pointers tell an explicit
// 0 (an error) from an absent value (the default).
type paging struct {
	PageSize *int `json:"pageSize,omitempty" jsonschema:"rows, 1-100 (default 20)"`
	Offset   *int `json:"offset,omitempty" jsonschema:"page, from 1"`
}

const maxPageSize = 100

func (p paging) options(def int) (openproject.ListOptions, error) {
	o := openproject.ListOptions{PageSize: def, Offset: 1}
	if p.PageSize != nil {
		if *p.PageSize < 1 || *p.PageSize > maxPageSize {
			return o, argErr("pageSize", "must be between 1 and %d, got %d", maxPageSize, *p.PageSize)
		}
		o.PageSize = *p.PageSize
	}
	if p.Offset != nil {
		if *p.Offset < 1 {
			return o, argErr("offset", "must be a page number of 1 or more, got %d", *p.Offset)
		}
		o.Offset = *p.Offset
	}
	return o, nil
}

// parseSort accepts "field:dir[,field:dir]" or the API's JSON form.
func parseSort(s string) ([]openproject.Sort, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if strings.HasPrefix(s, "[") {
		sorts, err := openproject.ParseSortBy(s)
		if err != nil {
			return nil, argErr("sortBy", "%v", err)
		}
		return sorts, nil
	}
	var out []openproject.Sort
	for part := range strings.SplitSeq(s, ",") {
		field, dir, _ := strings.Cut(strings.TrimSpace(part), ":")
		dir = cmp.Or(strings.ToLower(strings.TrimSpace(dir)), "asc")
		if field == "" || (dir != "asc" && dir != "desc") {
			return nil, argErr("sortBy", `want "field:asc" or "field:desc", got %q`, part)
		}
		out = append(out, openproject.Sort{Field: strings.TrimSpace(field), Direction: dir})
	}
	return out, nil
}

func parseFilters(s string) (openproject.Filters, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	// The shape is checked here first: ParseFilters would pass on the
	// JSON decoder's words for a wrong shape, which name Go types.
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, argErr("filters", "is not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
		}
		return nil, argErr("filters", "is not valid JSON")
	}
	arr, ok := v.([]any)
	if ok {
		for _, f := range arr {
			if _, isObj := f.(map[string]any); !isObj {
				ok = false
			}
		}
	}
	if !ok {
		return nil, argErr("filters", `must be a JSON array of filter objects, e.g. [{"status":{"operator":"o","values":[]}}]`)
	}
	fs, err := openproject.ParseFilters(s)
	if err != nil {
		return nil, argErr("filters", "%v", err)
	}
	return fs, nil
}

func checkID(param string, id int64) error {
	if id <= 0 {
		return argErr(param, "must be a positive id, got %d", id)
	}
	return nil
}

// idOrSlug is a project reference given as a number or a string. Agents
// pass ids as JSON numbers as often as strings, so both are accepted.
type idOrSlug string

func (v *idOrSlug) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = idOrSlug(strings.TrimSpace(s))
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("must be a number or a string")
	}
	if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
		return fmt.Errorf("must be a whole number or an identifier, got %s", n)
	}
	*v = idOrSlug(n.String())
	return nil
}

// numericID reports the id when the reference is numeric.
func (v idOrSlug) numericID() (int64, bool) {
	id, err := strconv.ParseInt(string(v), 10, 64)
	return id, err == nil && id > 0
}

// project returns the project reference as the API path wants it.
func (v idOrSlug) project(param string) (string, error) {
	s := string(v)
	if s == "" {
		return "", argErr(param, "must not be empty")
	}
	if strings.ContainsAny(s, "/?#% ") {
		return "", argErr(param, "%q is neither a numeric id nor a project identifier", s)
	}
	return s, nil
}

// projectID resolves a project reference to its numeric id, which filters
// need; an identifier costs one request.
func (s *server) projectID(ctx context.Context, param string, v idOrSlug) (int64, error) {
	if id, ok := v.numericID(); ok {
		return id, nil
	}
	p, err := v.project(param)
	if err != nil {
		return 0, err
	}
	proj, err := s.api.Project(ctx, p)
	if err != nil {
		return 0, err
	}
	return proj.ID, nil
}

var schemaOverrides = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[idOrSlug]():     {Types: []string{"integer", "string"}},
	reflect.TypeFor[relationType](): {Type: "string", Enum: relationTypeEnum()},
}

// inputSchema derives a tool's input schema from its argument struct, with
// two changes to what AddTool would infer: optional pointer fields get a
// plain type instead of ["null", T] (several LLM tool APIs reject union
// types), and project references accept a number or a string. A schema
// problem is a programming error caught by the tests, like AddTool's own
// panic.
func inputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: schemaOverrides})
	if err != nil {
		panic(err)
	}
	plainTypes(s)
	return s
}

// plainTypes gives the properties of s, and those of the objects in its
// lists, a plain type instead of ["null", T].
func plainTypes(s *jsonschema.Schema) {
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
		if p.Items != nil && len(p.Items.Properties) > 0 {
			plainTypes(p.Items)
		}
	}
}
