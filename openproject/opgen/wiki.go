package opgen

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

func (g *generator) genWikiPages() []openproject.WikiPage {
	n := g.o.WikiPages
	if n == 0 {
		return []openproject.WikiPage{}
	}
	r := Rand(g.o.Seed, streamWiki)
	ids := wikiIDs(r, n)
	pages := make([]openproject.WikiPage, n)
	w := newWriter(g, r)
	taken := map[string]bool{} // project id + slug: titles are unique per wiki
	first := g.start.Add(48 * time.Hour)
	step := int64(g.end.Sub(first)/time.Second) / int64(n)
	adr := make([]int, len(g.projects))
	for i, id := range ids {
		pi := g.pickProject(r, nil)
		w.setProject(&g.projects[pi], len(g.wpCreated))
		kind := r.IntN(6)
		var title string
		switch kind {
		case 0:
			title = w.text(wikiGuideTitles[r.IntN(len(wikiGuideTitles))])
		case 1:
			title = wikiChecklistTitles[r.IntN(len(wikiChecklistTitles))]
		case 2:
			title = w.text(wikiRunbookTitles[r.IntN(len(wikiRunbookTitles))])
		case 3:
			adr[pi]++
			title = "Architecture Decision Record " + strconv.Itoa(adr[pi]) + ": " + adrTopics[r.IntN(len(adrTopics))]
		case 4:
			title = "Incident Postmortem " + g.start.AddDate(0, 0, r.IntN(365)).Format(time.DateOnly)
		default:
			title = w.text("{Meeting Notes|Retro Notes|Workshop Notes} {month} {city}")
		}
		slug := slugify(title)
		for k := 2; taken[strconv.Itoa(pi)+"/"+slug]; k++ {
			title2 := title + " (" + strconv.Itoa(k) + ")"
			if s := slugify(title2); !taken[strconv.Itoa(pi)+"/"+s] {
				title, slug = title2, s
			}
		}
		taken[strconv.Itoa(pi)+"/"+slug] = true

		created := first.Add(time.Duration(int64(i)*step+r.Int64N(max(step, 1))) * time.Second)
		updated := created.Add(time.Duration(r.Int64N(int64(g.end.Sub(created)/time.Second)+1)) * time.Second)
		p := &pages[i]
		p.ID = id
		p.Title = title
		p.Slug = slug
		p.Project = g.projects[pi].ref
		p.Text = w.wikiText(kind, title)
		p.HasText = true
		p.LockVersion = r.IntN(9)
		p.CreatedAt = created
		p.UpdatedAt = updated
		if r.IntN(5) == 0 {
			for range 1 + r.IntN(2) {
				g.wikiFiles = append(g.wikiFiles, w.wikiFile(p, pi, created, updated))
			}
		}
	}
	return pages
}

// wikiIDs returns n ascending wiki page ids: most in 1..1.5n with holes,
// about one in twenty far above the rest (from 1000), as on instances
// where pages were deleted and others created much later.
func wikiIDs(r *rand.Rand, n int) []int64 {
	high := n / 20
	if high == 0 && n >= 2 {
		high = 1
	}
	low := n - high
	lowRange := low + low/2
	all := make([]int64, lowRange)
	for i := range all {
		all[i] = int64(i + 1)
	}
	for j := range low {
		m := j + r.IntN(lowRange-j)
		all[j], all[m] = all[m], all[j]
	}
	ids := all[:low:low]
	slices.Sort(ids)
	base := int64(1000)
	if lowRange >= 900 {
		base = int64(lowRange/1000+2) * 1000
	}
	gap := int64(max(2, 200/max(high, 1)))
	for j := range int64(high) {
		ids = append(ids, base+j*gap+r.Int64N(gap))
	}
	return ids
}

// wikiText writes a page body with headings, in the layout of its kind.
func (w *writer) wikiText(kind int, title string) string {
	r := w.r
	w.b.Reset()
	w.b.Grow(2048)
	w.b.WriteString("# ")
	w.b.WriteString(title)
	w.b.WriteString("\n\n")
	w.expand(w.pick(wikiParagraphs))
	w.b.WriteString("\n\n")
	switch kind {
	case 1: // checklist
		for _, h := range []string{"Before", "During", "After"} {
			w.b.WriteString("## ")
			w.b.WriteString(h)
			w.b.WriteString("\n\n")
			w.checklist(taskItems, 2+r.IntN(4), false)
			w.b.WriteByte('\n')
		}
	case 2: // runbook
		w.b.WriteString("## Symptoms\n\n")
		w.expand("Alerts fire when {c} reports `{e}` or when {n} is {a}.\n\n")
		w.b.WriteString("## Steps\n\n")
		for k := range 3 + r.IntN(4) {
			w.int(k + 1)
			w.b.WriteString(". ")
			w.expand(w.pick(runbookSteps))
			w.b.WriteByte('\n')
		}
		w.b.WriteString("\n## Escalation\n\n")
		w.expand("If this does not help within {num} minutes, call {u}.\n\n")
	case 3: // architecture decision record
		w.b.WriteString("## Status\n\n")
		w.expand("{Accepted|Proposed|Superseded|Accepted}, {date}.\n\n## Context\n\n")
		w.paragraph(2 + r.IntN(3))
		w.b.WriteString("\n\n## Decision\n\n")
		w.expand(w.pick(decisions))
		w.b.WriteString("\n\n## Consequences\n\n")
		w.list(sentences, 2+r.IntN(3), "- ")
		w.b.WriteByte('\n')
	case 4: // postmortem
		w.b.WriteString("## Summary\n\n")
		w.paragraph(2)
		w.b.WriteString("\n\n## Timeline (UTC)\n\n")
		for range 3 + r.IntN(4) {
			w.expand("- {hh}:{mm} {u} {noticed|acknowledged|mitigated|resolved|escalated} `{e}` on {h}\n")
		}
		w.b.WriteString("\n## Impact\n\n")
		w.expand("{pct} of requests to {c} failed for {num} minutes; {big} {r}s were affected.\n\n")
		w.b.WriteString("## Follow-ups\n\n")
		w.checklist(taskItems, 2+r.IntN(3), false)
		w.b.WriteByte('\n')
	case 5: // notes
		w.b.WriteString("## Attendees\n\n")
		for range 2 + r.IntN(4) {
			w.expand("- {u}\n")
		}
		w.b.WriteString("\n## Notes\n\n")
		w.paragraph(2 + r.IntN(2))
		w.b.WriteString("\n\n## Decisions\n\n")
		w.list(decisions, 1+r.IntN(2), "- ")
		w.b.WriteByte('\n')
	default: // guide
		for range 2 + r.IntN(3) {
			w.b.WriteString("## ")
			w.expand("{{G}|{N}}")
			w.b.WriteString("\n\n")
			w.paragraph(2 + r.IntN(3))
			w.b.WriteString("\n\n")
			if r.IntN(2) == 0 {
				w.list(wikiParagraphs, 2, "- ")
				w.b.WriteByte('\n')
			}
		}
	}
	return strings.TrimRight(w.b.String(), "\n")
}

// wikiFile plans an attachment of a wiki page (genAttachments makes
// it). It draws from the wiki's stream exactly what the metadata-only
// attachments of earlier versions drew, so that every page stays as it
// was; the file's name and size come from its kind now, and the draws
// that picked them are skipped.
func (w *writer) wikiFile(p *openproject.WikiPage, pi int, created, updated time.Time) filePlan {
	r := w.r
	_ = r.IntN(7)       // was the file name
	_ = r.IntN(4 << 20) // was the file size
	desc := w.text("{N} {for the {g}|as of {date}|}")
	author := w.person()
	return filePlan{
		container: openproject.Ref{ID: p.ID, Href: "/api/v3/wiki_pages/" + strconv.FormatInt(p.ID, 10), Title: p.Title},
		proj:      pi,
		wpID:      len(w.g.wpCreated),
		topic:     p.Title,
		author:    author,
		desc:      strings.TrimSpace(desc),
		created:   created.Add(time.Duration(r.Int64N(int64(updated.Sub(created)/time.Second)+1)) * time.Second),
	}
}
