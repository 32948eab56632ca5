package store

import (
	"bytes"
	"context"
	"fmt"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// recodeBatch is how many values one recoding transaction rewrites: a
// few megabytes of dirty pages, so recoding a large store needs no more
// memory than a sync's page.
const recodeBatch = 500

// migrate1to2 marks the store for recoding: version 2 stores entities
// compactly (see codec). Every value says its encoding, so the migration
// itself only records that old values remain; recode rewrites them in
// batches after it, and a store interrupted part way reads as well as
// before and carries on at its next open.
func migrate1to2(tx kvTx) error {
	return tx.bucket(bucketMeta).put(keyRecode, []byte("1"))
}

// recode rewrites the JSON values of a store marked by migrate1to2 in the
// compact encoding, recodeBatch values per transaction, then clears the
// mark. The file keeps its size until compacted (CompactTo); its free
// pages take the next syncs' writes.
func (s *Store) recode(ctx context.Context) error {
	var pending bool
	if err := s.eng.view(ctx, func(tx kvTx) error {
		pending = tx.bucket(bucketMeta).get(keyRecode) != nil
		return nil
	}); err != nil || !pending {
		return err
	}
	for _, k := range kind.All() {
		var err error
		switch k {
		case kind.Project:
			err = recodeKind[openproject.Project](ctx, s, k)
		case kind.WorkPackage:
			err = recodeKind[openproject.WorkPackage](ctx, s, k)
		case kind.Activity:
			err = recodeKind[[]openproject.Activity](ctx, s, k)
		case kind.WikiPage:
			err = recodeKind[openproject.WikiPage](ctx, s, k)
		case kind.Meeting:
			err = recodeKind[openproject.Meeting](ctx, s, k)
		case kind.Attachment:
			err = recodeKind[openproject.Attachment](ctx, s, k)
		default:
			err = fmt.Errorf("no entity type for kind %s", k)
		}
		if err != nil {
			return fmt.Errorf("recode %s: %w", k, err)
		}
	}
	return s.eng.update(ctx, func(tx kvTx) error { return tx.bucket(bucketMeta).delete(keyRecode) })
}

// recodeKind rewrites kind's JSON values as T, batch by batch. Values
// already compact are skipped, so a rerun after a crash does only what is
// left.
func recodeKind[T any](ctx context.Context, s *Store, k kind.Kind) error {
	var after []byte
	for {
		done := false
		err := s.eng.update(ctx, func(tx kvTx) error {
			b := tx.bucket(bucketOf(k))
			b.denseFill()
			type kv struct{ k, v []byte }
			var batch []kv
			c := b.cursor()
			key, v := first(c, after)
			for ; key != nil && len(batch) < recodeBatch; key, v = c.next() {
				after = bytes.Clone(key)
				if !isJSON(v) {
					continue
				}
				var x T
				if err := s.codec.unmarshal(v, &x); err != nil {
					return fmt.Errorf("decode %s %d: %w", k, keyID(key), err)
				}
				raw, err := s.codec.marshal(k, x)
				if err != nil {
					return fmt.Errorf("encode %s %d: %w", k, keyID(key), err)
				}
				batch = append(batch, kv{after, raw})
			}
			done = key == nil
			// Written after the walk: cursors do not survive a put.
			for _, e := range batch {
				if err := b.put(e.k, e.v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}
