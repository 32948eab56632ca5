package opgen

import (
	"time"

	"github.com/opsearch/opsearch/openproject"
)

func (g *generator) genQueries() []openproject.Query {
	r := Rand(g.o.Seed, StreamQueries)
	qs := make([]openproject.Query, len(queryNames))
	for i, name := range queryNames {
		q := &qs[i]
		q.ID = int64(i + 1)
		q.Name = name
		q.Public = i%3 != 2
		q.Starred = i < 2
		if i%2 == 1 {
			pr := g.projects[r.IntN(len(g.projects))].ref
			q.Project = &pr
		}
		q.CreatedAt = g.start.Add(time.Duration(24+r.IntN(30*24)) * time.Hour)
		q.UpdatedAt = q.CreatedAt.Add(time.Duration(r.IntN(200*24)) * time.Hour)
	}
	return qs
}
