package mcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestHTTPSearchHoldsASlot: over Streamable HTTP a search call takes a
// search slot for the whole request, so it waits while every slot is
// taken; other calls (the sync status, tools/list) do not wait; and with
// one slot the search does not ask for a second one inside the tool,
// which would never be granted.
func TestHTTPSearchHoldsASlot(t *testing.T) {
	slots := mcp.NewSearchSlotsOf(1)
	e := newHTTPEnv(t, httpEnvOpts{searchSlots: slots})
	ctx := t.Context()
	cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	waitSynced(ctx, t, cs)

	if err := slots.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var out searchOut
		done <- httpCall(ctx, cs, "openproject_search", map[string]any{"query": "Nightingale"}, &out)
	}()
	// Calls that are not searches are answered meanwhile.
	var st statusOut
	if err := httpCall(ctx, cs, "openproject_sync_status", nil, &st); err != nil {
		t.Fatalf("sync status while the slot is taken: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list while the slot is taken: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the search ran while the only slot was taken (err %v)", err)
	default:
	}
	slots.Release()
	if err := <-done; err != nil {
		t.Fatalf("search once the slot was free: %v", err)
	}
	// The server releases the slot when its handler returns, which can
	// be just after the client has read the answer: wait for it, bounded
	// so that a slot never released fails instead of hanging.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := slots.Acquire(wctx); err != nil {
		t.Errorf("the search kept its slot: %v", err)
	}
}
