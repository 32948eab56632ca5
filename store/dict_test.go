package store

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// variedWorkPackage is sampleWorkPackage with text that differs per id,
// as real values do (identical values teach a dictionary nothing).
func variedWorkPackage(id int64) openproject.WorkPackage {
	wp := sampleWorkPackage(id)
	wp.Subject = fmt.Sprintf("Fix the %d login timeout on host node-%d", id*7919%1000, id%37)
	wp.Description = fmt.Sprintf("Customer case ZD-%d reports a timeout after %d seconds when the proxy restarts.", id*31, id%90)
	return wp
}

// testDict is a dictionary trained on meetings, for the fuzz target.
func testDict(tb testing.TB, c *codec) []byte {
	tb.Helper()
	var samples [][]byte
	for i := range int64(dictMinSamples) {
		m := sampleMeeting(i + 1)
		m.Title = fmt.Sprintf("Weekly %d about release %d", i*13%97, i%11)
		raw, err := c.enc.Marshal(m)
		if err != nil {
			tb.Fatal(err)
		}
		samples = append(samples, raw)
	}
	d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: dictSize, HashBytes: 6, ZstdDictID: dictIDBase + 3, ZstdLevel: zstd.SpeedDefault})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// TestDictionary: a kind's first dictMinSamples values are written
// without a dictionary; the transaction after them trains one and stores
// it, and from its commit on values use it; every value reads back, also
// after reopening, and the dictionary makes the values smaller. A
// transaction that rolls back leaves no dictionary behind.
func TestDictionary(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	put := func(from, to int64) {
		t.Helper()
		if err := s.Update(ctx, func(w *WriteTx) error {
			for id := from; id < to; id++ {
				if err := w.PutWorkPackage(variedWorkPackage(id)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	put(1, dictMinSamples+1)
	// A transaction that trains, then fails: nothing of it stays.
	err = s.Update(ctx, func(w *WriteTx) error {
		if err := w.PutWorkPackage(variedWorkPackage(dictMinSamples + 1)); err != nil {
			return err
		}
		return fmt.Errorf("give up")
	})
	if err == nil {
		t.Fatal("the failing transaction succeeded")
	}
	if hasDict(t, s, kind.WorkPackage) || s.codec.dictZips[kind.WorkPackage] != nil {
		t.Fatal("a rolled-back transaction left a dictionary")
	}
	// This transaction trains the dictionary; the next one uses it.
	put(dictMinSamples+1, dictMinSamples+101)
	if !hasDict(t, s, kind.WorkPackage) {
		t.Fatal("no dictionary after more than dictMinSamples values")
	}
	put(dictMinSamples+101, dictMinSamples+201)
	marks := map[byte]int{}
	var plain, withDict int
	if err := boltOf(s).View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOf(kind.WorkPackage)).ForEach(func(k, v []byte) error {
			marks[v[0]]++
			switch id := keyID(k); {
			case v[0] == compactMark && id > 800 && id <= 900:
				plain += len(v)
			case v[0] == dictMark && id > dictMinSamples+100:
				withDict += len(v)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if marks[compactMark] != dictMinSamples+100 || marks[dictMark] != 100 {
		t.Errorf("encodings %v, want %d without a dictionary and 100 with", marks, dictMinSamples+100)
	}
	if withDict >= plain {
		t.Errorf("100 values take %d bytes with the dictionary, %d without", withDict, plain)
	}
	check := func(s *Store) {
		t.Helper()
		if err := s.View(ctx, func(r *ReadTx) error {
			for _, id := range []int64{1, dictMinSamples, dictMinSamples + 1, dictMinSamples + 200} {
				wp, ok, err := r.WorkPackage(id)
				if err != nil || !ok || wp.Subject != variedWorkPackage(id).Subject {
					return fmt.Errorf("work package %d: %v %v %q", id, ok, err, wp.Subject)
				}
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s)
	if _, err := Open(filepath.Join(t.TempDir(), "other"), Options{}); err != nil {
		t.Fatal(err)
	}
}

func hasDict(t *testing.T, s *Store, k kind.Kind) bool {
	t.Helper()
	var ok bool
	if err := boltOf(s).View(func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketMeta).Get(dictKey(k)) != nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestCodecWithoutTheDictionary: a value naming a dictionary the store
// does not hold is refused with a clear error, not garbage.
func TestCodecWithoutTheDictionary(t *testing.T) {
	a, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if err := a.addDict(kind.Meeting, testDict(t, a)); err != nil {
		t.Fatal(err)
	}
	raw, err := a.marshal(kind.Meeting, sampleMeeting(4))
	if err != nil || raw[0] != dictMark {
		t.Fatalf("marshal with a dictionary: %v, mark %x", err, raw[0])
	}
	b, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	var m openproject.Meeting
	if err := b.unmarshal(raw, &m); err == nil {
		t.Fatal("decoded a dictionary value without the dictionary")
	}
	if err := a.unmarshal(raw, &m); err != nil || m.Title != "Weekly" {
		t.Fatalf("decode with the dictionary: %v %+v", err, m)
	}
}
