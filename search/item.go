package search

import (
	"context"
	"fmt"
	"slices"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// Item is one entity as the store holds it, read by kind and id
// (Engine.Item): exactly one of WorkPackage, WikiPage, Meeting and
// Project is set.
type Item struct {
	Kind        kind.Kind
	WorkPackage *openproject.WorkPackage
	// Activities are the work package's journal, oldest first, without
	// the internal comments its reader may not see.
	Activities []openproject.Activity
	WikiPage   *openproject.WikiPage
	// Attachments are the files the store holds of a wiki page.
	Attachments []openproject.Attachment
	// Meeting holds its agenda items and their outcomes.
	Meeting *openproject.Meeting
	Project *openproject.Project
}

// docShower is an index that tells which documents its reader sees:
// indexer.Restricted, a shared index as one user sees it.
type docShower interface {
	Shows(ctx context.Context, ids ...string) ([]bool, error)
}

var _ docShower = indexer.Restricted{}

// Item returns the work package (with its activities), wiki page (with
// its stored files), meeting (with its agenda) or project id of kind k
// as the store holds it; found is false when the store lacks it or the
// reader may not see it.
//
// Who may see it: an engine over one user's own store (Options.Shared
// unset) holds only what OpenProject showed that user, so everything in
// it is theirs. An engine over a store every user shares shows an item
// only when its index, restricted to the user, shows the item's
// document, exactly as a search would find it: a work package's whole
// document with every comment, or its public twin without the internal
// ones. An index that cannot tell shows nothing.
func (e *Engine) Item(ctx context.Context, k kind.Kind, id int64) (Item, bool, error) {
	internal := true
	if e.opts.Shared != nil {
		ds, ok := e.idx.(docShower)
		if !ok {
			return Item{}, false, nil
		}
		ids := []string{indexer.DocID(k, id)}
		if k == kind.WorkPackage {
			ids = append(ids, indexer.PublicDocID(id))
		}
		shown, err := ds.Shows(ctx, ids...)
		if err != nil {
			return Item{}, false, fmt.Errorf("read %s %d: %w", k, id, err)
		}
		switch {
		case shown[0]:
		case k == kind.WorkPackage && shown[1]:
			internal = false
		default:
			return Item{}, false, nil
		}
	}
	it := Item{Kind: k}
	var found bool
	err := e.st.View(ctx, func(tx *store.ReadTx) error {
		var err error
		switch k {
		case kind.WorkPackage:
			var wp openproject.WorkPackage
			if wp, found, err = tx.WorkPackage(id); err != nil || !found {
				return err
			}
			it.WorkPackage = &wp
			if it.Activities, _, err = tx.Activities(id); err != nil {
				return err
			}
			if !internal {
				it.Activities = slices.DeleteFunc(it.Activities, func(a openproject.Activity) bool { return a.Internal })
			}
		case kind.WikiPage:
			var p openproject.WikiPage
			if p, found, err = tx.WikiPage(id); err != nil || !found {
				return err
			}
			it.WikiPage = &p
			ids, err := tx.ContainerAttachments(kind.WikiPage, id)
			if err != nil {
				return err
			}
			for _, aid := range ids {
				a, ok, err := tx.Attachment(aid)
				if err != nil {
					return err
				}
				if ok {
					// The text is the index's business, not a listing's.
					a.Text = ""
					it.Attachments = append(it.Attachments, a)
				}
			}
		case kind.Meeting:
			var m openproject.Meeting
			if m, found, err = tx.Meeting(id); err != nil || !found {
				return err
			}
			it.Meeting = &m
		case kind.Project:
			var p openproject.Project
			if p, found, err = tx.Project(id); err != nil || !found {
				return err
			}
			it.Project = &p
		default:
			return fmt.Errorf("kind %q has no items to read", k)
		}
		return nil
	})
	if err != nil {
		return Item{}, false, fmt.Errorf("read %s %d: %w", k, id, err)
	}
	return it, found, nil
}
