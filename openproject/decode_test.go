package openproject

import (
	stdjson "encoding/json"
	"os"
	"testing"

	json "github.com/go-json-experiment/json/v1"
)

// TestDecodeBodyKeepsV1Semantics checks that decodeBody, which differs
// from encoding/json only in how it reports a type error, still reads
// what servers send the way encoding/json does, and still rejects a body
// with a type error.
func TestDecodeBodyKeepsV1Semantics(t *testing.T) {
	type wire struct {
		ID      int64  `json:"id"`
		Subject string `json:"subject"`
	}
	tests := []struct {
		name    string
		body    string
		want    wire
		wantErr bool
	}{
		{name: "plain", body: `{"id": 7, "subject": "Backup"}`, want: wire{7, "Backup"}},
		{name: "names in another case", body: `{"ID": 7, "Subject": "Backup"}`, want: wire{7, "Backup"}},
		{name: "duplicate names, last wins", body: `{"id": 7, "id": 8}`, want: wire{ID: 8}},
		{name: "invalid UTF-8 replaced", body: "{\"subject\": \"a\xffb\"}", want: wire{Subject: "a\ufffdb"}},
		{name: "unknown members skipped", body: `{"id": 7, "_embedded": {"x": [1, {"y": null}]}}`, want: wire{ID: 7}},
		{name: "type error", body: `{"id": "seven", "subject": "Backup"}`, wantErr: true},
		{name: "type error after the fields", body: `{"subject": "Backup", "id": true}`, wantErr: true},
		{name: "truncated", body: `{"id": 7, "subj`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got wire
			err := decodeBody([]byte(tt.body), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("decodeBody(%s) = %+v, want an error", tt.body, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("decodeBody(%s) = %+v, %v; want %+v", tt.body, got, err, tt.want)
			}
		})
	}
}

// TestDecodeBodyAcceptsEveryWireType decodes an empty object into each
// type the client decodes answers into. encoding/json ignores a struct's
// own type errors (two fields with one name, a malformed tag) and the
// v2 decoder under decodeBody reports them on every decode: one would
// make every answer of that type malformed.
func TestDecodeBodyAcceptsEveryWireType(t *testing.T) {
	for _, v := range []any{
		&wireGroupedCollection{}, &wireGroup{}, &wireID{}, &halLink{}, &halError{},
		&wireUser{}, &wireProject{}, &wireStatus{}, &wireType{}, &wirePriority{},
		&wireWorkPackage{}, &wireActivity{}, &wireAttachment{}, &wireWikiPage{},
		&wireMeeting{}, &wireOutcome{}, &wireAgendaItem{}, &wireQuery{},
		&wireQueryWithResults{}, &wireQueryFilter{}, &wireWikiPageLink{}, &wireRoot{},
		&wireRelation{}, &wireTimeEntry{}, &wireVersion{},
		&halCollection{}, &halCollectionOf[wireActivity]{},
	} {
		if err := decodeBody([]byte(`{}`), v); err != nil {
			t.Errorf("decodeBody({}) into %T: %v", v, err)
		}
	}
}

// BenchmarkDecodeActivities decodes an activities answer of 30 comments,
// each embedding its work package as the API does (the real examples in
// testdata), with decodeBody and with encoding/json's every legacy option
// (go-json-experiment/json/v1), which decodeBody replaced:
//
//	go test ./openproject -run '^$' -bench DecodeActivities
func BenchmarkDecodeActivities(b *testing.B) {
	body := activitiesAnswer(b, 30)
	decoders := []struct {
		name   string
		decode func([]byte, any) error
	}{
		{"decodeBody", decodeBody},
		{"v1", func(data []byte, out any) error { return json.Unmarshal(data, out) }},
	}
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var coll halCollectionOf[wireActivity]
				if err := d.decode(body, &coll); err != nil {
					b.Fatal(err)
				}
				if len(coll.Embedded.Elements) != 30 {
					b.Fatalf("decoded %d activities, want 30", len(coll.Embedded.Elements))
				}
			}
		})
	}
}

// activitiesAnswer builds an activities collection of n copies of the
// example comment, each embedding the example work package where the
// example abbreviates it.
func activitiesAnswer(b *testing.B, n int) []byte {
	read := func(name string, v any) {
		data, err := os.ReadFile("testdata/examples/" + name)
		if err == nil {
			err = stdjson.Unmarshal(data, v)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	var act struct {
		Rest     map[string]stdjson.RawMessage
		Embedded map[string]stdjson.RawMessage
	}
	var wp stdjson.RawMessage
	read("activity_comment.json", &act.Rest)
	read("work_package.json", &wp)
	if err := stdjson.Unmarshal(act.Rest["_embedded"], &act.Embedded); err != nil {
		b.Fatal(err)
	}
	act.Embedded["workPackage"] = wp
	emb, err := stdjson.Marshal(act.Embedded)
	if err != nil {
		b.Fatal(err)
	}
	act.Rest["_embedded"] = emb
	elems := make([]map[string]stdjson.RawMessage, n)
	for i := range elems {
		elems[i] = act.Rest
	}
	body, err := stdjson.Marshal(map[string]any{
		"_type": "Collection", "total": n, "count": n,
		"_embedded": map[string]any{"elements": elems},
	})
	if err != nil {
		b.Fatal(err)
	}
	return body
}
