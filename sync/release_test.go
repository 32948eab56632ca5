package sync

import (
	"testing"

	"github.com/opsearch/opsearch/internal/optesting/procmem"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestSyncReleasesMappedStore: a sync that wrote leaves none of the
// store pages read through its memory map resident (they would count in
// the process's memory through the index merge); one that wrote nothing
// leaves them, for the searches that read them.
func TestSyncReleasesMappedStore(t *testing.T) {
	e := newEnv(t, opgen.GenOptions{Seed: 5, WorkPackages: 800}, optest.Options{}, Options{})
	e.sync(t)
	path := e.st.Path()
	resident := func() int { return procmem.Resident(t, path) }
	ids, err := e.st.IDs(kind.WorkPackage)
	if err != nil {
		t.Fatal(err)
	}
	readAll := func() {
		t.Helper()
		for _, id := range ids {
			if _, _, err := e.st.Activities(id); err != nil {
				t.Fatal(err)
			}
			if _, found, err := e.st.WorkPackage(id); err != nil || !found {
				t.Fatalf("work package %d: %v %v", id, found, err)
			}
		}
	}
	readAll()
	before := resident()
	if before < 512 {
		t.Fatalf("%d KiB of the store resident after reading %d work packages: the test shows nothing", before, len(ids))
	}
	rep := e.sync(t) // nothing changed
	if rep.wrote() {
		t.Fatalf("a sync of an unchanged server wrote: %+v", rep.Kinds)
	}
	if kept := resident(); kept < before/2 {
		t.Errorf("a sync that wrote nothing left %d KiB of %d resident", kept, before)
	}
	if err := e.srv.UpdateWorkPackage(ids[0], func(wp *openproject.WorkPackage) { wp.Subject = "Released pages" }); err != nil {
		t.Fatal(err)
	}
	if rep := e.sync(t); !rep.wrote() {
		t.Fatal("the sync after a change wrote nothing")
	}
	if after := resident(); after > before/4 {
		t.Errorf("%d KiB of the store resident after a sync that wrote, %d before", after, before)
	}
	readAll()
}
