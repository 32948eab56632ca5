package optest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// Dataset is everything a fake OpenProject instance holds. It is plain data:
// the generator produces one, LoadDataset reads one from a JSON file, and
// NewServer serves one. References between entities are by id; Ref titles
// inside entities are filled by the server when it renders them, so a
// hand-written data set only needs ids.
type Dataset struct {
	InstanceName string                    `json:"instanceName,omitempty"`
	Users        []User                    `json:"users"`
	Projects     []Project                 `json:"projects"`
	Statuses     []openproject.Status      `json:"statuses"`
	Types        []openproject.Type        `json:"types"`
	Priorities   []openproject.Priority    `json:"priorities"`
	WorkPackages []openproject.WorkPackage `json:"workPackages"`
	// Activities of all work packages; Activity.WorkPackageID links them.
	Activities []openproject.Activity `json:"activities"`
	WikiPages  []openproject.WikiPage `json:"wikiPages"`
	// Meetings carry their agenda items and participants inline.
	Meetings []openproject.Meeting `json:"meetings"`
	Queries  []openproject.Query   `json:"queries,omitempty"`
	// TimeEntries are logged on work packages; WorkPackage and Project
	// link them (the project must be the work package's).
	TimeEntries []openproject.TimeEntry `json:"timeEntries,omitempty"`
	// Versions are defined by a project and, by Sharing, usable in
	// others; WorkPackage.Version points at one by id.
	Versions []openproject.Version `json:"versions,omitempty"`
	// CustomFields are the work package custom fields (every one applies
	// to every project and type); CustomValues hold their values.
	CustomFields []CustomField `json:"customFields,omitempty"`
	CustomValues []CustomValue `json:"customValues,omitempty"`
	// Relations between work packages, stored as the real server stores
	// them: a reverse type ("blocked", "precedes", ...) is kept as its
	// forward type with the ends swapped. Refs need only ids.
	Relations []openproject.Relation `json:"relations,omitempty"`
	// Attachments of work packages, wiki pages and meetings, with their
	// content; Attachment.Container names the container. The inline
	// WikiPage.Attachments of older data sets are still read, as
	// attachments of their page without content; a server files both
	// kinds here, and its Dataset snapshot has them only here.
	Attachments []Attachment `json:"attachments,omitempty"`

	// Roles, Memberships, Shares and NonMemberRole model permissions. A
	// data set without them behaves as Project.Members says.
	Roles []Role `json:"roles,omitempty"`
	// Memberships give users roles in projects, in addition to
	// Project.Members.
	Memberships []Membership `json:"memberships,omitempty"`
	// Shares give users single work packages.
	Shares []Share `json:"shares,omitempty"`
	// NonMemberRole is OpenProject's built-in "Non member" role: what a
	// logged-in user who is not a member of a public project may do there.
	// Nil means DefaultNonMemberPermissions.
	NonMemberRole *Role `json:"nonMemberRole,omitempty"`
}

// User is a fake user: the API's user plus the API key that authenticates
// as them.
type User struct {
	openproject.User
	APIKey string `json:"apiKey"`
}

// Project is a fake project: the API's project plus its members. A user
// sees a project when it is public, when they are a member (of Members or
// through a Membership), when a work package of it is shared with them, or
// when they are an administrator.
type Project struct {
	openproject.Project
	// Members hold every permission in the project. Dataset.Memberships
	// give finer roles.
	Members []int64 `json:"members,omitempty"`
}

// Well-known API keys of the fake's data sets: every generated data set
// (package opgen) has these three users, a corpus data set has the
// administrator, and the hand-written data sets of tests use them too.
const (
	AdminKey = "opsearch-admin"
	AliceKey = "opsearch-alice"
	BobKey   = "opsearch-bob"
)

// LoadDataset reads a data set from a JSON file written by SaveDataset (or
// by hand, in the same shape).
func LoadDataset(path string) (*Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	var d Dataset
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("decode dataset %s: %w", path, err)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("validate dataset %s: %w", path, err)
	}
	return &d, nil
}

// SaveDataset writes d as indented JSON. Attachments whose content is
// made on demand (Attachment.Source) are written with the content made,
// so that the file serves the same attachments without the Source.
func SaveDataset(path string, d *Dataset) error {
	if slices.ContainsFunc(d.Attachments, func(a Attachment) bool { return a.Content == nil && a.Source != nil }) {
		c := *d
		c.Attachments = make([]Attachment, len(d.Attachments))
		for i, a := range d.Attachments {
			if a.Content == nil && a.Source != nil {
				a.Content = a.Source()
				if a.FileSize == 0 {
					a.FileSize = int64(len(a.Content))
				}
			}
			c.Attachments[i] = a
		}
		d = &c
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("encode dataset: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write dataset: %w", err)
	}
	return nil
}

// Validate checks the references a server relies on: unique ids per kind,
// and every work package, wiki page and meeting pointing at an existing
// project, every activity at an existing work package, every work package
// at an existing status and type, and unique, non-empty API keys.
func (d *Dataset) Validate() error {
	projects := map[int64]bool{}
	for _, p := range d.Projects {
		if p.ID <= 0 || projects[p.ID] {
			return fmt.Errorf("project id %d is missing or duplicated", p.ID)
		}
		projects[p.ID] = true
	}
	keys := map[string]bool{}
	users := map[int64]bool{}
	for _, u := range d.Users {
		if u.ID <= 0 || users[u.ID] {
			return fmt.Errorf("user id %d is missing or duplicated", u.ID)
		}
		users[u.ID] = true
		if u.APIKey == "" || keys[u.APIKey] {
			return fmt.Errorf("user %d has an empty or duplicated API key", u.ID)
		}
		keys[u.APIKey] = true
	}
	statuses := map[int64]bool{}
	for _, s := range d.Statuses {
		statuses[s.ID] = true
	}
	types := map[int64]bool{}
	for _, t := range d.Types {
		types[t.ID] = true
	}
	wps := map[int64]bool{}
	for _, wp := range d.WorkPackages {
		if wp.ID <= 0 || wps[wp.ID] {
			return fmt.Errorf("work package id %d is missing or duplicated", wp.ID)
		}
		wps[wp.ID] = true
		if !projects[wp.Project.ID] {
			return fmt.Errorf("work package %d: unknown project %d", wp.ID, wp.Project.ID)
		}
		if !statuses[wp.Status.ID] {
			return fmt.Errorf("work package %d: unknown status %d", wp.ID, wp.Status.ID)
		}
		if !types[wp.Type.ID] {
			return fmt.Errorf("work package %d: unknown type %d", wp.ID, wp.Type.ID)
		}
	}
	if err := validateRelations(d.Relations, wps); err != nil {
		return err
	}
	acts := map[int64]bool{}
	for _, a := range d.Activities {
		if a.ID <= 0 || acts[a.ID] {
			return fmt.Errorf("activity id %d is missing or duplicated", a.ID)
		}
		acts[a.ID] = true
		if !wps[a.WorkPackageID] {
			return fmt.Errorf("activity %d: unknown work package %d", a.ID, a.WorkPackageID)
		}
	}
	wikis := map[int64]bool{}
	for _, w := range d.WikiPages {
		if w.ID <= 0 || wikis[w.ID] {
			return fmt.Errorf("wiki page id %d is missing or duplicated", w.ID)
		}
		wikis[w.ID] = true
		if !projects[w.Project.ID] {
			return fmt.Errorf("wiki page %d: unknown project %d", w.ID, w.Project.ID)
		}
	}
	meetings := map[int64]bool{}
	for _, m := range d.Meetings {
		if m.ID <= 0 || meetings[m.ID] {
			return fmt.Errorf("meeting id %d is missing or duplicated", m.ID)
		}
		meetings[m.ID] = true
		if !projects[m.Project.ID] {
			return fmt.Errorf("meeting %d: unknown project %d", m.ID, m.Project.ID)
		}
	}
	if err := d.validateAttachments(wps, wikis, meetings); err != nil {
		return err
	}
	if err := d.validateTimeEntries(projects, users); err != nil {
		return err
	}
	if err := d.validateVersions(projects); err != nil {
		return err
	}
	return d.validatePermissions(projects, users, wps)
}

// validateAttachments checks unique ids, across Attachments and the
// inline attachments of wiki pages, and that every attachment names an
// existing container.
func (d *Dataset) validateAttachments(wps, wikis, meetings map[int64]bool) error {
	ids := map[int64]bool{}
	for _, a := range d.Attachments {
		if a.ID <= 0 || ids[a.ID] {
			return fmt.Errorf("attachment id %d is missing or duplicated", a.ID)
		}
		ids[a.ID] = true
		c, ok := parseContainer(a.Container)
		if !ok {
			return fmt.Errorf("attachment %d: container %q is not a work package, wiki page or meeting", a.ID, a.Container.Href)
		}
		exists := map[containerKind]map[int64]bool{containerWP: wps, containerWiki: wikis, containerMeeting: meetings}[c.kind]
		if !exists[c.id] {
			return fmt.Errorf("attachment %d: unknown container %s", a.ID, c.href())
		}
	}
	for _, w := range d.WikiPages {
		for _, a := range w.Attachments {
			if a.ID <= 0 || ids[a.ID] {
				return fmt.Errorf("attachment id %d (wiki page %d) is missing or duplicated", a.ID, w.ID)
			}
			ids[a.ID] = true
		}
	}
	return nil
}

// validateTimeEntries checks unique ids, an existing user, a work package
// that exists in the entry's project, and a date and hours the API could
// render.
func (d *Dataset) validateTimeEntries(projects, users map[int64]bool) error {
	wpProject := make(map[int64]int64, len(d.WorkPackages))
	for _, wp := range d.WorkPackages {
		wpProject[wp.ID] = wp.Project.ID
	}
	ids := map[int64]bool{}
	for _, te := range d.TimeEntries {
		if te.ID <= 0 || ids[te.ID] {
			return fmt.Errorf("time entry id %d is missing or duplicated", te.ID)
		}
		ids[te.ID] = true
		if !users[te.User.ID] {
			return fmt.Errorf("time entry %d: unknown user %d", te.ID, te.User.ID)
		}
		if !projects[te.Project.ID] {
			return fmt.Errorf("time entry %d: unknown project %d", te.ID, te.Project.ID)
		}
		if te.WorkPackage != nil {
			pid, ok := wpProject[te.WorkPackage.ID]
			if !ok {
				return fmt.Errorf("time entry %d: unknown work package %d", te.ID, te.WorkPackage.ID)
			}
			if pid != te.Project.ID {
				return fmt.Errorf("time entry %d: work package %d is in project %d, not %d", te.ID, te.WorkPackage.ID, pid, te.Project.ID)
			}
		}
		if _, err := time.Parse(time.DateOnly, te.SpentOn); err != nil {
			return fmt.Errorf("time entry %d: spentOn %q is not a date", te.ID, te.SpentOn)
		}
		if te.Hours < 0 || math.IsNaN(te.Hours) || math.IsInf(te.Hours, 0) {
			return fmt.Errorf("time entry %d: hours %v", te.ID, te.Hours)
		}
	}
	return nil
}

// validatePermissions checks roles, memberships and shares: unique role
// ids, and every reference pointing at an existing project, user, role or
// work package.
func (d *Dataset) validatePermissions(projects, users, wps map[int64]bool) error {
	roles := map[int64]bool{}
	for _, r := range d.Roles {
		if r.ID <= 0 || roles[r.ID] {
			return fmt.Errorf("role id %d is missing or duplicated", r.ID)
		}
		roles[r.ID] = true
	}
	for _, m := range d.Memberships {
		if !projects[m.ProjectID] {
			return fmt.Errorf("membership of user %d: unknown project %d", m.UserID, m.ProjectID)
		}
		if !users[m.UserID] {
			return fmt.Errorf("membership in project %d: unknown user %d", m.ProjectID, m.UserID)
		}
		for _, rid := range m.RoleIDs {
			if !roles[rid] {
				return fmt.Errorf("membership of user %d in project %d: unknown role %d", m.UserID, m.ProjectID, rid)
			}
		}
	}
	for _, sh := range d.Shares {
		if !wps[sh.WorkPackageID] {
			return fmt.Errorf("share with user %d: unknown work package %d", sh.UserID, sh.WorkPackageID)
		}
		if !users[sh.UserID] {
			return fmt.Errorf("share of work package %d: unknown user %d", sh.WorkPackageID, sh.UserID)
		}
		if !roles[sh.RoleID] {
			return fmt.Errorf("share of work package %d with user %d: unknown role %d", sh.WorkPackageID, sh.UserID, sh.RoleID)
		}
	}
	return nil
}
