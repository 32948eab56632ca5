package store

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// filled returns a T with every field the store keeps (all but json:"-")
// set to a value other than its zero, nested structs, pointers and
// slices included, so a field the generated code does not know reads
// back empty.
func filled[T any](t *testing.T) T {
	t.Helper()
	var v T
	n := 0
	var fill func(reflect.Value)
	fill = func(v reflect.Value) {
		n++
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeOf(time.Time{}) {
				v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, n, time.UTC)))
				return
			}
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
					fill(v.Field(i))
				}
			}
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			fill(v.Index(0))
			fill(v.Index(1))
		case reflect.String:
			v.SetString("s" + strings.Repeat("x", n%7))
		case reflect.Int, reflect.Int64, reflect.Int32:
			v.SetInt(int64(n))
		case reflect.Float64:
			v.SetFloat(float64(n) + 0.5)
		case reflect.Bool:
			v.SetBool(true)
		default:
			t.Fatalf("no filler for %s", v.Type())
		}
	}
	fill(reflect.ValueOf(&v).Elem())
	return v
}

// TestStoredFieldsEncode: work packages and activity lists are written
// with MessagePack, and every field the store keeps reads back. It fails
// when a field is added to the model without running go generate in
// openproject.
func TestStoredFieldsEncode(t *testing.T) {
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	wp := filled[openproject.WorkPackage](t)
	acts := filled[[]openproject.Activity](t)
	for _, tc := range []struct {
		k    kind.Kind
		v    any
		into func() any
	}{
		{kind.WorkPackage, wp, func() any { return new(openproject.WorkPackage) }},
		{kind.Activity, acts, func() any { return new([]openproject.Activity) }},
	} {
		raw, err := c.marshal(tc.k, tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if raw[0] != msgpMark {
			t.Errorf("%s written with mark %#x, want MessagePack's %#x", tc.k, raw[0], msgpMark)
		}
		got := tc.into()
		if err := c.unmarshal(raw, got); err != nil {
			t.Fatal(err)
		}
		if g := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(g, tc.v) {
			t.Errorf("%s read back differs:\n got %+v\nwant %+v", tc.k, g, tc.v)
		}
	}
}

// TestCBORValuesStillRead: work packages and activity lists written as
// CBOR by earlier versions, with and without a dictionary, read back as
// the same values as when written with MessagePack.
func TestCBORValuesStillRead(t *testing.T) {
	// A dictionary trained on CBOR, as earlier versions trained it.
	c, d := meetingDictCodec(t)
	withDict, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderDict(d))
	if err != nil {
		t.Fatal(err)
	}
	defer withDict.Close()
	wp := sampleWorkPackage(7)
	acts := sampleActivities(7)
	for _, tc := range []struct {
		name string
		v    any
		into func() any
	}{
		{"work package", wp, func() any { return new(openproject.WorkPackage) }},
		{"activities", acts, func() any { return new([]openproject.Activity) }},
	} {
		plain, err := c.enc.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range [][]byte{
			c.zip.EncodeAll(plain, []byte{compactMark}),
			withDict.EncodeAll(plain, []byte{dictMark}),
		} {
			got := tc.into()
			if err := c.unmarshal(raw, got); err != nil {
				t.Fatalf("%s, mark %#x: %v", tc.name, raw[0], err)
			}
			if g := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(g, tc.v) {
				t.Errorf("%s, mark %#x: read back\n %+v\nwant %+v", tc.name, raw[0], g, tc.v)
			}
		}
	}
}

// TestMsgpRefusesDamage: a MessagePack value for a kind stored as CBOR,
// one with bytes after it and one cut short are refused.
func TestMsgpRefusesDamage(t *testing.T) {
	c, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	wp := sampleWorkPackage(3)
	plain, err := wp.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	var m openproject.Meeting
	if err := c.unmarshal(c.zip.EncodeAll(plain, []byte{msgpMark}), &m); err == nil {
		t.Error("a work package's MessagePack value decoded into a meeting")
	}
	var w openproject.WorkPackage
	if err := c.unmarshal(c.zip.EncodeAll(append(bytes.Clone(plain), 0xc0), []byte{msgpMark}), &w); err == nil {
		t.Error("a value with a byte after it decoded")
	}
	if err := c.unmarshal(c.zip.EncodeAll(plain[:len(plain)-3], []byte{msgpMark}), &w); err == nil {
		t.Error("a value cut short decoded")
	}
	// Headers claiming four billion activities, or details: refused
	// before anything is allocated for them (which would crash).
	huge := []byte{0xdd, 0xff, 0xff, 0xff, 0xff}
	details := append([]byte{0x91, 0x81, 0xa7}, "details"...)
	for name, p := range map[string][]byte{"activities": huge, "details": append(details, huge...)} {
		var acts []openproject.Activity
		if err := c.unmarshal(c.zip.EncodeAll(p, []byte{msgpMark}), &acts); err == nil {
			t.Errorf("%s: a header claiming 2^32-1 elements decoded", name)
		}
	}
}

// TestUpgradeKeepsCBORDictionary: a store an earlier version wrote
// (schema version 4), its work packages in CBOR compressed with a
// dictionary trained on CBOR, opens as version 5 and reads them as
// before. New work packages are written in MessagePack, first without a
// dictionary, then with one trained on MessagePack and stored beside the
// CBOR one, which stays. Every value reads back, also after reopening.
func TestUpgradeKeepsCBORDictionary(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.codec
	var samples [][]byte
	for id := range int64(dictMinSamples) {
		raw, err := c.enc.Marshal(variedWorkPackage(id + 1000))
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, raw)
	}
	cborDict, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: dictSize, HashBytes: 6, ZstdDictID: dictIDBase, ZstdLevel: zstd.SpeedDefault})
	if err != nil {
		t.Fatal(err)
	}
	zip, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderDict(cborDict))
	if err != nil {
		t.Fatal(err)
	}
	defer zip.Close()
	plain, err := c.enc.Marshal(variedWorkPackage(1))
	if err != nil {
		t.Fatal(err)
	}
	old := zip.EncodeAll(plain, []byte{dictMark})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// What the earlier version left: its dictionary and one value.
	db := rawDB(t, dir)
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keySchemaVersion, encodeUint(4)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Put(dictKey(kind.WorkPackage), cborDict); err != nil {
			return err
		}
		return tx.Bucket(bucketOf(kind.WorkPackage)).Put(idKey(1), old)
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The CBOR dictionary reads; it does not write: the first values are
	// MessagePack without a dictionary, and they train one.
	putVaried(t, s, 2, dictMinSamples+2)
	putVaried(t, s, dictMinSamples+2, dictMinSamples+102) // trains, from its commit on
	putVaried(t, s, dictMinSamples+102, dictMinSamples+202)
	check := func() {
		t.Helper()
		for _, id := range []int64{1, 2, dictMinSamples + 1, dictMinSamples + 101, dictMinSamples + 201} {
			got, found, err := s.WorkPackage(id)
			if want := variedWorkPackage(id); err != nil || !found || got.Subject != want.Subject || !got.UpdatedAt.Equal(want.UpdatedAt) {
				t.Errorf("work package %d: found %v, %v, %q", id, found, err, got.Subject)
			}
		}
	}
	check()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	marks := map[byte]int{}
	msgpKey, _ := encDict(kind.WorkPackage)
	var kept, trained bool
	var version uint64
	db = rawDB(t, dir)
	if err := db.View(func(tx *bolt.Tx) error {
		version, _ = decodeUint(tx.Bucket(bucketMeta).Get(keySchemaVersion))
		kept = bytes.Equal(tx.Bucket(bucketMeta).Get(dictKey(kind.WorkPackage)), cborDict)
		trained = tx.Bucket(bucketMeta).Get(msgpKey) != nil
		return tx.Bucket(bucketOf(kind.WorkPackage)).ForEach(func(_, v []byte) error { marks[v[0]]++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if version != SchemaVersion {
		t.Errorf("schema version %d after the upgrade, want %d", version, SchemaVersion)
	}
	if !kept || !trained {
		t.Errorf("CBOR dictionary kept %v, MessagePack one trained %v", kept, trained)
	}
	if marks[dictMark] != 1 || marks[msgpMark] != dictMinSamples+100 || marks[msgpDictMark] != 100 {
		t.Errorf("encodings %v, want 1 CBOR with a dictionary, %d MessagePack without, 100 with", marks, dictMinSamples+100)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check()
}
