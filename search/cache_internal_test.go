package search

import (
	"fmt"
	"testing"
)

func TestEntityCacheBoundsAndGenerations(t *testing.T) {
	c := newEntityCache(1000)
	for i := range 10 {
		c.put(5, fmt.Sprint(i), &loaded{size: 300})
	}
	if c.size > 1000 || len(c.byID) != 3 {
		t.Fatalf("size %d with %d entries, want at most 1000 bytes in 3", c.size, len(c.byID))
	}
	if _, ok := c.get(5, "0"); ok {
		t.Error("the least recently used entry survived eviction")
	}
	if _, ok := c.get(5, "9"); !ok {
		t.Error("the newest entry was evicted")
	}
	// A reader of an older generation neither sees nor fills the cache.
	if _, ok := c.get(4, "9"); ok {
		t.Error("an older generation read a newer entry")
	}
	c.put(4, "old", &loaded{size: 10})
	if _, ok := c.get(5, "old"); ok {
		t.Error("an older generation's entry was cached")
	}
	// A newer generation empties it.
	if _, ok := c.get(6, "9"); ok || c.size != 0 || len(c.byID) != 0 {
		t.Errorf("after a newer generation: size %d, %d entries", c.size, len(c.byID))
	}
	// An entity larger than the whole budget is not cached.
	c.put(6, "huge", &loaded{size: 5000})
	if _, ok := c.get(6, "huge"); ok {
		t.Error("an entry over the budget was cached")
	}
	var off *entityCache
	off.put(1, "x", &loaded{})
	if _, ok := off.get(1, "x"); ok {
		t.Error("a nil cache returned an entry")
	}
}
