package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// ErrDamaged is matched (errors.Is) by the *DamagedError Open and the
// read and write methods return for a store file whose structure is
// broken (zeroed, truncated or overwritten pages).
var ErrDamaged = errors.New("store file is damaged")

// DamagedError reports a damaged store file: what is wrong and where.
type DamagedError struct {
	Path   string
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("store %s is damaged: %s", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// The bbolt file format (version 2), as far as verify reads it. bbolt
// writes its structures in the machine's byte order; every platform Go
// and bbolt support in practice is little-endian.
const (
	boltMagic         = 0xED0CDAED
	boltVersion       = 2
	pageHeaderSize    = 16
	elementSize       = 16 // branch and leaf elements alike
	bucketHeaderSize  = 16
	branchPageFlag    = 0x01
	leafPageFlag      = 0x02
	freelistPageFlag  = 0x10
	bucketLeafFlag    = 0x01
	pgidNoFreelist    = ^uint64(0)
	maxVerifyDepth    = 64
	minBoltPageSize   = 512
	maxBoltPageSize   = 1 << 16
	defaultOSPageSize = 4096
)

var le = binary.LittleEndian

// boltMeta is the part of a meta page verify uses.
type boltMeta struct {
	pageSize uint32
	root     uint64 // root bucket's page
	freelist uint64
	pgid     uint64 // high water mark: pages in use
	txid     uint64
}

// verifyFile walks the B+tree of the bbolt file at path the way bbolt
// would, reading with ReadAt instead of a memory map, and reports the
// first structural damage as a *DamagedError. It exists because bbolt
// meets a damaged page with a panic in a goroutine of its own while
// opening the file (or a fault on a truncated mapping), which no caller
// can recover: the whole process dies, on a team server every user's
// session with it. Run it while holding the file lock, so no writer
// changes the file underneath.
func verifyFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("verify store: %w", err)
	}
	v := &verifier{f: f, size: fi.Size(), path: path, seen: map[uint64]bool{}}
	return v.run()
}

type verifier struct {
	f    io.ReaderAt
	size int64
	path string
	m    boltMeta
	seen map[uint64]bool
}

func (v *verifier) damaged(format string, args ...any) error {
	return &DamagedError{Path: v.path, Reason: fmt.Sprintf(format, args...)}
}

func (v *verifier) run() error {
	m, err := v.meta()
	if err != nil {
		return err
	}
	v.m = m
	if need := int64(m.pgid) * int64(m.pageSize); v.size < need {
		return v.damaged("the file is %d bytes but its pages need %d (truncated)", v.size, need)
	}
	if m.freelist != pgidNoFreelist {
		p, err := v.page(m.freelist)
		if err != nil {
			return err
		}
		if le.Uint16(p[8:]) != freelistPageFlag {
			return v.damaged("page %d should be the freelist", m.freelist)
		}
	}
	return v.tree(m.root, 0)
}

// meta returns the newer of the two valid meta pages, as bbolt does.
func (v *verifier) meta() (boltMeta, error) {
	var best boltMeta
	found := false
	var firstErr error
	for _, off := range []int64{0, -1} {
		var buf [pageHeaderSize + 64]byte
		if off < 0 {
			// The second meta page sits one page in; its size comes from
			// the first meta page, or bbolt's guess when that is gone.
			off = defaultOSPageSize
			if found {
				off = int64(best.pageSize)
			}
		}
		if _, err := v.f.ReadAt(buf[:], off); err != nil {
			if firstErr == nil {
				firstErr = v.damaged("cannot read the meta page at offset %d: %v", off, err)
			}
			continue
		}
		mb := buf[pageHeaderSize:]
		h := fnv.New64a()
		_, _ = h.Write(mb[:56])
		switch {
		case le.Uint32(mb[0:]) != boltMagic:
			firstErr = v.damaged("the meta page at offset %d has no bbolt marker", off)
			continue
		case le.Uint32(mb[4:]) != boltVersion:
			firstErr = v.damaged("the meta page at offset %d has format version %d", off, le.Uint32(mb[4:]))
			continue
		case le.Uint64(mb[56:]) != h.Sum64():
			firstErr = v.damaged("the meta page at offset %d fails its checksum", off)
			continue
		}
		m := boltMeta{pageSize: le.Uint32(mb[8:]), root: le.Uint64(mb[16:]), freelist: le.Uint64(mb[32:]), pgid: le.Uint64(mb[40:]), txid: le.Uint64(mb[48:])}
		if m.pageSize < minBoltPageSize || m.pageSize > maxBoltPageSize || m.pageSize&(m.pageSize-1) != 0 {
			firstErr = v.damaged("the meta page at offset %d has page size %d", off, m.pageSize)
			continue
		}
		if !found || m.txid > best.txid {
			best, found = m, true
		}
	}
	if !found {
		if firstErr == nil {
			firstErr = v.damaged("no valid meta page")
		}
		return boltMeta{}, firstErr
	}
	return best, nil
}

// page reads page id with its overflow pages, checking that it lies
// within the file and says it is that page.
func (v *verifier) page(id uint64) ([]byte, error) {
	if id < 2 || id >= v.m.pgid {
		return nil, v.damaged("a reference to page %d, outside the %d pages in use", id, v.m.pgid)
	}
	ps := int64(v.m.pageSize)
	var hdr [pageHeaderSize]byte
	if _, err := v.f.ReadAt(hdr[:], int64(id)*ps); err != nil {
		return nil, v.damaged("cannot read page %d: %v", id, err)
	}
	if got := le.Uint64(hdr[0:]); got != id {
		return nil, v.damaged("page %d identifies itself as page %d (overwritten or zeroed)", id, got)
	}
	overflow := uint64(le.Uint32(hdr[12:]))
	if id+overflow >= v.m.pgid {
		return nil, v.damaged("page %d overflows past the pages in use", id)
	}
	buf := make([]byte, (int64(overflow)+1)*ps)
	if _, err := v.f.ReadAt(buf, int64(id)*ps); err != nil {
		return nil, v.damaged("cannot read page %d: %v", id, err)
	}
	return buf, nil
}

// tree checks the pages of the bucket whose root is page id.
func (v *verifier) tree(id uint64, depth int) error {
	if depth > maxVerifyDepth {
		return v.damaged("the tree is deeper than %d levels at page %d (a cycle)", maxVerifyDepth, id)
	}
	if v.seen[id] {
		return v.damaged("page %d is referenced twice", id)
	}
	v.seen[id] = true
	p, err := v.page(id)
	if err != nil {
		return err
	}
	return v.elements(p, id, depth)
}

// elements checks one branch or leaf page (p, a whole page or an inline
// bucket's) and descends into what it references.
func (v *verifier) elements(p []byte, id uint64, depth int) error {
	if len(p) < pageHeaderSize {
		return v.damaged("page %d is shorter than its header", id)
	}
	flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	if pageHeaderSize+count*elementSize > len(p) {
		return v.damaged("page %d claims %d elements, more than fit", id, count)
	}
	for i := range count {
		e := p[pageHeaderSize+i*elementSize:]
		base := pageHeaderSize + i*elementSize
		switch flags {
		case branchPageFlag:
			pos, ksize, child := int(le.Uint32(e[0:])), int(le.Uint32(e[4:])), le.Uint64(e[8:])
			if base+pos+ksize > len(p) || pos < 0 {
				return v.damaged("a key of page %d lies outside it", id)
			}
			if err := v.tree(child, depth+1); err != nil {
				return err
			}
		case leafPageFlag:
			eflags, pos, ksize, vsize := le.Uint32(e[0:]), int(le.Uint32(e[4:])), int(le.Uint32(e[8:])), int(le.Uint32(e[12:]))
			end := base + pos + ksize + vsize
			if pos < 0 || ksize < 0 || vsize < 0 || end > len(p) {
				return v.damaged("an entry of page %d lies outside it", id)
			}
			if eflags&bucketLeafFlag == 0 {
				continue
			}
			val := p[base+pos+ksize : end]
			if len(val) < bucketHeaderSize {
				return v.damaged("a bucket header in page %d is cut short", id)
			}
			if root := le.Uint64(val[0:]); root != 0 {
				if err := v.tree(root, depth+1); err != nil {
					return err
				}
			} else if err := v.elements(val[bucketHeaderSize:], id, depth+1); err != nil {
				// An inline bucket: its page is the value itself.
				return err
			}
		default:
			return v.damaged("page %d has type %#x, neither branch nor leaf", id, flags)
		}
	}
	return nil
}
