package optest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// examplesDir holds the real API payloads from the OpenProject spec, copied
// from shared/openproject-api/examples into the client's testdata (a test
// there keeps the copies in sync), so the check runs on any checkout.
const examplesDir = "../testdata/examples"

// conformanceCase says how to fetch the fake's counterpart of one example.
type conformanceCase struct {
	method  string // default GET
	path    string
	key     string // default AdminKey; "-" sends no credentials
	body    any
	profile Profile
	// private runs against a data set without public projects (for the
	// "no work package permission anywhere" answer).
	private bool
	status  int // default 200
	// exact compares the whole body (error answers).
	exact bool
	// elements also compares the first collection element, for examples
	// whose elements are complete rather than shortened for brevity.
	elements bool
}

// conformanceCases maps every example file to the request that produces
// the fake's version of it. A new example file without a case fails the
// test, so the table keeps up with the examples.
var conformanceCases = map[string]conformanceCase{
	"activity_collection.json":                        {path: "/api/v3/work_packages/1/activities", elements: true},
	"activity_comment.json":                           {path: "/api/v3/activities/2"},
	"activity_comment_schema_example.json":            {path: "/api/v3/activities/2", profile: ProfileLegacy},
	"activity_comment_view_activity_path.json":        {path: "/api/v3/activities/2", profile: ProfileLegacy},
	"attachment.json":                                 {path: "/api/v3/attachments/2"},
	"error_400_invalid_query_filter.json":             {path: "/api/v3/work_packages" + srvQ("filters", `[{"bogus":{"operator":"=","values":["1"]}}]`), status: 400, exact: true},
	"error_400_invalid_query_operator.json":           {path: "/api/v3/work_packages" + srvQ("filters", `[{"status":{"values":[]}}]`), status: 400, exact: true},
	"error_401_unauthenticated_bad_credentials.json":  {path: "/api/v3/work_packages", key: "wrong-key", status: 401, exact: true},
	"error_401_unauthenticated_no_credentials.json":   {path: "/api/v3/work_packages", key: "-", status: 401, exact: true},
	"error_403_missing_permission_generic.json":       {path: "/api/v3/users", key: AliceKey, status: 403, exact: true},
	"error_403_missing_permission_work_packages.json": {path: "/api/v3/work_packages", key: srvCarolKey, private: true, status: 403, exact: true},
	"error_404_not_found_generic.json":                {path: "/api/v3/projects/999", status: 404, exact: true},
	"error_404_not_found_work_package.json":           {path: "/api/v3/work_packages/999", status: 404, exact: true},
	"error_409_update_conflict.json":                  {method: http.MethodPatch, path: "/api/v3/work_packages/1", body: map[string]any{"lockVersion": 1, "subject": "x"}, status: 409, exact: true},
	"error_422_property_constraint_violation.json":    {method: http.MethodPatch, path: "/api/v3/work_packages/1", body: map[string]any{"lockVersion": 3, "subject": ""}, status: 422, exact: true},
	"meeting.json":                            {path: "/api/v3/meetings/1"},
	"meeting_collection.json":                 {path: "/api/v3/meetings" + srvQ("filters", "[]")},
	"meeting_schema_example.json":             {path: "/api/v3/meetings/1", profile: ProfileLegacy},
	"meeting_view_path.json":                  {path: "/api/v3/meetings/1", profile: ProfileLegacy},
	"priority_collection.json":                {path: "/api/v3/priorities", elements: true},
	"project.json":                            {path: "/api/v3/projects/4"},
	"project_collection.json":                 {path: "/api/v3/projects" + srvQ("filters", "[]")},
	"root.json":                               {path: "/api/v3"},
	"root_legacy_path_example.json":           {path: "/api/v3", profile: ProfileLegacy},
	"status_collection.json":                  {path: "/api/v3/statuses", elements: true},
	"type_collection.json":                    {path: "/api/v3/types", elements: true},
	"user.json":                               {path: "/api/v3/users/2"},
	"wiki_page.json":                          {path: "/api/v3/wiki_pages/1"},
	"wiki_page_view_path.json":                {path: "/api/v3/wiki_pages/1", profile: ProfileLegacy},
	"work_package.json":                       {path: "/api/v3/work_packages/5"},
	"work_package_collection.json":            {path: "/api/v3/work_packages" + srvQ("filters", "[]")},
	"work_package_collection_by_project.json": {path: "/api/v3/projects/1/work_packages"},
}

// placeholderKeys are documentation markers in the examples, not fields.
var placeholderKeys = map[string]bool{"_abbreviated": true, "_hint": true}

func TestConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no examples in %s", examplesDir)
	}
	bases := map[string]string{}
	base := func(c conformanceCase) string {
		profile := c.profile
		if profile == "" {
			profile = ProfileCurrent
		}
		k := fmt.Sprintf("%s/%v", profile, c.private)
		if b, ok := bases[k]; ok {
			return b
		}
		d := srvDataset()
		if c.private {
			for i := range d.Projects {
				d.Projects[i].Public = false
			}
		}
		_, b := Start(t, d, Options{Profile: profile, Now: func() time.Time { return srvClock }})
		bases[k] = b
		return b
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			c, ok := conformanceCases[name]
			if !ok {
				t.Fatalf("no conformance case for example %s: add one to conformanceCases", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var example map[string]any
			if err := json.Unmarshal(raw, &example); err != nil {
				t.Fatalf("decode example: %v", err)
			}
			method := c.method
			if method == "" {
				method = http.MethodGet
			}
			key := c.key
			switch key {
			case "":
				key = AdminKey
			case "-":
				key = ""
			}
			r := srvDo(t, method, base(c)+c.path, key, c.body)
			want := c.status
			if want == 0 {
				want = http.StatusOK
			}
			if r.status != want {
				t.Fatalf("status = %d, want %d: %s", r.status, want, r.raw)
			}
			if got := r.header.Get("Content-Type"); got != halContentType {
				t.Errorf("Content-Type = %q", got)
			}
			if c.exact {
				if !jsonEqual(r.body, example) {
					t.Errorf("body = %s\nwant  %s", r.raw, compactJSON(raw))
				}
				return
			}
			for _, problem := range compareShapes(name, example, r.body, c.elements) {
				t.Error(problem)
			}
		})
	}
	for name := range conformanceCases {
		if !seen[name] {
			t.Errorf("conformance case %s has no example file", name)
		}
	}
	for _, table := range []map[string][]string{OmittedKeys, ExtraKeys, NullableKeys} {
		for name := range table {
			if _, ok := conformanceCases[name]; !ok {
				t.Errorf("key table names unknown example %s", name)
			}
		}
	}
}

func compactJSON(b []byte) string {
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

// compareShapes compares the fake's answer with a real example: the same
// top-level keys, _links keys and _embedded keys, and the same JSON kinds
// for shared keys. Plain nested objects (formattables, digests) are
// compared the same way, one level down. Keys listed in OmittedKeys may be
// missing from the fake, keys in ExtraKeys may be added by it, and keys in
// NullableKeys may be null in the fake where the example has a value. A
// null in the example matches anything (an optional value).
func compareShapes(file string, example, fake map[string]any, elements bool) []string {
	var problems []string
	omitted := setOf(OmittedKeys[file])
	extra := setOf(ExtraKeys[file])
	nullable := setOf(NullableKeys[file])
	var walk func(prefix string, ex, fk map[string]any)
	walk = func(prefix string, ex, fk map[string]any) {
		for _, k := range sortedMapKeys(ex) {
			if placeholderKeys[k] {
				continue
			}
			p := prefix + k
			fv, ok := fk[k]
			if !ok {
				if !omitted[p] {
					problems = append(problems, fmt.Sprintf("%s: key %s missing from the fake (list it in OmittedKeys with a reason if intended)", file, p))
				}
				continue
			}
			ev := ex[k]
			ek, fkind := jsonKind(ev), jsonKind(fv)
			switch {
			case ek == "null" || ek == fkind:
			case fkind == "null" && nullable[p]:
			default:
				problems = append(problems, fmt.Sprintf("%s: key %s is %s in the example but %s in the fake", file, p, ek, fkind))
			}
			em, eIsObj := ev.(map[string]any)
			fm, fIsObj := fv.(map[string]any)
			switch {
			case !eIsObj || !fIsObj:
			case k == "_links":
				// Link objects are compared by presence and kind only: titles
				// and methods depend on the data.
				walkKinds(prefix+"_links.", em, fm, omitted, extra, nullable, file, &problems)
			case k == "_embedded":
				embedded := map[string]any{}
				for ek := range em {
					embedded[ek] = nil // presence only: examples shorten embeds
				}
				fakeEmbedded := map[string]any{}
				for fk := range fm {
					fakeEmbedded[fk] = nil
				}
				walkKinds(prefix+"_embedded.", embedded, fakeEmbedded, omitted, extra, nullable, file, &problems)
			case prefix == "":
				walk(p+".", em, fm)
			}
		}
		for _, k := range sortedMapKeys(fk) {
			if _, ok := ex[k]; ok {
				continue
			}
			if p := prefix + k; !extra[p] {
				problems = append(problems, fmt.Sprintf("%s: key %s only in the fake (list it in ExtraKeys with a reason if intended)", file, p))
			}
		}
	}
	walk("", example, fake)
	if elements {
		ee, _ := pathOf(example, "_embedded", "elements").([]any)
		fe, _ := pathOf(fake, "_embedded", "elements").([]any)
		if len(ee) == 0 || len(fe) == 0 {
			problems = append(problems, fmt.Sprintf("%s: cannot compare elements (example %d, fake %d)", file, len(ee), len(fe)))
		} else {
			em, _ := ee[0].(map[string]any)
			fm, _ := fe[0].(map[string]any)
			walk("elements.", em, fm)
		}
	}
	return problems
}

// walkKinds compares the keys and kinds of a _links or _embedded object.
func walkKinds(prefix string, ex, fk map[string]any, omitted, extra, nullable map[string]bool, file string, problems *[]string) {
	for _, k := range sortedMapKeys(ex) {
		if placeholderKeys[k] {
			continue
		}
		p := prefix + k
		fv, ok := fk[k]
		if !ok {
			if !omitted[p] {
				*problems = append(*problems, fmt.Sprintf("%s: key %s missing from the fake (list it in OmittedKeys with a reason if intended)", file, p))
			}
			continue
		}
		if ek, fkind := jsonKind(ex[k]), jsonKind(fv); ek != "null" && ek != fkind && !(fkind == "null" && nullable[p]) {
			*problems = append(*problems, fmt.Sprintf("%s: key %s is %s in the example but %s in the fake", file, p, ek, fkind))
		}
	}
	for _, k := range sortedMapKeys(fk) {
		if _, ok := ex[k]; ok {
			continue
		}
		if p := prefix + k; !extra[p] {
			*problems = append(*problems, fmt.Sprintf("%s: key %s only in the fake (list it in ExtraKeys with a reason if intended)", file, p))
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func pathOf(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func setOf(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestKeyTablesAreConsistent checks that the key tables do not contradict
// each other and that every entry carries a plausible path.
func TestKeyTablesAreConsistent(t *testing.T) {
	for file, keys := range OmittedKeys {
		for _, k := range keys {
			if slices.Contains(ExtraKeys[file], k) {
				t.Errorf("%s: %s is both omitted and extra", file, k)
			}
			if strings.TrimSpace(k) == "" {
				t.Errorf("%s: empty key", file)
			}
		}
	}
}
