package sync

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// attachmentGen is a generated instance whose visible part holds files of
// every kind the generator makes.
var attachmentGen = opgen.GenOptions{Seed: 7, WorkPackages: 300, WikiPages: 60, Meetings: 40}

// visibleAttachments are the attachments alice sees in d, by id.
func visibleAttachments(d *optest.Dataset) map[int64]optest.Attachment {
	ids := visible(d, optest.AliceKey)[kind.Attachment]
	out := map[int64]optest.Attachment{}
	for _, a := range d.Attachments {
		if slices.Contains(ids, a.ID) {
			out[a.ID] = a
		}
	}
	return out
}

// TestAttachmentsEveryKind: after a first sync, every file alice may see
// is stored; the phrase inside each file of a kind that holds text is
// found in the index, on that attachment; the PNG, the corrupt and the
// oversized file are stored with the reason and found by name only; and
// none of them failed the sync. Files in projects alice does not see
// are neither stored nor found. With the files in external storage
// (redirects to presigned URLs) the same holds.
func TestAttachmentsEveryKind(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	for _, external := range []bool{false, true} {
		if external && testing.Short() {
			continue // the storage's redirects are tested in optest and openproject
		}
		t.Run(fmt.Sprintf("external=%v", external), func(t *testing.T) {
			gen := attachmentGen
			gen.ExternalAttachments = external
			e := newE2E(t, opgen.Generate(gen), optest.Options{}, Options{})
			u := e.open(t, nil)
			rep := syncUser(t, u)
			if kr := rep.Kinds[kind.Attachment]; kr.Err != nil || kr.Retry != 0 {
				t.Fatalf("attachment pass: %+v", kr)
			}
			if st := syncState(t, u, kind.Attachment); !st.Complete || st.LastError != "" {
				t.Errorf("attachment state: %+v", st)
			}
			checkVisibleE2E(t, e, u)
			d := e.srv.Dataset()
			mine := visibleAttachments(d)
			seen := map[opgen.FileKind]bool{}
			for id, a := range mine {
				fk := opgen.AttachmentKind(a)
				seen[fk] = true
				got, found, err := u.Store.Attachment(id)
				if err != nil || !found {
					t.Fatalf("attachment %d (%s): found %v, %v", id, a.FileName, found, err)
				}
				phrase := opgen.AttachmentPhrase(id)
				doc := indexer.DocID(kind.Attachment, id)
				switch {
				case fk.Extractable():
					if !strings.Contains(got.Text, phrase) || got.Skipped != "" {
						t.Errorf("%s (%s): text %.80q, skipped %q; want its phrase %q", a.FileName, fk, got.Text, got.Skipped, phrase)
					}
					if ids := find(t, u.Index, phrase); !slices.Contains(ids, doc) {
						t.Errorf("%s (%s): %q found %v, want %s", a.FileName, fk, phrase, ids, doc)
					}
				default:
					want := map[opgen.FileKind]string{opgen.FilePNG: "not supported", opgen.FileCorrupt: "malformed", opgen.FileOversized: "too large"}[fk]
					if got.Text != "" || !strings.Contains(got.Skipped, want) {
						t.Errorf("%s (%s): text %.40q, skipped %q; want no text and a reason with %q", a.FileName, fk, got.Text, got.Skipped, want)
					}
					if ids := find(t, u.Index, a.FileName); !slices.Contains(ids, doc) {
						t.Errorf("%s: its name found %v, want %s", a.FileName, ids, doc)
					}
				}
				if got.Project.ID == 0 || got.Container.Title == "" || got.Digest == "" {
					t.Errorf("%s: project %+v, container %+v, digest %q", a.FileName, got.Project, got.Container, got.Digest)
				}
			}
			for _, fk := range []opgen.FileKind{opgen.FileText, opgen.FileMarkdown, opgen.FileCSV, opgen.FileJSON, opgen.FileHTML, opgen.FileEML,
				opgen.FileDOCX, opgen.FileXLSX, opgen.FileODT, opgen.FilePDF, opgen.FilePNG, opgen.FileCorrupt, opgen.FileOversized} {
				if !seen[fk] {
					t.Errorf("test data: alice sees no %s file", fk)
				}
			}
			// The files alice may not see: not stored, their words not found.
			hidden := 0
			for _, a := range d.Attachments {
				if _, ok := mine[a.ID]; ok || !opgen.AttachmentKind(a).Extractable() {
					continue
				}
				hidden++
				if _, found, _ := u.Store.Attachment(a.ID); found {
					t.Errorf("hidden attachment %d stored", a.ID)
				}
				if ids := find(t, u.Index, opgen.AttachmentPhrase(a.ID)); len(ids) > 0 {
					t.Errorf("hidden attachment %d's phrase found in %v", a.ID, ids)
				}
			}
			if hidden == 0 {
				t.Error("test data: no file alice may not see")
			}
		})
	}
}

// TestAttachmentsIncremental: an unchanged file is never downloaded
// again; a file added to a work package is downloaded once and found; a
// deleted one disappears from store and index; a failed download is
// recorded, does not fail the sync, and is tried again next time.
func TestAttachmentsIncremental(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newE2E(t, opgen.Generate(attachmentGen), optest.Options{}, Options{})
	u := e.open(t, nil)
	syncUser(t, u)

	e.srv.ResetRequests()
	syncUser(t, u)
	if n := e.srv.RequestCount("GET /api/v3/attachments/"); n != 0 {
		t.Errorf("unchanged sync: %d attachment requests: %v", n, e.srv.Requests())
	}
	if n := attachmentLists(e.srv.Requests()); n != 0 {
		t.Errorf("unchanged sync: %d attachment lists read", n)
	}

	wp := visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage][0]
	added, err := e.srv.AddAttachment(optest.Attachment{
		Attachment: openproject.Attachment{FileName: "okapi-ledger.txt", ContentType: "text/plain",
			Container: openproject.Ref{ID: wp, Href: fmt.Sprintf("/api/v3/work_packages/%d", wp)}, Author: openproject.Ref{ID: 2}},
		Content: []byte("Ledger of the okapi sanctuary: the heliotrope turnstile budget was approved."),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv.ResetRequests()
	syncUser(t, u)
	reqs := e.srv.Requests()
	if n := e.srv.RequestCount("GET /api/v3/attachments/"); n != 1 || reqs[fmt.Sprintf("GET /api/v3/attachments/%d/content", added.ID)] != 1 {
		t.Errorf("after adding one file: %d attachment requests, want its one download: %v", n, reqs)
	}
	if n := attachmentLists(reqs); n != 1 {
		t.Errorf("after adding one file: %d attachment lists read, want 1", n)
	}
	doc := indexer.DocID(kind.Attachment, added.ID)
	if ids := find(t, u.Index, "heliotrope turnstile"); !slices.Equal(ids, []string{doc}) {
		t.Errorf("new file's words found %v, want [%s]", ids, doc)
	}

	if err := e.srv.DeleteAttachment(added.ID); err != nil {
		t.Fatal(err)
	}
	syncUser(t, u)
	if _, found, _ := u.Store.Attachment(added.ID); found {
		t.Error("deleted attachment still stored")
	}
	if ids := find(t, u.Index, "heliotrope turnstile"); len(ids) != 0 {
		t.Errorf("deleted file still found: %v", ids)
	}
	checkVisibleE2E(t, e, u)

	// A download that fails: recorded, the sync goes on, the next one
	// fetches it.
	again, err := e.srv.AddAttachment(optest.Attachment{
		Attachment: openproject.Attachment{FileName: "tapir-minutes.md", ContentType: "text/markdown",
			Container: openproject.Ref{ID: wp, Href: fmt.Sprintf("/api/v3/work_packages/%d", wp)}},
		Content: []byte("# Minutes\n\nThe cinnabar gazebo survey starts in May.\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv.SetFaults(optest.Faults{PathPrefix: fmt.Sprintf("/api/v3/attachments/%d/content", again.ID), ErrorRate: 1, ErrorStatuses: []int{500}})
	rep := syncUser(t, u)
	if kr := rep.Kinds[kind.Attachment]; kr.Err != nil || kr.Retry != 1 {
		t.Errorf("failed download: %+v, want one retry and no error", kr)
	}
	if a, _, _ := u.Store.Attachment(again.ID); !strings.HasPrefix(a.Skipped, skippedDownload) {
		t.Errorf("failed download recorded as %q", a.Skipped)
	}
	if st := syncState(t, u, kind.Attachment); st.Complete {
		t.Error("attachments complete with a download left")
	}
	e.srv.SetFaults(optest.Faults{})
	syncUser(t, u)
	if ids := find(t, u.Index, "cinnabar gazebo"); !slices.Equal(ids, []string{indexer.DocID(kind.Attachment, again.ID)}) {
		t.Errorf("retried file found %v", ids)
	}
	if st := syncState(t, u, kind.Attachment); !st.Complete {
		t.Error("attachments incomplete after the retry")
	}
}

// attachmentLists counts the container attachment lists among reqs.
func attachmentLists(reqs map[string]int) int {
	n := 0
	for r, c := range reqs {
		if strings.HasSuffix(r, "/attachments") {
			n += c
		}
	}
	return n
}

// TestAttachmentsOff: with attachments turned off, nothing of them is
// asked for, and the kind says why it is empty.
func TestAttachmentsOff(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newE2E(t, opgen.Generate(smallGen), optest.Options{}, Options{Attachments: AttachmentOptions{Off: true}})
	u := e.open(t, nil)
	syncUser(t, u)
	if n := e.srv.RequestCount("GET /api/v3/attachments/") + attachmentLists(e.srv.Requests()); n != 0 {
		t.Errorf("%d attachment requests with attachments off", n)
	}
	if st := syncState(t, u, kind.Attachment); !st.Complete || st.Note != noAttachments {
		t.Errorf("state %+v", st)
	}
}

// manyContainers is a fake whose data gives alice more attachment
// containers than three batches hold, what she sees of it, and the
// number of her containers.
func manyContainers(t *testing.T) (*e2e, map[kind.Kind][]int64, int) {
	t.Helper()
	e := newE2E(t, opgen.Generate(opgen.GenOptions{Seed: 11, WorkPackages: 2100}), optest.Options{}, Options{})
	vis := visible(e.srv.Dataset(), optest.AliceKey)
	containers := len(vis[kind.WorkPackage]) + len(vis[kind.WikiPage]) + len(vis[kind.Meeting])
	if containers <= 3*attachmentBatch {
		t.Fatalf("test data: alice sees %d containers, want more than %d", containers, 3*attachmentBatch)
	}
	return e, vis, containers
}

// TestAttachmentsAcrossBatches: with more due containers than three
// batches hold, the lists of one batch are read while the files of the
// one before download; every container's list is still read exactly
// once, every file downloaded once, and every file alice may see stored
// and found.
func TestAttachmentsAcrossBatches(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e, vis, containers := manyContainers(t)
	u := e.open(t, nil)
	rep := syncUser(t, u)
	if kr := rep.Kinds[kind.Attachment]; kr.Err != nil || kr.Retry != 0 || kr.Fetched != len(vis[kind.Attachment]) {
		t.Errorf("attachment pass: %+v, want %d files fetched", kr, len(vis[kind.Attachment]))
	}
	reqs := e.srv.Requests()
	if n := attachmentLists(reqs); n != containers {
		t.Errorf("%d attachment lists read, want one for each of the %d containers", n, containers)
	}
	for r, n := range reqs {
		if strings.HasSuffix(r, "/content") && n != 1 {
			t.Errorf("%s: %d requests, want 1", r, n)
		}
	}
	checkVisibleE2E(t, e, u)
	for _, id := range vis[kind.Attachment] {
		a, found, err := u.Store.Attachment(id)
		if err != nil || !found {
			t.Fatalf("attachment %d: found %v, %v", id, found, err)
		}
		if a.Container.Title == "" || a.Project.ID == 0 {
			t.Errorf("attachment %d: container %+v, project %+v", id, a.Container, a.Project)
		}
		if opgen.AttachmentKind(optest.Attachment{Attachment: a}).Extractable() {
			if ids := find(t, u.Index, opgen.AttachmentPhrase(id)); !slices.Contains(ids, indexer.DocID(kind.Attachment, id)) {
				t.Errorf("attachment %d: its phrase found %v", id, ids)
			}
		}
	}
}

// outageAfterLists sets srv's faults to fail every work package
// request once n attachment lists have gone through it: the work
// package pass is over by then, so the outage hits the attachment pass
// in the middle.
type outageAfterLists struct {
	base http.RoundTripper
	srv  *optest.Server
	n    int64
	seen atomic.Int64
}

func (o *outageAfterLists) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/attachments") && o.seen.Add(1) == o.n {
		o.srv.SetFaults(optest.Faults{PathPrefix: "/api/v3/work_packages/", ErrorRate: 1, ErrorStatuses: []int{503}})
	}
	return o.base.RoundTrip(r)
}

// TestAttachmentsOutageMidPass: when OpenProject stops answering during
// the attachment pass, after a batch's lists were read and while the
// next one's are, the pass fails, what was read before stays stored,
// the report counts exactly what was stored, and the next sync reads
// only the lists still due and completes.
func TestAttachmentsOutageMidPass(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e, vis, containers := manyContainers(t)
	// 600 lists: the first batch and part of the second are read, the
	// rest of the second fails item by item, the third as a whole.
	o := &outageAfterLists{srv: e.srv, n: attachmentBatch + 100}
	u := e.open(t, func(rt http.RoundTripper) http.RoundTripper { o.base = rt; return o })
	rep, err := u.Worker.Sync(t.Context())
	kr := rep.Kinds[kind.Attachment]
	if err == nil || kr == nil || kr.Err == nil {
		t.Fatalf("sync during an outage: %v, attachment pass %+v; want it failed", err, kr)
	}
	stored := storedIDs(t, u.Store, kind.Attachment)
	if len(stored) == 0 || len(stored) >= len(vis[kind.Attachment]) {
		t.Fatalf("%d of %d files stored before the outage; want some", len(stored), len(vis[kind.Attachment]))
	}
	if kr.Updated != len(stored) {
		t.Errorf("the report counts %d files updated, the store holds %d", kr.Updated, len(stored))
	}
	if st := syncState(t, u, kind.Attachment); st.Complete {
		t.Error("attachment pass complete after an outage")
	}

	e.srv.SetFaults(optest.Faults{})
	e.srv.ResetRequests()
	syncUser(t, u)
	if n := attachmentLists(e.srv.Requests()); n == 0 || n > containers-attachmentBatch {
		t.Errorf("after the outage: %d lists read again; want those left due, at most %d", n, containers-attachmentBatch)
	}
	if st := syncState(t, u, kind.Attachment); !st.Complete {
		t.Errorf("attachment state after the outage: %+v", st)
	}
	checkVisibleE2E(t, e, u)
}
