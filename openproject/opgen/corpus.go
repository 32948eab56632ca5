package opgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// Corpus is the neutral, HAL-free corpus format of labelled evaluation sets
// such as ../shared/devset/corpus.json: projects, users, memberships, work
// packages with inline comments, wiki pages and meetings with inline agenda
// items. CorpusDataset turns one into a Dataset the fake serves.
type Corpus struct {
	Projects []struct {
		ID          int64  `json:"id"`
		Identifier  string `json:"identifier"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Public      bool   `json:"public"`
	} `json:"projects"`
	Users []struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Login string `json:"login"`
	} `json:"users"`
	Memberships []struct {
		UserID     int64   `json:"user_id"`
		ProjectIDs []int64 `json:"project_ids"`
	} `json:"memberships"`
	WorkPackages []struct {
		ID          int64  `json:"id"`
		ProjectID   int64  `json:"project_id"`
		Subject     string `json:"subject"`
		Description string `json:"description"`
		Type        string `json:"type"`
		Status      string `json:"status"`
		AuthorID    int64  `json:"author_id"`
		AssigneeID  *int64 `json:"assignee_id"`
		CreatedAt   string `json:"created_at"`
		UpdatedAt   string `json:"updated_at"`
		Comments    []struct {
			ID        int64  `json:"id"`
			AuthorID  int64  `json:"author_id"`
			CreatedAt string `json:"created_at"`
			Text      string `json:"text"`
		} `json:"comments"`
	} `json:"work_packages"`
	WikiPages []struct {
		ID        int64  `json:"id"`
		ProjectID int64  `json:"project_id"`
		Title     string `json:"title"`
		Text      string `json:"text"`
		UpdatedAt string `json:"updated_at"`
	} `json:"wiki_pages"`
	Meetings []struct {
		ID             int64   `json:"id"`
		ProjectID      int64   `json:"project_id"`
		Title          string  `json:"title"`
		Location       string  `json:"location"`
		StartTime      string  `json:"start_time"`
		AuthorID       int64   `json:"author_id"`
		ParticipantIDs []int64 `json:"participant_ids"`
		AgendaItems    []struct {
			ID       int64    `json:"id"`
			Title    string   `json:"title"`
			Notes    string   `json:"notes"`
			Outcomes []string `json:"outcomes"`
		} `json:"agenda_items"`
	} `json:"meetings"`
}

// CorpusAdminID and CorpusKeyPrefix describe the users a corpus data set
// gets: the corpus's own users, each with the API key CorpusKeyPrefix +
// login (for example "opsearch-thaddad"), plus an administrator (AdminKey)
// with id CorpusAdminID, who sees every project.
const (
	CorpusAdminID   = 1000
	CorpusKeyPrefix = "opsearch-"
)

// corpusStatuses are Redmine's statuses, the vocabulary corpora taken from
// Redmine use; Closed and Rejected are the closed ones.
func corpusStatuses() []openproject.Status {
	return []openproject.Status{
		{ID: 1, Name: "New", IsDefault: true, Color: "#1A67A3", Position: 1},
		{ID: 2, Name: "In Progress", Color: "#F08C00", Position: 2},
		{ID: 3, Name: "Feedback", Color: "#9C36B5", Position: 3},
		{ID: 4, Name: "Resolved", Color: "#0CA678", Position: 4},
		{ID: 5, Name: "Closed", IsClosed: true, Color: "#2F9E44", Position: 5},
		{ID: 6, Name: "Rejected", IsClosed: true, Color: "#E03131", Position: 6},
	}
}

// IsCorpus reports whether data looks like the neutral corpus format (it
// has a "work_packages" key) rather than a saved Dataset ("workPackages").
func IsCorpus(data []byte) bool {
	var probe struct {
		WP json.RawMessage `json:"work_packages"`
	}
	return json.Unmarshal(data, &probe) == nil && probe.WP != nil
}

// ReadCorpus decodes a neutral corpus and converts it with CorpusDataset.
func ReadCorpus(r io.Reader) (*optest.Dataset, error) {
	var c Corpus
	dec := json.NewDecoder(r)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode corpus: %w", err)
	}
	return CorpusDataset(&c)
}

// CorpusDataset converts a neutral corpus into a Dataset: ids are kept as
// they are (wiki id gaps included), comments become comment activities,
// outcomes and participants attach to their meetings, and memberships decide
// who sees the non-public projects. The result passes Validate.
func CorpusDataset(c *Corpus) (*optest.Dataset, error) {
	d := &optest.Dataset{
		InstanceName: "OpenProject (opsearch fake, corpus)",
		Statuses:     corpusStatuses(),
		Types:        fixedTypes(),
		Priorities:   fixedPriorities(),
	}
	var bad error
	ts := func(what string, id int64, s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil && bad == nil {
			bad = fmt.Errorf("%s %d: timestamp %q: %w", what, id, s, err)
		}
		return t.UTC()
	}
	users := map[int64]string{}
	userRef := func(id int64) openproject.Ref {
		return openproject.Ref{ID: id, Href: "/api/v3/users/" + strconv.FormatInt(id, 10), Title: users[id]}
	}
	first := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	admin := optest.User{APIKey: optest.AdminKey}
	admin.ID, admin.Name, admin.Login, admin.Admin, admin.Status = CorpusAdminID, "OpenProject Admin", "admin", true, "active"
	admin.FirstName, admin.LastName, admin.CreatedAt, admin.UpdatedAt = "OpenProject", "Admin", first, first
	d.Users = append(d.Users, admin)
	users[CorpusAdminID] = admin.Name
	for _, u := range c.Users {
		if u.ID == CorpusAdminID {
			return nil, fmt.Errorf("corpus user id %d is reserved for the administrator", u.ID)
		}
		if u.Login == "" {
			return nil, fmt.Errorf("corpus user %d has no login", u.ID)
		}
		fu := optest.User{APIKey: CorpusKeyPrefix + u.Login}
		fu.ID, fu.Name, fu.Login, fu.Status, fu.Language = u.ID, u.Name, u.Login, "active", "en"
		fu.FirstName, fu.LastName, _ = strings.Cut(u.Name, " ")
		fu.Email = u.Login + "@example.com"
		fu.CreatedAt, fu.UpdatedAt = first, first
		d.Users = append(d.Users, fu)
		users[u.ID] = u.Name
	}
	members := map[int64][]int64{}
	for _, m := range c.Memberships {
		for _, p := range m.ProjectIDs {
			members[p] = append(members[p], m.UserID)
		}
	}
	projects := map[int64]string{}
	for _, p := range c.Projects {
		fp := optest.Project{Members: members[p.ID]}
		fp.ID, fp.Identifier, fp.Name, fp.Description, fp.Public, fp.Active = p.ID, p.Identifier, p.Name, p.Description, p.Public, true
		fp.CreatedAt, fp.UpdatedAt = first, first
		d.Projects = append(d.Projects, fp)
		projects[p.ID] = p.Name
	}
	projectRef := func(id int64) openproject.Ref {
		return openproject.Ref{ID: id, Href: "/api/v3/projects/" + strconv.FormatInt(id, 10), Title: projects[id]}
	}
	refByName := func(table []openproject.Ref, name string) (openproject.Ref, bool) {
		for _, r := range table[1:] {
			if strings.EqualFold(r.Title, name) {
				return r, true
			}
		}
		return openproject.Ref{}, false
	}
	statusRefs := refsOf(d.Statuses, "/api/v3/statuses/", func(s openproject.Status) (int64, string) { return s.ID, s.Name })
	typeRefs := refsOf(d.Types, "/api/v3/types/", func(t openproject.Type) (int64, string) { return t.ID, t.Name })
	prioRefs := refsOf(d.Priorities, "/api/v3/priorities/", func(p openproject.Priority) (int64, string) { return p.ID, p.Name })
	for _, w := range c.WorkPackages {
		st, ok := refByName(statusRefs, w.Status)
		if !ok {
			return nil, fmt.Errorf("work package %d: unknown status %q", w.ID, w.Status)
		}
		ty, ok := refByName(typeRefs, w.Type)
		if !ok {
			return nil, fmt.Errorf("work package %d: unknown type %q", w.ID, w.Type)
		}
		wp := openproject.WorkPackage{
			ID: w.ID, LockVersion: 1, Subject: w.Subject, Description: w.Description,
			Project: projectRef(w.ProjectID), Type: ty, Status: st, Priority: prioRefs[prioNormal],
			Author: userRef(w.AuthorID), CreatedAt: ts("work package", w.ID, w.CreatedAt), UpdatedAt: ts("work package", w.ID, w.UpdatedAt),
		}
		for _, s := range d.Statuses {
			if s.ID == st.ID {
				wp.Closed = s.IsClosed
			}
		}
		if w.AssigneeID != nil {
			a := userRef(*w.AssigneeID)
			wp.Assignee = &a
		}
		d.WorkPackages = append(d.WorkPackages, wp)
		for i, cm := range w.Comments {
			at := ts("comment", cm.ID, cm.CreatedAt)
			d.Activities = append(d.Activities, openproject.Activity{
				ID: cm.ID, Kind: "Activity::Comment", Version: i + 2, Comment: cm.Text, User: userRef(cm.AuthorID),
				WorkPackageID: w.ID, CreatedAt: at, UpdatedAt: at,
			})
		}
	}
	for _, w := range c.WikiPages {
		at := ts("wiki page", w.ID, w.UpdatedAt)
		d.WikiPages = append(d.WikiPages, openproject.WikiPage{
			ID: w.ID, Title: w.Title, Project: projectRef(w.ProjectID), Text: w.Text, HasText: true,
			LockVersion: 1, CreatedAt: at, UpdatedAt: at,
		})
	}
	for _, m := range c.Meetings {
		start := ts("meeting", m.ID, m.StartTime)
		fm := openproject.Meeting{
			ID: m.ID, Title: m.Title, Location: m.Location, LockVersion: 1, StartTime: start, EndTime: start.Add(time.Hour),
			Duration: 1, Project: projectRef(m.ProjectID), Author: userRef(m.AuthorID), CreatedAt: start, UpdatedAt: start,
		}
		for _, p := range m.ParticipantIDs {
			fm.Participants = append(fm.Participants, userRef(p))
		}
		var outcomeID int64
		for i, a := range m.AgendaItems {
			it := openproject.AgendaItem{
				ID: a.ID, MeetingID: m.ID, Title: a.Title, Notes: a.Notes, Position: i + 1, ItemType: "simple",
				LockVersion: 1, CreatedAt: start, UpdatedAt: start,
			}
			for _, o := range a.Outcomes {
				outcomeID++
				it.Outcomes = append(it.Outcomes, openproject.Outcome{ID: m.ID*1000 + outcomeID, Notes: o, Kind: "information"})
			}
			fm.AgendaItems = append(fm.AgendaItems, it)
		}
		d.Meetings = append(d.Meetings, fm)
	}
	if bad != nil {
		return nil, bad
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("validate corpus: %w", err)
	}
	return d, nil
}

// LoadAny reads a data set from path in either format: a saved Dataset
// (SaveDataset) or a neutral corpus (Corpus).
func LoadAny(path string) (*optest.Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	if IsCorpus(b) {
		d, err := ReadCorpus(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("load corpus %s: %w", path, err)
		}
		return d, nil
	}
	return optest.LoadDataset(path)
}
