package optest

import (
	"cmp"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Faults describe failures the server injects. Counters ("Next" fields)
// count down as requests consume them; Server.Faults reports what is left.
//
// Only requests whose path starts with PathPrefix are affected ("" means
// every request). At most one fault applies to a request, checked in this
// order: HangNext, FailNext, RateLimitNext, RateLimitEvery, ErrorRate,
// NotFoundNext, NotFoundRate, TruncateNext. Latency applies to every affected request, before the
// fault. Faults are applied before authentication, like a proxy or an
// overloaded server would, and every request is counted either way.
type Faults struct {
	// PathPrefix limits the faults to request paths with this prefix, e.g.
	// "/api/v3/work_packages".
	PathPrefix string
	// Latency is added to each affected request (on top of
	// Options.Latency). The sleep ends when the client gives up.
	Latency time.Duration

	// FailNext makes the next N affected requests answer FailStatus with
	// an InternalServerError body.
	FailNext int
	// FailStatus is the status of FailNext answers; 0 means 503.
	FailStatus int

	// RateLimitNext makes the next N affected requests answer 429 with a
	// Retry-After header of RetryAfter (in whole seconds, rounded up).
	RateLimitNext int
	// RateLimitEvery makes every Nth affected request (counted since the
	// last SetFaults) answer 429.
	RateLimitEvery int
	// RetryAfter is the Retry-After of 429 answers, and of FailNext answers
	// with status 503 when positive.
	RetryAfter time.Duration

	// ErrorRate is the probability in [0,1] that an affected request
	// answers one of ErrorStatuses. The draw is deterministic for a given
	// Seed.
	ErrorRate float64
	// ErrorStatuses are the statuses ErrorRate picks from, uniformly; nil
	// means 500, 502 and 503. []int{500} models a server whose failures
	// are all unhandled exceptions, which a client must not mistake for
	// permanent ones.
	ErrorStatuses []int
	// Seed seeds the ErrorRate and NotFoundRate draws.
	Seed uint64

	// NotFoundNext makes the next N affected requests answer 404 NotFound,
	// as for a resource that does not exist or is hidden, although it
	// exists and is visible.
	NotFoundNext int
	// NotFoundRate is the probability in [0,1] that an affected request
	// answers 404 NotFound although the resource exists. Real servers do
	// this transiently (a replica behind, a permission cache being
	// rebuilt), so one 404 is weak evidence that something was deleted.
	// Combine it with PathPrefix, e.g. "/api/v3/wiki_pages/".
	NotFoundRate float64

	// HangNext makes the next N affected requests block until the client
	// gives up (its context is done) or the server is closed.
	HangNext int
	// TruncateNext makes the next N affected responses announce their full
	// Content-Length, send half of the body and close the connection.
	TruncateNext int
}

// faultRand is the deterministic generator behind ErrorRate.
type faultRand = *rand.Rand

// SetFaults replaces the fault settings, restarting the RateLimitEvery
// count and the ErrorRate sequence.
func (s *Server) SetFaults(f Faults) {
	s.faultMu.Lock()
	s.setFaultsLocked(f)
	s.faultMu.Unlock()
}

func (s *Server) setFaultsLocked(f Faults) {
	s.faults = f
	s.faultCount = 0
	s.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
}

// Faults returns the current fault settings, with the counters that are
// left.
func (s *Server) Faults() Faults {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.faults
}

// faultKind is the fault chosen for one request.
type faultKind int

const (
	faultNone faultKind = iota
	faultHang
	faultFail
	faultRateLimit
	faultTruncate
	faultNotFound
)

// applyFaults injects the configured latency and fault into a request. It
// reports whether the request has been answered (or abandoned).
func (s *Server) applyFaults(ex *exchange) bool {
	s.faultMu.Lock()
	f := &s.faults
	if !strings.HasPrefix(ex.r.URL.Path, f.PathPrefix) {
		s.faultMu.Unlock()
		return false
	}
	s.faultCount++
	latency := f.Latency
	retryAfter := f.RetryAfter
	kind := faultNone
	status := 0
	switch {
	case f.HangNext > 0:
		f.HangNext--
		kind = faultHang
	case f.FailNext > 0:
		f.FailNext--
		kind = faultFail
		status = f.FailStatus
		status = cmp.Or(status, http.StatusServiceUnavailable)
	case f.RateLimitNext > 0:
		f.RateLimitNext--
		kind = faultRateLimit
	case f.RateLimitEvery > 0 && s.faultCount%f.RateLimitEvery == 0:
		kind = faultRateLimit
	case f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate:
		kind = faultFail
		statuses := f.ErrorStatuses
		if len(statuses) == 0 {
			statuses = []int{500, 502, 503}
		}
		status = statuses[s.rng.IntN(len(statuses))]
		retryAfter = 0
	case f.NotFoundNext > 0:
		f.NotFoundNext--
		kind = faultNotFound
	case f.NotFoundRate > 0 && s.rng.Float64() < f.NotFoundRate:
		kind = faultNotFound
	case f.TruncateNext > 0:
		f.TruncateNext--
		kind = faultTruncate
	}
	s.faultMu.Unlock()

	if !s.sleep(ex.r.Context(), latency) {
		return true
	}
	ex.due = ex.due.Add(latency) // on top of Options.Latency
	switch kind {
	case faultHang:
		select {
		case <-ex.r.Context().Done():
		case <-s.done:
			ex.sendError(http.StatusServiceUnavailable, "InternalServerError", msgInternal, nil)
		}
		return true
	case faultFail:
		var h map[string]string
		if status == http.StatusServiceUnavailable && retryAfter > 0 {
			h = map[string]string{"Retry-After": retryAfterSeconds(retryAfter)}
		}
		ex.sendError(status, "InternalServerError", msgInternal, h)
		return true
	case faultRateLimit:
		ex.sendError(http.StatusTooManyRequests, "TooManyRequests", "Too many requests. Please try again later.",
			map[string]string{"Retry-After": retryAfterSeconds(retryAfter)})
		return true
	case faultNotFound:
		ex.sendAPIError(errNotFound(msgNotFound))
		return true
	case faultTruncate:
		ex.truncate = true
	}
	return false
}

// retryAfterSeconds renders a Retry-After value in whole seconds, rounded
// up.
func retryAfterSeconds(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
