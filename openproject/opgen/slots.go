package opgen

import (
	"sort"
	"time"
)

// slot writes the value of the template slot {name}, in one of the steps
// below by the kind of value.
func (w *writer) slot(name string) {
	if w.wordSlot(name) || w.techSlot(name) || w.numberSlot(name) || w.refSlot(name) ||
		w.timeSlot(name) || w.phraseSlot(name) || w.braceSlot(name) {
		return
	}
	panic("opgen: unknown template slot {" + name + "}")
}

// wordSlot writes a word of the vocabulary: nouns, verbs, adjectives,
// components, screens, roles and technologies, mostly of the project's
// domain. Upper-case names capitalise the word.
func (w *writer) wordSlot(name string) bool {
	r := w.r
	switch name {
	case "n":
		w.b.WriteString(w.pickSkewed(w.dom().nouns))
	case "N":
		w.writeCap(w.pickSkewed(w.dom().nouns))
	case "x": // a noun from anywhere
		w.b.WriteString(w.pick(domains[r.IntN(len(domains))].nouns))
	case "g":
		w.b.WriteString(w.pickSkewed(generalNouns))
	case "G":
		w.writeCap(w.pickSkewed(generalNouns))
	case "v":
		w.b.WriteString(w.pickSkewed(verbs))
	case "V":
		w.writeCap(w.pickSkewed(verbs))
	case "a":
		w.b.WriteString(w.pickSkewed(adjectives))
	case "A":
		w.writeCap(w.pickSkewed(adjectives))
	case "c", "C":
		w.b.WriteString(w.pick(w.dom().components))
	case "s":
		w.b.WriteString(w.pick(w.dom().screens))
	case "r":
		w.b.WriteString(w.pick(w.dom().roles))
	case "R":
		w.writeCap(w.pick(w.dom().roles))
	case "t", "T":
		w.b.WriteString(w.pickSkewed(techs))
	default:
		return false
	}
	return true
}

// techSlot writes a technical fragment: an error code, host name,
// version, identifier, source path or configuration key.
func (w *writer) techSlot(name string) bool {
	r := w.r
	switch name {
	case "e":
		if r.IntN(4) == 0 {
			w.b.WriteString("ERR_")
			w.writeUpperASCII(w.pick(w.dom().idents))
			w.b.WriteByte('_')
			w.b.WriteString(w.pick(errorStates))
		} else {
			w.b.WriteString(w.pick(errorCodes))
		}
	case "h":
		w.host()
	case "ver":
		if r.IntN(3) != 0 {
			w.b.WriteByte('v')
		}
		w.int(1 + r.IntN(5))
		w.b.WriteByte('.')
		w.int(r.IntN(21))
		w.b.WriteByte('.')
		w.int(r.IntN(16))
	case "id":
		w.camel()
	case "sn":
		w.snake()
	case "path":
		w.b.WriteString(w.pick(srcDirs))
		w.b.WriteByte('/')
		w.b.WriteString(w.pick(w.dom().idents))
		w.b.WriteByte('/')
		w.snake()
		w.b.WriteString(w.pick(fileExts))
		w.b.WriteByte(':')
		w.int(1 + r.IntN(900))
	case "cfg":
		w.b.WriteString(w.p.dom.name)
		w.b.WriteByte('.')
		w.b.WriteString(w.pick(w.p.dom.idents))
		w.b.WriteByte('.')
		w.b.WriteString(w.pick(snakeSuffixes))
	default:
		return false
	}
	return true
}

// numberSlot writes a number: a count, a large number, a duration, a
// percentage or an amount of money.
func (w *writer) numberSlot(name string) bool {
	r := w.r
	switch name {
	case "num":
		w.int(2 + r.IntN(98))
	case "big":
		w.int(100 + r.IntN(99900))
	case "ms":
		if r.IntN(4) == 0 {
			w.int(1 + r.IntN(30))
			w.b.WriteByte('.')
			w.int(r.IntN(10))
			w.b.WriteString(" s")
		} else {
			w.int(5 + r.IntN(995))
			w.b.WriteString(" ms")
		}
	case "pct":
		w.int(1 + r.IntN(99))
		w.b.WriteByte('%')
	case "cur":
		w.money()
	default:
		return false
	}
	return true
}

// refSlot writes a reference to the data: a person of the project, a
// mention, the project's name or an earlier work package.
func (w *writer) refSlot(name string) bool {
	switch name {
	case "u":
		w.b.WriteString(w.g.users[w.person()].Name)
	case "uf":
		w.b.WriteString(w.g.users[w.person()].FirstName)
	case "@":
		w.mention()
	case "wp":
		w.wpRef()
	case "proj":
		w.b.WriteString(w.p.name)
	default:
		return false
	}
	return true
}

// timeSlot writes a date or a part of one.
func (w *writer) timeSlot(name string) bool {
	r := w.r
	switch name {
	case "date":
		w.b.WriteString(w.g.start.AddDate(0, 0, r.IntN(365)).Format(time.DateOnly))
	case "q":
		w.b.WriteString(w.pick(quarters))
	case "weekday":
		w.b.WriteString(w.pick(weekdays))
	case "month":
		w.b.WriteString(w.pick(months))
	case "hh":
		w.int2(r.IntN(24))
	case "mm":
		w.int2(r.IntN(60))
	default:
		return false
	}
	return true
}

// phraseSlot writes a phrase from one of the lists of words.go: cities,
// browsers, vendors, failures, root causes, ticket numbers and the like.
func (w *writer) phraseSlot(name string) bool {
	r := w.r
	switch name {
	case "city":
		w.b.WriteString(w.pick(cities))
	case "browser":
		w.b.WriteString(w.pick(browsers))
	case "os":
		w.b.WriteString(w.pick(systems))
	case "vendor":
		w.b.WriteString(w.pick(vendors))
	case "fail":
		w.b.WriteString(w.pick(failures))
	case "cond":
		w.b.WriteString(w.pick(conditions))
	case "adv":
		w.b.WriteString(w.pick(adverbs))
	case "env":
		w.b.WriteString(w.pick(environments))
	case "benefit":
		w.b.WriteString(w.pick(benefits))
	case "ct":
		w.b.WriteString(w.pick(commentTools))
	case "rc":
		w.expand(w.pick(rootCauses))
	case "vt":
		w.b.WriteString(w.pick(vendorTicketPrefixes))
		w.int(10000 + r.IntN(90000))
	default:
		return false
	}
	return true
}

// braceSlot writes a literal brace, which templates cannot hold as such.
func (w *writer) braceSlot(name string) bool {
	switch name {
	case "lb":
		w.b.WriteByte('{')
	case "rb":
		w.b.WriteByte('}')
	default:
		return false
	}
	return true
}

func (w *writer) person() int {
	if len(w.people) == 0 {
		return AdminID - 1
	}
	return w.people[w.r.IntN(len(w.people))]
}

// mention writes an @-mention, half of the time in the markup OpenProject
// stores when a mention is picked from the autocompleter.
func (w *writer) mention() {
	u := &w.g.users[w.person()]
	if w.r.IntN(2) == 0 {
		w.b.WriteByte('@')
		w.b.WriteString(u.Login)
		return
	}
	w.b.WriteString(`<mention class="mention" data-id="`)
	w.int(int(u.ID))
	w.b.WriteString(`" data-type="user" data-text="@`)
	w.b.WriteString(u.Name)
	w.b.WriteString(`">@`)
	w.b.WriteString(u.Name)
	w.b.WriteString(`</mention>`)
}

// wpRef writes "#id" of an earlier work package, preferably of the same
// project.
func (w *writer) wpRef() {
	limit := w.wpID - 1 // ids below the current one
	if limit < 1 {
		w.b.WriteString("the previous ticket")
		return
	}
	if pw := w.g.wpByProject[w.p.ref.ID-1]; len(pw) > 0 && w.r.IntN(10) < 7 {
		// Indices below limit are ids below the current one.
		k := sort.Search(len(pw), func(k int) bool { return int(pw[k]) >= limit })
		if k > 0 {
			w.b.WriteByte('#')
			w.int(int(pw[w.r.IntN(k)]) + 1)
			return
		}
	}
	w.b.WriteByte('#')
	w.int(1 + w.r.IntN(limit))
}

func (w *writer) host() {
	r := w.r
	if r.IntN(3) == 0 {
		w.b.WriteString(w.pick(hostRoles))
		w.b.WriteByte('-')
		w.int2(1 + r.IntN(40))
		w.b.WriteByte('.')
		w.b.WriteString(w.pick(regions))
		w.b.WriteString(".example.net")
		return
	}
	w.b.WriteString(w.pick(w.dom().components))
	w.b.WriteByte('-')
	w.int2(1 + r.IntN(24))
	w.b.WriteByte('.')
	w.b.WriteString(w.pick(envShort))
	w.b.WriteByte('.')
	w.b.WriteString(w.pick(hostDomains))
}

func (w *writer) camel() {
	d := w.dom()
	w.b.WriteString(w.pick(identPrefixes))
	w.writeCap(w.pick(d.idents))
	if w.r.IntN(3) == 0 {
		w.writeCap(w.pick(d.idents))
	}
	w.b.WriteString(w.pick(identSuffixes))
}

func (w *writer) snake() {
	d := w.dom()
	w.b.WriteString(w.pick(d.idents))
	if w.r.IntN(2) == 0 {
		w.b.WriteByte('_')
		w.b.WriteString(w.pick(d.idents))
	}
	w.b.WriteByte('_')
	w.b.WriteString(w.pick(snakeSuffixes))
}

func (w *writer) money() {
	r := w.r
	amount := (1 + r.IntN(500)) * 100
	if amount < 1000 {
		amount += r.IntN(100)
	}
	cur := [...]string{"€", "€", "€", "$", "CHF ", "£"}[r.IntN(6)]
	w.b.WriteString(cur)
	if amount >= 1000 {
		w.int(amount / 1000)
		w.b.WriteByte(',')
		w.b.WriteByte(byte('0' + amount/100%10))
		w.int2(amount % 100)
	} else {
		w.int(amount)
	}
}
