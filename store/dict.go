package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// Compression dictionaries. One entity value is a kilobyte or two of
// CBOR, too little for zstd to learn the field names and the phrases
// every work package repeats; a dictionary trained on a kind's first
// values holds them once. Measured on 100,000 generated work packages and
// their 400,000 comments: work packages 63.9 → 40.3 MB, activity lists
// 54.4 → 34.7 MB (dictionaries of 32 KiB from the first 1,000 values).
//
// A kind's dictionary is trained once, from the first dictMinSamples
// values encoded without one, by the write transaction that encodes the
// next, and stored in the meta bucket by that transaction; its encoder is
// used from the commit on (a rolled-back transaction trains again later).
// A value compressed with it begins with dictMark; the zstd frame names
// the dictionary, so the decoder picks it by itself. Values written
// before keep compactMark and stay readable.
const (
	dictMark       = 0x02
	dictMinSamples = 1000
	dictSize       = 32 << 10
	// dictIDBase numbers the dictionaries inside zstd's range for private
	// use (32768 ≤ id < 2^31): kind i of dictKinds has id dictIDBase+i.
	dictIDBase = 0x6f700000
)

// dictKinds are the kinds that get a dictionary, in the order that gives
// their ids: append only, the ids are the file format.
var dictKinds = []kind.Kind{kind.WorkPackage, kind.Activity, kind.WikiPage, kind.Meeting, kind.Project}

// dictKey is the meta key of k's dictionary, trained on CBOR.
func dictKey(k kind.Kind) []byte { return []byte("zstd_dict_" + buckets[k]) }

// dictMsgpIDBase numbers the dictionaries trained on MessagePack: kind i
// of dictKinds has id dictMsgpIDBase+i.
const dictMsgpIDBase = dictIDBase + 0x10

// encDict returns the meta key and id of the dictionary k's values are
// written with. The kinds written in MessagePack (msgpOf) have one
// trained on MessagePack, apart from the CBOR one an earlier version
// may have trained, which stays for reading the values it compressed:
// MessagePack values compressed with a CBOR dictionary took 431 bytes
// on average, against 347 with their own (2,000 values of a 100,000
// work package store).
func encDict(k kind.Kind) (key []byte, id uint32) {
	i := uint32(slices.Index(dictKinds, k))
	if _, isMsgp, _ := msgpOf(nil, zeroOf(k)); isMsgp {
		return []byte("zstd_dict_msgp_" + buckets[k]), dictMsgpIDBase + i
	}
	return dictKey(k), dictIDBase + i
}

// zeroOf returns a zero value of the type k's entities are stored as,
// for msgpOf to tell the encoding by; nil for the other kinds.
func zeroOf(k kind.Kind) any {
	switch k {
	case kind.WorkPackage:
		return openproject.WorkPackage{}
	case kind.Activity:
		return []openproject.Activity(nil)
	}
	return nil
}

// sampler collects a kind's first values for its dictionary.
type sampler struct {
	values [][]byte
	// training is the transaction that trained a dictionary from them and
	// has not committed yet; another transaction may train again (the
	// first rolled back).
	training kvTx
}

// sample keeps raw (a value of k encoded without a dictionary) until k
// has enough for one. Called with c.mu held.
func (c *codec) sample(k kind.Kind, raw []byte) {
	if !slices.Contains(dictKinds, k) || c.dictZips[k] != nil {
		return
	}
	s := c.samples[k]
	if s == nil {
		s = &sampler{}
		c.samples[k] = s
	}
	if len(s.values) < dictMinSamples {
		s.values = append(s.values, raw)
	}
}

// maybeTrain trains k's dictionary inside tx once k has enough samples
// and none is being trained by tx, stores it, and starts using it when
// tx commits.
func (c *codec) maybeTrain(tx kvTx, k kind.Kind) error {
	c.mu.Lock()
	s := c.samples[k]
	if s == nil || len(s.values) < dictMinSamples || s.training == tx || c.dictZips[k] != nil {
		c.mu.Unlock()
		return nil
	}
	s.training = tx
	samples := s.values
	c.mu.Unlock()

	// Another process sharing the store (PostgreSQL) may have stored
	// one since this one opened it: use that, never a second one, which
	// would replace it under values already written with it.
	key, id := encDict(k)
	if d := tx.bucket(bucketMeta).get(key); d != nil {
		d = slices.Clone(d)
		tx.onCommit(func() { _ = c.addDict(k, d, true) })
		return nil
	}

	d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: dictSize, HashBytes: 6, ZstdDictID: id, ZstdLevel: zstd.SpeedDefault})
	if err != nil {
		// Too little to learn from (tiny or identical values): go on
		// without one; the values are as readable.
		c.mu.Lock()
		s.values = nil
		c.mu.Unlock()
		return nil
	}
	if err := tx.bucket(bucketMeta).put(key, d); err != nil {
		return fmt.Errorf("store the %s dictionary: %w", k, err)
	}
	tx.onCommit(func() {
		if err := c.addDict(k, d, true); err != nil {
			return // stored and valid: the next open uses it
		}
	})
	return nil
}

// addDict starts decoding values that name d and, when encode is set,
// encoding k's values with it. The decoder is replaced, not changed:
// readers may be using the current one, which close releases. A
// dictionary already known is not added twice.
func (c *codec) addDict(k kind.Kind, d []byte, encode bool) error {
	// The fastest level: with a dictionary it compresses as well as the
	// default (the values of a 100,000 work package store: work packages
	// 38.8 MB against 40.2, activities 34.8 against 34.7) in a little
	// over half the time, for the default level's larger match tables are
	// restored from the dictionary's before every value, and a first
	// crawl spent 12 of its 275 CPU seconds on that copy.
	//
	// Literals are stored as they are, not Huffman-coded: a value of a
	// few hundred bytes carried a Huffman table of its own, and reading
	// that table was 45 % of decompressing the value (huff0.ReadTable),
	// decoding the literals 23 % more. On 2,000 values of a 100,000 work
	// package store a value decompresses in 2.97 us instead of 3.70 and
	// takes 373 bytes instead of 365. Values written before stay
	// readable: each frame says how its literals are stored.
	// A dictionary kept only for reading old values needs no encoder.
	var zip *zstd.Encoder
	if encode {
		var err error
		zip, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderDict(d), zstd.WithNoEntropyCompression(true))
		if err != nil {
			return fmt.Errorf("load the %s dictionary: %w", k, err)
		}
	}
	closeZip := func() {
		if zip != nil {
			zip.Close()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if (encode && c.dictZips[k] != nil) || slices.ContainsFunc(c.dicts, func(o []byte) bool { return bytes.Equal(o, d) }) {
		closeZip() // loaded meanwhile, by a read that met a value using it
		return nil
	}
	dicts := append(slices.Clip(c.dicts), d)
	unzip, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded), zstd.WithDecoderDicts(dicts...))
	if err != nil {
		closeZip()
		return fmt.Errorf("load the %s dictionary: %w", k, err)
	}
	if c.dictUnzip != nil {
		c.retired = append(c.retired, c.dictUnzip)
	}
	c.dicts, c.dictUnzip = dicts, unzip
	if !encode {
		return nil
	}
	c.dictZips[k] = zip
	delete(c.samples, k)
	return nil
}

// storedDicts calls add with every dictionary meta holds, and whether
// its kind's values are written with it.
func storedDicts(meta kvBucket, add func(k kind.Kind, d []byte, encode bool)) {
	for _, k := range dictKinds {
		key, _ := encDict(k)
		if old := dictKey(k); !bytes.Equal(old, key) {
			if d := meta.get(old); d != nil {
				add(k, d, false) // for the values written in CBOR before
			}
		}
		if d := meta.get(key); d != nil {
			add(k, d, true)
		}
	}
}

// refresh loads the dictionaries tx sees that this codec lacks and
// reports whether it added one.
func (c *codec) refresh(tx kvTx) bool {
	meta := tx.bucket(bucketMeta)
	if meta == nil {
		return false
	}
	added := false
	storedDicts(meta, func(k kind.Kind, d []byte, encode bool) {
		c.mu.RLock()
		known := slices.ContainsFunc(c.dicts, func(o []byte) bool { return bytes.Equal(o, d) })
		c.mu.RUnlock()
		if !known && c.addDict(k, slices.Clone(d), encode) == nil {
			added = true
		}
	})
	return added
}

// loadDicts reads the stored dictionaries.
func (c *codec) loadDicts(ctx context.Context, eng engine) error {
	return eng.view(ctx, func(tx kvTx) error {
		meta := tx.bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		var err error
		storedDicts(meta, func(k kind.Kind, d []byte, encode bool) {
			if err == nil {
				err = c.addDict(k, slices.Clone(d), encode)
			}
		})
		return err
	})
}
