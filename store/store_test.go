package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	bolt "go.etcd.io/bbolt"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "inst", "1")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

func update(t testing.TB, s *Store, fn func(*WriteTx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func ts(sec int) time.Time {
	// UTC, no monotonic reading: what JSON decoding yields, so DeepEqual
	// compares values, not representations.
	return time.Date(2025, 3, 14, 9, 26, sec, 535_000_000, time.UTC)
}

func ptr[T any](v T) *T { return &v }

func sampleProject(id int64) openproject.Project {
	return openproject.Project{
		ID: id, Identifier: "proj-" + string(rune('a'+id%26)), Name: "Project",
		Active: true, Public: false, Description: "about *it*",
		StatusExplanation: "fine",
		Parent:            &openproject.Ref{ID: 1, Href: "/api/v3/projects/1", Title: "Root"},
		CreatedAt:         ts(1), UpdatedAt: ts(2),
	}
}

func sampleWorkPackage(id int64) openproject.WorkPackage {
	return openproject.WorkPackage{
		ID: id, DisplayID: "PROJ-12", LockVersion: 3, Subject: "Fix the thing",
		Description: "Steps:\n1. löschen", Project: openproject.Ref{ID: 2, Href: "/api/v3/projects/2", Title: "P"},
		Type:      openproject.Ref{ID: 1, Href: "/api/v3/types/1", Title: "Task"},
		Status:    openproject.Ref{ID: 5, Href: "/api/v3/statuses/5", Title: "Closed"},
		Closed:    true,
		Priority:  openproject.Ref{ID: 8, Href: "/api/v3/priorities/8", Title: "Normal"},
		Author:    openproject.Ref{ID: 4, Href: "/api/v3/users/4", Title: "Ann"},
		Assignee:  &openproject.Ref{ID: 9, Href: "/api/v3/users/9", Title: "Bob"},
		Parent:    &openproject.Ref{ID: 1, Href: "/api/v3/work_packages/1"},
		Version:   &openproject.Ref{Href: openproject.UndisclosedHref},
		StartDate: "2025-01-02", DueDate: "2025-02-03", PercentageDone: ptr(40),
		CreatedAt: ts(3), UpdatedAt: ts(4),
	}
}

func sampleActivities(wpID int64) []openproject.Activity {
	return []openproject.Activity{
		{ID: 100, Kind: "Activity", Version: 1, Details: []string{"Status set to New"},
			User: openproject.Ref{ID: 4, Href: "/api/v3/users/4"}, WorkPackageID: wpID, CreatedAt: ts(5), UpdatedAt: ts(5)},
		{ID: 101, Kind: "Activity::Comment", Version: 2, Comment: "looks good", Internal: true,
			User: openproject.Ref{ID: 9, Href: "/api/v3/users/9"}, WorkPackageID: wpID, CreatedAt: ts(6), UpdatedAt: ts(7)},
	}
}

func sampleWikiPage(id int64) openproject.WikiPage {
	return openproject.WikiPage{
		ID: id, Title: "Runbook", Slug: "runbook", Project: openproject.Ref{ID: 2, Href: "/api/v3/projects/2"},
		Text: "# Runbook\n", HasText: true, LockVersion: 7,
		Attachments: []openproject.Attachment{{ID: 3, FileName: "a.png", FileSize: 1234, ContentType: "image/png",
			Container: openproject.Ref{ID: id, Href: "/api/v3/wiki_pages/1"}, Author: openproject.Ref{ID: 4}, CreatedAt: ts(8)}},
		CreatedAt: ts(9), UpdatedAt: ts(10),
	}
}

func sampleMeeting(id int64) openproject.Meeting {
	return openproject.Meeting{
		ID: id, Title: "Weekly", Location: "Room 1", LockVersion: 2,
		StartTime: ts(11), EndTime: ts(12), Duration: 1.5,
		Project:      openproject.Ref{ID: 2, Href: "/api/v3/projects/2"},
		Author:       openproject.Ref{ID: 4, Href: "/api/v3/users/4"},
		Participants: []openproject.Ref{{ID: 4}, {ID: 9, Title: "Bob"}},
		AgendaItems: []openproject.AgendaItem{
			{ID: 1, MeetingID: id, Title: "Intro", Notes: "hello", Position: 1, DurationMinutes: ptr(5),
				ItemType: "simple", Author: &openproject.Ref{ID: 4}, Presenter: &openproject.Ref{ID: 9},
				Outcomes:    []openproject.Outcome{{ID: 1, Notes: "agreed", Kind: "decision"}, {ID: 2, Notes: "later"}},
				LockVersion: 1, CreatedAt: ts(13), UpdatedAt: ts(14)},
			{ID: 2, MeetingID: id, Title: "WP", Position: 2, ItemType: "work_package",
				WorkPackage: &openproject.Ref{ID: 12, Href: "/api/v3/work_packages/12"},
				Section:     &openproject.Ref{ID: 3}},
		},
		CreatedAt: ts(15), UpdatedAt: ts(16),
	}
}

func TestOpenCreatesPrivateDirAndFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "inst", "42")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()

	for _, c := range []struct {
		path string
		want fs.FileMode
	}{
		{filepath.Join(root, "inst"), 0o700},
		{dir, 0o700},
		{filepath.Join(dir, FileName), 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s mode = %o, want %o", c.path, got, c.want)
		}
	}
	if s.Path() != filepath.Join(dir, FileName) {
		t.Errorf("Path() = %q", s.Path())
	}
	if n, err := s.Size(); err != nil || n <= 0 {
		t.Errorf("Size() = %d, %v; want > 0", n, err)
	}
}

func TestOpenTightensLooseDirAndFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "u")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // defeat the umask
		t.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	s.Close()
	if err := os.Chmod(filepath.Join(dir, FileName), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	for path, want := range map[string]fs.FileMode{dir: 0o700, filepath.Join(dir, FileName): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %o, want %o", path, got, want)
		}
	}
}

func TestOpenLocked(t *testing.T) {
	s, dir := openTemp(t)
	_ = s

	s2, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
	if err == nil {
		s2.Close()
		t.Fatal("second Open succeeded while the first is open")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v; want ErrLocked", err)
	}
	var le *LockedError
	if !errors.As(err, &le) || le.Path != filepath.Join(dir, FileName) {
		t.Fatalf("second Open: %#v; want *LockedError with the file path", err)
	}
	if !strings.Contains(err.Error(), "in use by another opsearch process") {
		t.Errorf("message %q does not say why", err)
	}

	// Once the first is closed the file opens again.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s3.Close()
}

func TestOpenSchemaVersions(t *testing.T) {
	tests := []struct {
		name    string
		version []byte // nil: delete the key
		wantErr error
		anyErr  bool
	}{
		{"current", encodeUint(SchemaVersion), nil, false},
		{"version 2, before dictionaries", encodeUint(2), nil, false},
		{"too new", encodeUint(SchemaVersion + 1), ErrSchemaTooNew, true},
		{"far too new", encodeUint(1 << 40), ErrSchemaTooNew, true},
		{"zero", encodeUint(0), nil, true},
		{"missing", nil, nil, true},
		{"malformed", []byte("1"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			update(t, s, func(tx *WriteTx) error { return tx.PutProject(sampleProject(1)) })
			s.Close()

			db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				if tt.version == nil {
					return tx.Bucket(bucketMeta).Delete(keySchemaVersion)
				}
				return tx.Bucket(bucketMeta).Put(keySchemaVersion, tt.version)
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}

			s, err = Open(dir, Options{})
			if !tt.anyErr {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer s.Close()
				if _, found, err := s.Project(1); !found || err != nil {
					t.Errorf("Project(1) after reopen: found=%v err=%v", found, err)
				}
				if err := boltOf(s).View(func(tx *bolt.Tx) error {
					if v, _ := decodeUint(tx.Bucket(bucketMeta).Get(keySchemaVersion)); v != SchemaVersion {
						return fmt.Errorf("schema version %d after opening, want %d", v, SchemaVersion)
					}
					return nil
				}); err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded, want error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Open: %v; want %v", err, tt.wantErr)
			}
		})
	}
}

func TestOpenRefusesForeignBoltFile(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("something_else"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(dir, Options{}); err == nil {
		s.Close()
		t.Fatal("Open of a foreign bbolt file succeeded")
	}
}

func TestRoundTripEveryKind(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		p, wp, acts, wiki, m := sampleProject(2), sampleWorkPackage(12), sampleActivities(12), sampleWikiPage(5), sampleMeeting(31)
		update(t, s, func(tx *WriteTx) error {
			return errors.Join(tx.PutProject(p), tx.PutWorkPackage(wp), tx.PutActivities(12, acts),
				tx.PutWikiPage(wiki), tx.PutMeeting(m))
		})

		tests := []struct {
			kind kind.Kind
			want any
			get  func() (any, bool, error)
		}{
			{kind.Project, p, func() (any, bool, error) { return s.Project(2) }},
			{kind.WorkPackage, wp, func() (any, bool, error) { return s.WorkPackage(12) }},
			{kind.Activity, acts, func() (any, bool, error) { return s.Activities(12) }},
			{kind.WikiPage, wiki, func() (any, bool, error) { return s.WikiPage(5) }},
			{kind.Meeting, m, func() (any, bool, error) { return s.Meeting(31) }},
		}
		for _, tt := range tests {
			t.Run(string(tt.kind), func(t *testing.T) {
				got, found, err := tt.get()
				if err != nil || !found {
					t.Fatalf("get: found=%v err=%v", found, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("round trip differs:\n got %#v\nwant %#v", got, tt.want)
				}
				if n, err := s.Count(tt.kind); n != 1 || err != nil {
					t.Errorf("Count = %d, %v; want 1", n, err)
				}
			})
		}

		// The same reads inside one View, and a miss.
		err := s.View(context.Background(), func(tx *ReadTx) error {
			if got, _, _ := tx.Meeting(31); !reflect.DeepEqual(got, m) {
				t.Errorf("ReadTx.Meeting differs")
			}
			if _, found, err := tx.WorkPackage(13); found || err != nil {
				t.Errorf("WorkPackage(13) = found %v, %v; want miss", found, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestPutReplacesAndReadsOwnWrites(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		update(t, s, func(tx *WriteTx) error {
			wp := sampleWorkPackage(7)
			if err := tx.PutWorkPackage(wp); err != nil {
				return err
			}
			wp.Subject, wp.LockVersion = "renamed", 4
			if err := tx.PutWorkPackage(wp); err != nil {
				return err
			}
			got, found, err := tx.WorkPackage(7)
			if err != nil || !found || got.Subject != "renamed" {
				t.Errorf("read own write: %+v %v %v", got.Subject, found, err)
			}
			if n := tx.Count(kind.WorkPackage); n != 1 {
				t.Errorf("Count inside tx = %d, want 1", n)
			}
			return nil
		})
		if n, _ := s.Count(kind.WorkPackage); n != 1 {
			t.Errorf("Count after replace = %d, want 1", n)
		}
	})
}

func TestPutActivitiesEmpty(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		update(t, s, func(tx *WriteTx) error { return tx.PutActivities(3, nil) })
		acts, found, err := s.Activities(3)
		if err != nil || !found || len(acts) != 0 {
			t.Errorf("Activities(3) = %v, %v, %v; want empty, found", acts, found, err)
		}
		if _, found, _ := s.Activities(4); found {
			t.Error("Activities(4) found, never stored")
		}
	})
}

func TestPutRejectsBadIDs(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		tests := []struct {
			name string
			put  func(*WriteTx) error
		}{
			{"project 0", func(tx *WriteTx) error { return tx.PutProject(openproject.Project{}) }},
			{"work package -1", func(tx *WriteTx) error { return tx.PutWorkPackage(openproject.WorkPackage{ID: -1}) }},
			{"activities 0", func(tx *WriteTx) error { return tx.PutActivities(0, sampleActivities(0)) }},
			{"wiki 0", func(tx *WriteTx) error { return tx.PutWikiPage(openproject.WikiPage{}) }},
			{"meeting 0", func(tx *WriteTx) error { return tx.PutMeeting(openproject.Meeting{}) }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := s.Update(context.Background(), tt.put)
				if !errors.Is(err, ErrInvalidID) {
					t.Errorf("err = %v, want ErrInvalidID", err)
				}
			})
		}
	})
}

func TestDelete(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		update(t, s, func(tx *WriteTx) error {
			for id := int64(1); id <= 3; id++ {
				if err := errors.Join(tx.PutWorkPackage(sampleWorkPackage(id)), tx.PutActivities(id, sampleActivities(id)),
					tx.PutMeeting(sampleMeeting(id))); err != nil {
					return err
				}
			}
			return nil
		})
		update(t, s, func(tx *WriteTx) error {
			return errors.Join(
				tx.Delete(kind.WorkPackage, 2),
				tx.Delete(kind.WorkPackage, 2), // idempotent
				tx.Delete(kind.Meeting, 99),    // absent
				tx.Delete(kind.Meeting, 3),
			)
		})
		tests := []struct {
			kind    kind.Kind
			wantIDs []int64
		}{
			{kind.WorkPackage, []int64{1, 3}},
			{kind.Activity, []int64{1, 3}}, // followed the work package
			{kind.Meeting, []int64{1, 2}},
			{kind.Project, nil},
		}
		for _, tt := range tests {
			ids, err := s.IDs(tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) == 0 {
				ids = nil
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Errorf("IDs(%s) = %v, want %v", tt.kind, ids, tt.wantIDs)
			}
			if n, _ := s.Count(tt.kind); n != len(tt.wantIDs) {
				t.Errorf("Count(%s) = %d, want %d", tt.kind, n, len(tt.wantIDs))
			}
		}
		if _, found, _ := s.WorkPackage(2); found {
			t.Error("deleted work package still found")
		}
		err := s.Update(context.Background(), func(tx *WriteTx) error { return tx.Delete("bogus", 1) })
		if !errors.Is(err, ErrUnknownKind) {
			t.Errorf("Delete(bogus) = %v, want ErrUnknownKind", err)
		}
	})
}

func TestCountIDsMaxID(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		// Ids spanning byte boundaries check that key order is numeric order.
		ids := []int64{1 << 40, 3, 256, 255, 1, 65536, 70000}
		update(t, s, func(tx *WriteTx) error {
			for _, id := range ids {
				if err := tx.PutWikiPage(sampleWikiPage(id)); err != nil {
					return err
				}
			}
			return nil
		})
		want := []int64{1, 3, 255, 256, 65536, 70000, 1 << 40}
		got, err := s.IDs(kind.WikiPage)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("IDs = %v, %v; want %v", got, err, want)
		}
		if n, err := s.Count(kind.WikiPage); n != len(want) || err != nil {
			t.Errorf("Count = %d, %v; want %d", n, err, len(want))
		}
		if m, err := s.MaxID(kind.WikiPage); m != 1<<40 || err != nil {
			t.Errorf("MaxID = %d, %v", m, err)
		}
		if m, err := s.MaxID(kind.Meeting); m != 0 || err != nil {
			t.Errorf("MaxID(empty) = %d, %v; want 0", m, err)
		}
		for _, call := range []func() error{
			func() error { _, err := s.Count("bogus"); return err },
			func() error { _, err := s.IDs("bogus"); return err },
			func() error { _, err := s.MaxID("bogus"); return err },
			func() error { _, err := s.SyncState("bogus"); return err },
		} {
			if err := call(); !errors.Is(err, ErrUnknownKind) {
				t.Errorf("unknown kind: err = %v, want ErrUnknownKind", err)
			}
		}
	})
}

func TestSyncStateRoundTrip(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		want := SyncState{
			Kind: kind.WikiPage, Cursor: ts(1), LastStarted: ts(2), LastFinished: ts(3), LastSuccess: ts(3),
			ItemsSeen: 17, LastError: "", Complete: true, Unsupported: false, Note: "wiki pages carry no text",
			HighestID: 912, RecheckNext: 400, LastFullListing: ts(4), Extra: map[string]string{"probeMisses": "20"},
		}
		failed := SyncState{Kind: kind.Meeting, LastStarted: ts(5), LastFinished: ts(6), LastError: "boom",
			Unsupported: true, Note: "server has no meetings list"}
		update(t, s, func(tx *WriteTx) error { return errors.Join(tx.SetSyncState(want), tx.SetSyncState(failed)) })

		got, err := s.SyncState(kind.WikiPage)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SyncState = %#v, %v\nwant %#v", got, err, want)
		}
		all, err := s.AllSyncStates()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(kind.All()) {
			t.Errorf("AllSyncStates has %d kinds, want %d", len(all), len(kind.All()))
		}
		if !reflect.DeepEqual(all[kind.Meeting], failed) || !reflect.DeepEqual(all[kind.WikiPage], want) {
			t.Errorf("AllSyncStates = %#v", all)
		}
		if never := all[kind.Project]; !reflect.DeepEqual(never, SyncState{Kind: kind.Project}) {
			t.Errorf("never-synced state = %#v", never)
		}
		err = s.Update(context.Background(), func(tx *WriteTx) error { return tx.SetSyncState(SyncState{Kind: "x"}) })
		if !errors.Is(err, ErrUnknownKind) {
			t.Errorf("SetSyncState(unknown) = %v", err)
		}

		// The crawls of a shared store's users keep their states apart.
		bobs := SyncState{Kind: kind.WikiPage, Owner: 3, Cursor: ts(9), HighestID: 7}
		update(t, s, func(tx *WriteTx) error { return tx.SetSyncState(bobs) })
		if got, err := s.SyncStateOf(3, kind.WikiPage); err != nil || !reflect.DeepEqual(got, bobs) {
			t.Errorf("SyncStateOf(3) = %#v, %v\nwant %#v", got, err, bobs)
		}
		if got, _ := s.SyncState(kind.WikiPage); !reflect.DeepEqual(got, want) {
			t.Errorf("owner 3's state replaced the store's own: %#v", got)
		}
		if all, _ := s.AllSyncStatesOf(4); !reflect.DeepEqual(all[kind.WikiPage], SyncState{Kind: kind.WikiPage, Owner: 4}) {
			t.Errorf("owner 4 never synced, state %#v", all[kind.WikiPage])
		}
		if _, err := s.SyncStateOf(-1, kind.WikiPage); err == nil {
			t.Error("SyncStateOf(-1) did not fail")
		}
	})
}

func TestMeta(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		val := []byte("v1")
		update(t, s, func(tx *WriteTx) error {
			if err := tx.SetMeta("index_version", val); err != nil {
				return err
			}
			val[0] = 'X' // the store must not keep the caller's slice
			return tx.SetMeta("empty", []byte{})
		})
		if got, found, err := s.Meta("index_version"); string(got) != "v1" || !found || err != nil {
			t.Errorf("Meta = %q, %v, %v", got, found, err)
		}
		if got, found, _ := s.Meta("empty"); !found || len(got) != 0 {
			t.Errorf("Meta(empty) = %q, %v", got, found)
		}
		update(t, s, func(tx *WriteTx) error { return tx.SetMeta("index_version", nil) })
		if _, found, _ := s.Meta("index_version"); found {
			t.Error("SetMeta(nil) did not delete")
		}
		// Caller keys live apart from the store's own metadata.
		update(t, s, func(tx *WriteTx) error { return tx.SetMeta(string(keySchemaVersion), []byte("x")) })
		s.Close()
		// Reopened by the engine's own opener: a PostgreSQL store's Path
		// is no directory (opened as one, it left a file in the checkout).
		o.reopen(t).Close()
	})
}

func TestUpdateFailingFnRollsBack(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		boom := errors.New("boom")
		err := s.Update(context.Background(), func(tx *WriteTx) error {
			if err := tx.PutWorkPackage(sampleWorkPackage(1)); err != nil {
				return err
			}
			if err := tx.SetSyncState(SyncState{Kind: kind.WorkPackage, ItemsSeen: 1}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v, want boom", err)
		}
		assertEmpty(t, s)
	})
}

func TestUpdateCancelledContext(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		called := false
		err := s.Update(ctx, func(tx *WriteTx) error {
			called = true
			return tx.PutWorkPackage(sampleWorkPackage(1))
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Update = %v, want context.Canceled", err)
		}
		if called {
			t.Error("fn ran with a cancelled context")
		}
		if err := s.View(ctx, func(*ReadTx) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Errorf("View = %v, want context.Canceled", err)
		}
		assertEmpty(t, s)
	})
}

func assertEmpty(t *testing.T, s *Store) {
	t.Helper()
	for _, k := range kind.All() {
		if n, _ := s.Count(k); n != 0 {
			t.Errorf("Count(%s) = %d, want 0", k, n)
		}
		if ids, _ := s.IDs(k); len(ids) != 0 {
			t.Errorf("IDs(%s) = %v, want none", k, ids)
		}
	}
	if st, _ := s.SyncState(kind.WorkPackage); st.ItemsSeen != 0 {
		t.Errorf("sync state written: %+v", st)
	}
}

func TestIdentity(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		if _, found, err := s.Identity(); found || err != nil {
			t.Fatalf("Identity on new store: found=%v err=%v", found, err)
		}
		want := Identity{BaseURL: "https://op.example.com", Instance: "op.example.com", UserID: 7, Login: "ann", Name: "Ann A."}
		if err := s.SetIdentity(want); err != nil {
			t.Fatal(err)
		}
		got, found, err := s.Identity()
		if err != nil || !found || got != want {
			t.Errorf("Identity = %+v, %v, %v; want %+v", got, found, err, want)
		}

		const secret = "0123456789abcdef-s3cret"
		for _, bad := range []Identity{
			{BaseURL: "https://apikey:" + secret + "@op.example.com", UserID: 7},
			{BaseURL: "https://op.example.com/?key=" + secret, UserID: 7},
			{BaseURL: "https://op.example.com", UserID: 0},
		} {
			if err := s.SetIdentity(bad); err == nil {
				t.Errorf("SetIdentity(%+v) succeeded", bad)
			} else if strings.Contains(err.Error(), secret) {
				t.Errorf("error repeats the secret: %v", err)
			}
		}
		if err := s.SetIdentity(Identity{BaseURL: "http://127.0.0.1:8080/op", UserID: 3}); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Identity(); got.Instance != "127.0.0.1_8080_op" {
			t.Errorf("Instance not derived: %+v", got)
		}
		s.Close()
		raw := o.atRest(t)
		if len(raw) == 0 || bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the store at rest (%d bytes) contains the secret", len(raw))
		}
	})
}

func TestIdentityHasNoSecretField(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[Identity](), reflect.TypeFor[SyncState]()} {
		for f := range typ.Fields() {
			name := strings.ToLower(f.Name + " " + f.Tag.Get("json"))
			for _, bad := range []string{"key", "token", "secret", "password", "credential"} {
				if strings.Contains(name, bad) {
					t.Errorf("%s.%s looks like a place for a secret", typ.Name(), f.Name)
				}
			}
		}
	}
}

func TestReopenKeepsData(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		update(t, s, func(tx *WriteTx) error {
			return errors.Join(tx.PutProject(sampleProject(1)), tx.PutMeeting(sampleMeeting(2)),
				tx.SetSyncState(SyncState{Kind: kind.Project, Complete: true}))
		})
		if err := s.SetIdentity(Identity{BaseURL: "http://127.0.0.1:8080", Instance: "127.0.0.1_8080", UserID: 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		if _, _, err := s.Project(1); !errors.Is(err, ErrClosed) {
			t.Errorf("Project after Close = %v, want ErrClosed", err)
		}
		if err := s.Update(context.Background(), func(*WriteTx) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Errorf("Update after Close = %v, want ErrClosed", err)
		}

		s = o.reopen(t)
		if got, found, err := s.Meeting(2); !found || err != nil || !reflect.DeepEqual(got, sampleMeeting(2)) {
			t.Errorf("Meeting(2) after reopen: found=%v err=%v", found, err)
		}
		if n, _ := s.Count(kind.Project); n != 1 {
			t.Errorf("Count(projects) after reopen = %d", n)
		}
		if st, _ := s.SyncState(kind.Project); !st.Complete {
			t.Errorf("SyncState after reopen = %+v", st)
		}
		if id, found, _ := s.Identity(); !found || id.UserID != 1 {
			t.Errorf("Identity after reopen = %+v, %v", id, found)
		}
	})
}

func TestCountsRebuiltWhenMissing(t *testing.T) {
	s, dir := openTemp(t)
	update(t, s, func(tx *WriteTx) error {
		for id := int64(1); id <= 5; id++ {
			if err := tx.PutWorkPackage(sampleWorkPackage(id)); err != nil {
				return err
			}
		}
		return nil
	})
	s.Close()
	// A store from before counters existed (or a migration adding a kind)
	// has no counter: Open must recount rather than report 0.
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketCounts) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Count(kind.WorkPackage); n != 5 {
		t.Errorf("Count = %d, want 5", n)
	}
}

func TestCompactTo(t *testing.T) {
	s, _ := openTemp(t)
	update(t, s, func(tx *WriteTx) error {
		for id := int64(1); id <= 200; id++ {
			wp := sampleWorkPackage(id)
			wp.Description = strings.Repeat("x", 4000)
			if err := tx.PutWorkPackage(wp); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx *WriteTx) error {
		for id := int64(2); id <= 200; id++ {
			if err := tx.Delete(kind.WorkPackage, id); err != nil {
				return err
			}
		}
		return nil
	})
	dst := filepath.Join(t.TempDir(), "c", FileName)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.CompactTo(context.Background(), dst); err != nil {
		t.Fatalf("CompactTo: %v", err)
	}
	if err := s.CompactTo(context.Background(), dst); err == nil {
		t.Error("CompactTo over an existing file succeeded")
	}
	before, _ := s.Size()
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= before || fi.Mode().Perm() != 0o600 {
		t.Errorf("compacted: %d bytes mode %o; original %d bytes", fi.Size(), fi.Mode().Perm(), before)
	}
	c, err := Open(filepath.Dir(dst), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ids, _ := c.IDs(kind.WorkPackage); !reflect.DeepEqual(ids, []int64{1}) {
		t.Errorf("compacted IDs = %v", ids)
	}
	if n, _ := c.Count(kind.WorkPackage); n != 1 {
		t.Errorf("compacted Count = %d", n)
	}
}

// boltOf is the bbolt file under s, for tests that look at the file's
// layout itself.
func boltOf(s *Store) *bolt.DB { return s.eng.(*boltEngine).db }
