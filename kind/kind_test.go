package kind

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestAll(t *testing.T) {
	want := []Kind{Project, WorkPackage, Activity, WikiPage, Meeting, Attachment}
	got := All()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	got[0] = "x"
	if All()[0] != Project {
		t.Error("All() shares its slice")
	}
	for _, k := range want {
		if !k.Valid() {
			t.Errorf("%s is not Valid", k)
		}
	}
	for _, k := range []Kind{"", "work_packages", "Work_Package", "bogus"} {
		if k.Valid() {
			t.Errorf("%q is Valid", k)
		}
	}
}

// TestWireSpelling pins the spelling every answer carries: changing one is
// a breaking change for every client.
func TestWireSpelling(t *testing.T) {
	for k, want := range map[Kind]string{
		Project: "project", WorkPackage: "work_package", Activity: "activity",
		WikiPage: "wiki_page", Meeting: "meeting", Attachment: "attachment",
	} {
		if k.String() != want {
			t.Errorf("%s spelled %q, want %q", k, k.String(), want)
		}
		raw, err := json.Marshal(map[Kind]Kind{k: k})
		if err != nil || string(raw) != `{"`+want+`":"`+want+`"}` {
			t.Errorf("JSON of %s: %s, %v", k, raw, err)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Kind{
		"project": Project, "projects": Project,
		"work_package": WorkPackage, "work_packages": WorkPackage,
		"activity": Activity, "activities": Activity,
		"wiki_page": WikiPage, "wiki_pages": WikiPage,
		"meeting": Meeting, "meetings": Meeting,
	} {
		if got, ok := Parse(in); !ok || got != want {
			t.Errorf("Parse(%q) = %q, %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "bogus", "Work_Package", " meeting", "comment"} {
		if got, ok := Parse(in); ok {
			t.Errorf("Parse(%q) = %q, true", in, got)
		}
	}
}

// TestUnmarshalAliases: JSON written by an earlier version (plural keys
// and values) decodes to the same kinds; unknown text is kept, not an
// error.
func TestUnmarshalAliases(t *testing.T) {
	var got struct {
		Kinds map[Kind]int `json:"kinds"`
		One   Kind         `json:"one"`
		Other Kind         `json:"other"`
	}
	raw := `{"kinds":{"work_packages":1,"wiki_page":2,"activities":3},"one":"meetings","other":"later_kind"}`
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	want := map[Kind]int{WorkPackage: 1, WikiPage: 2, Activity: 3}
	if !reflect.DeepEqual(got.Kinds, want) || got.One != Meeting || got.Other != "later_kind" {
		t.Errorf("decoded %+v", got)
	}
}

func TestContainer(t *testing.T) {
	for _, k := range All() {
		want := k == WorkPackage || k == WikiPage || k == Meeting
		if k.Container() != want {
			t.Errorf("%s.Container() = %v", k, !want)
		}
	}
}
