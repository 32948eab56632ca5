package openproject

import (
	"context"
	"errors"
	"net/url"
)

// Capabilities describes what an OpenProject server offers beyond the
// endpoints every supported version has. Versions differ, and
// coreVersion is hidden from non-admins, so features are probed, not
// inferred from a version number.
type Capabilities struct {
	// MeetingsList: GET /api/v3/meetings answers with a collection (newest
	// versions); older ones only serve single meetings.
	MeetingsList bool `json:"meetingsList"`
	// WikiList: GET /api/v3/wiki_pages answers with a collection (seen only
	// on unreleased branches); otherwise pages are found by id probing.
	WikiList bool `json:"wikiList"`
	// WikiText: wiki pages carry their text. Known only once a page was
	// read (WikiTextKnown).
	WikiText      bool `json:"wikiText"`
	WikiTextKnown bool `json:"wikiTextKnown"`
}

// Capabilities probes the server once per Client and caches the answer.
// The wiki text flag is updated whenever a wiki page is read. Errors other
// than "not there" (401, 5xx, network) are returned and nothing is cached,
// so a transient failure is not mistaken for a missing feature.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	c.mu.Lock()
	if c.caps != nil {
		caps := *c.caps
		caps.WikiText, caps.WikiTextKnown = c.wikiText, c.wikiTextKnown
		c.mu.Unlock()
		return caps, nil
	}
	c.mu.Unlock()

	probe := url.Values{"pageSize": {"1"}}
	var caps Capabilities
	_, err := c.ListMeetings(ctx, ListOptions{PageSize: 1})
	switch {
	case err == nil:
		caps.MeetingsList = true
	case errors.Is(err, ErrUnsupported), errors.Is(err, ErrPermission):
		// 403: the meetings module is off or the list is forbidden.
	default:
		return Capabilities{}, err
	}
	_, err = decodePage(ctx, c, get("/api/v3/wiki_pages", probe), wireWikiPage.model)
	switch {
	case err == nil:
		caps.WikiList = true
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrPermission), errors.Is(err, ErrRequest), errors.Is(err, ErrInvalidQuery):
		// 405 and friends also mean "no list here".
	default:
		return Capabilities{}, err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.caps = &caps
	caps.WikiText, caps.WikiTextKnown = c.wikiText, c.wikiTextKnown
	return caps, nil
}

// noteWikiText records whether a wiki page read from the server had text.
// Servers render text for all pages or for none, so the last page read
// speaks for all.
func (c *Client) noteWikiText(hasText bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wikiText, c.wikiTextKnown = hasText, true
}
