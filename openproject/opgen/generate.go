package opgen

import (
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// GenOptions sizes a generated data set. A zero field selects its default;
// a negative count means none (except Projects, which never goes below the
// three fixed projects).
type GenOptions struct {
	// Seed selects the data set: the same options always produce the same
	// data, byte for byte once encoded.
	Seed int64
	// Projects is the number of projects, default 12, at least 3.
	Projects int
	// Users is the number of users besides admin, alice and bob, default 20.
	Users int
	// WorkPackages is the number of work packages, default 2000.
	WorkPackages int
	// Comments is the number of comment activities across all work
	// packages, default 3*WorkPackages. Every work package additionally gets
	// one change journal without a comment.
	Comments int
	// WikiPages is the number of wiki pages, default 60.
	WikiPages int
	// Meetings is the number of meetings, default 40.
	Meetings int
	// Start is the earliest timestamp; every timestamp lies in
	// [Start, Start+365 days]. Default 2025-01-06T09:00:00Z.
	Start time.Time
	// MixedPermissions adds roles, memberships, work package shares, a
	// Non member role without the wiki, internal comments and three more
	// users with their own visibility (carol, dave and erin; see
	// CarolKey). It needs at least four projects and raises Projects to
	// four. Without it the data set is exactly as before: everything
	// else is generated first and left as it is.
	MixedPermissions bool
	// ExternalAttachments keeps the attachments' files in the fake's
	// external storage, as an instance with S3 does: their content route
	// redirects to a presigned URL (optest.Attachment.External).
	ExternalAttachments bool
}

// Defaults of GenOptions.
const (
	DefaultProjects     = 12
	DefaultUsers        = 20
	DefaultWorkPackages = 2000
	DefaultWikiPages    = 60
	DefaultMeetings     = 40
)

// defaultStart is the default GenOptions.Start (a Monday morning).
var defaultStart = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

// genSpan is the period all generated timestamps fall into.
const genSpan = 365 * 24 * time.Hour

func (o GenOptions) normalized() GenOptions {
	count := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	o.Projects = max(count(o.Projects, DefaultProjects), minProjects)
	if o.MixedPermissions {
		// The fourth project is the first public one.
		o.Projects = max(o.Projects, minProjects+1)
	}
	o.Users = count(o.Users, DefaultUsers)
	o.WorkPackages = count(o.WorkPackages, DefaultWorkPackages)
	o.Comments = count(o.Comments, 3*o.WorkPackages)
	if o.WorkPackages == 0 {
		o.Comments = 0 // nothing to comment on
	}
	o.WikiPages = count(o.WikiPages, DefaultWikiPages)
	o.Meetings = count(o.Meetings, DefaultMeetings)
	if o.Start.IsZero() {
		o.Start = defaultStart
	}
	// UTC so that the encoded timestamps do not depend on the caller's zone.
	o.Start = o.Start.UTC()
	return o
}

// Generate builds a deterministic, realistic data set: users with
// international names, projects with members (including a project shared by
// alice and bob and a private project for each), work packages with varied
// project-management text, comments (some of which carry facts found
// nowhere else), wiki pages with sparse ids, meetings with agenda items and
// outcomes, a few saved queries, and attachments of work packages, wiki
// pages and meetings whose files (text, Markdown, CSV, JSON, HTML, e-mail,
// DOCX, XLSX, ODT, PDF, PNG, one corrupt, one over 11 MB) are made on
// demand; AttachmentPhrase and AttachmentKind tell tests what each holds.
// The result passes Validate.
//
// Texts mention each project's codename (a bird name found in no other
// text): every work package of the private projects of alice ("Nightingale")
// and bob ("Kestrel") does, so a search for it tells whether private data
// leaked.
func Generate(o GenOptions) *optest.Dataset {
	o = o.normalized()
	g := &generator{o: o, start: o.Start, end: o.Start.Add(genSpan)}
	d := &optest.Dataset{
		InstanceName: "OpenProject (opsearch fake)",
		Statuses:     fixedStatuses(),
		Types:        fixedTypes(),
		Priorities:   fixedPriorities(),
	}
	g.statusRefs = refsOf(d.Statuses, "/api/v3/statuses/", func(s openproject.Status) (int64, string) { return s.ID, s.Name })
	g.typeRefs = refsOf(d.Types, "/api/v3/types/", func(t openproject.Type) (int64, string) { return t.ID, t.Name })
	g.prioRefs = refsOf(d.Priorities, "/api/v3/priorities/", func(p openproject.Priority) (int64, string) { return p.ID, p.Name })
	d.Users = g.genUsers()
	d.Projects = g.genProjects()
	d.WorkPackages, d.Activities = g.genWorkPackages()
	d.WikiPages = g.genWikiPages()
	d.Meetings = g.genMeetings(d.WorkPackages)
	d.Queries = g.genQueries()
	if o.MixedPermissions {
		g.genPermissions(d)
	}
	// Last, each from a stream of its own: everything above is exactly
	// what it was before time entries, versions, custom fields and
	// relations existed, and none of these draws from another's stream.
	d.TimeEntries = g.genTimeEntries(d.WorkPackages)
	g.genVersions(d)
	d.Relations = g.genRelations(d.WorkPackages)
	d.Attachments = g.genAttachments(d)
	return d
}

// generator holds what later stages need from earlier ones. It is read-only
// while work packages are generated in parallel.
type generator struct {
	o          GenOptions
	start, end time.Time

	statusRefs, typeRefs, prioRefs []openproject.Ref

	users    []optest.User
	userRefs []openproject.Ref // by user index
	projects []projInfo

	// Work packages by project, in id order; filled before texts are written.
	wpByProject [][]int32
	wpCreated   []int64 // unix seconds, by work package index

	// wikiFiles are the attachments planned with the wiki pages.
	wikiFiles []filePlan
}
