package openproject

import (
	"context"
	"testing"
)

// TestEachPageLendsTwoBuffers: every page's fetch carries a page buffer,
// the fetch ahead another one than the page being worked on, and the
// same two serve every page.
func TestEachPageLendsTwoBuffers(t *testing.T) {
	const total, size = 55, 10
	var seen []*pageBuffer
	fetch := func(ctx context.Context, o ListOptions) (Page[int], error) {
		pb, _ := ctx.Value(pageBufferKey{}).(*pageBuffer)
		if pb == nil {
			t.Errorf("page %d fetched without a page buffer", o.Offset)
		}
		p := Page[int]{Total: total, PageSize: size, Offset: o.Offset}
		for i := (o.Offset-1)*size + 1; i <= min(o.Offset*size, total); i++ {
			p.Items = append(p.Items, i)
		}
		p.Count = len(p.Items)
		// Pages are fetched one ahead, so in order: record by offset.
		for len(seen) < o.Offset {
			seen = append(seen, nil)
		}
		seen[o.Offset-1] = pb
		return p, nil
	}
	var items int
	if err := EachPage(t.Context(), ListOptions{}, fetch, func(p Page[int]) error {
		items += len(p.Items)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if items != total || len(seen) != 6 {
		t.Fatalf("got %d items in %d pages, want %d in 6", items, len(seen), total)
	}
	distinct := map[*pageBuffer]bool{}
	for i, pb := range seen {
		distinct[pb] = true
		if i > 0 && pb == seen[i-1] {
			t.Errorf("pages %d and %d, fetched at once, shared a buffer", i, i+1)
		}
	}
	if len(distinct) != 2 {
		t.Errorf("%d distinct page buffers over %d pages, want 2", len(distinct), len(seen))
	}
}

// TestBodyForPageBuffer: a request under a page buffer reads into it; a
// second request while the first still reads gets a pooled buffer, and
// the page buffer is free again once the first gives it back.
func TestBodyForPageBuffer(t *testing.T) {
	c := &Client{}
	var pb pageBuffer
	pb.buf.WriteString("stale answer of the last page")
	ctx := withPageBuffer(t.Context(), &pb)

	first, release := c.bodyFor(ctx)
	if first != &pb.buf {
		t.Fatal("a request under a free page buffer did not read into it")
	}
	if first.Len() != 0 {
		t.Errorf("the page buffer was lent holding %q, want it empty", first.String())
	}
	second, releaseSecond := c.bodyFor(ctx)
	if second == &pb.buf {
		t.Fatal("a second request shared the page buffer in use")
	}
	releaseSecond()
	release()
	if again, r := c.bodyFor(ctx); again != &pb.buf {
		t.Error("the page buffer was not lent again once given back")
	} else {
		r()
	}
	if plain, r := c.bodyFor(t.Context()); plain == &pb.buf {
		t.Error("a request without a page buffer read into one")
	} else {
		r()
	}
}
