package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
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

// putVaried stores variedWorkPackage(from) up to to-1 in one transaction.
func putVaried(t testing.TB, s *Store, from, to int64) {
	t.Helper()
	if err := s.Update(context.Background(), func(w *WriteTx) error {
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

// meetingDictCodec returns a codec that writes meetings with testDict,
// and the dictionary; the codec is closed when the test ends.
func meetingDictCodec(t testing.TB) (*codec, []byte) {
	t.Helper()
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	d := testDict(t, c)
	if err := c.addDict(kind.Meeting, d, true); err != nil {
		t.Fatal(err)
	}
	return c, d
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
	putVaried(t, s, 1, dictMinSamples+1)
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
	putVaried(t, s, dictMinSamples+1, dictMinSamples+101)
	if !hasDict(t, s, kind.WorkPackage) {
		t.Fatal("no dictionary after more than dictMinSamples values")
	}
	putVaried(t, s, dictMinSamples+101, dictMinSamples+201)
	marks := map[byte]int{}
	var plain, withDict int
	if err := boltOf(s).View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOf(kind.WorkPackage)).ForEach(func(k, v []byte) error {
			marks[v[0]]++
			switch id := keyID(k); {
			case v[0] == msgpMark && id > 800 && id <= 900:
				plain += len(v)
			case v[0] == msgpDictMark && id > dictMinSamples+100:
				withDict += len(v)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if marks[msgpMark] != dictMinSamples+100 || marks[msgpDictMark] != 100 {
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
		key, _ := encDict(k)
		ok = tx.Bucket(bucketMeta).Get(key) != nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestCodecWithoutTheDictionary: a value naming a dictionary the store
// does not hold is refused with a clear error, not garbage.
func TestCodecWithoutTheDictionary(t *testing.T) {
	a, _ := meetingDictCodec(t)
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

// wordyMeeting is sampleMeeting with notes of its own, long enough that
// a Huffman table pays for itself in them.
func wordyMeeting(id int64) openproject.Meeting {
	m := sampleMeeting(id)
	m.Title = fmt.Sprintf("Weekly %d about release %d", id*13%97, id%11)
	m.AgendaItems[0].Notes = fmt.Sprintf("Quarterly-zanzibar-%d: the vendor's invoices for batch %d arrived twice; "+
		"finance asks whether the duplicate payment run of week %d can be reversed before the audit closes.", id, id*7, id%52)
	return m
}

// TestDictionaryLiterals: a value compressed with a dictionary keeps its
// literals as they are, not Huffman-coded (addDict), and a value written
// the way earlier versions wrote it, with Huffman-coded literals, still
// reads back.
func TestDictionaryLiterals(t *testing.T) {
	c, d := meetingDictCodec(t)
	before, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderDict(d))
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	huffman := 0
	for id := range int64(40) {
		m := wordyMeeting(id + 1)
		raw, err := c.marshal(kind.Meeting, m)
		if err != nil || raw[0] != dictMark {
			t.Fatalf("marshal with a dictionary: %v, mark %x", err, raw[0])
		}
		if lt := literalsType(t, raw[1:]); lt == literalsHuffman || lt == literalsTreeless {
			t.Fatalf("meeting %d: literals stored as type %d, want raw", id+1, lt)
		}
		plain, err := c.enc.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		old := before.EncodeAll(plain, []byte{dictMark})
		if literalsType(t, old[1:]) == literalsHuffman {
			huffman++
		}
		var got, want openproject.Meeting
		if err := c.unmarshal(old, &got); err != nil {
			t.Fatalf("meeting %d as written before: %v", id+1, err)
		}
		if err := c.unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || got.AgendaItems[0].Notes != m.AgendaItems[0].Notes {
			t.Fatalf("meeting %d reads differently as written before:\n%+v\nwant\n%+v", id+1, got, want)
		}
	}
	if huffman == 0 {
		t.Fatal("no value written the earlier way had Huffman-coded literals: the test shows nothing")
	}
}

// The Literals_Block_Type values of RFC 8878, 3.1.1.3.1.1.
const (
	literalsRaw      = 0
	literalsHuffman  = 2
	literalsTreeless = 3 // Huffman-coded with the previous table
)

// literalsType returns the Literals_Block_Type of the first compressed
// block of a zstd frame (RFC 8878, 3.1.1), or -1 when no block is
// compressed.
func literalsType(t *testing.T, frame []byte) int {
	t.Helper()
	if len(frame) < 6 || binary.LittleEndian.Uint32(frame) != 0xFD2FB528 {
		t.Fatalf("not a zstd frame: % x", frame[:min(len(frame), 8)])
	}
	fhd := frame[4]
	p := 5
	single := fhd&0x20 != 0
	if !single {
		p++ // Window_Descriptor
	}
	p += []int{0, 1, 2, 4}[fhd&3] // Dictionary_ID
	fcs := []int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		fcs = 1
	}
	p += fcs
	for p+3 <= len(frame) {
		bh := int(frame[p]) | int(frame[p+1])<<8 | int(frame[p+2])<<16
		p += 3
		last, typ, size := bh&1 == 1, (bh>>1)&3, bh>>3
		switch typ {
		case 2: // Compressed_Block: the literals section comes first
			return int(frame[p] & 3)
		case 1: // RLE_Block: one byte
			p++
		default:
			p += size
		}
		if last {
			break
		}
	}
	return -1
}

// TestCodecRefusesChangedText: a byte changed inside a value's text is
// refused, though CBOR no longer checks text for valid UTF-8: zstd's
// checksum catches it. Raw literals hold the text as written, so the
// change lands in it.
func TestCodecRefusesChangedText(t *testing.T) {
	c, _ := meetingDictCodec(t)
	raw, err := c.marshal(kind.Meeting, wordyMeeting(5))
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(raw, []byte("zanzibar"))
	if at < 0 {
		t.Fatal("the notes are not in the value as written")
	}
	for _, b := range []byte{'Z', 0xff} {
		damaged := slices.Clone(raw)
		damaged[at] = b
		var m openproject.Meeting
		if err := c.unmarshal(damaged, &m); err == nil {
			t.Errorf("changed %q to %q: decoded without error, notes %q", raw[at], b, m.AgendaItems[0].Notes)
		}
	}
}
