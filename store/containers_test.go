package store

import (
	"context"
	"errors"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

func dueOf(t *testing.T, s *Store) []ContainerAttachments {
	t.Helper()
	var due []ContainerAttachments
	if err := s.View(context.Background(), func(tx *ReadTx) error {
		var err error
		due, err = tx.DueContainers(0, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return due
}

// TestContainerAttachments: putting or deleting a container marks its
// attachment list due in the same transaction; recording the list clears
// the mark; a deleted container's empty list is forgotten.
func TestContainerAttachments(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) { testContainerAttachments(t, o.open(t)) })
}

func testContainerAttachments(t *testing.T, s *Store) {
	update(t, s, func(tx *WriteTx) error {
		return errors.Join(tx.PutWorkPackage(sampleWorkPackage(7)), tx.PutMeeting(sampleMeeting(3)), tx.PutProject(sampleProject(1)))
	})
	want := []ContainerAttachments{{Kind: kind.WorkPackage, ID: 7}, {Kind: kind.Meeting, ID: 3}}
	if got := dueOf(t, s); !sameContainers(got, want) {
		t.Fatalf("due after puts: %+v, want %+v", got, want)
	}
	// Each entry carries its container's project, which its attachments'
	// documents need, so the attachment sync does not read containers.
	for _, c := range dueOf(t, s) {
		wantProject := sampleWorkPackage(7).Project
		if c.Kind == kind.Meeting {
			wantProject = sampleMeeting(3).Project
		}
		if c.Project != wantProject || c.Project.IsZero() {
			t.Errorf("%s %d: project %+v, want %+v", c.Kind, c.ID, c.Project, wantProject)
		}
	}
	a := openproject.Attachment{ID: 40, FileName: "notes.txt", Container: openproject.Ref{ID: 7, Href: "/api/v3/work_packages/7"}, Text: "the cormorant"}
	update(t, s, func(tx *WriteTx) error {
		return errors.Join(tx.PutAttachment(a), tx.SetContainerAttachments(kind.WorkPackage, 7, []int64{40}),
			tx.SetContainerAttachments(kind.Meeting, 3, nil))
	})
	if got := dueOf(t, s); len(got) != 0 {
		t.Fatalf("due after recording the lists: %+v", got)
	}
	if got, found, err := s.Attachment(40); err != nil || !found || got.Text != a.Text {
		t.Fatalf("attachment 40: %+v %v %v", got, found, err)
	}
	if n, _ := s.Count(kind.Attachment); n != 1 {
		t.Errorf("count %d, want 1", n)
	}
	// A changed work package is due again and keeps its list.
	update(t, s, func(tx *WriteTx) error { return tx.PutWorkPackage(sampleWorkPackage(7)) })
	if got := dueOf(t, s); !sameContainers(got, []ContainerAttachments{{Kind: kind.WorkPackage, ID: 7, Attachments: []int64{40}}}) {
		t.Fatalf("due after a change: %+v", got)
	}
	// A deleted one is due; once its attachments are gone it is forgotten.
	// It says it is gone, so the attachment sync need not read it; the
	// work package, put again, is not.
	update(t, s, func(tx *WriteTx) error { return tx.Delete(kind.Meeting, 3) })
	want = []ContainerAttachments{{Kind: kind.WorkPackage, ID: 7, Attachments: []int64{40}}, {Kind: kind.Meeting, ID: 3, Gone: true}}
	if got := dueOf(t, s); !sameContainers(got, want) {
		t.Fatalf("due after deleting meeting 3: %+v, want %+v", got, want)
	}
	// Deleted and put back: due, not gone.
	update(t, s, func(tx *WriteTx) error {
		return errors.Join(tx.Delete(kind.WorkPackage, 7), tx.PutWorkPackage(sampleWorkPackage(7)))
	})
	if got := dueOf(t, s); !sameContainers(got, want) {
		t.Fatalf("due after deleting and putting back work package 7: %+v, want %+v", got, want)
	}
	// Marked due again for a retry, a gone container stays gone.
	update(t, s, func(tx *WriteTx) error { return tx.MarkContainerDue(kind.Meeting, 3) })
	if got := dueOf(t, s); !sameContainers(got, want) {
		t.Fatalf("due after marking meeting 3 again: %+v, want %+v", got, want)
	}
	update(t, s, func(tx *WriteTx) error {
		return errors.Join(tx.Delete(kind.Attachment, 40), tx.SetContainerAttachments(kind.Meeting, 3, nil), tx.SetContainerAttachments(kind.WorkPackage, 7, nil))
	})
	if got := dueOf(t, s); len(got) != 0 {
		t.Fatalf("due at the end: %+v", got)
	}
	// Work package 7 keeps an empty list; meeting 3 is forgotten.
	err := s.eng.view(context.Background(), func(tx kvTx) error {
		b := tx.bucket(bucketContainers)
		if b.get(containerKey(kind.WorkPackage, 7)) == nil || b.get(containerKey(kind.Meeting, 3)) != nil {
			t.Error("container entries: want work package 7's and no meeting 3's")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, func(tx *WriteTx) error {
		if err := tx.SetContainerAttachments(kind.Project, 1, nil); err == nil {
			t.Error("a project took an attachment list")
		}
		return nil
	})
}

// TestMigrateVersion3MarksContainers: a version 3 store opens as the
// current version with every stored container due, so the first sync
// reads their attachment lists.
func TestMigrateVersion3MarksContainers(t *testing.T) {
	s, dir := openTemp(t)
	update(t, s, func(tx *WriteTx) error {
		return errors.Join(tx.PutWorkPackage(sampleWorkPackage(1)), tx.PutWorkPackage(sampleWorkPackage(2)),
			tx.PutWikiPage(sampleWikiPage(5)), tx.PutMeeting(sampleMeeting(31)), tx.PutProject(sampleProject(2)))
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, dir)
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketContainers, bucketOf(kind.Attachment)} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketCounts).Delete(bucketOf(kind.Attachment)); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, encodeUint(3))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []ContainerAttachments{{Kind: kind.WorkPackage, ID: 1}, {Kind: kind.WorkPackage, ID: 2}, {Kind: kind.WikiPage, ID: 5}, {Kind: kind.Meeting, ID: 31}}
	if got := dueOf(t, s); !sameContainers(got, want) {
		t.Errorf("due after migration: %+v, want %+v", got, want)
	}
	if n, err := s.Count(kind.Attachment); err != nil || n != 0 {
		t.Errorf("attachments: %d %v", n, err)
	}
}

// sameContainers compares as sets: key order is by kind code.
func sameContainers(a, b []ContainerAttachments) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]ContainerAttachments{}
	for _, c := range a {
		seen[string(containerKey(c.Kind, c.ID))] = c
	}
	for _, c := range b {
		got, ok := seen[string(containerKey(c.Kind, c.ID))]
		if !ok || got.Gone != c.Gone || !reflect.DeepEqual(got.Attachments, c.Attachments) {
			return false
		}
	}
	return true
}
