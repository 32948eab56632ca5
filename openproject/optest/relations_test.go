package optest

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// relDataset is srvDataset with relations:
//
//	1: 1 blocks 2 (both in demo)
//	2: 3 relates 1 (alice-private to demo)
//	3: 10 precedes 11, lag 2 (bulk; stored as 11 follows 10)
//	4: 4 relates 1 (bob-private to demo)
func relDataset() *Dataset {
	d := srvDataset()
	lag := 2
	wp := func(id int64) openproject.Ref { return openproject.Ref{ID: id} }
	d.Relations = []openproject.Relation{
		{ID: 1, Type: "blocks", From: wp(1), To: wp(2), Description: "Docs need the fix"},
		{ID: 2, Type: "relates", From: wp(3), To: wp(1)},
		{ID: 3, Type: "precedes", From: wp(10), To: wp(11), Lag: &lag},
		{ID: 4, Type: "relates", From: wp(4), To: wp(1)},
	}
	return d
}

func relStart(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return srvClock }
	}
	return Start(t, relDataset(), opts)
}

func involved(id string) string {
	return srvQ("filters", `[{"involved":{"operator":"=","values":["`+id+`"]}}]`)
}

func TestRelationsVisibility(t *testing.T) {
	_, base := relStart(t, Options{})
	tests := []struct {
		key  string
		want []int64
	}{
		// A relation is listed only when the caller sees both ends.
		{AdminKey, ids(1, 2, 4)},
		{AliceKey, ids(1, 2)},
		{BobKey, ids(1, 4)},
		{srvCarolKey, ids(1)}, // demo is public: the Non member role sees it
	}
	for _, tc := range tests {
		if got := allIDs(t, base, "/api/v3/relations"+involved("1"), tc.key); !slices.Equal(got, tc.want) {
			t.Errorf("%s: relations of 1 = %v, want %v", tc.key, got, tc.want)
		}
	}
	if got := allIDs(t, base, "/api/v3/relations", BobKey); !slices.Equal(got, ids(1, 3, 4)) {
		t.Errorf("bob: all relations = %v", got)
	}
	wantError(t, srvGet(t, base, "/api/v3/relations/2", BobKey), 404, "NotFound", msgNotFound)
	wantError(t, srvGet(t, base, "/api/v3/relations/99", AdminKey), 404, "NotFound", msgNotFound)
	if r := srvGet(t, base, "/api/v3/relations/2", AliceKey); r.status != 200 {
		t.Errorf("alice: GET relation 2 = %d", r.status)
	}
}

func TestRelationRepresentation(t *testing.T) {
	_, base := relStart(t, Options{})
	// Stored in the server's direction: precedes becomes follows, ends swapped.
	r := srvGet(t, base, "/api/v3/relations/3", AliceKey)
	for path, want := range map[string]any{
		"_type": "Relation", "type": "follows", "reverseType": "precedes", "name": "follows", "lag": 2.0,
		"_links/from/href": "/api/v3/work_packages/11", "_links/to/href": "/api/v3/work_packages/10",
		"_links/to/title": "Bulk item 10", "_links/self/href": "/api/v3/relations/3",
		"_links/delete/method": "delete",
	} {
		var keys []any
		for _, k := range splitPath(path) {
			keys = append(keys, k)
		}
		if got := jget(r.body, keys...); got != want {
			t.Errorf("relation 3: %s = %v, want %v", path, got, want)
		}
	}
	if _, ok := r.body["description"]; !ok || r.body["description"] != nil {
		t.Errorf("description of relation 3 = %v, want null", r.body["description"])
	}
	r = srvGet(t, base, "/api/v3/relations/1", srvCarolKey)
	if _, ok := r.body["lag"]; ok {
		t.Errorf("a blocks relation has a lag: %s", r.raw)
	}
	if r.body["description"] != "Docs need the fix" || jget(r.body, "_links", "delete") != nil {
		t.Errorf("relation 1 as carol (no manage permission): %s", r.raw)
	}
	// Older servers call the lag delay.
	_, legacy := relStart(t, Options{Profile: ProfileLegacy})
	if r := srvGet(t, legacy, "/api/v3/relations/3", AliceKey); r.body["delay"] != 2.0 || r.body["lag"] != nil {
		t.Errorf("legacy relation 3: %s", r.raw)
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := range len(p) {
		if p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func TestRelationFiltersAndPaging(t *testing.T) {
	_, base := relStart(t, Options{})
	f := func(json string) string { return "/api/v3/relations" + srvQ("filters", json) }
	for _, tc := range []struct {
		path string
		want []int64
	}{
		{f(`[{"type":{"operator":"=","values":["blocks"]}}]`), ids(1)},
		{f(`[{"type":{"operator":"!","values":["relates"]}}]`), ids(1, 3)},
		// Reverse types are never stored.
		{f(`[{"type":{"operator":"=","values":["precedes"]}}]`), ids()},
		{f(`[{"from":{"operator":"=","values":["11"]}}]`), ids(3)},
		{f(`[{"to":{"operator":"=","values":["1"]}}]`), ids(2, 4)},
		{f(`[{"involved":{"operator":"=","values":["1"]}},{"type":{"operator":"=","values":["relates"]}}]`), ids(2, 4)},
		{f(`[{"id":{"operator":"=","values":["4","1"]}}]`), ids(1, 4)},
	} {
		if got := allIDs(t, base, tc.path, AdminKey); !slices.Equal(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.path, got, tc.want)
		}
	}
	for _, bad := range []string{
		`[{"nope":{"operator":"=","values":["1"]}}]`,
		`[{"type":{"operator":"=","values":["parent"]}}]`,
		`[{"involved":{"operator":"~","values":["1"]}}]`,
		`[{"from":{"operator":"=","values":["x"]}}]`,
	} {
		if r := srvGet(t, base, f(bad), AdminKey); r.status != 400 {
			t.Errorf("%s: status %d, want 400", bad, r.status)
		}
	}
	r := srvGet(t, base, "/api/v3/relations"+srvQ("pageSize", "2", "offset", "2"), AdminKey)
	if got := elementIDs(r.body); !slices.Equal(got, ids(3, 4)) || jnum(r.body["total"]) != 4 || jnum(r.body["pageSize"]) != 2 || jnum(r.body["offset"]) != 2 {
		t.Errorf("page 2: %v, %s", got, r.raw)
	}
	if jget(r.body, "_links", "previousByOffset") == nil || jget(r.body, "_links", "nextByOffset") != nil {
		t.Errorf("page 2 links: %v", jget(r.body, "_links"))
	}
}

func TestWorkPackageRelationsRoute(t *testing.T) {
	_, base := relStart(t, Options{})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v3/work_packages/1/relations", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("apikey", AliceKey)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || loc == nil || loc.Path != "/api/v3/relations" ||
		loc.Query().Get("filters") != `[{"involved":{"operator":"=","values":["1"]}}]` {
		t.Errorf("current: %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	// The redirect leads to the relations list.
	if r := srvGet(t, base, "/api/v3/work_packages/1/relations"); !slices.Equal(elementIDs(r.body), ids(1, 2)) {
		t.Errorf("followed redirect: %s", r.raw)
	}
	wantError(t, srvGet(t, base, "/api/v3/work_packages/4/relations"), 404, "NotFound", msgWPNotFound)

	_, legacy := relStart(t, Options{Profile: ProfileLegacy})
	r := srvGet(t, legacy, "/api/v3/work_packages/1/relations", BobKey)
	if r.status != 200 || !slices.Equal(elementIDs(r.body), ids(1, 4)) || r.body["_type"] != "Collection" {
		t.Errorf("legacy: %d %s", r.status, r.raw)
	}
}

func TestCreateRelation(t *testing.T) {
	s, base := relStart(t, Options{})
	post := func(key string, from string, body map[string]any) srvResp {
		t.Helper()
		return srvDo(t, http.MethodPost, base+"/api/v3/work_packages/"+from+"/relations", key, body)
	}
	to := func(id string) map[string]any {
		return map[string]any{"to": map[string]any{"href": "/api/v3/work_packages/" + id}}
	}

	r := post(AliceKey, "10", map[string]any{"type": "blocks", "description": "needs it", "_links": to("12")})
	if r.status != 201 || r.body["type"] != "blocks" || jget(r.body, "_links", "from", "href") != "/api/v3/work_packages/10" ||
		r.body["description"] != "needs it" || jnum(r.body["id"]) != 5 {
		t.Fatalf("create blocks: %d %s", r.status, r.raw)
	}
	// A reverse type is stored reversed.
	r = post(AliceKey, "13", map[string]any{"type": "blocked", "_links": to("14")})
	if r.status != 201 || r.body["type"] != "blocks" || jget(r.body, "_links", "from", "href") != "/api/v3/work_packages/14" ||
		jget(r.body, "_links", "to", "href") != "/api/v3/work_packages/13" {
		t.Errorf("create blocked: %d %s", r.status, r.raw)
	}
	r = post(AliceKey, "20", map[string]any{"type": "precedes", "lag": 3, "_links": to("21")})
	if r.status != 201 || r.body["type"] != "follows" || r.body["lag"] != 3.0 || jget(r.body, "_links", "from", "href") != "/api/v3/work_packages/21" {
		t.Errorf("create precedes: %d %s", r.status, r.raw)
	}
	if r := post(AliceKey, "21", map[string]any{"type": "precedes", "_links": to("22")}); r.status != 201 {
		t.Errorf("21 precedes 22: %d %s", r.status, r.raw)
	}

	for _, tc := range []struct {
		name, key, from string
		body            map[string]any
		status          int
		identifier      string
		attribute       string
		message         string
	}{
		{"hidden from", AliceKey, "4", map[string]any{"type": "relates", "_links": to("1")}, 404, "NotFound", "", msgWPNotFound},
		{"no permission", srvCarolKey, "1", map[string]any{"type": "relates", "_links": to("2")}, 403, "MissingPermission", "", msgForbidden},
		{"bad type", AliceKey, "10", map[string]any{"type": "parent", "_links": to("15")}, 422, "PropertyConstraintViolation", "type", msgRelationType},
		{"no type", AliceKey, "10", map[string]any{"_links": to("15")}, 422, "PropertyConstraintViolation", "type", msgRelationType},
		{"no target", AliceKey, "10", map[string]any{"type": "relates"}, 422, "PropertyConstraintViolation", "to", msgRelationTo},
		{"hidden target", AliceKey, "1", map[string]any{"type": "relates", "_links": to("4")}, 422, "PropertyConstraintViolation", "to", msgRelationTo},
		{"missing target", AliceKey, "1", map[string]any{"type": "relates", "_links": to("999")}, 422, "PropertyConstraintViolation", "to", msgRelationTo},
		{"itself", AliceKey, "10", map[string]any{"type": "relates", "_links": to("10")}, 422, "PropertyConstraintViolation", "to", msgRelationSelf},
		{"duplicate", AliceKey, "12", map[string]any{"type": "relates", "_links": to("10")}, 422, "PropertyConstraintViolation", "base", msgRelationExists},
		{"duplicate reversed", AliceKey, "2", map[string]any{"type": "blocked", "_links": to("1")}, 422, "PropertyConstraintViolation", "base", msgRelationExists},
		{"child", AliceKey, "1", map[string]any{"type": "relates", "_links": to("5")}, 422, "PropertyConstraintViolation", "base", msgRelationAncestor},
		{"cycle", AliceKey, "22", map[string]any{"type": "precedes", "_links": to("20")}, 422, "PropertyConstraintViolation", "base", msgRelationCircular},
		{"cycle as follows", AliceKey, "20", map[string]any{"type": "follows", "_links": to("22")}, 422, "PropertyConstraintViolation", "base", msgRelationCircular},
		{"negative lag", AliceKey, "30", map[string]any{"type": "follows", "lag": -1, "_links": to("31")}, 422, "PropertyConstraintViolation", "lag", msgRelationLag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(tc.key, tc.from, tc.body)
			wantError(t, r, tc.status, tc.identifier, tc.message)
			if got, _ := jget(r.body, "_embedded", "details", "attribute").(string); got != tc.attribute {
				t.Errorf("attribute = %q, want %q", got, tc.attribute)
			}
		})
	}
	// Not a follows cycle: blocks relations may go round.
	if r := post(AliceKey, "12", map[string]any{"type": "blocks", "_links": to("16")}); r.status != 201 {
		t.Errorf("12 blocks 16: %d %s", r.status, r.raw)
	}
	if r := post(AliceKey, "16", map[string]any{"type": "blocks", "_links": to("10")}); r.status != 201 {
		t.Errorf("16 blocks 10: %d %s", r.status, r.raw)
	}

	// Relations go with a deleted work package, and into the snapshot.
	if r := srvDo(t, http.MethodDelete, base+"/api/v3/work_packages/2", AliceKey, nil); r.status != 204 {
		t.Fatalf("delete 2: %d", r.status)
	}
	var got []int64
	for _, rel := range s.Dataset().Relations {
		got = append(got, rel.ID)
	}
	if !slices.Equal(got, ids(2, 3, 4, 5, 6, 7, 8, 9, 10)) {
		t.Errorf("relations after deleting 2: %v", got)
	}
	if err := s.Dataset().Validate(); err != nil {
		t.Errorf("snapshot: %v", err)
	}
}

func TestRelationFaults(t *testing.T) {
	s, base := relStart(t, Options{})
	s.SetFaults(Faults{PathPrefix: "/api/v3/relations", FailNext: 1, FailStatus: 500})
	if r := srvGet(t, base, "/api/v3/relations"+involved("1")); r.status != 500 {
		t.Errorf("faulted list: %d", r.status)
	}
	if r := srvGet(t, base, "/api/v3/relations"+involved("1")); r.status != 200 {
		t.Errorf("after the fault: %d", r.status)
	}
	s.SetFaults(Faults{PathPrefix: "/api/v3/work_packages/1/relations", NotFoundNext: 1})
	r := srvDo(t, http.MethodPost, base+"/api/v3/work_packages/1/relations", AliceKey, map[string]any{"type": "relates", "_links": map[string]any{"to": map[string]any{"href": "/api/v3/work_packages/10"}}})
	if r.status != 404 {
		t.Errorf("faulted create: %d", r.status)
	}
	if n := len(s.Dataset().Relations); n != 4 {
		t.Errorf("a faulted create stored a relation: %d relations", n)
	}
}

func TestValidateRelations(t *testing.T) {
	for name, rel := range map[string]openproject.Relation{
		"unknown type": {ID: 9, Type: "parent", From: openproject.Ref{ID: 1}, To: openproject.Ref{ID: 2}},
		"itself":       {ID: 9, Type: "relates", From: openproject.Ref{ID: 1}, To: openproject.Ref{ID: 1}},
		"missing end":  {ID: 9, Type: "relates", From: openproject.Ref{ID: 1}, To: openproject.Ref{ID: 999}},
		"duplicate id": {ID: 1, Type: "relates", From: openproject.Ref{ID: 10}, To: openproject.Ref{ID: 12}},
	} {
		d := relDataset()
		d.Relations = append(d.Relations, rel)
		if err := d.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, rel)
		}
	}
	if err := relDataset().Validate(); err != nil {
		t.Errorf("relDataset: %v", err)
	}
}
