package sync

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/opsearch/opsearch/extract"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// AttachmentOptions configure the attachment sync.
type AttachmentOptions struct {
	// Off turns it off: no attachment is listed, downloaded or indexed,
	// and those stored stay as they are.
	Off bool
	// Extract bounds each file: MaxBytes (default 10 MB) is the largest
	// downloaded, MaxText (default 500 KB) the text kept of one, Timeout
	// the time its extraction may take. A file over a bound is indexed by
	// its name and description, with the reason recorded.
	Extract extract.Options
	// InFlight bounds the bytes of files downloaded or extracted at once
	// (default 4 × MaxBytes), so the memory a sync holds for files does
	// not grow with its concurrency.
	InFlight int64
}

func (o AttachmentOptions) withDefaults() AttachmentOptions {
	o.Extract.MaxBytes = cmp.Or(o.Extract.MaxBytes, extract.DefaultMaxBytes)
	o.Extract.MaxText = cmp.Or(o.Extract.MaxText, extract.DefaultMaxText)
	o.Extract.Timeout = cmp.Or(o.Extract.Timeout, extract.DefaultTimeout)
	o.InFlight = cmp.Or(o.InFlight, 4*o.Extract.MaxBytes)
	return o
}

// attachmentBatch is the number of due containers one commit covers.
const attachmentBatch = 500

// skippedDownload starts the Skipped reason of a file whose download
// failed: the next sync tries it again.
const skippedDownload = "download failed"

// noAttachments is the attachment state's note when they are off.
const noAttachments = "attachments are not indexed (turned off)"

// syncAttachments reads the attachment lists of the containers the store
// marks due (new, changed or deleted since their list was last read;
// store.WriteTx.SetContainerAttachments), downloads the files that are
// new or whose digest changed, extracts their text within the budget,
// and removes the attachments a list no longer shows. Nothing is asked
// of OpenProject for a container that did not change, and no file is
// downloaded twice while its digest holds.
//
// A container whose list cannot be read, or one of whose files could
// not be downloaded, stays due for the next sync; a file that cannot be
// read as text is stored with the reason and found by its name and
// description. Neither stops the sync.
func (w *Worker) syncAttachments(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	o := w.opts.Attachments.withDefaults()
	if o.Off {
		st.Note, st.Complete = noAttachments, true
		return nil
	}
	st.Note = ""
	api := r.api
	var total int
	if err := w.st.View(ctx, func(tx *store.ReadTx) error {
		var err error
		total, err = tx.CountDueContainers()
		return err
	}); err != nil {
		return fmt.Errorf("count due attachment lists: %w", err)
	}
	if total > 0 {
		w.log.Info("reading attachment lists", "containers", total, "owner", w.owner())
	}
	files := semaphore.NewWeighted(o.InFlight)
	var after *store.ContainerAttachments
	done, left := 0, 0
	// Three batches are under way at once: one is committed in the
	// background, as the work package pass commits its pages, while the
	// next one's files download and the one after that has its lists
	// read. Done in turn, the requests stood idle during every commit and
	// at the end of every step, while its last few answers came in. Each
	// batch is read from the store past the last one's containers, which
	// the batches before it do not touch.
	var (
		committing background
		tally      attachmentTally
	)
	finish := func() error {
		err := committing.wait()
		left += tally.left
		kr.Updated += tally.updated
		kr.Deleted += tally.deleted
		kr.Retry += tally.retry
		tally = attachmentTally{}
		return err
	}
	defer func() { _ = committing.wait() }()
	readDue := func() ([]store.ContainerAttachments, error) {
		var due []store.ContainerAttachments
		err := w.st.View(ctx, func(tx *store.ReadTx) error {
			var err error
			due, err = tx.DueContainers(attachmentBatch, after)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read due attachment lists: %w", err)
		}
		if len(due) > 0 {
			after = &due[len(due)-1]
		}
		return due, nil
	}
	due, err := readDue()
	if err != nil {
		return err
	}
	var b *attBatch
	if len(due) > 0 {
		if b, err = w.listAttachments(ctx, api, due); err != nil {
			return err
		}
		kr.Fetched += b.fetched
	}
	for b != nil {
		if due, err = readDue(); err != nil {
			return err
		}
		var (
			next    *attBatch
			listing background
		)
		lctx, cancel := context.WithCancel(ctx)
		if len(due) > 0 {
			listing.start(func() error {
				var err error
				next, err = w.listAttachments(lctx, api, due)
				return err
			})
		}
		commit, err := w.fetchFiles(ctx, api, o, files, b)
		if werr := finish(); err == nil {
			err = werr
		}
		if err != nil {
			cancel()
			_ = listing.wait()
			return err
		}
		committing.start(func() error {
			var err error
			tally, err = commit()
			return err
		})
		done += len(b.cs)
		w.progress(kind.Attachment, done, total)
		err = listing.wait()
		cancel()
		if err != nil {
			// The batch before is committed: its figures count.
			if werr := finish(); werr != nil {
				return werr
			}
			return err
		}
		if b = next; b != nil {
			kr.Fetched += b.fetched
		}
	}
	if err := finish(); err != nil {
		return err
	}
	st.Complete = left == 0
	return nil
}

// attachmentTally is what one batch's commit changed: the containers
// left due, and the counts for the kind's report.
type attachmentTally struct {
	left, updated, deleted, retry int
}

// container is a due container as the store holds it.
type container struct {
	store.ContainerAttachments
	gone    bool
	project openproject.Ref
	title   string
}

// attBatch is a batch of due containers between its two steps: its lists
// read (listAttachments), its new files not yet downloaded (fetchFiles).
type attBatch struct {
	cs []container
	// old holds the stored attachments the containers listed before.
	old map[int64]openproject.Attachment
	// listed is each container's list, where listOK says it was read.
	listed [][]openproject.Attachment
	listOK []bool
	// fetched counts the files listed, for the kind's report.
	fetched int
}

// listAttachments reads one batch of due containers' lists, and the
// records of the containers that need one.
func (w *Worker) listAttachments(ctx context.Context, api API, due []store.ContainerAttachments) (*attBatch, error) {
	cs := make([]container, len(due))
	old := map[int64]openproject.Attachment{}
	if err := w.st.View(ctx, func(tx *store.ReadTx) error {
		for i, d := range due {
			cs[i] = container{ContainerAttachments: d, gone: d.Gone, project: d.Project}
			for _, id := range d.Attachments {
				a, found, err := tx.Attachment(id)
				if err != nil {
					return err
				}
				if found {
					old[id] = a
				}
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read attachments: %w", err)
	}

	// Every due container's list, before its record is read: most
	// containers hold no file and had none, and need nothing from the
	// store. Reading each one first touched every page of the work
	// packages in the store's memory map, a hundred megabytes of the
	// process's memory at 100,000 work packages, for the few that have
	// files. A 404 is an answer here, not a failure: the container was
	// deleted or hidden since its own kind's pass, which will tell; its
	// list stays due meanwhile, unless the store no longer holds it.
	// Only other failures count towards an outage.
	type list struct {
		items    []openproject.Attachment
		notFound error
	}
	var live []int // the containers not known to be gone
	for i, c := range cs {
		if !c.gone {
			live = append(live, i)
		}
	}
	ids := make([]int64, len(live))
	for j := range live {
		ids[j] = int64(j) // fetchEach's ids are only names here
	}
	got, gotFailed, err := fetchEach(ctx, w.lim, "attachments of", ids, func(ctx context.Context, j int64) (list, error) {
		c := cs[live[j]]
		var l list
		var err error
		switch c.Kind {
		case kind.WorkPackage:
			l.items, err = api.WorkPackageAttachments(ctx, c.ID)
		case kind.WikiPage:
			l.items, err = api.WikiPageAttachments(ctx, c.ID)
		default:
			l.items, err = api.MeetingAttachments(ctx, c.ID)
		}
		if errors.Is(err, openproject.ErrNotFound) {
			l.notFound, err = err, nil
		}
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("list attachments: %w", err)
	}
	lists := make([]list, len(cs))
	failed := make([]error, len(cs))
	for j, i := range live {
		lists[i], failed[i] = got[j], gotFailed[j]
	}

	// The containers whose record is read: those OpenProject no longer
	// shows (gone from the store too, or only hidden from this pass),
	// and those with files now or before whose entry does not carry
	// their project (written before entries did) or one of whose files
	// came without its container's title.
	if err := w.st.View(ctx, func(tx *store.ReadTx) error {
		for i := range cs {
			c := &cs[i]
			files := len(lists[i].items) > 0 || len(c.Attachments) > 0
			untitled := slices.ContainsFunc(lists[i].items, func(a openproject.Attachment) bool { return a.Container.Title == "" })
			if c.gone || failed[i] != nil || lists[i].notFound == nil && (!files || !c.Project.IsZero() && !untitled) {
				continue
			}
			var found bool
			var err error
			switch c.Kind {
			case kind.WorkPackage:
				var wp openproject.WorkPackage
				wp, found, err = tx.WorkPackage(c.ID)
				c.project, c.title = wp.Project, wp.Subject
			case kind.WikiPage:
				var p openproject.WikiPage
				p, found, err = tx.WikiPage(c.ID)
				c.project, c.title = p.Project, p.Title
			case kind.Meeting:
				var m openproject.Meeting
				m, found, err = tx.Meeting(c.ID)
				c.project, c.title = m.Project, m.Title
			}
			if err != nil {
				return err
			}
			c.gone = !found
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read containers: %w", err)
	}
	b := &attBatch{cs: cs, old: old, listed: make([][]openproject.Attachment, len(cs)), listOK: make([]bool, len(cs))}
	listed, listOK := b.listed, b.listOK
	for i := range cs {
		if cs[i].gone {
			continue // its files go with it, whatever the list said
		}
		if why := cmp.Or(failed[i], lists[i].notFound); why != nil {
			w.log.Warn("attachment list left for the next sync", "container", cs[i].Kind, "id", cs[i].ID, "error", why)
			continue
		}
		listed[i], listOK[i] = lists[i].items, true
		b.fetched += len(lists[i].items)
	}
	for i, as := range listed {
		for n := range as {
			as[n].Project = cs[i].project
			as[n].Container.Title = cmp.Or(as[n].Container.Title, cs[i].title)
		}
	}
	return b, nil
}

// fetchFiles downloads the new files of b, a batch whose lists were read,
// and returns the commit that brings the batch up to date in the store
// and the index, which reports what it changed.
func (w *Worker) fetchFiles(ctx context.Context, api API, o AttachmentOptions, files *semaphore.Weighted, b *attBatch) (commit func() (attachmentTally, error), err error) {
	cs, old, listed, listOK := b.cs, b.old, b.listed, b.listOK
	// What to download: new files and files whose digest moved.
	type job struct {
		c, n int // container index, attachment index in its list
	}
	var jobs []job
	for i, as := range listed {
		for n := range as {
			a := &as[n]
			prev, found := old[a.ID]
			if found && prev.Digest == a.Digest && !strings.HasPrefix(prev.Skipped, skippedDownload) {
				a.Text, a.TextFormat, a.TextTruncated, a.Skipped = prev.Text, prev.TextFormat, prev.TextTruncated, prev.Skipped
				continue
			}
			jobs = append(jobs, job{i, n})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, j := range jobs {
		a := &listed[j.c][j.n]
		if a.FileSize > o.Extract.MaxBytes {
			a.Skipped = fmt.Sprintf("%s: %d bytes, over the %d byte limit", extract.ErrTooLarge, a.FileSize, o.Extract.MaxBytes)
			continue
		}
		weight := min(max(a.FileSize, 1), o.Extract.MaxBytes)
		if err := files.Acquire(gctx, weight); err != nil {
			break // g.Wait returns the cause
		}
		t, err := w.lim.acquire(gctx)
		if err != nil {
			files.Release(weight)
			break
		}
		g.Go(func() error {
			defer files.Release(weight)
			began := time.Now()
			data, ctype, err := api.AttachmentContent(gctx, a.ID, o.Extract.MaxBytes)
			w.lim.release(t, time.Since(began), err)
			switch {
			case errors.Is(err, openproject.ErrTooLarge):
				a.Skipped = fmt.Sprintf("%s: over the %d byte limit", extract.ErrTooLarge, o.Extract.MaxBytes)
				return nil
			case itemFailure(gctx, err):
				a.Skipped = fmt.Sprintf("%s: %v", skippedDownload, err)
				return nil
			case err != nil:
				return fmt.Errorf("download attachment %d: %w", a.ID, err)
			}
			w.readText(gctx, a, data, cmp.Or(a.ContentType, ctype), o)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}

	// One commit: the files, the removals and the lists.
	var puts []openproject.Attachment
	var dels []string
	var delIDs []int64
	left := 0 // containers whose list could not be read
	for i, c := range cs {
		if !c.gone && !listOK[i] {
			left++
			continue
		}
		keep := map[int64]bool{}
		for _, a := range listed[i] {
			keep[a.ID] = true
			puts = append(puts, a)
		}
		for _, id := range c.Attachments {
			if !keep[id] {
				delIDs = append(delIDs, id)
				dels = append(dels, indexer.DocID(kind.Attachment, id))
			}
		}
	}
	write := func(tx *store.WriteTx) error {
		for _, a := range puts {
			if err := tx.PutAttachment(a); err != nil {
				return err
			}
		}
		for _, id := range delIDs {
			if err := tx.Delete(kind.Attachment, id); err != nil {
				return err
			}
		}
		for i, c := range cs {
			if !c.gone && !listOK[i] {
				continue
			}
			var ids []int64
			retry := false
			for _, a := range listed[i] {
				ids = append(ids, a.ID)
				retry = retry || strings.HasPrefix(a.Skipped, skippedDownload)
			}
			if err := tx.SetContainerAttachments(c.Kind, c.ID, ids); err != nil {
				return err
			}
			if retry {
				if err := tx.MarkContainerDue(c.Kind, c.ID); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return func() (attachmentTally, error) {
		if err := w.commit(ctx, write, attachmentDocs(puts), dels, nil); err != nil {
			return attachmentTally{}, err
		}
		t := attachmentTally{left: left, updated: len(puts), deleted: len(delIDs)}
		for i := range cs {
			for _, a := range listed[i] {
				if strings.HasPrefix(a.Skipped, skippedDownload) {
					t.left++
					t.retry++
				}
			}
		}
		for _, id := range delIDs {
			w.log.Info("deleted entity", "kind", kind.Attachment, "id", id)
		}
		return t, nil
	}, nil
}

// readText extracts a's text from data into a, or records why not.
func (w *Worker) readText(ctx context.Context, a *openproject.Attachment, data []byte, ctype string, o AttachmentOptions) {
	res, err := extract.Text(ctx, a.FileName, ctype, bytes.NewReader(data), o.Extract)
	if err != nil {
		a.Skipped = err.Error()
		if !errors.Is(err, extract.ErrUnsupported) {
			w.log.Info("attachment indexed by name only", "id", a.ID, "file", a.FileName, "reason", err)
		}
		return
	}
	a.Text, a.TextFormat, a.TextTruncated, a.Skipped = res.Text, res.Format, res.Truncated, ""
}

// attachmentDocs builds the documents of attachments.
func attachmentDocs(as []openproject.Attachment) []indexer.Document {
	docs := make([]indexer.Document, 0, len(as))
	for _, a := range as {
		if d, ok := indexer.FromAttachment(a); ok {
			docs = append(docs, d)
		}
	}
	return docs
}
