package opgen

import (
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject/optest"
)

const tinyCorpus = `{
 "projects": [{"id": 1, "identifier": "core", "name": "Core", "public": true, "description": "d"},
              {"id": 2, "identifier": "sec", "name": "Security", "public": false, "description": "s"}],
 "users": [{"id": 1, "name": "Dóra Kovács", "login": "dkovacs"}, {"id": 2, "name": "Jiří Dvořák", "login": "jdvorak"}],
 "memberships": [{"user_id": 1, "project_ids": [1]}, {"user_id": 2, "project_ids": [1, 2]}],
 "work_packages": [{"id": 442, "project_id": 2, "subject": "Secret", "description": "x", "type": "Bug", "status": "Rejected",
   "author_id": 2, "assignee_id": null, "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-02T00:00:00Z",
   "comments": [{"id": 5001, "author_id": 2, "created_at": "2024-01-03T00:00:00Z", "text": "Behind OpenResty it fails."}]}],
 "wiki_pages": [{"id": 4711, "project_id": 1, "title": "Guide", "text": "Body", "updated_at": "2024-01-01T00:00:00Z"}],
 "meetings": [{"id": 1, "project_id": 1, "title": "Retro", "location": "Room", "start_time": "2024-02-01T10:00:00Z",
   "author_id": 1, "participant_ids": [1, 2], "agenda_items": [{"id": 701, "title": "Topic", "notes": "n", "outcomes": ["Go with Nordhaven."]}]}]
}`

func TestCorpusDataset(t *testing.T) {
	if !IsCorpus([]byte(tinyCorpus)) || IsCorpus([]byte(`{"workPackages": []}`)) {
		t.Fatal("IsCorpus does not tell the formats apart")
	}
	d, err := ReadCorpus(strings.NewReader(tinyCorpus))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Users) != 3 || d.Users[0].APIKey != optest.AdminKey || !d.Users[0].Admin || d.Users[1].APIKey != CorpusKeyPrefix+"dkovacs" {
		t.Errorf("users: %+v", d.Users)
	}
	wp := d.WorkPackages[0]
	if wp.ID != 442 || !wp.Closed || wp.Status.Title != "Rejected" || wp.Type.Title != "Bug" || wp.Assignee != nil || wp.Project.ID != 2 {
		t.Errorf("work package: %+v", wp)
	}
	if len(d.Activities) != 1 || d.Activities[0].ID != 5001 || d.Activities[0].WorkPackageID != 442 || !d.Activities[0].IsComment() {
		t.Errorf("activities: %+v", d.Activities)
	}
	if d.WikiPages[0].ID != 4711 || !d.WikiPages[0].HasText {
		t.Errorf("wiki: %+v", d.WikiPages[0])
	}
	m := d.Meetings[0]
	if len(m.Participants) != 2 || len(m.AgendaItems) != 1 || m.AgendaItems[0].Outcomes[0].Notes != "Go with Nordhaven." {
		t.Errorf("meeting: %+v", m)
	}
	// Visibility: the private project's members only (and the admin).
	sec := d.Projects[1]
	if sec.Public || len(sec.Members) != 1 || sec.Members[0] != 2 {
		t.Errorf("private project members: %+v", sec)
	}
}

func TestCorpusDataset_Errors(t *testing.T) {
	tests := []struct{ name, edit, want string }{
		{"unknown status", `"status": "Rejected"`, `unknown status "Parked"`},
		{"bad timestamp", `"created_at": "2024-01-01T00:00:00Z"`, `timestamp "yesterday"`},
		{"unknown project", `"project_id": 2, "subject"`, "unknown project 9"},
	}
	repl := map[string]string{
		"unknown status":  `"status": "Parked"`,
		"bad timestamp":   `"created_at": "yesterday"`,
		"unknown project": `"project_id": 9, "subject"`,
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(tinyCorpus, tc.edit, repl[tc.name], 1)
			_, err := ReadCorpus(strings.NewReader(in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to name %q", err, tc.want)
			}
		})
	}
	if _, err := ReadCorpus(strings.NewReader("{")); err == nil || !strings.Contains(err.Error(), "decode corpus") {
		t.Errorf("truncated corpus: %v", err)
	}
}

func FuzzReadCorpus(f *testing.F) {
	f.Add(tinyCorpus)
	f.Add(`{"work_packages": [{"id": 1}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ReadCorpus(strings.NewReader(in))
		if err == nil {
			if verr := d.Validate(); verr != nil {
				t.Fatalf("ReadCorpus accepted a data set that does not validate: %v", verr)
			}
		}
	})
}
