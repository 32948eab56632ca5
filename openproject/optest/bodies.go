package optest

import "sync"

// bodyBuffers lends the buffers answers are rendered and compressed into.
// A page of 1,000 work packages is about 7 MB of JSON; grown by doubling
// from a kilobyte, each new buffer is memory the runtime had given back to
// the system, touched a page fault at a time. On a 2 vCPU virtual machine
// five listing pages cost the fake 7,198 page faults, a burst of CPU
// beside the sync it serves on the same cores.
//
// Buffers wait on two free lists, small and big, so a listing page is not
// handed a kilobyte buffer to grow while a large one waits. Channels
// rather than sync.Pools: a pool is emptied by two garbage collections,
// and the fake collects several times between two listing pages. Answers
// of one endpoint are alike in size, so the last size rendered for a
// route is the hint for the next one.
type bodyBuffers struct {
	small, big chan *[]byte
	// last is the size of the last answer rendered per route pattern
	// (a bounded set: the mux's patterns).
	last sync.Map // string → int
}

const (
	// smallKept and bigKept are how many buffers wait for reuse. Each
	// answer holds two (its JSON and its gzip encoding) until it is
	// written, after the injected latency, so at 16 requests in flight
	// about 32 small buffers are lent at once; listing pages come one or
	// two at a time.
	smallKept = 32
	bigKept   = 4
	// bigBody is the size from which a buffer counts as big.
	bigBody = 256 << 10
	// maxKeptBody bounds a kept buffer, so one unusually large answer
	// does not hold its memory for the server's lifetime.
	maxKeptBody = 32 << 20
)

func newBodyBuffers() *bodyBuffers {
	return &bodyBuffers{small: make(chan *[]byte, smallKept), big: make(chan *[]byte, bigKept)}
}

// get returns an empty buffer for an answer of about hint bytes, reused
// when one of its class is free.
func (b *bodyBuffers) get(hint int) *[]byte {
	list := b.small
	if hint >= bigBody {
		list = b.big
	}
	// The first free buffer large enough; those too small go back.
	var short []*[]byte
	defer func() {
		for _, p := range short {
			b.put(p)
		}
	}()
	for range cap(list) {
		select {
		case p := <-list:
			if cap(*p) >= hint {
				*p = (*p)[:0]
				return p
			}
			short = append(short, p)
			continue
		default:
		}
		break
	}
	buf := make([]byte, 0, max(1024, hint+hint/8))
	return &buf
}

// put gives p back once nothing refers to its bytes any more.
func (b *bodyBuffers) put(p *[]byte) {
	if p == nil || cap(*p) > maxKeptBody {
		return
	}
	list := b.small
	if cap(*p) >= bigBody {
		list = b.big
	}
	select {
	case list <- p:
	default:
	}
}

// hint is the size of route's last answer (0 when none yet).
func (b *bodyBuffers) hint(route string) int {
	n, _ := b.last.Load(route)
	size, _ := n.(int)
	return size
}

// rendered records the size of an answer of route.
func (b *bodyBuffers) rendered(route string, size int) {
	if old := b.hint(route); old != size {
		b.last.Store(route, size)
	}
}
