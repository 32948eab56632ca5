package opgen

import (
	"strconv"

	"github.com/opsearch/opsearch/openproject"
)

// Ids of the fixed statuses, types and priorities (their position in the
// tables below plus one).
const (
	statusNew = iota + 1
	statusInProgress
	statusInReview
	statusOnHold
	statusClosed
	statusRejected
)

// Ids of the fixed types of generated and corpus data sets (fixedTypes).
// eval/querygen picks question templates by them.
const (
	TypeTask = iota + 1
	TypeBug
	TypeFeature
	TypeEpic
	TypeMilestone
	TypeStory
)

const (
	prioLow = iota + 1
	prioNormal
	prioHigh
	prioImmediate
)

func fixedStatuses() []openproject.Status {
	return []openproject.Status{
		{ID: statusNew, Name: "New", IsDefault: true, Color: "#1A67A3", Position: 1},
		{ID: statusInProgress, Name: "In progress", Color: "#F08C00", Position: 2},
		{ID: statusInReview, Name: "In review", Color: "#9C36B5", Position: 3},
		{ID: statusOnHold, Name: "On hold", Color: "#868E96", Position: 4},
		{ID: statusClosed, Name: "Closed", IsClosed: true, Color: "#2F9E44", Position: 5},
		{ID: statusRejected, Name: "Rejected", IsClosed: true, Color: "#E03131", Position: 6},
	}
}

func fixedTypes() []openproject.Type {
	return []openproject.Type{
		{ID: TypeTask, Name: "Task", Color: "#1A67A3", Position: 1, IsDefault: true},
		{ID: TypeBug, Name: "Bug", Color: "#E03131", Position: 2},
		{ID: TypeFeature, Name: "Feature", Color: "#2F9E44", Position: 3},
		{ID: TypeEpic, Name: "Epic", Color: "#9C36B5", Position: 4},
		{ID: TypeMilestone, Name: "Milestone", Color: "#F08C00", Position: 5, IsMilestone: true},
		{ID: TypeStory, Name: "User story", Color: "#0CA678", Position: 6},
	}
}

func fixedPriorities() []openproject.Priority {
	return []openproject.Priority{
		{ID: prioLow, Name: "Low", Position: 1, IsActive: true},
		{ID: prioNormal, Name: "Normal", Position: 2, IsDefault: true, IsActive: true},
		{ID: prioHigh, Name: "High", Position: 3, IsActive: true},
		{ID: prioImmediate, Name: "Immediate", Position: 4, IsActive: true},
	}
}

// refsOf returns the refs of a fixed table, indexed by id (index 0 unused).
func refsOf[T any](items []T, prefix string, f func(T) (int64, string)) []openproject.Ref {
	refs := make([]openproject.Ref, len(items)+1)
	for _, it := range items {
		id, name := f(it)
		refs[id] = openproject.Ref{ID: id, Href: prefix + strconv.FormatInt(id, 10), Title: name}
	}
	return refs
}
