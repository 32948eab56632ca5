package openproject

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json/v1"
)

// ListVersions lists versions: those usable in project (its own and those
// shared with it) when project is not empty, else every version the user
// may see. opts.Filters may hold "sharing" (none, descendants, hierarchy,
// tree, system), the one filter the API documents for versions.
func (c *Client) ListVersions(ctx context.Context, project string, opts ListOptions) (Page[Version], error) {
	path := "/api/v3/versions"
	if project != "" {
		if err := checkPathParam("project", project); err != nil {
			return Page[Version]{}, err
		}
		path = "/api/v3/projects/" + url.PathEscape(project) + "/versions"
	}
	return decodePage(ctx, c, get(path, opts.Values()), wireVersion.model)
}

// Version returns one version; ErrNotFound also when the user may see none
// of the projects that use it.
func (c *Client) Version(ctx context.Context, id int64) (Version, error) {
	var w wireVersion
	if err := c.do(ctx, get("/api/v3/versions/"+strconv.FormatInt(id, 10), nil), &w); err != nil {
		return Version{}, err
	}
	return w.model(), nil
}

// WorkPackageSchemaNames returns the field names of the work package
// schema of a project and type (GET
// /api/v3/work_packages/schemas/{project}-{type}), by property key:
// "customField3" gives "Customer". A work package names its custom fields
// only by key; the schema holds what users call them.
func (c *Client) WorkPackageSchemaNames(ctx context.Context, projectID, typeID int64) (map[string]string, error) {
	if projectID <= 0 || typeID <= 0 {
		return nil, fmt.Errorf("get work package schema: project %d and type %d must be positive", projectID, typeID)
	}
	var raw map[string]json.RawMessage
	path := fmt.Sprintf("/api/v3/work_packages/schemas/%d-%d", projectID, typeID)
	if err := c.do(ctx, get(path, nil), &raw); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for k, v := range raw {
		if strings.HasPrefix(k, "_") {
			continue
		}
		var f struct {
			Name string `json:"name"`
		}
		// A field whose shape is unexpected is left unnamed, not fatal.
		if json.Unmarshal(v, &f) == nil && f.Name != "" {
			names[k] = f.Name
		}
	}
	return names, nil
}

type wireVersion struct {
	ID          lenientInt  `json:"id"`
	Name        string      `json:"name"`
	Description formattable `json:"description"`
	Status      string      `json:"status"`
	Sharing     string      `json:"sharing"`
	StartDate   string      `json:"startDate"`
	EndDate     string      `json:"endDate"`
	CreatedAt   lenientTime `json:"createdAt"`
	UpdatedAt   lenientTime `json:"updatedAt"`
	Links       halLinks    `json:"_links"`
}

func (w wireVersion) model() Version {
	return Version{
		ID: int64(w.ID), Name: w.Name, Description: w.Description.Raw,
		// The API documents lower-case statuses; its own examples show
		// "Open", so both spellings read the same.
		Status: strings.ToLower(w.Status), Sharing: strings.ToLower(w.Sharing),
		StartDate: w.StartDate, EndDate: w.EndDate,
		Project:   w.Links.ref("definingProject"),
		CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
}

// version is a work package's version: the "version" link, or, on 17.8+
// servers where the multi-valued "targetVersions" replaces it, the first
// of those.
func (l halLinks) version() *Ref {
	if r := l.optRef("version"); r != nil {
		return r
	}
	if rs := l.refs("targetVersions"); len(rs) > 0 {
		return &rs[0]
	}
	return nil
}

// customFieldPrefix starts the key of every custom field property and link.
const customFieldPrefix = "customField"

// isCustomFieldKey reports whether k is customFieldN.
func isCustomFieldKey(k string) bool {
	n, ok := strings.CutPrefix(k, customFieldPrefix)
	if !ok || n == "" {
		return false
	}
	_, err := strconv.ParseUint(n, 10, 32)
	return err == nil
}

// decodeCustomFields collects the custom fields of a work package body:
// customFieldN properties (strings, numbers, booleans, formattables,
// lists) and customFieldN links (a link, or a list of links, rendered by
// their titles). A value that is null or empty is left out; so is a
// shape not recognised. The result is ordered by field number.
func decodeCustomFields(body []byte) []CustomField {
	var top map[string]stdjson.RawMessage
	if err := stdjson.Unmarshal(body, &top); err != nil {
		return nil
	}
	var out []CustomField
	for k, v := range top {
		if isCustomFieldKey(k) {
			if s := customValue(v); s != "" {
				out = append(out, CustomField{Key: k, Value: s})
			}
		}
	}
	var links map[string]stdjson.RawMessage
	if raw, ok := top["_links"]; ok && stdjson.Unmarshal(raw, &links) == nil {
		for k, v := range links {
			if isCustomFieldKey(k) {
				if s := customLinkValue(v); s != "" {
					out = append(out, CustomField{Key: k, Value: s})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b CustomField) int {
		na, _ := strconv.Atoi(strings.TrimPrefix(a.Key, customFieldPrefix))
		nb, _ := strconv.Atoi(strings.TrimPrefix(b.Key, customFieldPrefix))
		return na - nb
	})
	return out
}

// customValue renders a custom field property as text.
func customValue(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	switch b[0] {
	case '"':
		var s string
		_ = stdjson.Unmarshal(b, &s)
		return s
	case '{':
		var f struct {
			Raw *string `json:"raw"`
		}
		if stdjson.Unmarshal(b, &f) == nil && f.Raw != nil {
			return *f.Raw
		}
		return ""
	case '[':
		var items []stdjson.RawMessage
		if stdjson.Unmarshal(b, &items) != nil {
			return ""
		}
		var parts []string
		for _, it := range items {
			if s := customValue(it); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	}
	// A number or a boolean: its JSON spelling is its text.
	return string(b)
}

// customLinkValue renders a custom field link, or a list of links, by
// title, falling back to the href for an untitled link.
func customLinkValue(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	one := func(raw []byte) string {
		var hl struct {
			Href  *string `json:"href"`
			Title string  `json:"title"`
		}
		if stdjson.Unmarshal(raw, &hl) != nil || hl.Href == nil || *hl.Href == "" {
			return ""
		}
		if hl.Title != "" {
			return hl.Title
		}
		return *hl.Href
	}
	if b[0] != '[' {
		return one(b)
	}
	var items []stdjson.RawMessage
	if stdjson.Unmarshal(b, &items) != nil {
		return ""
	}
	var parts []string
	for _, it := range items {
		if s := one(it); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}
