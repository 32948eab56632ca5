package openproject

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors, one per failure kind. An *Error matches the sentinel of
// its kind with errors.Is, so callers branch with
// errors.Is(err, openproject.ErrNotFound) and read details with errors.As.
var (
	// ErrNotFound: 404. OpenProject answers 404, not 403, for resources the
	// caller may not see, so this also means "not visible to this key".
	ErrNotFound = errors.New("not found")
	// ErrUnauthenticated: 401, the API key is missing, wrong or revoked.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermission: 403, the resource is visible but the action is not
	// allowed (or an OAuth token lacks the scope).
	ErrPermission = errors.New("missing permission")
	// ErrInvalidQuery: 400, a filter, sort, select or parameter was rejected.
	ErrInvalidQuery = errors.New("invalid query")
	// ErrConflict: 409, the lockVersion sent with an update is stale.
	ErrConflict = errors.New("update conflict")
	// ErrValidation: 422, a write was rejected for its content.
	ErrValidation = errors.New("validation failed")
	// ErrRateLimited: 429; Error.RetryAfter says how long to wait.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: 5xx.
	ErrServer = errors.New("server error")
	// ErrNetwork: the request did not complete (connection refused, reset,
	// timeout).
	ErrNetwork = errors.New("network error")
	// ErrMalformed: the response body was truncated or not the JSON expected.
	ErrMalformed = errors.New("malformed response")
	// ErrTooLarge: a download was longer than the caller's limit.
	ErrTooLarge = errors.New("response too large")
	// ErrUnsupported: the server does not offer the endpoint (for example no
	// meetings list on older versions).
	ErrUnsupported = errors.New("not supported by this server")
	// ErrRequest: any other 4xx answer (406, 415, ...).
	ErrRequest = errors.New("request rejected")
)

// Error is a failed API call. It never contains the API key: the client
// builds Path from the request path and query only after redacting
// credentials.
type Error struct {
	// Kind is one of the sentinel errors above.
	Kind error
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Identifier is the short HAL errorIdentifier ("NotFound",
	// "UpdateConflict"), empty when the body had none.
	Identifier string
	// Message is the server's human-readable message, if any.
	Message string
	// Attribute names the offending property on 422 answers, if given.
	Attribute string
	// RetryAfter is the server's Retry-After for 429 and 503 answers.
	RetryAfter time.Duration
	// Method and Path identify the request (path without host or key).
	Method string
	Path   string
	// Err is the underlying cause for network and decoding failures.
	Err error

	// sentRetryAfter is the Retry-After the server sent; RetryAfter also
	// holds the client's own wait for a 429 without one.
	sentRetryAfter time.Duration
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s %s: %s", e.Method, e.Path, e.Kind)
	if e.Status != 0 {
		msg += fmt.Sprintf(" (HTTP %d", e.Status)
		if e.Identifier != "" {
			msg += " " + e.Identifier
		}
		msg += ")"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter.Round(time.Second))
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap exposes the cause, so errors.Is(err, context.DeadlineExceeded)
// works for timeouts.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Temporary reports whether repeating the same request later may succeed.
func (e *Error) Temporary() bool {
	switch e.Kind {
	case ErrRateLimited, ErrNetwork:
		return true
	case ErrServer:
		return e.Status == 502 || e.Status == 503 || e.Status == 504
	case ErrMalformed:
		// A truncated body is usually a dropped connection.
		return true
	}
	return false
}

// kindForStatus maps an HTTP status to a sentinel.
func kindForStatus(status int) error {
	switch {
	case status == 400:
		return ErrInvalidQuery
	case status == 401:
		return ErrUnauthenticated
	case status == 403:
		return ErrPermission
	case status == 404:
		return ErrNotFound
	case status == 409:
		return ErrConflict
	case status == 422:
		return ErrValidation
	case status == 429:
		return ErrRateLimited
	case status >= 500:
		return ErrServer
	default:
		return ErrRequest
	}
}

// ErrorIdentifierPrefix is the URN prefix of every HAL errorIdentifier.
const ErrorIdentifierPrefix = "urn:openproject-org:api:v3:errors:"

// Hint says what to check when err came from asking OpenProject whose the
// key is (Me) and OpenProject did not answer as it should: at that first
// request such a failure is nearly always the configuration. "" when err
// is none of those.
func Hint(err error) string {
	var e *Error
	me := errors.As(err, &e) && e.Path == "/api/v3/users/me"
	switch {
	case errors.Is(err, ErrNetwork):
		return "check OPENPROJECT_BASE_URL and that the server is up and reachable from here"
	case me && (errors.Is(err, ErrNotFound) || errors.Is(err, ErrMalformed)):
		return "the URL does not lead to OpenProject's API: OPENPROJECT_BASE_URL is the address you open OpenProject at in a browser (without /api/v3)"
	case errors.Is(err, ErrUnauthenticated):
		return "check OPENPROJECT_API_KEY (in OpenProject: My account, Access tokens)"
	}
	return ""
}
