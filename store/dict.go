package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// Compression dictionaries. One entity value is a kilobyte or two, too
// little for a compressor to learn the field names and the phrases every
// work package repeats; a dictionary trained on a kind's first values
// holds them once.
//
// A kind's dictionary is trained once, from the first dictMinSamples
// values encoded without one, by the write transaction that encodes the
// next, and stored in the meta bucket by that transaction; it is used
// from the commit on (a rolled-back transaction trains again later).
//
// Values are written with S2 dictionaries (s2Key, s2DictMark), trained
// on the kind's values in their encoding (MessagePack or CBOR). An S2
// block does not name its dictionary; the kind a value is read as does
// (kindOf): a kind has one and keeps it. Earlier versions wrote zstd
// dictionaries (dictKey, zstdMsgpKey; dictMark, msgpDictMark), whose
// frames name them: they are loaded for reading the values they
// compressed and never trained again.
const (
	dictMark       = 0x02
	dictMinSamples = 1000
	// s2DictSize is the largest S2 dictionary (s2.MaxDictSize); the
	// 32 KiB of the zstd ones compressed as well, 362 bytes against 360
	// per work package, but no faster.
	s2DictSize = s2.MaxDictSize
	// dictIDBase numbers the zstd dictionaries inside zstd's range for
	// private use (32768 <= id < 2^31): kind i of dictKinds has id
	// dictIDBase+i.
	dictIDBase = 0x6f700000
)

// dictKinds are the kinds that get a dictionary, in the order that gives
// their zstd ids: append only, the ids are the file format.
var dictKinds = []kind.Kind{kind.WorkPackage, kind.Activity, kind.WikiPage, kind.Meeting, kind.Project}

// dictKey is the meta key of k's zstd dictionary trained on CBOR
// (schema version 3).
func dictKey(k kind.Kind) []byte { return []byte("zstd_dict_" + buckets[k]) }

// zstdMsgpKey is the meta key of k's zstd dictionary trained on
// MessagePack (schema version 5; work packages and activity lists).
func zstdMsgpKey(k kind.Kind) []byte { return []byte("zstd_dict_msgp_" + buckets[k]) }

// s2Key is the meta key of k's S2 dictionary (schema version 6).
func s2Key(k kind.Kind) []byte { return []byte("s2_dict_" + buckets[k]) }

// kindOf returns the dictionary kind whose values decode into v, a
// pointer to its stored type: the S2 dictionary an s2DictMark value was
// compressed with.
func kindOf(v any) (kind.Kind, bool) {
	switch v.(type) {
	case *openproject.WorkPackage:
		return kind.WorkPackage, true
	case *[]openproject.Activity:
		return kind.Activity, true
	case *openproject.WikiPage:
		return kind.WikiPage, true
	case *openproject.Meeting:
		return kind.Meeting, true
	case *openproject.Project:
		return kind.Project, true
	}
	return "", false
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
	if !slices.Contains(dictKinds, k) || c.s2Dicts[k] != nil {
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
	if s == nil || len(s.values) < dictMinSamples || s.training == tx || c.s2Dicts[k] != nil {
		c.mu.Unlock()
		return nil
	}
	s.training = tx
	samples := s.values
	c.mu.Unlock()

	// Another process sharing the store (PostgreSQL) may have stored
	// one since this one opened it: use that, never a second one, which
	// would replace it under values already written with it.
	key := s2Key(k)
	if d := tx.bucket(bucketMeta).get(key); d != nil {
		d = slices.Clone(d)
		tx.onCommit(func() { _ = c.addS2Dict(k, d) })
		return nil
	}

	d, err := dict.BuildS2Dict(samples, dict.Options{MaxDictSize: s2DictSize, HashBytes: 6})
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
		if err := c.addS2Dict(k, d); err != nil {
			return // stored: the next open loads it, or refuses it by name
		}
	})
	return nil
}

// addS2Dict starts compressing k's values with the S2 dictionary d, and
// decompressing those that use it. A kind keeps the first it gets.
func (c *codec) addS2Dict(k kind.Kind, d []byte) error {
	sd := s2.NewDict(d)
	if sd == nil {
		return fmt.Errorf("load the %s dictionary: not an S2 dictionary", k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s2Dicts[k] == nil {
		c.s2Dicts[k] = sd
		delete(c.samples, k)
	}
	return nil
}

// addDict starts decoding the values compressed with the zstd
// dictionary d, which an earlier version trained. The decoder is
// replaced, not changed: readers may be using the current one, which
// close releases. A dictionary already known is not added twice.
func (c *codec) addDict(d []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.ContainsFunc(c.dicts, func(o []byte) bool { return bytes.Equal(o, d) }) {
		return nil // loaded meanwhile, by a read that met a value using it
	}
	dicts := append(slices.Clip(c.dicts), d)
	unzip, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded), zstd.WithDecoderDicts(dicts...))
	if err != nil {
		return fmt.Errorf("load a zstd dictionary: %w", err)
	}
	if c.dictUnzip != nil {
		c.retired = append(c.retired, c.dictUnzip)
	}
	c.dicts, c.dictUnzip = dicts, unzip
	return nil
}

// storedDicts calls zstd with every zstd dictionary meta holds and s2
// with every S2 one.
func storedDicts(meta kvBucket, zstd func(d []byte), s2 func(k kind.Kind, d []byte)) {
	for _, k := range dictKinds {
		for _, key := range [][]byte{dictKey(k), zstdMsgpKey(k)} {
			if d := meta.get(key); d != nil {
				zstd(d)
			}
		}
		if d := meta.get(s2Key(k)); d != nil {
			s2(k, d)
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
	storedDicts(meta, func(d []byte) {
		c.mu.RLock()
		known := slices.ContainsFunc(c.dicts, func(o []byte) bool { return bytes.Equal(o, d) })
		c.mu.RUnlock()
		if !known && c.addDict(slices.Clone(d)) == nil {
			added = true
		}
	}, func(k kind.Kind, d []byte) {
		c.mu.RLock()
		known := c.s2Dicts[k] != nil
		c.mu.RUnlock()
		if !known && c.addS2Dict(k, slices.Clone(d)) == nil {
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
		storedDicts(meta, func(d []byte) {
			if err == nil {
				err = c.addDict(slices.Clone(d))
			}
		}, func(k kind.Kind, d []byte) {
			if err == nil {
				err = c.addS2Dict(k, slices.Clone(d))
			}
		})
		return err
	})
}
