package openproject_test

import (
	"context"
	"errors"
	gosync "sync"
	"testing"
	"testing/synctest"

	"github.com/opsearch/opsearch/openproject"
)

// pager serves a collection of total items in pages of size from memory
// and records which pages were asked for.
type pager struct {
	total, size int
	mu          gosync.Mutex
	asked       []int
	// block, if set, holds every fetch of a page above 1 until its
	// context ends.
	block bool
}

func (p *pager) fetch(ctx context.Context, o openproject.ListOptions) (openproject.Page[int], error) {
	p.mu.Lock()
	p.asked = append(p.asked, o.Offset)
	p.mu.Unlock()
	if p.block && o.Offset > 1 {
		<-ctx.Done()
		return openproject.Page[int]{}, ctx.Err()
	}
	pg := openproject.Page[int]{Total: p.total, PageSize: p.size, Offset: o.Offset}
	for i := (o.Offset-1)*p.size + 1; i <= min(o.Offset*p.size, p.total); i++ {
		pg.Items = append(pg.Items, i)
	}
	pg.Count = len(pg.Items)
	return pg, nil
}

func (p *pager) askedFor() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.asked...)
}

// TestEachPagePrefetches: the next page is requested while fn works on
// the current one, every item comes once and in order, no page past the
// last is asked for, and a failing fn cancels the page fetched ahead and
// is returned once that fetch has ended.
func TestEachPagePrefetches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &pager{total: 25, size: 10}
		var got []int
		err := openproject.EachPage(t.Context(), openproject.ListOptions{}, p.fetch, func(pg openproject.Page[int]) error {
			synctest.Wait() // the fetch ahead, if any, has run
			if want := min(pg.Offset+1, 3); len(p.askedFor()) != want {
				t.Errorf("while fn had page %d, pages %v were asked for; want the first %d", pg.Offset, p.askedFor(), want)
			}
			got = append(got, pg.Items...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 25 || got[0] != 1 || got[24] != 25 {
			t.Errorf("items = %v", got)
		}
		if a := p.askedFor(); len(a) != 3 {
			t.Errorf("pages asked for: %v, want [1 2 3]", a)
		}

		// fn fails on page 1 while page 2 is being fetched (and would
		// never arrive): the error comes back, the fetch is cancelled.
		b := &pager{total: 25, size: 10, block: true}
		boom := errors.New("boom")
		err = openproject.EachPage(t.Context(), openproject.ListOptions{}, b.fetch, func(openproject.Page[int]) error {
			synctest.Wait()
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("EachPage = %v, want fn's error", err)
		}
		if a := b.askedFor(); len(a) != 2 {
			t.Errorf("pages asked for: %v, want [1 2]", a)
		}
	})
}
