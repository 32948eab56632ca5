package store

import (
	"context"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// BenchmarkPutWorkPackages1000 measures one API page's worth of writes: one
// Update with 1000 work packages (new ids each iteration, so every put is
// an insert and the file grows as during a first crawl).
func BenchmarkPutWorkPackages1000(b *testing.B) {
	for _, o := range openers() {
		b.Run(o.name, func(b *testing.B) { benchPut1000(b, o.open(b)) })
	}
}

func benchPut1000(b *testing.B, s *Store) {
	wps := make([]openproject.WorkPackage, 1000)
	for i := range wps {
		wps[i] = sampleWorkPackage(int64(i + 1))
	}
	next := int64(1)
	b.ReportAllocs()
	for b.Loop() {
		err := s.Update(context.Background(), func(tx *WriteTx) error {
			for i := range wps {
				wps[i].ID = next
				next++
				if err := tx.PutWorkPackage(wps[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(wps))/b.Elapsed().Seconds(), "puts/s")
}

// BenchmarkCount100k measures Count on a kind with 100k entities.
func BenchmarkCount100k(b *testing.B) {
	s, _ := openTemp(b)
	wp := sampleWorkPackage(1)
	for page := range 100 {
		err := s.Update(context.Background(), func(tx *WriteTx) error {
			for i := range 1000 {
				wp.ID = int64(page*1000 + i + 1)
				if err := tx.PutWorkPackage(wp); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		n, err := s.Count(kind.WorkPackage)
		if err != nil || n != 100_000 {
			b.Fatalf("Count = %d, %v", n, err)
		}
	}
}
