package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

func TestScanWorkPackagesBatches(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		var want []int64
		update(t, s, func(tx *WriteTx) error {
			// Sparse ids across byte boundaries, written out of order.
			for i := int64(1000); i >= 1; i-- {
				id := i*i%100_003 + 1
				if err := tx.PutWorkPackage(sampleWorkPackage(id)); err != nil {
					return err
				}
			}
			want = tx.IDs(kind.WorkPackage)
			return nil
		})
		if len(want) < 900 {
			t.Fatalf("only %d distinct ids", len(want))
		}

		for _, batch := range []int{1, 3, 1000, 0, len(want), len(want) + 1} {
			t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
				var got []int64
				calls := 0
				err := s.ScanWorkPackages(context.Background(), batch, func(wps []openproject.WorkPackage) error {
					calls++
					size := batch
					if size <= 0 {
						size = DefaultScanBatch
					}
					if len(wps) == 0 || len(wps) > size {
						t.Fatalf("batch %d: got %d items", batch, len(wps))
					}
					for _, wp := range wps {
						if wp.Subject != "Fix the thing" {
							t.Fatalf("work package %d not decoded", wp.ID)
						}
						got = append(got, wp.ID)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("batch %d: ids differ (got %d, want %d)", batch, len(got), len(want))
				}
				size := batch
				if size <= 0 {
					size = DefaultScanBatch
				}
				if wantCalls := (len(want) + size - 1) / size; calls != wantCalls {
					t.Errorf("batch %d: %d calls, want %d", batch, calls, wantCalls)
				}
			})
		}
	})
}

func TestScanEveryKind(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		update(t, s, func(tx *WriteTx) error {
			for id := int64(1); id <= 7; id++ {
				if err := errors.Join(tx.PutProject(sampleProject(id)), tx.PutWorkPackage(sampleWorkPackage(id)),
					tx.PutActivities(id, sampleActivities(id)), tx.PutWikiPage(sampleWikiPage(id)),
					tx.PutMeeting(sampleMeeting(id))); err != nil {
					return err
				}
			}
			return nil
		})
		ctx := context.Background()
		var got [5][]int64
		err := errors.Join(
			s.ScanProjects(ctx, 3, func(v []openproject.Project) error {
				for _, x := range v {
					got[0] = append(got[0], x.ID)
				}
				return nil
			}),
			s.ScanWorkPackages(ctx, 3, func(v []openproject.WorkPackage) error {
				for _, x := range v {
					got[1] = append(got[1], x.ID)
				}
				return nil
			}),
			s.ScanActivities(ctx, 3, func(v []WorkPackageActivities) error {
				for _, x := range v {
					if !reflect.DeepEqual(x.Activities, sampleActivities(x.WorkPackageID)) {
						t.Errorf("activities of %d differ", x.WorkPackageID)
					}
					got[2] = append(got[2], x.WorkPackageID)
				}
				return nil
			}),
			s.ScanWikiPages(ctx, 3, func(v []openproject.WikiPage) error {
				for _, x := range v {
					got[3] = append(got[3], x.ID)
				}
				return nil
			}),
			s.ScanMeetings(ctx, 3, func(v []openproject.Meeting) error {
				for _, x := range v {
					if !reflect.DeepEqual(x, sampleMeeting(x.ID)) {
						t.Errorf("meeting %d differs", x.ID)
					}
					got[4] = append(got[4], x.ID)
				}
				return nil
			}),
		)
		if err != nil {
			t.Fatal(err)
		}
		for i, ids := range got {
			if !reflect.DeepEqual(ids, []int64{1, 2, 3, 4, 5, 6, 7}) {
				t.Errorf("%s: ids %v", kind.All()[i], ids)
			}
		}
	})
}

func TestScanStops(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		update(t, s, func(tx *WriteTx) error {
			for id := int64(1); id <= 10; id++ {
				if err := tx.PutProject(sampleProject(id)); err != nil {
					return err
				}
			}
			return nil
		})
		stop := errors.New("stop")

		t.Run("fn error", func(t *testing.T) {
			calls := 0
			err := s.ScanProjects(context.Background(), 3, func([]openproject.Project) error {
				calls++
				if calls == 2 {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || calls != 2 {
				t.Errorf("err = %v after %d calls; want stop after 2", err, calls)
			}
		})

		t.Run("context cancelled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			calls := 0
			err := s.ScanProjects(ctx, 3, func([]openproject.Project) error {
				calls++
				cancel()
				return nil
			})
			if !errors.Is(err, context.Canceled) || calls != 1 {
				t.Errorf("err = %v after %d calls; want Canceled after 1", err, calls)
			}
		})

		t.Run("empty kind", func(t *testing.T) {
			err := s.ScanMeetings(context.Background(), 3, func([]openproject.Meeting) error {
				t.Error("fn called for an empty kind")
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	})
}

// fn runs outside any transaction, so it may write to the store; a write
// inside a read transaction on the same goroutine could deadlock bbolt.
func TestScanFnMayWrite(t *testing.T) {
	eachEngine(t, func(t *testing.T, o opener) {
		s := o.open(t)
		update(t, s, func(tx *WriteTx) error {
			for id := int64(1); id <= 6; id++ {
				if err := tx.PutWorkPackage(sampleWorkPackage(id)); err != nil {
					return err
				}
			}
			return nil
		})
		var seen []int64
		err := s.ScanWorkPackages(context.Background(), 2, func(wps []openproject.WorkPackage) error {
			for _, wp := range wps {
				seen = append(seen, wp.ID)
			}
			return s.Update(context.Background(), func(tx *WriteTx) error {
				// Deleting the batch just seen must not make the scan skip the next.
				for _, wp := range wps {
					if err := tx.Delete(kind.WorkPackage, wp.ID); err != nil {
						return err
					}
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seen, []int64{1, 2, 3, 4, 5, 6}) {
			t.Errorf("seen %v", seen)
		}
		if n, _ := s.Count(kind.WorkPackage); n != 0 {
			t.Errorf("Count = %d, want 0", n)
		}
	})
}
