package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"

	gosync "sync"

	"github.com/fxamacker/cbor/v2"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/tinylib/msgp/msgp"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// compactMark begins every entity value in the compact encoding. A JSON
// value (schema version 1) begins with '{', '[' or 'n' (null), never with
// this byte, so every value says how it is encoded and a store part way
// through its recoding reads as well as one that finished.
const compactMark = 0x01

// msgpMark and msgpDictMark begin a value encoded with MessagePack
// instead of CBOR, compressed as compactMark's and dictMark's are:
// work packages and activity lists, which a search decodes by the dozen
// (openproject's generated code, see msgpOf). A work package with four
// comments decodes in 1.5 us against 5.7 with CBOR. Values written
// before keep their CBOR marks and stay readable.
const (
	msgpMark     = 0x03
	msgpDictMark = 0x04
)

// The S2 marks (schema version 6) begin a value compressed with S2
// (github.com/klauspost/compress/s2), an LZ77 without entropy coding, in
// the two encodings, without or with the kind's S2 dictionary (dict.go).
// The mark is followed by the CRC-32C of the plain bytes (little endian),
// then the S2 block: a block has no checksum of its own, and a damaged
// value must be refused, not read as other text.
//
// Measured on 4,000 work packages and activity lists of a 10,000 store
// against the zstd dictionaries they replace: a work package takes 360
// bytes against 382, an activity list 304 against 310, and they
// decompress in 1.7 and 1.2 us against 3.8 and 2.8; encoding takes 10 us
// against 11 to 15. Without a dictionary (a kind's first values) S2
// takes 851 bytes against zstd's 660 but decompresses in 0.5 us against
// 6.4: zstd read a Huffman table per value. Values over s2MaxValue stay
// with zstd (compactMark, msgpMark).
const (
	s2Mark         = 0x05
	s2DictMark     = 0x06
	s2MsgpMark     = 0x07
	s2MsgpDictMark = 0x08
	// lastMark is the highest mark: every byte from compactMark to it
	// begins a compact value, and none can begin JSON.
	lastMark = s2MsgpDictMark
	// s2Header is the mark and the checksum.
	s2Header = 5
)

// s2MaxValue is the longest value compressed with S2. S2's dictionary
// encoder finds matches in a value's first 64 KiB only
// (s2.MaxDictSrcOffset), and on long text zstd's entropy coding pays:
// the rare long wiki page or activity list is compressed with zstd.
const s2MaxValue = s2.MaxDictSrcOffset

// castagnoli is CRC-32C's table, which the hardware computes.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// msgpOf encodes v with MessagePack, appending to b, when its type has
// generated code; ok is false for every other type (CBOR's).
func msgpOf(b []byte, v any) (out []byte, ok bool, err error) {
	switch x := v.(type) {
	case openproject.WorkPackage:
		out, err = x.MarshalMsg(b)
	case []openproject.Activity:
		out, err = openproject.ActivityList(x).MarshalMsg(b)
	default:
		return nil, false, nil
	}
	return out, true, err
}

// errNotMsgp is a MessagePack value read into a type without generated
// code: the kind's values are never written that way, so it is damage.
var errNotMsgp = errors.New("MessagePack value for a kind stored as CBOR")

// unmarshalMsgp decodes a MessagePack value (msgpOf) into v.
func unmarshalMsgp(plain []byte, v any) error {
	var u interface{ UnmarshalMsg([]byte) ([]byte, error) }
	switch x := v.(type) {
	case *openproject.WorkPackage:
		u = x
	case *[]openproject.Activity:
		// Every activity takes a byte at least: a damaged header
		// claiming more must not allocate room for them.
		if n, _, err := msgp.ReadArrayHeaderBytes(plain); err == nil && int64(n) > int64(len(plain)) {
			return fmt.Errorf("decode activities: %d claimed in %d bytes", n, len(plain))
		}
		u = (*openproject.ActivityList)(x)
	default:
		return fmt.Errorf("decode into %T: %w", v, errNotMsgp)
	}
	rest, err := u.UnmarshalMsg(plain)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%d bytes after the value", len(rest))
	}
	return err
}

// maxDecoded bounds what one value may decompress to: a damaged or
// hostile frame must not claim gigabytes. The largest entity (a work
// package's activity list of a long-lived ticket) is well below it.
const maxDecoded = 64 << 20

// codec encodes entity values: CBOR (RFC 8949, in the deterministic core
// encoding, so equal entities are equal bytes) compressed with S2, or
// zstd when long (s2Mark); work packages and activity lists in
// MessagePack instead (msgpMark). On
// generated project text it is 2.3 times smaller than JSON and decodes
// 1.7 times faster (CBOR alone is only 13 % smaller; the text compresses).
// The model's json tags name the CBOR fields too, so the normalized model
// is the one schema. Safe for concurrent use.
type codec struct {
	enc   cbor.EncMode
	dec   cbor.DecMode
	zip   *zstd.Encoder
	unzip *zstd.Decoder

	// mu guards the dictionaries (dict.go): the S2 ones, added at most
	// once per kind, and the zstd ones of earlier versions, for reading.
	mu        gosync.RWMutex
	s2Dicts   map[kind.Kind]*s2.Dict
	dicts     [][]byte
	dictUnzip *zstd.Decoder   // knows every zstd dictionary; nil before the first
	retired   []*zstd.Decoder // replaced by dictUnzip, released by close
	samples   map[kind.Kind]*sampler

	// scratch holds *[]byte buffers to compress into: a value is copied
	// out at its size, for a sync's batch holds its values until commit.
	scratch gosync.Pool

	// plain holds *[]byte buffers for decompressed values. CBOR decoding
	// copies what it keeps, so a value's plain bytes are garbage once
	// decoded: a search hydrating 30 candidates threw away about 75 KB
	// of them, and on 2 cores the collector's work is paid in latency.
	plain gosync.Pool
}

// maxPooledPlain bounds the buffers plain keeps: the rare long activity
// list's buffer goes to the collector rather than stay pinned.
const maxPooledPlain = 256 << 10

func newCodec() (*codec, error) {
	enc, err := cbor.EncOptions{Sort: cbor.SortCoreDeterministic, Time: cbor.TimeRFC3339Nano}.EncMode()
	if err != nil {
		return nil, fmt.Errorf("create codec: %w", err)
	}
	// Field names are matched as written, since this codec wrote them,
	// and text is not checked for valid UTF-8: every string came from
	// decoded JSON, and zstd's frame checksum refuses a damaged value
	// before CBOR sees it. Without the two checks a value decodes in
	// 2.67 us instead of 3.04 (2,000 work packages and activity lists
	// of a 100,000 work package store); a search decodes a few dozen.
	dec, err := cbor.DecOptions{MaxArrayElements: 1 << 20, MaxMapPairs: 1 << 20,
		UTF8: cbor.UTF8DecodeInvalid, FieldNameMatching: cbor.FieldNameMatchingCaseSensitive}.DecMode()
	if err != nil {
		return nil, fmt.Errorf("create codec: %w", err)
	}
	// EncodeAll and DecodeAll need no stream state: one encoder and one
	// decoder serve every transaction.
	zip, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true), zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return nil, fmt.Errorf("create codec: %w", err)
	}
	unzip, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded))
	if err != nil {
		return nil, fmt.Errorf("create codec: %w", err)
	}
	c := &codec{enc: enc, dec: dec, zip: zip, unzip: unzip, s2Dicts: map[kind.Kind]*s2.Dict{}, samples: map[kind.Kind]*sampler{}}
	c.plain.New = func() any { return new([]byte) }
	c.scratch.New = func() any { return new([]byte) }
	return c, nil
}

// marshal encodes v, a value of kind k, compactly: with S2, and k's
// dictionary once it has one; with zstd when long.
func (c *codec) marshal(k kind.Kind, v any) ([]byte, error) {
	raw, isMsgp, err := msgpOf(nil, v)
	if !isMsgp {
		raw, err = c.enc.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	if len(raw) > s2MaxValue {
		mark := byte(compactMark)
		if isMsgp {
			mark = msgpMark
		}
		out := make([]byte, 1, 1+len(raw)/2)
		out[0] = mark
		return c.zip.EncodeAll(raw, out), nil
	}
	// A kind's dictionary learns from the values this process encodes,
	// in the kind's encoding.
	c.mu.Lock()
	d := c.s2Dicts[k]
	if d == nil {
		c.sample(k, raw)
	}
	c.mu.Unlock()
	mark := byte(s2Mark)
	if isMsgp {
		mark = s2MsgpMark
	}
	bp := c.scratch.Get().(*[]byte)
	defer c.scratch.Put(bp)
	n := s2.MaxEncodedLen(len(raw))
	if cap(*bp) < n {
		*bp = make([]byte, n)
	}
	var block []byte
	if d != nil {
		mark++ // the dictionary's mark
		block = d.EncodeBetter((*bp)[:n], raw)
	} else {
		block = s2.EncodeBetter((*bp)[:n], raw)
	}
	out := make([]byte, s2Header+len(block))
	out[0] = mark
	binary.LittleEndian.PutUint32(out[1:], crc32.Checksum(raw, castagnoli))
	copy(out[s2Header:], block)
	return out, nil
}

// errUnknownEncoding is a value neither JSON nor compact: damage.
var errUnknownEncoding = errors.New("value in an unknown encoding")

// errChecksum is an S2 value whose text is not the text it was written
// with: damage.
var errChecksum = errors.New("value fails its checksum")

// unmarshal decodes a value in any encoding into v. Nothing of raw is
// kept, so v stays valid after the transaction.
func (c *codec) unmarshal(raw []byte, v any) error {
	if len(raw) == 0 {
		return errUnknownEncoding
	}
	if isJSON(raw) {
		if len(bytes.TrimLeft(raw, " \t\r\n")) == 0 {
			return errUnknownEncoding
		}
		switch bytes.TrimLeft(raw, " \t\r\n")[0] {
		case '{', '[', 'n':
			return json.Unmarshal(raw, v)
		}
		return errUnknownEncoding
	}
	bp := c.plain.Get().(*[]byte)
	var plain []byte
	var err error
	if raw[0] >= s2Mark {
		plain, err = c.unS2(raw, v, (*bp)[:0])
	} else {
		plain, err = c.unZstd(raw, (*bp)[:0])
	}
	if err == nil {
		switch raw[0] {
		case msgpMark, msgpDictMark, s2MsgpMark, s2MsgpDictMark:
			err = unmarshalMsgp(plain, v)
		default:
			err = c.dec.Unmarshal(plain, v)
		}
	}
	if cap(plain) <= maxPooledPlain && cap(plain) >= cap(*bp) {
		*bp = plain
	}
	c.plain.Put(bp)
	return err
}

// unZstd decompresses a value of a zstd mark into dst.
func (c *codec) unZstd(raw, dst []byte) ([]byte, error) {
	unzip := c.unzip
	if raw[0] == dictMark || raw[0] == msgpDictMark {
		c.mu.RLock()
		unzip = c.dictUnzip
		c.mu.RUnlock()
		if unzip == nil {
			return nil, errNoDict
		}
	}
	plain, err := unzip.DecodeAll(raw[1:], dst)
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return plain, nil
}

// unS2 decompresses a value of an S2 mark, read as v, into dst and checks
// its checksum. The dictionary is the one of v's kind (kindOf).
func (c *codec) unS2(raw []byte, v any, dst []byte) ([]byte, error) {
	if len(raw) < s2Header {
		return nil, fmt.Errorf("decompress: %w", s2.ErrCorrupt)
	}
	block := raw[s2Header:]
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	if n > s2MaxValue {
		return nil, fmt.Errorf("decompress: a value claims %d bytes, more than the %d of the longest written with S2", n, s2MaxValue)
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	var plain []byte
	if raw[0] == s2DictMark || raw[0] == s2MsgpDictMark {
		k, ok := kindOf(v)
		if !ok {
			return nil, fmt.Errorf("decode into %T: %w", v, errNoDict)
		}
		c.mu.RLock()
		d := c.s2Dicts[k]
		c.mu.RUnlock()
		if d == nil {
			return nil, errNoDict
		}
		plain, err = d.Decode(dst[:n], block)
	} else {
		plain, err = s2.Decode(dst[:n], block)
	}
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	if crc32.Checksum(plain, castagnoli) != binary.LittleEndian.Uint32(raw[1:s2Header]) {
		return nil, errChecksum
	}
	return plain, nil
}

// decodeIn is unmarshal for a value read in tx. A value compressed with
// a dictionary this process has not loaded yet (another process sharing
// a PostgreSQL store trained it) makes it load the dictionaries tx sees
// and try once more.
func (c *codec) decodeIn(tx kvTx, raw []byte, v any) error {
	err := c.unmarshal(raw, v)
	if (errors.Is(err, errNoDict) || errors.Is(err, zstd.ErrUnknownDictionary)) && c.refresh(tx) {
		err = c.unmarshal(raw, v)
	}
	return err
}

// errNoDict is a value compressed with a dictionary the store lacks:
// damage.
var errNoDict = errors.New("value compressed with a dictionary the store does not hold")

// isJSON reports whether raw is a value in the old encoding.
func isJSON(raw []byte) bool {
	return len(raw) > 0 && (raw[0] < compactMark || raw[0] > lastMark)
}

// close releases the decoders' goroutines.
func (c *codec) close() {
	c.unzip.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range append(c.retired, c.dictUnzip) {
		if d != nil {
			d.Close()
		}
	}
}
