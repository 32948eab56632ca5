package mcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/sync"
)

// ErrIndexNotReady is returned by Index.Searcher while the local index is
// still being opened or built for the first time.
var ErrIndexNotReady = errors.New("the local index is not ready yet")

// ArgError is a bad tool argument. Its text names the parameter and the
// problem and goes to the caller verbatim.
type ArgError struct {
	Param string
	Msg   string
}

func (e *ArgError) Error() string { return fmt.Sprintf("invalid argument %s: %s", e.Param, e.Msg) }

func argErr(param, format string, args ...any) error {
	return &ArgError{Param: param, Msg: fmt.Sprintf(format, args...)}
}

// fail turns err into the user-safe error a tool returns (it becomes an
// isError result), and logs the structured cause with the call's request
// id (callID), which the message repeats, so an operator can find the log
// line (and the audit log's line for the call). Upstream text never
// reaches the caller unfiltered: only the server's own short messages
// for rejected queries and writes, which describe the caller's input.
func (s *server) fail(ctx context.Context, tool string, err error) error {
	var ae *ArgError
	if errors.As(err, &ae) {
		return ae
	}
	id := callID(ctx)
	msg := userMessage(err)
	if s.opts.OnRejected != nil && errors.Is(err, openproject.ErrUnauthenticated) {
		s.opts.OnRejected()
	}
	s.log.Log(ctx, failLevel(err), "tool call failed", "tool", tool, "request_id", id, "error", err.Error())
	return &toolError{msg: fmt.Sprintf("%s (request id %s)", msg, id), category: errorCategory(err)}
}

// errorCategory names the kind of a failure for the audit log: a word
// from a closed set, never the error's text, which may quote what the
// caller sent.
func errorCategory(err error) string {
	var (
		ae *ArgError
		ar argsRefused
		te *toolError
		le *sync.LockedError
	)
	switch {
	case errors.As(err, &ae), errors.As(err, &ar):
		return "invalid_argument"
	case errors.As(err, &te):
		return cmp.Or(te.category, "tool_error")
	case errors.As(err, &le):
		return "index_locked"
	case errors.Is(err, ErrIndexNotReady):
		return "index_not_ready"
	case errors.Is(err, sync.ErrKeyNotVerified):
		return "key_not_verified"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, openproject.ErrUnauthenticated):
		return "unauthenticated"
	case errors.Is(err, openproject.ErrNotFound):
		return "not_found"
	case errors.Is(err, openproject.ErrPermission):
		return "permission"
	case errors.Is(err, openproject.ErrRateLimited):
		return "rate_limited"
	case errors.Is(err, openproject.ErrUnsupported):
		return "unsupported"
	case errors.Is(err, openproject.ErrInvalidQuery):
		return "invalid_query"
	case errors.Is(err, openproject.ErrValidation):
		return "validation"
	case errors.Is(err, openproject.ErrConflict):
		return "conflict"
	case errors.Is(err, openproject.ErrServer), errors.Is(err, openproject.ErrNetwork), errors.Is(err, openproject.ErrMalformed):
		return "unavailable"
	case errors.Is(err, openproject.ErrRequest):
		return "rejected"
	}
	return "internal"
}

// failLevel is how loud a failed call is in the log: what the caller
// asked for does not exist or is not theirs (routine, their business:
// INFO); OpenProject refused the credential or is limiting (WARN); the
// rest is ours or OpenProject's to fix (ERROR).
func failLevel(err error) slog.Level {
	switch {
	case errors.Is(err, openproject.ErrNotFound), errors.Is(err, openproject.ErrPermission),
		errors.Is(err, openproject.ErrInvalidQuery), errors.Is(err, openproject.ErrValidation), errors.Is(err, openproject.ErrConflict),
		errors.Is(err, context.Canceled), errors.Is(err, sync.ErrKeyNotVerified), errors.Is(err, ErrIndexNotReady):
		return slog.LevelInfo
	case errors.Is(err, openproject.ErrUnauthenticated), errors.Is(err, openproject.ErrRateLimited):
		return slog.LevelWarn
	}
	return slog.LevelError
}

func userMessage(err error) string {
	var oe *openproject.Error
	hasOE := errors.As(err, &oe)
	switch {
	case errors.Is(err, ErrIndexNotReady):
		return err.Error()
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	case errors.Is(err, openproject.ErrUnauthenticated):
		return "OpenProject rejected the API key (HTTP 401): check OPENPROJECT_API_KEY"
	case errors.Is(err, openproject.ErrNotFound):
		return "not found: the item does not exist or this API key may not see it"
	case errors.Is(err, openproject.ErrPermission):
		return "no permission: this API key may not do that (HTTP 403)"
	case errors.Is(err, openproject.ErrRateLimited):
		wait := 0.0
		if hasOE {
			wait = math.Ceil(oe.RetryAfter.Seconds())
		}
		if wait > 0 {
			return fmt.Sprintf("OpenProject is rate limiting requests: retry after %.0f s", wait)
		}
		return "OpenProject is rate limiting requests: retry later"
	case errors.Is(err, openproject.ErrUnsupported):
		return "not supported by this OpenProject server"
	case errors.Is(err, openproject.ErrInvalidQuery) && hasOE && oe.Message != "":
		return "OpenProject rejected the query: " + oe.Message
	case errors.Is(err, openproject.ErrValidation) && hasOE && oe.Message != "":
		return "OpenProject rejected the change: " + oe.Message
	case errors.Is(err, openproject.ErrConflict):
		return "the work package was changed by someone else since it was read (HTTP 409)"
	case errors.Is(err, openproject.ErrServer), errors.Is(err, openproject.ErrNetwork),
		errors.Is(err, openproject.ErrMalformed), errors.Is(err, context.DeadlineExceeded):
		return "OpenProject is unavailable right now: try again later"
	case errors.Is(err, openproject.ErrRequest), errors.Is(err, openproject.ErrInvalidQuery):
		return "OpenProject rejected the request"
	}
	return "internal error"
}

// ctxCallID carries a tool call's request id (see auditCalls).
type ctxCallID struct{}

// callID is the request id of the tool call ctx belongs to: every log
// line about the call, the message the caller gets and the call's audit
// line carry the same one. Outside a call, a new id.
func callID(ctx context.Context) string {
	if id, ok := ctx.Value(ctxCallID{}).(string); ok {
		return id
	}
	return requestID()
}

func requestID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("t%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}
