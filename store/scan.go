package store

import (
	"bytes"
	"context"
	"fmt"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// DefaultScanBatch is the batch size the Scan* methods use when given a
// batch of zero or less.
const DefaultScanBatch = 500

// WorkPackageActivities is one stored activity list, as ScanActivities
// yields it.
type WorkPackageActivities struct {
	WorkPackageID int64
	Activities    []openproject.Activity
}

// ScanProjects calls fn with every stored project, in id order, batch at a
// time. See scan for the transaction discipline.
func (s *Store) ScanProjects(ctx context.Context, batch int, fn func([]openproject.Project) error) error {
	return scan(ctx, s, kind.Project, batch, decodeEntity[openproject.Project](s.codec), fn)
}

// ScanWorkPackages calls fn with every stored work package, in id order,
// batch at a time.
func (s *Store) ScanWorkPackages(ctx context.Context, batch int, fn func([]openproject.WorkPackage) error) error {
	return scan(ctx, s, kind.WorkPackage, batch, decodeEntity[openproject.WorkPackage](s.codec), fn)
}

// ScanActivities calls fn with every stored activity list, in work package
// id order, batch lists at a time.
func (s *Store) ScanActivities(ctx context.Context, batch int, fn func([]WorkPackageActivities) error) error {
	decode := func(tx kvTx, id int64, raw []byte) (WorkPackageActivities, error) {
		acts, err := decodeEntity[[]openproject.Activity](s.codec)(tx, id, raw)
		return WorkPackageActivities{WorkPackageID: id, Activities: acts}, err
	}
	return scan(ctx, s, kind.Activity, batch, decode, fn)
}

// ScanWikiPages calls fn with every stored wiki page, in id order, batch at
// a time.
func (s *Store) ScanWikiPages(ctx context.Context, batch int, fn func([]openproject.WikiPage) error) error {
	return scan(ctx, s, kind.WikiPage, batch, decodeEntity[openproject.WikiPage](s.codec), fn)
}

// ScanMeetings calls fn with every stored meeting, in id order, batch at a
// time.
func (s *Store) ScanMeetings(ctx context.Context, batch int, fn func([]openproject.Meeting) error) error {
	return scan(ctx, s, kind.Meeting, batch, decodeEntity[openproject.Meeting](s.codec), fn)
}

// ScanAttachments calls fn with every stored attachment (text included),
// in id order, batch at a time.
func (s *Store) ScanAttachments(ctx context.Context, batch int, fn func([]openproject.Attachment) error) error {
	return scan(ctx, s, kind.Attachment, batch, decodeEntity[openproject.Attachment](s.codec), fn)
}

func decodeEntity[T any](c *codec) func(kvTx, int64, []byte) (T, error) {
	return func(tx kvTx, _ int64, raw []byte) (T, error) {
		var v T
		err := c.decodeIn(tx, raw, &v)
		return v, err
	}
}

// scan walks kind in id order. Each batch is read and decoded in its own
// short read transaction, which is closed before fn runs, so fn may take as
// long as it likes (index a batch, even write to the store) without
// holding a transaction open; the next batch seeks past the last key seen.
// Entities written or deleted during the scan are seen or not depending on
// whether the scan has passed their id. An error from fn stops the scan and
// is returned as is.
func scan[T any](ctx context.Context, s *Store, k kind.Kind, batch int,
	decode func(tx kvTx, id int64, raw []byte) (T, error), fn func([]T) error) error {
	if batch <= 0 {
		batch = DefaultScanBatch
	}
	var after []byte // last key handed to fn; nil before the first batch
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("scan %s: %w", k, err)
		}
		items := make([]T, 0, batch)
		var last []byte
		done := false
		err := s.View(ctx, func(tx *ReadTx) error {
			c := tx.tx.bucket(bucketOf(k)).cursor()
			key, v := first(c, after)
			for ; key != nil && len(items) < batch; key, v = c.next() {
				id := keyID(key)
				item, err := decode(tx.tx, id, v)
				if err != nil {
					return fmt.Errorf("decode %s %d: %w", k, id, err)
				}
				items = append(items, item)
				last = key
			}
			// The loop advanced the cursor once more: nil means the bucket
			// is exhausted, so no empty trailing transaction is needed.
			done = key == nil
			last = bytes.Clone(last)
			return nil
		})
		if err != nil {
			return fmt.Errorf("scan %s: %w", k, err)
		}
		if len(items) > 0 {
			if err := fn(items); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		after = last
	}
}

// first positions c at the first key after after (or at the very first key
// if after is nil).
func first(c kvCursor, after []byte) ([]byte, []byte) {
	if after == nil {
		return c.first()
	}
	k, v := c.seek(after)
	if k != nil && bytes.Equal(k, after) {
		return c.next()
	}
	return k, v
}
