package querygen

// Vocabulary of the generated queries that carry words their target lacks
// (lackingkinds.go). Templates hold {t} for topic words of the target and {n}
// for a person's name; every other word of a template is a framing word,
// and a template is used for a target only if the target's text holds none
// of its framing words (not even as a prefix, typo or variant).
var (
	// framesWorkPackage are questions about any work package.
	framesWorkPackage = []string{
		"any ticket mentioning {t}?",
		"do we already track {t} somewhere?",
		"remind me which card covers {t}",
		"is somebody working on {t} right now?",
		"i remember an item on {t}, which one?",
		"looking for the work item around {t}",
		"what became of {t} eventually?",
		"status update on {t} please",
		"where did we park {t}?",
	}
	// framesBug, framesFeature and framesTask add questions for one type.
	framesBug = []string{
		"has anyone else run into {t}?",
		"known problem with {t}?",
		"customers keep hitting {t}, reported already?",
	}
	framesFeature = []string{
		"was {t} ever requested?",
		"anybody pushing for {t}?",
		"wishlist entry for {t}",
	}
	framesTask = []string{
		"has {t} been done yet?",
		"whoever picked up {t}?",
		"todo item for {t}?",
	}
	framesWiki = []string{
		"where can i read up on {t}?",
		"which doc explains {t}?",
		"looking for the writeup covering {t}",
		"any instructions for {t}?",
		"point me to the article on {t}",
		"wiki entry for {t}, anyone?",
		"got a manual for {t}?",
		"reference material regarding {t}",
	}
	framesMeeting = []string{
		"which session covered {t}?",
		"minutes from the call where we went over {t}",
		"when did we last sit down on {t}?",
		"what got settled regarding {t}?",
		"was {t} ever on an agenda?",
		"recap of the get-together on {t}",
		"who was present when {t} came up?",
	}
	// framesNameMeeting and framesNameWorkPackage combine a participant's
	// or assignee's name with topic words.
	framesNameMeeting = []string{
		"was {n} around when we discussed {t}?",
		"{t} catch-up {n} was in",
		"the {t} call with {n}",
		"{n} joined a session on {t}, which one?",
		"what did {n} say in the {t} meeting?",
		"find the {t} gathering {n} took part in",
	}
	framesNameWorkPackage = []string{
		"{n} got assigned something around {t}",
		"what is {n} doing on {t}?",
		"ticket for {n} regarding {t}",
		"{t}, handled by {n}?",
		"is {n} still busy with {t}?",
		"{n}'s card on {t}",
	}
)

// fillerWords are words people add to a query that carry no topic.
var fillerWords = []string{"btw", "pls", "asap", "maybe", "again", "still", "stuff", "thing", "somehow",
	"basically", "actually", "really", "kinda", "probably", "quick", "question", "anyway", "also", "just",
	"hmm", "ok", "thanks", "urgent", "lately", "recently", "somewhere", "something", "perhaps", "whatever",
	"etc", "fyi", "hey", "yesterday", "today", "currently", "ticket", "issue", "thingy"}

// synonymGroups are interchangeable words of project-management and
// documentation language, normalised (lowercase, no diacritics), one
// token each. A word may stand for any other word of its groups.
var synonymGroups = [][]string{
	// problems and their symptoms
	{"bug", "defect", "glitch"}, {"bugs", "defects", "glitches"},
	{"issue", "problem", "trouble"}, {"issues", "problems"},
	{"error", "failure", "fault"}, {"errors", "failures", "faults"},
	{"fails", "errors", "breaks"}, {"crashes", "dies"}, {"hangs", "freezes", "stalls"},
	{"broken", "faulty", "defective"}, {"missing", "absent", "lacking"},
	{"duplicate", "repeated", "doubled"}, {"outdated", "obsolete"}, {"stale", "old"},
	{"flaky", "unreliable", "unstable"}, {"slow", "sluggish", "laggy"}, {"wrong", "incorrect"},
	{"wrongly", "incorrectly"}, {"invalid", "bad"}, {"empty", "blank", "vacant"},
	{"corrupted", "damaged", "garbled"}, {"misleading", "confusing"}, {"redundant", "superfluous"},
	{"urgent", "pressing"}, {"critical", "severe"}, {"minor", "small"}, {"hidden", "invisible"},
	// work and people
	{"task", "chore", "card"}, {"tasks", "chores", "cards"}, {"ticket", "case"},
	{"meeting", "session", "gathering"}, {"users", "members", "accounts"}, {"user", "member", "account"},
	{"customer", "client"}, {"customers", "clients"}, {"deadline", "cutoff"}, {"budget", "funding"},
	{"sprint", "iteration"}, {"refinement", "grooming"}, {"hiring", "recruiting"}, {"incident", "outage"},
	{"critique", "feedback"}, {"sync", "catchup"}, {"notes", "minutes"}, {"kickoff", "launch"},
	{"roadmap", "timeline"}, {"backlog", "queue"}, {"owner", "maintainer"}, {"review", "assessment"},
	// documentation
	{"page", "document", "article"}, {"guide", "manual", "handbook"}, {"guidelines", "rules", "principles"},
	{"documentation", "docs"}, {"runbook", "playbook"}, {"glossary", "vocabulary"},
	{"troubleshooting", "debugging", "diagnosing"}, {"restoring", "recovering"}, {"rotating", "cycling"},
	{"agreements", "arrangements"}, {"charter", "mandate"}, {"conventions", "standards"},
	{"decision", "choice"}, {"record", "log"}, {"framework", "toolkit"}, {"database", "datastore"},
	{"flags", "toggles"}, {"jobs", "workers"}, {"permissions", "rights"}, {"checklist", "todo"},
	// things in an application
	{"default", "standard", "preset"}, {"settings", "preferences", "options"}, {"setting", "preference", "option"},
	{"dashboard", "panel"}, {"report", "summary"}, {"email", "mail"}, {"emails", "mails"},
	{"notification", "alert"}, {"notifications", "alerts"}, {"invoice", "bill"}, {"invoices", "bills"},
	{"password", "passphrase"}, {"login", "logon", "signin"}, {"screen", "view"}, {"list", "listing"},
	{"amount", "sum"}, {"amounts", "sums"}, {"entries", "records"}, {"data", "information"},
	// verbs
	{"delete", "remove", "erase"}, {"deleted", "removed", "erased"},
	{"show", "display", "reveal"}, {"shows", "displays"}, {"add", "introduce", "include"},
	{"allow", "permit", "let"}, {"support", "handle", "accept"}, {"fix", "repair", "resolve"},
	{"update", "refresh"}, {"upgrade", "bump"}, {"migrate", "port", "transfer"}, {"move", "relocate"},
	{"export", "download"}, {"import", "upload", "ingest"}, {"notify", "inform", "ping"},
	{"check", "verify", "inspect"}, {"investigate", "examine", "analyse"}, {"edit", "amend", "modify"},
	{"configure", "adjust"}, {"deploy", "ship"}, {"rename", "relabel"}, {"deprecate", "retire"},
	{"refactor", "restructure"}, {"validate", "confirm"}, {"monitor", "watch"}, {"restore", "recover"},
	{"revoke", "withdraw"}, {"approve", "endorse"}, {"optimise", "tune"}, {"simplify", "streamline"},
	{"consolidate", "unify"}, {"split", "divide"}, {"merge", "combine"}, {"throttle", "limit"},
	{"publish", "release"}, {"prioritise", "rank"}, {"track", "follow"}, {"forecast", "predict"},
	{"tag", "label"}, {"categorise", "classify"}, {"prune", "trim"}, {"compress", "shrink"},
	{"hide", "conceal"}, {"disable", "deactivate"}, {"enable", "activate"}, {"toggle", "switch"},
	{"revert", "undo"}, {"harden", "secure"}, {"clarify", "explain"}, {"collect", "gather"},
	{"evaluate", "assess"}, {"rebuild", "recreate"}, {"decommission", "dismantle"}, {"draft", "sketch"},
	{"schedule", "arrange"}, {"reproduce", "replicate"}, {"create", "make"}, {"created", "generated"},
	{"find", "locate"}, {"search", "lookup"}, {"quickly", "fast", "rapidly"}, {"automatically", "unattended"},
	{"ignores", "skips"}, {"loses", "drops"}, {"sends", "dispatches"}, {"returns", "yields"},
}
