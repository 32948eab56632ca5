package mcp_test

import (
	"context"
	"testing"
	"testing/synctest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/search"
)

// slotIndex is an mcp.Index whose searches record that they ran.
type slotIndex struct{ searched chan struct{} }

func (x slotIndex) Searcher() (mcp.Searcher, error) { return x, nil }

func (x slotIndex) RefreshWorkPackage(context.Context, int64) error { return nil }

func (x slotIndex) Search(_ context.Context, q search.Query) (search.Response, error) {
	x.searched <- struct{}{}
	return search.Response{Query: q.Text, Results: []search.Result{}}, nil
}

func (x slotIndex) Freshness(context.Context) (search.Freshness, error) {
	return search.Freshness{}, nil
}

var _ mcp.Index = slotIndex{}

// TestSearchSlots: a search waits while every search slot is taken, and
// runs once one is free.
func TestSearchSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slots := mcp.NewSearchSlotsOf(1)
		idx := slotIndex{searched: make(chan struct{}, 1)}
		cs := connectInMemory(t, mcp.NewServer(nil, idx, mcp.Options{SearchSlots: slots}))
		if err := slots.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		done := make(chan *sdk.CallToolResult, 1)
		go func() { done <- call(t, cs, "openproject_search", map[string]any{"query": "budget"}) }()
		synctest.Wait()
		select {
		case <-idx.searched:
			t.Fatal("searched while the only slot was taken")
		default:
		}
		slots.Release()
		synctest.Wait()
		select {
		case <-idx.searched:
		default:
			t.Fatal("did not search once the slot was free")
		}
		if res := <-done; res.IsError {
			t.Errorf("search failed: %+v", res.Content)
		}
		if !slots.TryAcquire() {
			t.Error("the search kept its slot")
		}
	})
}

// TestSearchSlotsBusy: the slots say they are busy exactly while a
// search waits for one, which is when a sync gives way (sync.Options.Busy).
func TestSearchSlotsBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slots := mcp.NewSearchSlotsOf(1)
		if slots.Busy() {
			t.Fatal("busy with no search")
		}
		if err := slots.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		if slots.Busy() {
			t.Fatal("busy with one search in the only slot and none waiting")
		}
		got := make(chan struct{})
		go func() {
			if err := slots.Acquire(t.Context()); err == nil {
				close(got)
			}
		}()
		synctest.Wait()
		if !slots.Busy() {
			t.Fatal("not busy while a search waits")
		}
		slots.Release()
		<-got
		if slots.Busy() {
			t.Error("busy after the waiting search got its slot")
		}
		slots.Release()
		// A wait given up is no longer counted.
		if err := slots.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		failed := make(chan error)
		go func() { failed <- slots.Acquire(ctx) }()
		synctest.Wait()
		cancel()
		if err := <-failed; err == nil {
			t.Fatal("an abandoned wait got a slot")
		}
		if slots.Busy() {
			t.Error("busy after the only waiting search gave up")
		}
	})
}
