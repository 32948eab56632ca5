package mcp

import (
	"strings"
	"testing"
)

// TestWorkPackageContext_IndexNotReady: while the local index is not
// ready, the bundle still answers from the API and says that its
// mentions may be missing.
func TestWorkPackageContext_IndexNotReady(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	wp, acts := h.commentedWP()
	var out wpContextOut
	h.ok(toolWorkPackageContext, map[string]any{"workPackageId": wp.ID}, &out)
	comments := 0
	for _, a := range acts {
		if a.IsComment() {
			comments++
		}
	}
	switch {
	case out.WorkPackage.ID != wp.ID || len(out.Failed) != 0 || out.Complete:
		t.Errorf("work package %d, failed %v, complete %v", out.WorkPackage.ID, out.Failed, out.Complete)
	case out.Comments == nil || out.Comments.Total != comments || out.Relations == nil || out.Statuses == nil || out.Types == nil:
		t.Errorf("parts = %+v, want %d comments", out, comments)
	case out.Mentions == nil || out.Mentions.IndexComplete || !strings.Contains(out.Mentions.Note, "still being opened") ||
		len(out.Mentions.Meetings.Elements) != 0 || len(out.Mentions.WikiPages.Elements) != 0:
		t.Errorf("mentions = %+v", out.Mentions)
	}
}
