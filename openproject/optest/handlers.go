package optest

// The API's read handlers live in one file per resource: root.go (the
// root and spec.json), users.go, projects.go, workpackages.go,
// activities.go, reference.go (statuses, types, priorities), wiki.go,
// meetings.go and savedqueries.go; the writes in mutate.go, the routing in
// routes.go. This file holds what they share.

// visibleByID looks up the entity whose id is arg in byID and returns it
// when u may see it: when visible says so. The caller holds the store lock.
func visibleByID[T any](arg string, byID map[int64]*T, visible func(*T) bool) (*T, bool) {
	id, ok := parseID(arg)
	if !ok {
		return nil, false
	}
	v, ok := byID[id]
	if !ok || !visible(v) {
		return nil, false
	}
	return v, true
}
