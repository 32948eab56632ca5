package store

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/kind"
	bolt "go.etcd.io/bbolt"
)

// The tests in this file pin the file format: the kinds are spelled in the
// singular everywhere else, but a store keeps the bucket names (and the
// sync state's "kind") every earlier version wrote, so existing data
// directories open without a migration.

// rawDB opens the closed store in dir with bbolt directly.
func rawDB(t *testing.T, dir string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestBucketNamesOnDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, func(tx *WriteTx) error {
		for _, k := range kind.All() {
			if err := tx.SetSyncState(SyncState{Kind: k, ItemsSeen: 1}); err != nil {
				return err
			}
		}
		return tx.PutWorkPackage(sampleWorkPackage(3))
	})
	s.Close()

	entities := []string{"activities", "attachments", "meetings", "projects", "wiki_pages", "work_packages"}
	var top, counts, syncs []string
	err = rawDB(t, dir).View(func(tx *bolt.Tx) error {
		err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error { top = append(top, string(name)); return nil })
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketCounts).ForEach(func(k, _ []byte) error { counts = append(counts, string(k)); return nil })
		if err != nil {
			return err
		}
		return tx.Bucket(bucketSync).ForEach(func(k, _ []byte) error { syncs = append(syncs, string(k)); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTop := slices.Sorted(slices.Values(append([]string{"attachment_containers", "counts", "extra", "internal_readers", "meta", "sync"}, entities...)))
	if !reflect.DeepEqual(top, wantTop) {
		t.Errorf("buckets %q, want %q", top, wantTop)
	}
	if !reflect.DeepEqual(counts, entities) || !reflect.DeepEqual(syncs, entities) {
		t.Errorf("counts keys %q, sync keys %q, want %q", counts, syncs, entities)
	}
}

// TestSyncStateBytesOnDisk: a sync state is written byte for byte as
// before, "kind" first and spelled as the bucket name.
func TestSyncStateBytesOnDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, func(tx *WriteTx) error {
		return tx.SetSyncState(SyncState{Kind: kind.WikiPage, LastSuccess: ts(3), ItemsSeen: 3, Complete: true, HighestID: 9, Missing: []int64{4}})
	})
	s.Close()
	var raw string
	if err := rawDB(t, dir).View(func(tx *bolt.Tx) error {
		raw = string(tx.Bucket(bucketSync).Get([]byte("wiki_pages")))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"wiki_pages","lastSuccess":"2025-03-14T09:26:03.535Z","itemsSeen":3,"complete":true,"highestId":9,"missing":[4]}`
	if raw != want {
		t.Errorf("sync state on disk:\n got %s\nwant %s", raw, want)
	}
}

// TestOpensEarlierFile writes entities, counters and sync states the way
// earlier versions did (bucket names, plural "kind") and reads them back
// through the store's API.
func TestOpensEarlierFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	wp := sampleWorkPackage(7)
	wpRaw, err := json.Marshal(wp)
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, dir)
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("work_packages")).Put(idKey(7), wpRaw); err != nil {
			return err
		}
		if err := tx.Bucket([]byte("activities")).Put(idKey(7), []byte(`[]`)); err != nil {
			return err
		}
		c := tx.Bucket(bucketCounts)
		if err := c.Put([]byte("work_packages"), encodeUint(1)); err != nil {
			return err
		}
		if err := c.Put([]byte("activities"), encodeUint(1)); err != nil {
			return err
		}
		return tx.Bucket(bucketSync).Put([]byte("work_packages"), []byte(`{"kind":"work_packages","complete":true,"retry":[7]}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, found, err := s.WorkPackage(7); err != nil || !found || !reflect.DeepEqual(got, wp) {
		t.Errorf("WorkPackage(7) = %+v, %v, %v", got, found, err)
	}
	if acts, found, err := s.Activities(7); err != nil || !found || len(acts) != 0 {
		t.Errorf("Activities(7) = %v, %v, %v", acts, found, err)
	}
	for k, want := range map[kind.Kind]int{kind.WorkPackage: 1, kind.Activity: 1, kind.Project: 0} {
		if n, err := s.Count(k); n != want || err != nil {
			t.Errorf("Count(%s) = %d, %v; want %d", k, n, err, want)
		}
	}
	st, err := s.SyncState(kind.WorkPackage)
	if err != nil || st.Kind != kind.WorkPackage || !st.Complete || !reflect.DeepEqual(st.Retry, []int64{7}) {
		t.Errorf("SyncState = %+v, %v", st, err)
	}
	all, err := s.AllSyncStates()
	if err != nil || !all[kind.WorkPackage].Complete {
		t.Errorf("AllSyncStates = %+v, %v", all, err)
	}
}
