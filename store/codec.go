package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	gosync "sync"

	"github.com/fxamacker/cbor/v2"
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
// encoding, so equal entities are equal bytes) compressed with zstd;
// work packages and activity lists in MessagePack instead (msgpMark). On
// generated project text it is 2.3 times smaller than JSON and decodes
// 1.7 times faster (CBOR alone is only 13 % smaller; the text compresses).
// The model's json tags name the CBOR fields too, so the normalized model
// is the one schema. Safe for concurrent use.
type codec struct {
	enc   cbor.EncMode
	dec   cbor.DecMode
	zip   *zstd.Encoder
	unzip *zstd.Decoder

	// mu guards the dictionaries (dict.go), added at most once per kind.
	mu        gosync.RWMutex
	dictZips  map[kind.Kind]*zstd.Encoder
	dicts     [][]byte
	dictUnzip *zstd.Decoder   // knows every dictionary; nil before the first
	retired   []*zstd.Decoder // replaced by dictUnzip, released by close
	samples   map[kind.Kind]*sampler

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
	c := &codec{enc: enc, dec: dec, zip: zip, unzip: unzip, dictZips: map[kind.Kind]*zstd.Encoder{}, samples: map[kind.Kind]*sampler{}}
	c.plain.New = func() any { return new([]byte) }
	return c, nil
}

// marshal encodes v, a value of kind k, compactly: with k's dictionary
// once it has one.
func (c *codec) marshal(k kind.Kind, v any) ([]byte, error) {
	raw, isMsgp, err := msgpOf(nil, v)
	if !isMsgp {
		raw, err = c.enc.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	// A kind's dictionary learns from the values this process encodes,
	// in the kind's encoding: work packages and activity lists train one
	// on MessagePack, apart from a CBOR one an earlier version left
	// (encDict).
	c.mu.Lock()
	zip := c.dictZips[k]
	if zip == nil {
		c.sample(k, raw)
	}
	c.mu.Unlock()
	mark := byte(dictMark)
	if zip == nil {
		zip, mark = c.zip, compactMark
	}
	if isMsgp {
		mark += msgpMark - compactMark
	}
	out := make([]byte, 1, 1+len(raw)/2)
	out[0] = mark
	return zip.EncodeAll(raw, out), nil
}

// errUnknownEncoding is a value neither JSON nor compact: damage.
var errUnknownEncoding = errors.New("value in an unknown encoding")

// unmarshal decodes a value in either encoding into v. Nothing of raw is
// kept, so v stays valid after the transaction.
func (c *codec) unmarshal(raw []byte, v any) error {
	if !isJSON(raw) && len(raw) > 0 {
		unzip := c.unzip
		if raw[0] == dictMark || raw[0] == msgpDictMark {
			c.mu.RLock()
			unzip = c.dictUnzip
			c.mu.RUnlock()
			if unzip == nil {
				return errNoDict
			}
		}
		bp := c.plain.Get().(*[]byte)
		plain, err := unzip.DecodeAll(raw[1:], (*bp)[:0])
		switch {
		case err != nil:
			err = fmt.Errorf("decompress: %w", err)
		case raw[0] == msgpMark || raw[0] == msgpDictMark:
			err = unmarshalMsgp(plain, v)
		default:
			err = c.dec.Unmarshal(plain, v)
		}
		if cap(plain) <= maxPooledPlain {
			*bp = plain
			c.plain.Put(bp)
		}
		return err
	}
	if len(bytes.TrimLeft(raw, " \t\r\n")) == 0 {
		return errUnknownEncoding
	}
	switch bytes.TrimLeft(raw, " \t\r\n")[0] {
	case '{', '[', 'n':
		return json.Unmarshal(raw, v)
	}
	return errUnknownEncoding
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
	return len(raw) > 0 && (raw[0] < compactMark || raw[0] > msgpDictMark)
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
	for _, z := range c.dictZips {
		_ = z.Close()
	}
}
