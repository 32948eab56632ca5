package opgen

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// streamAttachments draws which work packages and meetings get files and
// everything about the files. It is a stream of its own, used last, so
// that the rest of a data set is what it was before attachments had
// content. (The wiki pages' attachments are still decided on the wiki's
// stream, as they always were; see writer.wikiFile.)
const streamAttachments uint64 = 60

// filePlan is an attachment decided on before its file is.
type filePlan struct {
	container openproject.Ref
	proj      int    // project index
	wpID      int    // {wp} references stay below this id
	topic     string // the container's subject or title
	author    int    // user index
	desc      string
	created   time.Time
}

// genAttachments attaches files to about one work package in ten and one
// meeting in four (one or two each), after those of one wiki page in five
// (planned with the wiki pages). Ids count up from 1: the wiki pages'
// first, then the work packages', then the meetings'. The files cycle
// through the kinds of fileKinds from an offset the seed picks; one
// file is corrupt and one oversized (when there are at least two). The
// files are made on demand from a recipe (optest.Attachment.Source), so
// the data set holds no file.
func (g *generator) genAttachments(d *optest.Dataset) []optest.Attachment {
	r := Rand(g.o.Seed, streamAttachments)
	// The files are made after Generate returns, from g: the users they
	// name must not change with the caller's data set.
	g.users = slices.Clone(g.users)
	w := newWriter(g, r)
	plans := g.wikiFiles
	plan := func(c openproject.Ref, pi, wpID int, topic string, from, to time.Time) filePlan {
		w.setProject(&g.projects[pi], wpID)
		p := filePlan{container: c, proj: pi, wpID: wpID, topic: topic, author: w.person()}
		if r.IntN(3) > 0 {
			p.desc = strings.TrimSpace(w.text("{{N}|{G}} {for the {g}|as of {date}|from {uf}|}"))
		}
		span := max(int64(to.Sub(from)/time.Second), 0)
		p.created = from.Add(time.Duration(r.Int64N(span+1)) * time.Second)
		return p
	}
	for i := range d.WorkPackages {
		if r.IntN(10) != 0 {
			continue
		}
		wp := &d.WorkPackages[i]
		ref := openproject.Ref{ID: wp.ID, Href: "/api/v3/work_packages/" + strconv.FormatInt(wp.ID, 10), Title: wp.Subject}
		for range 1 + r.IntN(2) {
			plans = append(plans, plan(ref, int(wp.Project.ID-1), int(wp.ID), wp.Subject, wp.CreatedAt, wp.UpdatedAt))
		}
	}
	for i := range d.Meetings {
		if r.IntN(4) != 0 {
			continue
		}
		m := &d.Meetings[i]
		ref := openproject.Ref{ID: m.ID, Href: "/api/v3/meetings/" + strconv.FormatInt(m.ID, 10), Title: m.Title}
		for range 1 + r.IntN(2) {
			plans = append(plans, plan(ref, int(m.Project.ID-1), len(g.wpCreated), m.Title, m.CreatedAt, m.UpdatedAt))
		}
	}
	if len(plans) == 0 {
		return nil
	}
	kinds := make([]FileKind, len(plans))
	offset := r.IntN(len(fileKinds))
	for k := range kinds {
		kinds[k] = fileKinds[(offset+k)%len(fileKinds)]
	}
	if n := len(plans); n >= 2 {
		c := r.IntN(n)
		kinds[c] = FileCorrupt
		kinds[(c+1+r.IntN(n-1))%n] = FileOversized
	}
	atts := make([]optest.Attachment, len(plans))
	for k, p := range plans {
		t := typeOf(kinds[k])
		rc := &fileRecipe{g: g, kind: t.kind, seed: r.Uint64(), id: int64(k + 1), proj: p.proj, wpID: p.wpID,
			topic: p.topic, author: p.author, date: p.created}
		atts[k] = optest.Attachment{
			Attachment: openproject.Attachment{
				ID:          int64(k + 1),
				FileName:    t.names[r.IntN(len(t.names))],
				ContentType: t.contentType,
				Description: p.desc,
				Container:   p.container,
				Author:      g.userRefs[p.author],
				CreatedAt:   p.created,
			},
			External: g.o.ExternalAttachments,
			Source:   rc.bytes,
		}
	}
	return atts
}
