package opgen

import (
	"strconv"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// Ids of the fixed users of every generated data set: the administrator,
// alice and bob, whose API keys are optest.AdminKey, AliceKey and BobKey.
const (
	AdminID = 1
	AliceID = 2
	BobID   = 3
)

func (g *generator) genUsers() []optest.User {
	r := Rand(g.o.Seed, streamUsers)
	n := 3 + g.o.Users
	users := make([]optest.User, 0, n)
	refs := make([]openproject.Ref, 0, n)
	add := func(first, last, name, login, key string, admin bool, lang string, created time.Time) {
		id := int64(len(users) + 1)
		u := optest.User{APIKey: key}
		u.ID = id
		u.Name = name
		u.Login = login
		u.FirstName = first
		u.LastName = last
		u.Email = login + "@example.com"
		u.Admin = admin
		u.Status = "active"
		u.Language = lang
		u.CreatedAt = created
		u.UpdatedAt = created.Add(time.Duration(r.Int64N(int64(genSpan/2))) / time.Second * time.Second)
		users = append(users, u)
		refs = append(refs, openproject.Ref{ID: id, Href: "/api/v3/users/" + strconv.FormatInt(id, 10), Title: name})
	}
	add("OpenProject", "Admin", "OpenProject Admin", "admin", optest.AdminKey, true, "en", g.start)
	add("Alice", "Andersson", "Alice Andersson", "alice", optest.AliceKey, false, "en", g.start)
	add("Bob", "Brennan", "Bob Brennan", "bob", optest.BobKey, false, "en", g.start)
	seen := map[string]bool{"admin": true, "alice": true, "bob": true}
	for i := range g.o.Users {
		first := firstNames[r.IntN(len(firstNames))]
		// Every other user gets an accented last name, so that diacritics
		// are present however few users are asked for.
		var last string
		if i%2 == 0 {
			last = accentedLastNames[r.IntN(len(accentedLastNames))]
		} else {
			last = lastNames[r.IntN(len(lastNames))]
		}
		id := int64(len(users) + 1)
		login := loginFold(first) + "." + loginFold(last)
		if seen[login] {
			login += strconv.FormatInt(id, 10)
		}
		seen[login] = true
		created := g.start.Add(time.Duration(r.Int64N(20*3600)) * time.Second)
		add(first, last, first+" "+last, login, "opsearch-user-"+strconv.FormatInt(id, 10), false,
			languages[r.IntN(len(languages))], created)
	}
	g.users = users
	g.userRefs = refs
	return users
}
