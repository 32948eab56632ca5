package openproject

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFilters_MarshalJSON(t *testing.T) {
	from := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   Filters
		want string
	}{
		{"empty disables the default", Filters{}, `[]`},
		{"status all", Filters{StatusAll()}, `[{"status":{"operator":"*","values":[]}}]`},
		{"changed since, open upper bound", Filters{UpdatedBetween(from, time.Time{})},
			`[{"updatedAt":{"operator":"<>d","values":["2024-05-01T10:00:00.000Z",""]}}]`},
		{"ids and projects are strings", Filters{IDs(1, 22), InProjects(7)},
			`[{"id":{"operator":"=","values":["1","22"]}},{"project":{"operator":"=","values":["7"]}}]`},
		{"quotes are escaped", Filters{SubjectContains(`say "hi"`)},
			`[{"subject":{"operator":"~","values":["say \"hi\""]}}]`},
		{"full text", Filters{FullText("login bug")}, `[{"search":{"operator":"**","values":["login bug"]}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			back, err := ParseFilters(tt.in.String())
			if err != nil {
				t.Fatal(err)
			}
			if back.String() != tt.want {
				t.Errorf("round trip: %s", back.String())
			}
		})
	}
}

func TestParseFilters(t *testing.T) {
	tests := []struct {
		in      string
		want    Filters
		wantErr string
	}{
		{`[]`, Filters{}, ""},
		{`[{"status_id":{"operator":"o","values":null}}]`, Filters{{Name: "status_id", Operator: "o"}}, ""},
		{`[{"id":{"operator":"=","values":[1,"2"]}}]`, Filters{{Name: "id", Operator: "=", Values: []string{"1", "2"}}}, ""},
		{`[{"status":{"values":[]}}]`, nil, "Operator can't be blank."},
		{`[{"a":{"operator":"="},"b":{"operator":"="}}]`, nil, "exactly one filter name"},
		{`{"status":{}}`, nil, "not a valid JSON array"},
		{`[{"status":{"operator":"=","values":[true]}}]`, nil, "neither a string nor a number"},
		{`nope`, nil, "not a valid JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFilters(tt.in)
			if tt.wantErr != "" {
				var se *FilterSyntaxError
				if !errors.As(err, &se) || !contains(se.Msg, tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestParseSortBy(t *testing.T) {
	tests := []struct {
		in      string
		want    []Sort
		wantErr bool
	}{
		{``, nil, false},
		{`[["id","asc"],["updatedAt","desc"]]`, []Sort{{"id", "asc"}, {"updatedAt", "desc"}}, false},
		{`["id:desc"]`, []Sort{{"id", "desc"}}, false},
		{`[["id"]]`, []Sort{{"id", "asc"}}, false},
		{`[["id","sideways"]]`, nil, true},
		{`[[""]]`, nil, true},
		{`id`, nil, true},
	}
	for _, tt := range tests {
		got, err := ParseSortBy(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestListOptions_Values(t *testing.T) {
	v := ListOptions{
		Filters: Filters{StatusAll()}, SortBy: []Sort{{Field: "id"}}, Select: []string{"total", "elements/id"},
		PageSize: 1000, Offset: 3,
	}.Values()
	want := url.Values{
		"filters":  {`[{"status":{"operator":"*","values":[]}}]`},
		"sortBy":   {`[["id","asc"]]`},
		"select":   {"total,elements/id"},
		"pageSize": {"1000"},
		"offset":   {"3"},
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %v", v)
	}
	if got := (ListOptions{}).Values(); len(got) != 0 {
		t.Errorf("zero options must send nothing (server defaults), got %v", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"7", 7 * time.Second},
		{" 0 ", 0},
		{"-3", 0},
		{now.Add(90 * time.Second).Format(httpTimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(httpTimeFormat), 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

const httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

func TestIDFromHref(t *testing.T) {
	tests := map[string]int64{
		"/api/v3/users/11":                     11,
		"/openproject/api/v3/projects/7/":      7,
		"/api/v3/work_packages/3?timestamps=x": 3,
		"/api/v3/project_statuses/on_track":    0,
		UndisclosedHref:                        0,
		"":                                     0,
	}
	for in, want := range tests {
		if got := idFromHref(in); got != want {
			t.Errorf("idFromHref(%q) = %d, want %d", in, got, want)
		}
	}
}

func contains(s, sub string) bool {
	return strings.Contains(s, sub)
}
