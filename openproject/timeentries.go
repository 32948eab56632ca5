package openproject

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	json "github.com/go-json-experiment/json/v1"
)

// Time entries: GET and POST /api/v3/time_entries. The API renders hours
// as an ISO 8601 duration (TimeEntryRepresenter, format_duration_from_hours)
// and parses one on writes; the model carries plain hours.

// NewTimeEntry is the input of CreateTimeEntry. WorkPackageID, Hours and
// SpentOn are required; the server takes the project from the work package
// and the user from the credential.
type NewTimeEntry struct {
	WorkPackageID int64
	// Hours must be positive.
	Hours float64
	// SpentOn is YYYY-MM-DD.
	SpentOn string
	// Comment is plain text; empty sends none.
	Comment string
	// ActivityID is a time entry activity; 0 leaves the server's default.
	ActivityID int64
}

// ListTimeEntries lists the time entries the user may see. The server
// filters by work_package, project, user, spent_on (<>d with two dates),
// created_at, updated_at and activity.
func (c *Client) ListTimeEntries(ctx context.Context, opts ListOptions) (Page[TimeEntry], error) {
	return decodePage(ctx, c, get("/api/v3/time_entries", opts.Values()), wireTimeEntry.model)
}

// CreateTimeEntry logs time on a work package and returns the entry as the
// server stored it. Like every write it is never retried: a timed-out
// request may have been applied, and logging the time twice is worse than
// reporting the error.
func (c *Client) CreateTimeEntry(ctx context.Context, n NewTimeEntry) (TimeEntry, error) {
	if n.WorkPackageID <= 0 {
		return TimeEntry{}, fmt.Errorf("create time entry: work package id %d is not positive", n.WorkPackageID)
	}
	if !(n.Hours > 0) || math.IsInf(n.Hours, 0) {
		return TimeEntry{}, fmt.Errorf("create time entry: hours %v must be a positive number", n.Hours)
	}
	if _, err := time.Parse(time.DateOnly, n.SpentOn); err != nil {
		return TimeEntry{}, fmt.Errorf("create time entry: spentOn %q is not a date YYYY-MM-DD", n.SpentOn)
	}
	body := map[string]any{"hours": FormatHours(n.Hours), "spentOn": n.SpentOn}
	if n.Comment != "" {
		body["comment"] = map[string]any{"raw": n.Comment}
	}
	links := map[string]any{"workPackage": map[string]any{"href": c.href("work_packages", n.WorkPackageID)}}
	c.setLink(links, "activity", "time_entries/activities", n.ActivityID)
	body["_links"] = links
	var w wireTimeEntry
	if err := c.do(ctx, request{method: http.MethodPost, path: "/api/v3/time_entries", body: body}, &w); err != nil {
		return TimeEntry{}, err
	}
	return w.model(), nil
}

// SpentBetween matches time entries booked on a day in [from, to], both
// inclusive (YYYY-MM-DD); an empty bound is open.
func SpentBetween(from, to string) Filter {
	return Filter{Name: "spent_on", Operator: "<>d", Values: []string{from, to}}
}

// FormatHours renders hours as the ISO 8601 duration the API takes, to the
// second: 1.5 is "PT1H30M", 0 is "PT0S".
func FormatHours(h float64) string {
	secs := int64(math.Round(h * 3600))
	if secs <= 0 {
		return "PT0S"
	}
	var b strings.Builder
	b.WriteString("PT")
	for _, u := range []struct {
		n    int64
		unit byte
	}{{secs / 3600, 'H'}, {secs / 60 % 60, 'M'}, {secs % 60, 'S'}} {
		if u.n > 0 {
			b.WriteString(strconv.FormatInt(u.n, 10))
			b.WriteByte(u.unit)
		}
	}
	return b.String()
}

// errDuration is the cause of every ParseHours failure.
var errDuration = errors.New("not an ISO 8601 duration")

// ParseHours reads an ISO 8601 duration as hours: "PT5H", "PT1H30M",
// "P1DT2H" (a day is 24 hours, a week 7 days), fractions in any place
// ("PT1.5H"). Years and months have no fixed length and are refused.
func ParseHours(s string) (float64, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "P")
	if !ok || rest == "" {
		return 0, fmt.Errorf("parse duration %q: %w", s, errDuration)
	}
	hours, inTime, seen := 0.0, false, false
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return 0, fmt.Errorf("parse duration %q: %w", s, errDuration)
			}
			inTime, rest = true, rest[1:]
			if rest == "" {
				return 0, fmt.Errorf("parse duration %q: %w", s, errDuration)
			}
			continue
		}
		i := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != ',' })
		if i <= 0 {
			return 0, fmt.Errorf("parse duration %q: %w", s, errDuration)
		}
		v, err := strconv.ParseFloat(strings.Replace(rest[:i], ",", ".", 1), 64)
		if err != nil {
			return 0, fmt.Errorf("parse duration %q: %w", s, errDuration)
		}
		var per float64
		switch unit := rest[i]; {
		case !inTime && unit == 'W':
			per = 7 * 24
		case !inTime && unit == 'D':
			per = 24
		case inTime && unit == 'H':
			per = 1
		case inTime && unit == 'M':
			per = 1.0 / 60
		case inTime && unit == 'S':
			per = 1.0 / 3600
		default:
			return 0, fmt.Errorf("parse duration %q: %w", s, errDuration)
		}
		hours += v * per
		seen = true
		rest = rest[i+1:]
	}
	if !seen {
		return 0, fmt.Errorf("parse duration %q: %w", s, errDuration)
	}
	return hours, nil
}

// wireTimeEntry is the HAL TimeEntry. Hours are decoded leniently: a
// duration, or a number some proxies and older versions send.
type wireTimeEntry struct {
	ID        lenientInt  `json:"id"`
	Hours     wireHours   `json:"hours"`
	SpentOn   string      `json:"spentOn"`
	Comment   formattable `json:"comment"`
	CreatedAt lenientTime `json:"createdAt"`
	UpdatedAt lenientTime `json:"updatedAt"`
	Links     halLinks    `json:"_links"`
}

func (w wireTimeEntry) model() TimeEntry {
	return TimeEntry{
		ID: int64(w.ID), Hours: float64(w.Hours), SpentOn: w.SpentOn, Comment: w.Comment.Raw,
		User: w.Links.ref("user"), WorkPackage: w.Links.optRef("workPackage"), Project: w.Links.ref("project"),
		Activity: w.Links.optRef("activity"), CreatedAt: w.CreatedAt.Time, UpdatedAt: w.UpdatedAt.Time,
	}
}

// wireHours is hours as an ISO 8601 duration string or a plain number;
// anything else (null, garbage) is 0 rather than a failed page.
type wireHours float64

func (h *wireHours) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if v, err := ParseHours(s); err == nil {
			*h = wireHours(v)
			return nil
		}
	}
	var n lenientNumber
	_ = decodeBody(b, &n)
	*h = wireHours(n.Value)
	return nil
}
