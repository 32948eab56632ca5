package search

import (
	"container/list"
	gosync "sync"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
)

// DefaultCacheBytes is Options.CacheBytes's default: about a thousand
// typical work packages with their comments, enough for an agent's
// follow-up queries and pages to find their candidates decoded.
const DefaultCacheBytes = 8 << 20

// loaded is one entity as hydration decodes it from the store, with its
// scorer record. It is shared between searches, so nothing may modify it
// once cached.
type loaded struct {
	record  scorer.Record
	wp      *openproject.WorkPackage
	acts    []openproject.Activity
	wiki    *openproject.WikiPage
	meeting *openproject.Meeting
	project *openproject.Project
	att     *openproject.Attachment
	size    int // approximate bytes held
}

// entityCache keeps decoded entities of one store between searches.
// Decoding a work package and its comments from JSON, and turning their
// markup into plain text, was half of a query's time; the same candidates
// come back for paging, retries and related queries. Entries belong to a
// store generation: the first read of a newer generation empties the
// cache, and readers of an older one neither read nor fill it, so a
// search never sees an entity older than its own transaction.
type entityCache struct {
	max int

	mu   gosync.Mutex
	gen  uint64
	size int
	byID map[string]*list.Element // of *cacheEntry
	lru  list.List                // front: most recently used
}

type cacheEntry struct {
	id string
	e  *loaded
}

func newEntityCache(maxBytes int) *entityCache {
	return &entityCache{max: maxBytes, byID: map[string]*list.Element{}}
}

// get returns id's entity as of generation gen, if cached.
func (c *entityCache) get(gen uint64, id string) (*loaded, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance(gen)
	if gen != c.gen {
		return nil, false
	}
	el, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cacheEntry).e, true
}

// put caches id's entity as read at generation gen, evicting the least
// recently used entries beyond the byte budget.
func (c *entityCache) put(gen uint64, id string, e *loaded) {
	if c == nil || e.size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance(gen)
	if gen != c.gen {
		return
	}
	if el, ok := c.byID[id]; ok {
		c.size -= el.Value.(*cacheEntry).e.size
		c.lru.Remove(el)
	}
	c.byID[id] = c.lru.PushFront(&cacheEntry{id: id, e: e})
	c.size += e.size
	for c.size > c.max {
		el := c.lru.Back()
		ce := el.Value.(*cacheEntry)
		c.lru.Remove(el)
		delete(c.byID, ce.id)
		c.size -= ce.e.size
	}
}

// advance empties the cache when gen is newer than what it holds.
func (c *entityCache) advance(gen uint64) {
	if gen <= c.gen {
		return
	}
	c.gen, c.size = gen, 0
	clear(c.byID)
	c.lru.Init()
}

// recordSize approximates the bytes r's text holds; the decoded entity
// holds about as much again.
func recordSize(r scorer.Record) int {
	n := 256
	for _, f := range r.Fields {
		for _, v := range f.Values {
			n += 2*len(v) + 16
		}
	}
	return n
}
