package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
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

// meetingDictCodec returns a codec that writes meetings with testDict
// and reads values an earlier version compressed with zstdTestDict,
// and that zstd dictionary; the codec is closed when the test ends.
func meetingDictCodec(t testing.TB) (*codec, []byte) {
	t.Helper()
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	if err := c.addS2Dict(kind.Meeting, testDict(t, c)); err != nil {
		t.Fatal(err)
	}
	zd := zstdTestDict(t, c)
	if err := c.addDict(zd); err != nil {
		t.Fatal(err)
	}
	return c, zd
}

// meetingSamples are dictMinSamples meetings in CBOR, varied.
func meetingSamples(tb testing.TB, c *codec) [][]byte {
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
	return samples
}

// testDict is an S2 dictionary trained on meetings, as maybeTrain
// trains one.
func testDict(tb testing.TB, c *codec) []byte {
	tb.Helper()
	d, err := dict.BuildS2Dict(meetingSamples(tb, c), dict.Options{MaxDictSize: s2DictSize, HashBytes: 6})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// zstdTestDict is a zstd dictionary trained on meetings, as versions 3
// to 5 trained them.
func zstdTestDict(tb testing.TB, c *codec) []byte {
	tb.Helper()
	d, err := dict.BuildZstdDict(meetingSamples(tb, c), dict.Options{MaxDictSize: 32 << 10, HashBytes: 6, ZstdDictID: dictIDBase + 3, ZstdLevel: zstd.SpeedDefault})
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
	if hasDict(t, s, kind.WorkPackage) || s.codec.s2Dicts[kind.WorkPackage] != nil {
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
			case v[0] == s2MsgpMark && id > 800 && id <= 900:
				plain += len(v)
			case v[0] == s2MsgpDictMark && id > dictMinSamples+100:
				withDict += len(v)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if marks[s2MsgpMark] != dictMinSamples+100 || marks[s2MsgpDictMark] != 100 {
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
		ok = tx.Bucket(bucketMeta).Get(s2Key(k)) != nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestCodecWithoutTheDictionary: a value compressed with a dictionary
// the store does not hold, S2's or an earlier version's zstd one, is
// refused with a clear error, not garbage; so is an S2 dictionary value
// read as another kind, whose dictionary is another.
func TestCodecWithoutTheDictionary(t *testing.T) {
	a, zd := meetingDictCodec(t)
	raw, err := a.marshal(kind.Meeting, sampleMeeting(4))
	if err != nil || raw[0] != s2DictMark {
		t.Fatalf("marshal with a dictionary: %v, mark %x", err, raw[0])
	}
	plain, err := a.enc.Marshal(sampleMeeting(4))
	if err != nil {
		t.Fatal(err)
	}
	zip, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderDict(zd))
	if err != nil {
		t.Fatal(err)
	}
	defer zip.Close()
	old := zip.EncodeAll(plain, []byte{dictMark})
	b, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	for _, v := range [][]byte{raw, old} {
		var m openproject.Meeting
		if err := b.unmarshal(v, &m); !errors.Is(err, errNoDict) && !errors.Is(err, zstd.ErrUnknownDictionary) {
			t.Errorf("mark %#x without the dictionary: %v, want a missing dictionary", v[0], err)
		}
		if err := a.unmarshal(v, &m); err != nil || m.Title != "Weekly" {
			t.Fatalf("mark %#x with the dictionary: %v %+v", v[0], err, m)
		}
	}
	// A wiki page's dictionary is not the meetings'.
	var pages [][]byte
	for i := range 200 {
		p, err := a.enc.Marshal(openproject.WikiPage{ID: int64(i), Title: fmt.Sprintf("Runbook %d", i*7%31), Text: fmt.Sprintf("Step %d: restart node-%d and check the %d certificates.", i%9, i, i*3)})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	wd, err := dict.BuildS2Dict(pages, dict.Options{MaxDictSize: s2DictSize, HashBytes: 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.addS2Dict(kind.WikiPage, wd); err != nil {
		t.Fatal(err)
	}
	var w openproject.WikiPage
	if err := a.unmarshal(raw, &w); err == nil {
		t.Error("a meeting decoded as a wiki page")
	}
	var p openproject.Attachment
	if err := a.unmarshal(raw, &p); !errors.Is(err, errNoDict) {
		t.Errorf("a meeting read as an attachment, a kind without a dictionary: %v", err)
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

// TestZstdValuesStillRead: values compressed with a zstd dictionary as
// earlier versions wrote them, with Huffman-coded literals (versions 3
// and 4) or raw ones (version 5), read back as the values written now
// with S2.
func TestZstdValuesStillRead(t *testing.T) {
	c, d := meetingDictCodec(t)
	huffmanZip, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderDict(d))
	if err != nil {
		t.Fatal(err)
	}
	defer huffmanZip.Close()
	rawZip, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderDict(d), zstd.WithNoEntropyCompression(true))
	if err != nil {
		t.Fatal(err)
	}
	defer rawZip.Close()
	literals := map[int]int{}
	for id := range int64(40) {
		m := wordyMeeting(id + 1)
		raw, err := c.marshal(kind.Meeting, m)
		if err != nil || raw[0] != s2DictMark {
			t.Fatalf("marshal with a dictionary: %v, mark %x", err, raw[0])
		}
		plain, err := c.enc.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var want openproject.Meeting
		if err := c.unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if want.AgendaItems[0].Notes != m.AgendaItems[0].Notes {
			t.Fatalf("meeting %d reads back as %+v", id+1, want)
		}
		for _, zip := range []*zstd.Encoder{huffmanZip, rawZip} {
			old := zip.EncodeAll(plain, []byte{dictMark})
			literals[literalsType(t, old[1:])]++
			var got openproject.Meeting
			if err := c.unmarshal(old, &got); err != nil {
				t.Fatalf("meeting %d as written before: %v", id+1, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("meeting %d reads differently as written before:\n%+v\nwant\n%+v", id+1, got, want)
			}
		}
	}
	if literals[literalsHuffman] == 0 || literals[literalsRaw] == 0 {
		t.Fatalf("literals block types %v: the test needs values of both earlier ways", literals)
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
// refused, though CBOR does not check text for valid UTF-8 and an S2
// block has no checksum: the value's CRC-32C catches it. S2 keeps
// literals as written, so the change lands in the text.
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
