package querygen

import (
	"cmp"
	"fmt"
	"math/rand/v2"

	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
)

// Query kinds emitted by Generate.
const (
	KindTypo               = "typo"
	KindReordered          = "reordered"
	KindQuestion           = "question"
	KindCommentFact        = "comment_fact"
	KindWikiPhrase         = "wiki_phrase"
	KindMeetingOutcome     = "meeting_outcome"
	KindMeetingParticipant = "meeting_participant"
	KindTruncated          = "truncated"
	KindID                 = "id"
	KindNegative           = "negative"

	// Kinds whose queries carry words the target lacks, as people ask:
	// the words that do occur in the target identify it, the others frame
	// the question, stand in for a target word or fill the query.
	KindQuestionFramed = "question_framed"
	KindSynonym        = "synonym"
	KindFiller         = "filler"
	KindNameTopic      = "name_topic"
)

// Kinds lists the kinds Generate emits, in output order.
func Kinds() []string {
	return []string{
		KindTypo, KindReordered, KindQuestion, KindTruncated, KindID, KindCommentFact,
		KindWikiPhrase, KindMeetingOutcome, KindMeetingParticipant, KindNegative,
		KindQuestionFramed, KindSynonym, KindFiller, KindNameTopic,
	}
}

// Options configure Generate.
type Options struct {
	// Seed selects the queries; the same data set and options always give
	// the same set.
	Seed int64
	// PerKind is the number of queries per kind (default 30). A kind may
	// get fewer when the data set has too few items that yield an
	// unambiguous query.
	PerKind int
	// UserID is the user whose visible data the queries are built from
	// (default: the administrator, who sees everything).
	UserID int64
}

// DefaultPerKind is Options.PerKind's default.
const DefaultPerKind = 30

// Generate builds a labelled query set for d: every query names the item
// it was made from, and is checked to be unambiguous in the data the
// chosen user can see. Words are picked by document frequency (rarest
// first) until no other visible item contains all of the query's words, so
// the expected item really is the right answer and a miss is the
// ranker's fault. Negative queries consist of invented words that no
// visible text matches even fuzzily (scorer.ScoreToken is 0 against every
// word of the corpus).
//
// Kinds: typo (one or two edits, never on the first letter, in a word of
// at least five letters), reordered (subject words shuffled), question (a
// natural-language question around distinctive subject words), truncated
// (the last word cut as if still typing), id ("#123"), comment_fact (words
// found only in a work package's comments), wiki_phrase (a verbatim phrase
// of a wiki body), meeting_outcome (words of an agenda item's outcome),
// meeting_participant (a participant's name plus words of the meeting) and
// negative (nothing relevant exists).
//
// The kinds question_framed, synonym, filler and name_topic carry words the
// target lacks, so that an engine requiring every query word cannot answer
// them: question_framed wraps identifying words of a work package, wiki
// page or meeting in a question whose framing words the target does not
// hold; synonym replaces one or two of them by a synonym the target does
// not hold; filler inserts words without a topic; name_topic combines a
// participant's or assignee's name (sometimes with its diacritics folded
// away) with topic words and framing words. The words the target holds
// are chosen as for the other kinds (rarest first until no other visible
// item holds them all); an added word must not match any word of the
// target even as a prefix, typo or variant (scorer.ScoreToken), and no
// other item may come close to the target on the whole query (see
// queryCorpus.clearWinner). These kinds draw from random streams of their
// own, so the queries of the other kinds do not depend on them.
func Generate(d *optest.Dataset, o Options) []scorer.LabelledQuery {
	if o.PerKind <= 0 {
		o.PerKind = DefaultPerKind
	}
	o.UserID = cmp.Or(o.UserID, opgen.AdminID)
	c := newQueryCorpus(d, o.UserID)
	g := &queryGen{c: c, o: o, r: opgen.Rand(o.Seed, opgen.StreamQueries+100)}
	var out []scorer.LabelledQuery
	for _, kind := range Kinds() {
		qs := g.forKind(kind).kind(kind)
		for i := range qs {
			qs[i].ID = fmt.Sprintf("%s-%03d", kind, i+1)
			qs[i].Kind = kind
		}
		out = append(out, qs...)
	}
	return out
}

// queryGen draws queries of each kind.
type queryGen struct {
	c *queryCorpus
	o Options
	r *rand.Rand
}

func (g *queryGen) kind(kind string) []scorer.LabelledQuery {
	switch kind {
	case KindQuestionFramed:
		return g.questionFramed()
	case KindSynonym:
		return g.synonymQueries()
	case KindFiller:
		return g.fillerQueries()
	case KindNameTopic:
		return g.nameTopics()
	case KindTypo, KindReordered, KindQuestion, KindTruncated:
		return g.fromSubjects(kind)
	case KindID:
		return g.ids()
	case KindCommentFact:
		return g.commentFacts()
	case KindWikiPhrase:
		return g.wikiPhrases()
	case KindMeetingOutcome:
		return g.meetingOutcomes()
	case KindMeetingParticipant:
		return g.meetingParticipants()
	case KindNegative:
		return g.negatives()
	}
	return nil
}

// perm returns the indexes 0..n-1 in random order.
func (g *queryGen) perm(n int) []int { return g.r.Perm(n) }

func wpTarget(id int64) []scorer.Target { return []scorer.Target{{Type: "work_package", ID: id}} }

func meetingTarget(id int64) []scorer.Target { return []scorer.Target{{Type: "meeting", ID: id}} }
