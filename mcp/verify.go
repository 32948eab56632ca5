package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	gosync "sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
)

// DefaultVerifyTTL is how long a result checked with OpenProject is
// trusted without asking again (Options.VerifyResults).
// Within it, a permission change shows at the next refresh of the
// user's view or when the verdict expires, whichever comes first.
const DefaultVerifyTTL = 5 * time.Second

// verifyConcurrency bounds the checks of one answer in flight.
const verifyConcurrency = 6

// viewRefresher is a Searcher over an index several users share: it
// computes the user's view of it again now.
type viewRefresher interface {
	RefreshView(ctx context.Context) error
}

// verifier checks, with the server's key, that OpenProject still shows
// the user each result of an answer (Options.VerifyResults): a
// permission taken away since the user's view was computed takes effect
// at once instead of at the next refresh.
type verifier struct {
	api API
	ttl time.Duration
	now func() time.Time

	mu      gosync.Mutex
	verdict map[string]verdict
}

type verdict struct {
	shown bool
	at    time.Time
}

func newVerifier(api API, ttl time.Duration) *verifier {
	if ttl <= 0 {
		ttl = DefaultVerifyTTL
	}
	return &verifier{api: api, ttl: ttl, now: time.Now, verdict: map[string]verdict{}}
}

// check returns the results OpenProject does not show the key's user
// (denied) and those it could not be asked about (unknown), by index.
func (v *verifier) check(ctx context.Context, results []search.Result) (denied, unknown map[int]bool, err error) {
	denied, unknown = map[int]bool{}, map[int]bool{}
	var mu gosync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(verifyConcurrency)
	now := v.now()
	for i, r := range results {
		key := indexer.DocID(r.Kind, r.ID)
		v.mu.Lock()
		vd, ok := v.verdict[key]
		v.mu.Unlock()
		if ok && now.Sub(vd.at) < v.ttl {
			if !vd.shown {
				denied[i] = true
			}
			continue
		}
		g.Go(func() error {
			shown, err := v.ask(gctx, r)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && ctx.Err() != nil:
				return err
			case err != nil:
				unknown[i] = true
				return nil
			case !shown:
				denied[i] = true
			}
			v.mu.Lock()
			v.verdict[key] = verdict{shown: shown, at: now}
			v.mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, fmt.Errorf("verify results: %w", err)
	}
	return denied, unknown, nil
}

// ask fetches r's item with the key: shown, hidden (404 or 403), or an
// error saying nothing about it.
func (v *verifier) ask(ctx context.Context, r search.Result) (bool, error) {
	var err error
	switch r.Kind {
	case kind.WorkPackage:
		_, err = v.api.WorkPackage(ctx, r.ID)
	case kind.WikiPage:
		_, err = v.api.WikiPage(ctx, r.ID)
	case kind.Meeting:
		_, err = v.api.Meeting(ctx, r.ID)
	case kind.Project:
		_, err = v.api.Project(ctx, strconv.FormatInt(r.ID, 10))
	case kind.Attachment:
		_, err = v.api.Attachment(ctx, r.ID)
	default:
		return false, fmt.Errorf("verify %s %d: unknown kind", r.Kind, r.ID)
	}
	if errors.Is(err, openproject.ErrNotFound) || errors.Is(err, openproject.ErrPermission) {
		return false, nil
	}
	return err == nil, err
}

// verifyAnswer checks resp's results with OpenProject. If any is no
// longer the user's, their view is computed again and q searched once
// more; what still fails is withheld, and the note says how many and why.
func (s *server) verifyAnswer(ctx context.Context, sr Searcher, q search.Query, resp search.Response) (search.Response, string, error) {
	denied, unknown, err := s.verify.check(ctx, resp.Results)
	if err != nil {
		return resp, "", err
	}
	if r, ok := sr.(viewRefresher); ok && len(denied) > 0 {
		if err := r.RefreshView(ctx); err != nil {
			s.log.WarnContext(ctx, "verify results: cannot compute the user's view again", "error", err)
		} else if again, err := sr.Search(ctx, q); err == nil {
			resp = again
			if denied, unknown, err = s.verify.check(ctx, resp.Results); err != nil {
				return resp, "", err
			}
		}
	}
	if len(denied)+len(unknown) == 0 {
		return resp, "", nil
	}
	kept := resp.Results[:0:0]
	for i, r := range resp.Results {
		if !denied[i] && !unknown[i] {
			kept = append(kept, r)
		}
	}
	resp.Results = kept
	resp.Total = max(0, resp.Total-len(denied)-len(unknown))
	var note string
	if len(denied) > 0 {
		note = fmt.Sprintf("%d results withheld: OpenProject no longer shows them to you", len(denied))
	}
	if len(unknown) > 0 {
		if note != "" {
			note += "; "
		}
		note += fmt.Sprintf("%d results withheld: OpenProject could not be asked whether you may still see them", len(unknown))
	}
	return resp, note + " (the total may be off by as many)", nil
}
