package indexer

import (
	"slices"
	"strconv"
	"strings"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// DocID returns the document id of an entity.
func DocID(k kind.Kind, id int64) string { return string(k) + ":" + strconv.FormatInt(id, 10) }

// ParseDocID splits a document id into kind and entity id. A public
// twin's id (PublicDocID) names its work package.
func ParseDocID(id string) (kind.Kind, int64, bool) {
	k, n, ok := strings.Cut(strings.TrimSuffix(id, publicSuffix), ":")
	if !ok {
		return "", 0, false
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return kind.Kind(k), v, true
}

// publicSuffix ends the id of a work package's public twin.
const publicSuffix = "/public"

// PublicDocID is the id of the public twin of work package id: in an
// index several users share, a work package with internal comments has
// a second document without them, for the users who may not read them
// (see WorkPackageDocs).
func PublicDocID(id int64) string { return DocID(kind.WorkPackage, id) + publicSuffix }

// IsPublicTwin reports whether id is a public twin's (PublicDocID).
func IsPublicTwin(id string) bool { return strings.HasSuffix(id, publicSuffix) }

// WorkPackageDocs builds a work package's documents. Without twins it is
// FromWorkPackage's one. With twins (an index several users share), a
// work package with internal comments also gets its public twin, the
// document without them, so a user who may not read them neither finds
// the work package by their words nor sees them weigh in its rank; stale
// names the twin to delete when there is none (its internal comments
// are gone).
func WorkPackageDocs(wp openproject.WorkPackage, acts []openproject.Activity, twins bool) (docs []Document, stale []string) {
	full := FromWorkPackage(wp, acts)
	if !twins {
		return []Document{full}, nil
	}
	if !slices.ContainsFunc(acts, func(a openproject.Activity) bool { return a.Internal && a.IsComment() }) {
		return []Document{full}, []string{PublicDocID(wp.ID)}
	}
	public := FromWorkPackage(wp, slices.DeleteFunc(slices.Clone(acts), func(a openproject.Activity) bool { return a.Internal }))
	public.ID, public.PublicTwin = PublicDocID(wp.ID), true
	return []Document{full, public}, nil
}

// FromWorkPackage builds a work package's document; its comments become
// part of it, so a fact mentioned only in a comment finds the work package.
func FromWorkPackage(wp openproject.WorkPackage, acts []openproject.Activity) Document {
	d := Document{
		ID: DocID(kind.WorkPackage, wp.ID), Kind: kind.WorkPackage, EntityID: wp.ID,
		ProjectID: wp.Project.ID, ProjectName: wp.Project.Title,
		Title: wp.Subject, Body: openproject.PlainText(wp.Description),
		Identifiers: []string{"#" + strconv.FormatInt(wp.ID, 10)},
		Type:        wp.Type.Title, Status: wp.Status.Title, Closed: wp.Closed,
		Author: wp.Author.Title, UpdatedAt: wp.UpdatedAt,
	}
	if wp.DisplayID != "" {
		d.Identifiers = append(d.Identifiers, wp.DisplayID)
	}
	if wp.Assignee != nil {
		d.Assignee, d.AssigneeID = wp.Assignee.Title, wp.Assignee.ID
	}
	for _, a := range acts {
		if !a.IsComment() {
			continue
		}
		c := openproject.PlainText(a.Comment)
		if a.User.Title != "" {
			c = a.User.Title + ": " + c
		}
		d.Comments = append(d.Comments, c)
	}
	return d
}

// FromWikiPage builds a wiki page's document. Pages from servers that do
// not render text are indexed by title only.
func FromWikiPage(p openproject.WikiPage) Document {
	d := Document{
		ID: DocID(kind.WikiPage, p.ID), Kind: kind.WikiPage, EntityID: p.ID,
		ProjectID: p.Project.ID, ProjectName: p.Project.Title,
		Title: p.Title, Body: openproject.PlainText(p.Text), UpdatedAt: p.UpdatedAt,
	}
	if p.Slug != "" {
		d.Identifiers = []string{p.Slug}
	}
	return d
}

// FromMeeting builds a meeting's document from the meeting with its agenda
// items inline.
func FromMeeting(m openproject.Meeting) Document {
	d := Document{
		ID: DocID(kind.Meeting, m.ID), Kind: kind.Meeting, EntityID: m.ID,
		ProjectID: m.Project.ID, ProjectName: m.Project.Title,
		Title: m.Title, Location: m.Location, Author: m.Author.Title,
		UpdatedAt: m.UpdatedAt, StartTime: m.StartTime,
	}
	for _, p := range m.Participants {
		if p.Title != "" {
			d.Participants = append(d.Participants, p.Title)
		}
	}
	for _, it := range m.AgendaItems {
		at := AgendaText{ID: it.ID, Title: it.Title, Notes: openproject.PlainText(it.Notes)}
		for _, o := range it.Outcomes {
			if o.Notes != "" {
				at.Outcomes = append(at.Outcomes, openproject.PlainText(o.Notes))
			}
		}
		d.Agenda = append(d.Agenda, at)
	}
	return d
}

// FromProject builds a project's document.
func FromProject(p openproject.Project) Document {
	return Document{
		ID: DocID(kind.Project, p.ID), Kind: kind.Project, EntityID: p.ID,
		ProjectID: p.ID, ProjectName: p.Name,
		Title: p.Name, Body: openproject.PlainText(p.Description), Identifiers: []string{p.Identifier},
		UpdatedAt: p.UpdatedAt,
	}
}

// FromAttachment builds an attachment's document: its file name as the
// title, its description and extracted text as the body. Its container's
// title is not among its words: every file of a work package would
// otherwise answer every query its subject answers, burying the results
// (the container ranks with a matching file instead; search's
// followContainers). An attachment without a container opsearch indexes
// has no document (ok false).
func FromAttachment(a openproject.Attachment) (d Document, ok bool) {
	ck := a.ContainerKind()
	if ck == "" {
		return Document{}, false
	}
	body := openproject.PlainText(a.Description)
	if a.Text != "" {
		body = strings.TrimSpace(body + "\n" + a.Text)
	}
	return Document{
		ID: DocID(kind.Attachment, a.ID), Kind: kind.Attachment, EntityID: a.ID,
		ProjectID: a.Project.ID, ProjectName: a.Project.Title,
		Title: a.FileName, Body: body,
		Author: a.Author.Title, UpdatedAt: a.CreatedAt,
		Container: DocID(ck, a.Container.ID),
	}, true
}
