package mcp_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/extract"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// attachmentAnswer is the part of a search answer about attachments.
type attachmentAnswer struct {
	Results []attachmentResult `json:"results"`
}

// attachmentResult is one search result, with its attachment fields.
type attachmentResult struct {
	Kind       string `json:"kind"`
	ID         int64  `json:"id"`
	Title      string `json:"title"`
	Snippet    string `json:"snippet"`
	Attachment *struct {
		FileName    string `json:"fileName"`
		TextIndexed bool   `json:"textIndexed"`
		Skipped     string `json:"skipped"`
		Container   struct {
			Kind  string `json:"kind"`
			ID    int64  `json:"id"`
			Title string `json:"title"`
		} `json:"container"`
	} `json:"attachment"`
	MatchedAttachment *struct {
		ID       int64  `json:"id"`
		FileName string `json:"fileName"`
	} `json:"matchedAttachment"`
}

// gotAttachment is openproject_get_attachment's answer.
type gotAttachment struct {
	FileName   string `json:"fileName"`
	Text       string `json:"text"`
	TextSource string `json:"textSource"`
	Truncated  bool   `json:"truncated"`
	Note       string `json:"note"`
	Container  struct {
		Kind string `json:"kind"`
		ID   int64  `json:"id"`
	} `json:"container"`
}

// TestSearchAttachments: for a file of every kind alice may see, the
// phrase inside it, searched with openproject_search, finds the file,
// named with its container, and the container just before it; the
// files that hold no text (an image, a corrupt and an oversized file)
// are found by name and say why. kinds excludes or picks them, and
// openproject_get_attachment returns the text, capped.
func TestSearchAttachments(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnvOf(t, opgen.GenOptions{Seed: 7, WorkPackages: 300, WikiPages: 60, Meetings: 40}, mcp.Options{})
	mine := map[kind.Kind]map[int64]bool{}
	for _, k := range []kind.Kind{kind.WorkPackage, kind.WikiPage, kind.Meeting} {
		ids, err := e.user.Store.IDs(k)
		if err != nil {
			t.Fatal(err)
		}
		mine[k] = map[int64]bool{}
		for _, id := range ids {
			mine[k][id] = true
		}
	}
	done := map[opgen.FileKind]bool{}
	for _, a := range e.data.Attachments {
		fk := opgen.AttachmentKind(a)
		if !mine[a.ContainerKind()][a.Container.ID] || done[fk] {
			continue
		}
		done[fk] = true
		t.Run(string(fk), func(t *testing.T) {
			q := opgen.AttachmentPhrase(a.ID)
			if !fk.Extractable() {
				q = a.FileName
			}
			ans := callOK[attachmentAnswer](t, e.cs, "openproject_search", map[string]any{"query": q})
			i := slices.IndexFunc(ans.Results, func(r attachmentResult) bool {
				return r.Kind == "attachment" && r.ID == a.ID
			})
			if i < 0 || i > 2 {
				t.Fatalf("%q: attachment %d (%s) at %d of %d results", q, a.ID, a.FileName, i, len(ans.Results))
			}
			r := ans.Results[i]
			if r.Attachment == nil || r.Attachment.FileName != a.FileName || r.Attachment.Container.Kind != string(a.ContainerKind()) ||
				r.Attachment.Container.ID != a.Container.ID || r.Attachment.Container.Title == "" || r.Title != a.FileName {
				t.Errorf("hit does not name its file and container: %+v", r)
			}
			if fk.Extractable() {
				if !r.Attachment.TextIndexed || !strings.Contains(strings.ToLower(r.Snippet), strings.Fields(q)[0]) {
					t.Errorf("hit on the file's text: indexed %v, snippet %q", r.Attachment.TextIndexed, r.Snippet)
				}
				// Its container ranks with it, just before.
				if i == 0 || ans.Results[i-1].Kind != string(a.ContainerKind()) || ans.Results[i-1].ID != a.Container.ID ||
					ans.Results[i-1].MatchedAttachment == nil || ans.Results[i-1].MatchedAttachment.ID != a.ID {
					t.Errorf("container %s %d not just before its file: %+v", a.ContainerKind(), a.Container.ID, ans.Results[:i])
				}
			} else if r.Attachment.TextIndexed || r.Attachment.Skipped == "" {
				t.Errorf("a file without text: indexed %v, skipped %q", r.Attachment.TextIndexed, r.Attachment.Skipped)
			}

			got := callOK[gotAttachment](t, e.cs, "openproject_get_attachment", map[string]any{"id": a.ID, "maxChars": 50_000})
			if got.FileName != a.FileName || got.Container.ID != a.Container.ID || got.Container.Kind != string(a.ContainerKind()) {
				t.Errorf("get_attachment: %+v", got)
			}
			if fk.Extractable() && (!strings.Contains(got.Text, q) || got.TextSource != "index") {
				t.Errorf("get_attachment text from %q lacks %q: %.100q", got.TextSource, q, got.Text)
			}
			if !fk.Extractable() && (got.Text != "" || got.Note == "") {
				t.Errorf("get_attachment of a file without text: %.60q, note %q", got.Text, got.Note)
			}
		})
	}
	for _, fk := range []opgen.FileKind{opgen.FileText, opgen.FilePDF, opgen.FileDOCX, opgen.FilePNG, opgen.FileCorrupt, opgen.FileOversized} {
		if !done[fk] {
			t.Errorf("test data: alice sees no %s file", fk)
		}
	}

	// kinds: without attachment, no file; with only attachment, only files.
	var a optest.Attachment
	for _, x := range e.data.Attachments {
		if opgen.AttachmentKind(x) == opgen.FileText && mine[x.ContainerKind()][x.Container.ID] {
			a = x
			break
		}
	}
	q := opgen.AttachmentPhrase(a.ID)
	without := callOK[attachmentAnswer](t, e.cs, "openproject_search", map[string]any{"query": q, "kinds": []string{"work_package", "wiki_page", "meeting"}})
	for _, r := range without.Results {
		if r.Kind == "attachment" {
			t.Errorf("kinds without attachment returned file %d", r.ID)
		}
	}
	only := callOK[attachmentAnswer](t, e.cs, "openproject_search", map[string]any{"query": q, "kinds": []string{"attachment"}})
	if len(only.Results) == 0 || only.Results[0].ID != a.ID {
		t.Errorf("kinds [attachment]: %+v", only.Results)
	}
	for _, r := range only.Results {
		if r.Kind != "attachment" {
			t.Errorf("kinds [attachment] returned a %s", r.Kind)
		}
	}

	// Caps and bad input.
	capped := callOK[struct {
		Text      string `json:"text"`
		Truncated bool   `json:"truncated"`
	}](t, e.cs, "openproject_get_attachment", map[string]any{"id": a.ID, "maxChars": 10})
	if !capped.Truncated || len([]rune(capped.Text)) > 11 {
		t.Errorf("maxChars 10: %q truncated %v", capped.Text, capped.Truncated)
	}
	for args, want := range map[*map[string]any]string{
		{"id": 0}:                     "id",
		{"id": a.ID, "maxChars": -1}:  "maxChars",
		{"id": a.ID, "maxChars": 1e6}: "maxChars",
		{"id": 999999}:                "not found",
	} {
		if msg := callErr(t, e.cs, "openproject_get_attachment", *args); !strings.Contains(strings.ToLower(msg), strings.ToLower(want)) {
			t.Errorf("%v: error %q does not name %q", *args, msg, want)
		}
	}
}

// TestGetAttachmentNotIndexed: a file added after the last sync is read
// at once, within the server's budget (the sync's), and says so.
func TestGetAttachmentNotIndexed(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnv(t, mcp.Options{})
	wp := e.storedWPs(t)[0]
	a, err := e.fake.AddAttachment(optest.Attachment{
		Attachment: openproject.Attachment{FileName: "late-notes.txt", ContentType: "text/plain",
			Container: openproject.Ref{ID: wp.ID, Href: fmt.Sprintf("/api/v3/work_packages/%d", wp.ID)}},
		Content: []byte("The marzipan drawbridge opens at noon."),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := callOK[gotAttachment](t, e.cs, "openproject_get_attachment", map[string]any{"id": a.ID})
	if got.TextSource != "download" || !strings.Contains(got.Text, "marzipan drawbridge") || !strings.Contains(got.Note, "not indexed yet") {
		t.Errorf("a file not indexed yet: %+v", got)
	}
	small := connectInMemory(t, mcp.NewServer(e.client, e.idx, mcp.Options{Extract: extract.Options{MaxBytes: 10}}))
	got = callOK[gotAttachment](t, small, "openproject_get_attachment", map[string]any{"id": a.ID})
	if got.Text != "" || !strings.Contains(got.Note, "over the 10 byte limit") {
		t.Errorf("a file over the budget: %+v", got)
	}
}
