package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	bolt "go.etcd.io/bbolt"
)

// rewriteAsVersion1 turns a closed store into what schema version 1
// wrote: every entity value as JSON, version 1, no recoding mark. With
// half, only every other value is rewritten and the mark stays, as a
// recoding interrupted part way leaves it.
func rewriteAsVersion1(t *testing.T, path string, half bool) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, k := range kind.All() {
			b := tx.Bucket(bucketOf(k))
			type kv struct{ k, v []byte }
			var all []kv
			i := 0
			if err := b.ForEach(func(key, v []byte) error {
				i++
				if half && i%2 == 0 {
					return nil
				}
				var x any
				switch k {
				case kind.Project:
					var p openproject.Project
					err = c.unmarshal(v, &p)
					x = p
				case kind.WorkPackage:
					var w openproject.WorkPackage
					err = c.unmarshal(v, &w)
					x = w
				case kind.Activity:
					var a []openproject.Activity
					err = c.unmarshal(v, &a)
					x = a
				case kind.WikiPage:
					var w openproject.WikiPage
					err = c.unmarshal(v, &w)
					x = w
				case kind.Meeting:
					var m openproject.Meeting
					err = c.unmarshal(v, &m)
					x = m
				}
				if err != nil {
					return err
				}
				raw, err := json.Marshal(x)
				all = append(all, kv{append([]byte(nil), key...), raw})
				return err
			}); err != nil {
				return err
			}
			for _, e := range all {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
		}
		meta := tx.Bucket(bucketMeta)
		if half {
			return meta.Put(keyRecode, []byte("1"))
		}
		if err := meta.Delete(keyRecode); err != nil {
			return err
		}
		return meta.Put(keySchemaVersion, encodeUint(1))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrateVersion1Recodes: a version 1 store (JSON values), and one
// whose recoding was interrupted, open as version 2 with every entity
// unchanged, every value compact and the recoding mark gone.
func TestMigrateVersion1Recodes(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	for _, half := range []bool{false, true} {
		name := "version 1"
		if half {
			name = "recoding interrupted"
		}
		t.Run(name, func(t *testing.T) {
			s, dir := openTemp(t)
			want := map[kind.Kind]any{}
			update(t, s, func(tx *WriteTx) error {
				var errs []error
				for i := int64(1); i <= 1200; i++ { // more than one recoding batch
					errs = append(errs, tx.PutWorkPackage(sampleWorkPackage(i)), tx.PutActivities(i, sampleActivities(i)))
				}
				errs = append(errs, tx.PutProject(sampleProject(2)), tx.PutWikiPage(sampleWikiPage(5)), tx.PutMeeting(sampleMeeting(31)))
				return errors.Join(errs...)
			})
			want[kind.Project], want[kind.WikiPage], want[kind.Meeting] = sampleProject(2), sampleWikiPage(5), sampleMeeting(31)
			path := s.Path()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			rewriteAsVersion1(t, path, half)

			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			err = boltOf(s).View(func(tx *bolt.Tx) error {
				meta := tx.Bucket(bucketMeta)
				if v, _ := decodeUint(meta.Get(keySchemaVersion)); v != SchemaVersion {
					t.Errorf("schema version %d, want %d", v, SchemaVersion)
				}
				if meta.Get(keyRecode) != nil {
					t.Error("the recoding mark is still set")
				}
				for _, k := range kind.All() {
					n := 0
					if err := tx.Bucket(bucketOf(k)).ForEach(func(key, v []byte) error {
						n++
						if isJSON(v) {
							t.Errorf("%s %d is still JSON", k, keyID(key))
						}
						return nil
					}); err != nil {
						return err
					}
					if c, _ := decodeUint(tx.Bucket(bucketCounts).Get(bucketOf(k))); int(c) != n {
						t.Errorf("%s count %d, %d values", k, c, n)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []int64{1, 600, 1200} {
				if got, _, err := s.WorkPackage(id); err != nil || !reflect.DeepEqual(got, sampleWorkPackage(id)) {
					t.Errorf("work package %d after recoding: %v\n%#v", id, err, got)
				}
				if got, _, err := s.Activities(id); err != nil || !reflect.DeepEqual(got, sampleActivities(id)) {
					t.Errorf("activities %d after recoding: %v", id, err)
				}
			}
			if got, _, _ := s.Project(2); !reflect.DeepEqual(got, want[kind.Project]) {
				t.Error("project differs after recoding")
			}
			if got, _, _ := s.WikiPage(5); !reflect.DeepEqual(got, want[kind.WikiPage]) {
				t.Error("wiki page differs after recoding")
			}
			if got, _, _ := s.Meeting(31); !reflect.DeepEqual(got, want[kind.Meeting]) {
				t.Error("meeting differs after recoding")
			}
			n := 0
			if err := s.ScanWorkPackages(context.Background(), 100, func(b []openproject.WorkPackage) error { n += len(b); return nil }); err != nil || n != 1200 {
				t.Errorf("scan after recoding: %d, %v", n, err)
			}
		})
	}
}

// TestCodecRefusesDamage: a value in neither encoding, or a compact one
// cut short, is an error naming the problem, never a panic or a zero
// entity.
func TestCodecRefusesDamage(t *testing.T) {
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	good, err := c.marshal(kind.WorkPackage, sampleWorkPackage(3))
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string][]byte{
		"empty":     {},
		"zeroed":    make([]byte, 40),
		"truncated": good[:len(good)/2],
		"mark only": {compactMark},
		"garbage":   []byte("\x07\x08\x09"),
	} {
		var wp openproject.WorkPackage
		if err := c.unmarshal(raw, &wp); err == nil {
			t.Errorf("%s: decoded without error: %+v", name, wp)
		}
	}
}

// TestCodecDecodesIntoOwnMemory: a decoded value shares no memory with
// the codec's reused decompression buffers, so decoding another value
// leaves it as it was.
func TestCodecDecodesIntoOwnMemory(t *testing.T) {
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	wp := func(i int) openproject.WorkPackage {
		return openproject.WorkPackage{ID: int64(i), Subject: fmt.Sprintf("subject %d of a work package", i),
			Description: strings.Repeat(fmt.Sprintf("description line %d. ", i), 40)}
	}
	var got []openproject.WorkPackage
	for i := range 50 {
		raw, err := c.marshal(kind.WorkPackage, wp(i))
		if err != nil {
			t.Fatal(err)
		}
		var w openproject.WorkPackage
		if err := c.unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		got = append(got, w)
	}
	for i, w := range got {
		if want := wp(i); !reflect.DeepEqual(w, want) {
			t.Fatalf("value %d changed after later decodes:\n%+v\nwant\n%+v", i, w, want)
		}
	}
}
