package mcp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/opsearch/opsearch/extract"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// The get_attachment tool: an attached file's metadata and text.

type attachmentIn struct {
	ID       int64 `json:"id" jsonschema:"attachment id, as search results name it"`
	MaxChars int   `json:"maxChars,omitempty" jsonschema:"most characters of text returned (default 8000, max 100000)"`
}

type attachmentContainer struct {
	Kind  kind.Kind `json:"kind,omitempty"`
	ID    int64     `json:"id"`
	Title string    `json:"title,omitempty"`
}

type attachmentOut struct {
	ID          int64               `json:"id"`
	FileName    string              `json:"fileName"`
	FileSize    int64               `json:"fileSize"`
	ContentType string              `json:"contentType,omitempty"`
	Description string              `json:"description,omitempty"`
	Container   attachmentContainer `json:"container"`
	Author      *ref                `json:"author,omitempty"`
	CreatedAt   string              `json:"createdAt,omitempty"`
	// Text is the file's text; TextSource says where it came from:
	// "index" (extracted by the sync), "download" (read now), or ""
	// when there is none, Note saying why.
	Text       string `json:"text"`
	TextFormat string `json:"textFormat,omitempty"`
	TextSource string `json:"textSource"`
	Truncated  bool   `json:"truncated"`
	Note       string `json:"note,omitempty"`
}

// attachmentStore is the part of a Searcher that reads stored
// attachments (search.Engine through the user index).
type attachmentStore interface {
	StoredAttachment(ctx context.Context, id int64) (openproject.Attachment, bool, error)
}

var _ attachmentStore = userSearcher{}

// maxAttachmentChars bounds get_attachment's maxChars.
const maxAttachmentChars = 100_000

func (s *server) getAttachment(ctx context.Context, in attachmentIn) (attachmentOut, error) {
	if err := checkID("id", in.ID); err != nil {
		return attachmentOut{}, err
	}
	limit := capDetail
	switch {
	case in.MaxChars < 0 || in.MaxChars > maxAttachmentChars:
		return attachmentOut{}, argErr("maxChars", "%d is outside 1..%d", in.MaxChars, maxAttachmentChars)
	case in.MaxChars > 0:
		limit = in.MaxChars
	}
	// OpenProject decides who sees the file: a 404 here is the answer
	// for a file the user may not see, whatever the index holds.
	a, err := s.api.Attachment(ctx, in.ID)
	if err != nil {
		return attachmentOut{}, err
	}
	desc, _ := capText(a.Description, capRow)
	out := attachmentOut{
		ID: a.ID, FileName: a.FileName, FileSize: a.FileSize, ContentType: a.ContentType, Description: desc,
		Container: attachmentContainer{Kind: a.ContainerKind(), ID: a.Container.ID, Title: a.Container.Title},
		Author:    refOf(a.Author),
	}
	if !a.CreatedAt.IsZero() {
		out.CreatedAt = a.CreatedAt.Format("2006-01-02T15:04:05Z07:00")
	}
	text, format, note := s.attachmentText(ctx, a)
	out.Text, out.Truncated = capText(text, limit)
	out.TextFormat, out.Note = format, note
	if text != "" {
		out.TextSource = "index"
		if note != "" {
			out.TextSource = "download"
		}
	}
	return out, nil
}

// attachmentText is a's text: the index's while its digest holds,
// otherwise the file read now within the sync's default budget. note is
// set for a download (why it was needed) and, with no text, says why
// there is none. A file is read within the sync's budget (Options.Extract).
func (s *server) attachmentText(ctx context.Context, a openproject.Attachment) (text, format, note string) {
	if sr, err := s.idx.Searcher(); err == nil {
		if st, ok := sr.(attachmentStore); ok {
			stored, found, err := st.StoredAttachment(ctx, a.ID)
			if err == nil && found && stored.Digest == a.Digest {
				if stored.Text != "" {
					return stored.Text, stored.TextFormat, ""
				}
				if stored.Skipped != "" {
					return "", "", "no text: " + stored.Skipped
				}
			}
		}
	}
	budget := s.opts.Extract
	maxBytes := cmp.Or(budget.MaxBytes, extract.DefaultMaxBytes)
	if a.FileSize > maxBytes {
		return "", "", fmt.Sprintf("no text: the file is %d bytes, over the %d byte limit", a.FileSize, maxBytes)
	}
	data, ctype, err := s.api.AttachmentContent(ctx, a.ID, maxBytes)
	if err != nil {
		if errors.Is(err, openproject.ErrTooLarge) {
			return "", "", fmt.Sprintf("no text: the file is over the %d byte limit", maxBytes)
		}
		return "", "", "no text: download failed: " + err.Error()
	}
	res, err := extract.Text(ctx, a.FileName, cmp.Or(a.ContentType, ctype), bytes.NewReader(data), budget)
	if err != nil {
		return "", "", "no text: " + err.Error()
	}
	return res.Text, res.Format, "not indexed yet: read from the file now"
}
