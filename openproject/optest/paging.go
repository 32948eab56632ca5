package optest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// page is the resolved offset (1-based page number) and page size.
type page struct {
	offset int
	size   int
}

// rubyToI mimics Ruby's String#to_i, which the real server applies to
// offset and pageSize: leading whitespace, an optional sign and leading
// digits; anything else gives 0 ("abc" -> 0, "3x" -> 3).
func rubyToI(s string) int {
	s = strings.TrimLeft(s, " \t\n")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			break
		}
		if n > 1<<40 {
			break // absurd values saturate instead of overflowing
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// parsePage resolves offset and pageSize as the real server does
// (lib/api/utilities/url_props_parsing_helper.rb and
// offset_paginated_collection.rb):
//   - offset: to_i, and anything below 1 becomes 1;
//   - pageSize: absent -> 20; -1 or above the maximum -> the maximum;
//     otherwise to_i, so "abc" and 0 give an empty page with the real total.
//     Other negative sizes also give an empty page.
func (s *Server) parsePage(q url.Values) page {
	p := page{offset: 1, size: defaultPageSize}
	if v, ok := q["offset"]; ok && len(v) > 0 {
		if n := rubyToI(v[0]); n > 0 {
			p.offset = n
		}
	}
	if v, ok := q["pageSize"]; ok && len(v) > 0 {
		n := rubyToI(v[0])
		switch {
		case n == -1 || n > s.opts.MaxPageSize:
			n = s.opts.MaxPageSize
		case n < 0:
			n = 0
		}
		p.size = n
	}
	return p
}

// window returns the [from, to) indexes of the page within total items.
func (p page) window(total int) (int, int) {
	if p.size <= 0 {
		return 0, 0
	}
	from := (p.offset - 1) * p.size
	if from >= total || from < 0 {
		return total, total
	}
	return from, min(from+p.size, total)
}

// pageHref builds a paging link the way the real server does: the base
// path, then the request's query parameters merged with offset and
// pageSize, keys sorted and values URL-encoded (Rails' to_query).
func pageHref(base string, q url.Values, offset, size string) string {
	v := url.Values{}
	for k, vals := range q {
		if k == "offset" || k == "pageSize" {
			continue
		}
		v[k] = vals
	}
	v.Set("offset", offset)
	v.Set("pageSize", size)
	return base + "?" + v.Encode()
}

// pagedCollection renders an offset-paginated collection: _type, total,
// count, pageSize, offset, the elements, and the paging links.
// nextByOffset appears only while offset*pageSize < total, and
// previousByOffset only when offset > 1.
func pagedCollection(typ, base string, q url.Values, p page, total int, elements []obj, extraLinks obj, extraEmbedded obj) obj {
	if elements == nil {
		elements = []obj{}
	}
	off, size := strconv.Itoa(p.offset), strconv.Itoa(p.size)
	links := obj{
		{"self", link(pageHref(base, q, off, size), "")},
		{"jumpTo", obj{{"href", pageHref(base, q, "{offset}", size)}, {"templated", true}}},
		{"changeSize", obj{{"href", pageHref(base, q, off, "{size}")}, {"templated", true}}},
	}
	if p.offset > 1 {
		links = append(links, kv{"previousByOffset", link(pageHref(base, q, strconv.Itoa(p.offset-1), size), "")})
	}
	if p.offset*p.size < total {
		links = append(links, kv{"nextByOffset", link(pageHref(base, q, strconv.Itoa(p.offset+1), size), "")})
	}
	links = append(links, extraLinks...)
	emb := append(obj{{"elements", elements}}, extraEmbedded...)
	return obj{
		{"_type", typ},
		{"total", total},
		{"count", len(elements)},
		{"pageSize", p.size},
		{"offset", p.offset},
		{"_embedded", emb},
		{"_links", links},
	}
}

// selection is a parsed select parameter: a tree of property names. An
// empty child means "the whole property".
type selection map[string]selection

// parseSelect parses the select parameter as the real server's
// nested_from_csv: a comma-separated list of slash paths, optionally
// wrapped in [ ] with quoted items. It returns nil when select is absent.
func parseSelect(q url.Values) selection {
	raw, ok := q["select"]
	if !ok || len(raw) == 0 {
		return nil
	}
	v := strings.TrimSuffix(strings.TrimPrefix(raw[0], "["), "]")
	sel := selection{}
	for _, item := range strings.Split(v, ",") {
		item = strings.Trim(strings.TrimSpace(item), `"'`)
		if item == "" {
			continue
		}
		cur := sel
		for _, part := range strings.Split(item, "/") {
			next, ok := cur[part]
			if !ok {
				next = selection{}
				cur[part] = next
			}
			cur = next
		}
	}
	return sel
}

// selectSchema lists what may be selected at one level: the names of
// properties, links and embedded resources, and the schema of the
// elements below "elements".
type selectSchema struct {
	names    []string
	elements *selectSchema
}

// validate finds the first selected path the schema does not know.
func (sch *selectSchema) validate(sel selection, prefix string) (string, bool) {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "*" {
			if len(sel[k]) > 0 {
				return prefix + k + "/…", false
			}
			continue
		}
		if !slices.Contains(sch.names, k) {
			return prefix + k, false
		}
		if len(sel[k]) > 0 {
			if k != "elements" || sch.elements == nil {
				return prefix + k + "/…", false
			}
			if bad, ok := sch.elements.validate(sel[k], prefix+k+"/"); !ok {
				return bad, false
			}
		}
	}
	return "", true
}

// errInvalidSelect is the 400 InvalidSignal answer for an unknown select
// path; the wording follows the real api_v3.errors.invalid_signal.select
// message.
func errInvalidSelect(bad string, sch *selectSchema) *apiError {
	supported := slices.Clone(sch.names)
	if sch.elements != nil {
		for _, n := range sch.elements.names {
			supported = append(supported, "elements/"+n)
		}
	}
	return &apiError{
		status:     http.StatusBadRequest,
		identifier: "InvalidSignal",
		message:    "The requested select value " + bad + " is not supported. Supported values are *, " + strings.Join(supported, ", ") + ".",
	}
}

// prune keeps only the selected properties of o. Links and embedded
// resources are addressed by name without the _links/_embedded prefix,
// as in the real API; a selected link is kept whole. "*" selects
// everything at its level, and a nested selection overrides it for that
// property. An embedded resource that is also a link (a work package's
// status) is kept only by "*", because selecting it means the link.
func prune(o obj, sel selection) obj {
	all := sel["*"] != nil
	var linkNames map[string]bool
	if lv, ok := o.get("_links"); ok {
		if lo, ok := lv.(obj); ok {
			linkNames = make(map[string]bool, len(lo))
			for _, m := range lo {
				linkNames[m.Key] = true
			}
		}
	}
	out := obj{}
	for _, m := range o {
		switch m.Key {
		case "_links":
			lo, _ := m.Val.(obj)
			kept := obj{}
			for _, l := range lo {
				if _, ok := sel[l.Key]; ok || all {
					kept = append(kept, l)
				}
			}
			if len(kept) > 0 {
				out = append(out, kv{"_links", kept})
			}
		case "_embedded":
			eo, _ := m.Val.(obj)
			kept := obj{}
			for _, e := range eo {
				child, selected := sel[e.Key]
				switch {
				case selected && len(child) > 0:
					kept = append(kept, kv{e.Key, pruneValue(e.Val, child)})
				case selected && !linkNames[e.Key]:
					kept = append(kept, e)
				case all:
					kept = append(kept, e)
				}
			}
			if len(kept) > 0 {
				out = append(out, kv{"_embedded", kept})
			}
		default:
			if _, ok := sel[m.Key]; ok || all {
				out = append(out, m)
			}
		}
	}
	return out
}

// pruneValue prunes an embedded object or list of objects.
func pruneValue(v any, sel selection) any {
	switch x := v.(type) {
	case obj:
		return prune(x, sel)
	case []obj:
		out := make([]obj, len(x))
		for i, e := range x {
			out[i] = prune(e, sel)
		}
		return out
	default:
		return v
	}
}

// keyNames lists the property, link and embedded names of a rendered
// resource, which is what select may address on it.
func keyNames(o obj) []string {
	var names []string
	for _, m := range o {
		switch m.Key {
		case "_links", "_embedded":
			if inner, ok := m.Val.(obj); ok {
				for _, im := range inner {
					names = append(names, im.Key)
				}
			}
		default:
			names = append(names, m.Key)
		}
	}
	return names
}
