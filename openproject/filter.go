package openproject

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	json "github.com/go-json-experiment/json/v1"
)

// Filter is one condition of OpenProject's JSON filter syntax:
// {"<name>":{"operator":"<op>","values":[...]}}. Filters in a list are ANDed.
type Filter struct {
	Name     string
	Operator string
	Values   []string
}

// Filters is a list of filters. A nil Filters means "send no filters
// parameter" (the server then applies its default, which for work packages
// hides closed ones); an empty non-nil Filters sends "[]".
type Filters []Filter

// MarshalJSON renders the filters in the API's array-of-single-key-objects
// form. Values is always an array, never null.
func (fs Filters) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		vals := f.Values
		if vals == nil {
			vals = []string{}
		}
		fmt.Fprintf(&b, `{%s:{"operator":%s,"values":%s}}`, jsonText(f.Name), jsonText(f.Operator), jsonText(vals))
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// jsonText encodes v without HTML escaping, so "<>d" stays readable in URLs
// and logs. Strings and string slices cannot fail to encode.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// UnmarshalJSON parses the API's filter syntax. Values may be null (the
// server's own default filter uses null), strings or numbers.
func (fs *Filters) UnmarshalJSON(data []byte) error {
	parsed, err := ParseFilters(string(data))
	if err != nil {
		return err
	}
	*fs = parsed
	return nil
}

// String renders the filters as the JSON the server expects.
func (fs Filters) String() string {
	b, _ := fs.MarshalJSON()
	return string(b)
}

// FilterSyntaxError describes why a filters string is not valid filter JSON.
// Its message mirrors the server's InvalidQuery messages.
type FilterSyntaxError struct {
	Msg string
}

func (e *FilterSyntaxError) Error() string { return e.Msg }

// ParseFilters parses the JSON filter syntax, as the server does: an array of
// objects, each with exactly one key naming the filter and an object with
// "operator" and "values". It is used by the fake server and for validating
// raw filters that callers pass through.
func ParseFilters(s string) (Filters, error) {
	var raw []map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, &FilterSyntaxError{Msg: "Filters is not a valid JSON array of filter objects: " + jsonProblem(err)}
	}
	out := make(Filters, 0, len(raw))
	for _, obj := range raw {
		if len(obj) != 1 {
			return nil, &FilterSyntaxError{Msg: "Filters Each filter must be an object with exactly one filter name."}
		}
		for name, body := range obj {
			var spec struct {
				Operator *string            `json:"operator"`
				Values   *[]json.RawMessage `json:"values"`
			}
			if err := json.Unmarshal(body, &spec); err != nil {
				return nil, &FilterSyntaxError{Msg: fmt.Sprintf("Filters %s is not a filter object.", name)}
			}
			if spec.Operator == nil || *spec.Operator == "" {
				return nil, &FilterSyntaxError{Msg: "Operator can't be blank."}
			}
			f := Filter{Name: name, Operator: *spec.Operator}
			if spec.Values != nil {
				for _, v := range *spec.Values {
					var str string
					if err := json.Unmarshal(v, &str); err == nil {
						f.Values = append(f.Values, str)
						continue
					}
					var num json.Number
					if err := json.Unmarshal(v, &num); err == nil {
						f.Values = append(f.Values, num.String())
						continue
					}
					if string(v) == "null" {
						f.Values = append(f.Values, "")
						continue
					}
					return nil, &FilterSyntaxError{Msg: fmt.Sprintf("Filters %s has a value that is neither a string nor a number.", name)}
				}
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// jsonProblem describes a JSON decoding error for the caller, without the
// Go type names encoding/json puts in type mismatches ("cannot unmarshal
// number into Go value of type map[string]json.RawMessage").
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "unexpected " + te.Value
	}
	return err.Error() // syntax errors and EOF name only the input
}

// StatusAll matches every status, closed ones included.
func StatusAll() Filter { return Filter{Name: "status", Operator: "*", Values: []string{}} }

// StatusOpen matches open statuses only (the server's default).
func StatusOpen() Filter { return Filter{Name: "status", Operator: "o", Values: []string{}} }

// StatusClosed matches closed statuses only.
func StatusClosed() Filter { return Filter{Name: "status", Operator: "c", Values: []string{}} }

// UpdatedBetween matches items whose updatedAt lies in [from, to], both
// inclusive; a zero bound is sent blank, which the server reads as open.
func UpdatedBetween(from, to time.Time) Filter {
	return Filter{Name: "updatedAt", Operator: "<>d", Values: []string{formatBound(from), formatBound(to)}}
}

// IDs matches the given ids.
func IDs(ids ...int64) Filter {
	return Filter{Name: "id", Operator: "=", Values: int64Strings(ids)}
}

// InProjects matches items in the given projects.
func InProjects(ids ...int64) Filter {
	return Filter{Name: "project", Operator: "=", Values: int64Strings(ids)}
}

// SubjectContains matches work packages whose subject contains s.
func SubjectContains(s string) Filter {
	return Filter{Name: "subject", Operator: "~", Values: []string{s}}
}

// FullText matches work packages whose subject, description or comments
// contain s (the server's "search" filter).
func FullText(s string) Filter {
	return Filter{Name: "search", Operator: "**", Values: []string{s}}
}

func formatBound(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func int64Strings(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out
}

// Sort is one sort criterion, e.g. {"id","asc"}.
type Sort struct {
	Field     string
	Direction string // asc | desc
}

// ListOptions shape a request for a paginated collection.
type ListOptions struct {
	// Filters nil sends no filters parameter; empty sends "[]".
	Filters Filters
	SortBy  []Sort
	// Select prunes the response (projects and work packages only), e.g.
	// "total", "elements/id".
	Select []string
	// PageSize is the requested page size; the server caps it silently and
	// echoes the size it used. 0 omits the parameter (server default, 20).
	PageSize int
	// Offset is the 1-based page number to start at; 0 means 1.
	Offset int
}

// Values renders the options as query parameters.
func (o ListOptions) Values() url.Values {
	v := url.Values{}
	if o.Filters != nil {
		v.Set("filters", o.Filters.String())
	}
	if len(o.SortBy) > 0 {
		pairs := make([][2]string, len(o.SortBy))
		for i, s := range o.SortBy {
			dir := cmp.Or(s.Direction, "asc")
			pairs[i] = [2]string{s.Field, dir}
		}
		v.Set("sortBy", jsonText(pairs))
	}
	if len(o.Select) > 0 {
		v.Set("select", strings.Join(o.Select, ","))
	}
	if o.PageSize != 0 {
		v.Set("pageSize", strconv.Itoa(o.PageSize))
	}
	if o.Offset > 0 {
		v.Set("offset", strconv.Itoa(o.Offset))
	}
	return v
}

// ParseSortBy parses the API's sortBy parameter: a JSON array of
// [field, direction] pairs, or (work packages) "field:dir" strings.
func ParseSortBy(s string) ([]Sort, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var pairs [][]string
	if err := json.Unmarshal([]byte(s), &pairs); err != nil {
		pairs = nil // a failed decode may have filled part of it
		var strs []string
		if err2 := json.Unmarshal([]byte(s), &strs); err2 != nil {
			return nil, &FilterSyntaxError{Msg: "Sort by is not a valid JSON array: " + jsonProblem(err)}
		}
		for _, str := range strs {
			field, dir, _ := strings.Cut(str, ":")
			pairs = append(pairs, []string{field, dir})
		}
	}
	out := make([]Sort, 0, len(pairs))
	for _, p := range pairs {
		if len(p) == 0 || p[0] == "" {
			return nil, &FilterSyntaxError{Msg: "Sort by is missing a field name."}
		}
		dir := "asc"
		if len(p) > 1 && p[1] != "" {
			dir = strings.ToLower(p[1])
		}
		if dir != "asc" && dir != "desc" {
			return nil, &FilterSyntaxError{Msg: fmt.Sprintf("Sort by %s has an invalid direction %q.", p[0], dir)}
		}
		out = append(out, Sort{Field: p[0], Direction: dir})
	}
	return out, nil
}
