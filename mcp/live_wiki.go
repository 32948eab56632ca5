package mcp

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/opsearch/opsearch/openproject"
)

// The wiki tools: get_wiki_page (with attachments) and
// list_wiki_page_links.

type wikiIn struct {
	ID int64 `json:"id" jsonschema:"wiki page id"`
}

type wikiOut struct {
	ID          int64           `json:"id"`
	Title       string          `json:"title"`
	Slug        string          `json:"slug,omitempty"`
	Project     *ref            `json:"project"`
	HasText     bool            `json:"hasText"`
	Text        string          `json:"text"`
	Attachments []attachmentRow `json:"attachments"`
	UpdatedAt   string          `json:"updatedAt,omitempty"`
	URL         string          `json:"url,omitempty"`
	Note        string          `json:"note"`
	Truncated   bool            `json:"truncated"`
}

func (s *server) getWikiPage(ctx context.Context, in wikiIn) (wikiOut, error) {
	if err := checkID("id", in.ID); err != nil {
		return wikiOut{}, err
	}
	p, err := s.api.WikiPage(ctx, in.ID)
	if err != nil {
		return wikiOut{}, err
	}
	atts := p.Attachments
	if atts == nil {
		if atts, err = s.api.WikiPageAttachments(ctx, in.ID); err != nil {
			return wikiOut{}, err
		}
	}
	return wikiOutOf(p, atts, s.baseURL()), nil
}

// wikiOutOf is get_wiki_page's answer for p with its attachments atts;
// base is the instance's web address.
func wikiOutOf(p openproject.WikiPage, atts []openproject.Attachment, base string) wikiOut {
	text, cut := capText(p.Text, capDetail)
	out := wikiOut{ID: p.ID, Title: p.Title, Slug: p.Slug, Project: refOf(p.Project), HasText: p.HasText, Text: text,
		Attachments: []attachmentRow{}, Truncated: cut}
	if !p.UpdatedAt.IsZero() {
		out.UpdatedAt = p.UpdatedAt.Format("2006-01-02T15:04:05Z07:00")
	}
	if !p.HasText {
		out.Note = "this OpenProject server does not provide wiki page text through its API; only title, project and attachments are available"
	}
	if base != "" && p.Slug != "" && p.Project.ID != 0 {
		out.URL = base + "/projects/" + strconv.FormatInt(p.Project.ID, 10) + "/wiki/" + url.PathEscape(p.Slug)
	}
	for _, a := range atts {
		row, cut := attachmentRowOf(a)
		out.Attachments = append(out.Attachments, row)
		out.Truncated = out.Truncated || cut
	}
	return out
}

type wikiLinksIn struct {
	paging
	WorkPackageID int64 `json:"workPackageId,omitempty" jsonschema:"only links of this work package"`
}

func (s *server) listWikiPageLinks(ctx context.Context, in wikiLinksIn) (listOut[wikiLinkRow], error) {
	var zero listOut[wikiLinkRow]
	opts, err := in.options(30)
	if err != nil {
		return zero, err
	}
	if in.WorkPackageID != 0 {
		if err := checkID("workPackageId", in.WorkPackageID); err != nil {
			return zero, err
		}
		opts.Filters = openproject.Filters{{Name: "workPackage", Operator: "=", Values: []string{strconv.FormatInt(in.WorkPackageID, 10)}}}
	}
	p, err := s.api.ListWikiPageLinks(ctx, opts)
	if errors.Is(err, openproject.ErrNotFound) || errors.Is(err, openproject.ErrRequest) || errors.Is(err, openproject.ErrUnsupported) {
		return zero, s.unsupported(ctx, "openproject_list_wiki_page_links", err,
			"its API v3 has no wiki page links endpoint; to find wiki pages that mention a work package, use openproject_search_wiki_pages")
	}
	if err != nil {
		return zero, err
	}
	return pageOf(p, wikiLinkRowOf), nil
}

type attachmentRow struct {
	ID          int64  `json:"id"`
	FileName    string `json:"fileName"`
	FileSize    int64  `json:"fileSize"`
	ContentType string `json:"contentType,omitempty"`
	Description string `json:"description,omitempty"`
	DownloadURL string `json:"downloadUrl,omitempty"`
}

func attachmentRowOf(a openproject.Attachment) (attachmentRow, bool) {
	desc, cut := capText(a.Description, capRow)
	return attachmentRow{ID: a.ID, FileName: a.FileName, FileSize: a.FileSize, ContentType: a.ContentType, Description: desc, DownloadURL: a.DownloadURL}, cut
}

type wikiLinkRow struct {
	ID          int64 `json:"id"`
	WorkPackage *ref  `json:"workPackage"`
	WikiPage    *ref  `json:"wikiPage"`
}

func wikiLinkRowOf(l openproject.WikiPageLink) (wikiLinkRow, bool) {
	return wikiLinkRow{ID: l.ID, WorkPackage: refOf(l.WorkPackage), WikiPage: refOf(l.WikiPage)}, false
}
