package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	gosync "sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/sync"
)

// Every tool call, of every tool and over every transport (stdio,
// Streamable HTTP, SSE and the REST bridge, which calls the same server),
// passes through auditCalls: the one place that gives the call its
// request id and, where the index keeps an audit log
// (UserIndexOptions.Audit), records the call there.

// callRecorder is an Index that keeps the audit log of the calls served
// from it: UserIndex, for the user it holds.
type callRecorder interface {
	// audits reports whether calls are recorded at all.
	audits() bool
	// recordCall records one call for the index's user; failures are
	// the recorder's to report.
	recordCall(ctx context.Context, e audit.Entry)
}

var _ callRecorder = (*UserIndex)(nil)

// unknownTool is what the audit log says for a tool name the server does
// not have: the name is the client's text, and may be anything.
const unknownTool = "(unknown)"

// auditCalls is the outermost receiving middleware: it gives each
// tools/call and resources/read its request id (callID), and records the
// call with s.rec after it ended, whatever the outcome. The arguments are
// digested as they arrived, before checkToolArgs rewrites them; a read's
// argument is its URI.
func (s *server) auditCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		var tool string
		var args []byte
		switch r := req.(type) {
		case *sdk.CallToolRequest:
			if method != "tools/call" || r.Params == nil {
				return next(ctx, method, req)
			}
			tool, args = auditToolName(r.Params.Name), r.Params.Arguments
		case *sdk.ReadResourceRequest:
			if method != "resources/read" || r.Params == nil {
				return next(ctx, method, req)
			}
			tool = auditResourceName(r.Params.URI)
			args, _ = json.Marshal(map[string]string{"uri": r.Params.URI})
		default:
			return next(ctx, method, req)
		}
		id := requestID()
		ctx = context.WithValue(ctx, ctxCallID{}, id)
		if s.rec == nil {
			return next(ctx, method, req)
		}
		start := time.Now()
		e := audit.Entry{Time: start, Tool: tool, ArgsSHA256: audit.ArgsDigest(args), RequestID: id}
		res, err := next(ctx, method, req)
		e.Duration = time.Since(start)
		e.Outcome, e.Error = callOutcome(res, err)
		// Recorded even when the client gave up on the call.
		s.rec.recordCall(context.WithoutCancel(ctx), e)
		return res, err
	}
}

// auditResourceName is what the audit log names a resources/read:
// "resources/read:" and the resource's kind (work_package, ..., or
// search_ui), or with unknownTool for a URI no resource matches.
func auditResourceName(uri string) string {
	if uri == UISearchURI {
		return "resources/read:search_ui"
	}
	for _, r := range itemResources {
		if strings.HasPrefix(uri, resourceScheme+r.collection+"/") {
			return "resources/read:" + r.name
		}
	}
	return "resources/read:" + unknownTool
}

// auditToolName is name if the server has such a tool (write tools
// included, which a read-only server refuses), else unknownTool.
func auditToolName(name string) string {
	schemas, err := toolSchemas()
	if _, ok := schemas[name]; !ok || err != nil {
		return unknownTool
	}
	return name
}

// callOutcome is a call's outcome and, for a failure, its category
// (errorCategory): never its message.
func callOutcome(res sdk.Result, err error) (outcome, category string) {
	if err != nil {
		var (
			we *jsonrpc.Error
			te *toolError
		)
		switch {
		case errors.As(err, &te):
			// A failed resource read: an error for the protocol, with
			// the tool error's category.
			return audit.OutcomeError, errorCategory(te)
		case isResourceNotFound(err):
			return audit.OutcomeError, "not_found"
		case errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams:
			return audit.OutcomeError, "invalid_request"
		case errors.As(err, &we):
			return audit.OutcomeError, "protocol"
		}
		return audit.OutcomeError, errorCategory(err)
	}
	tr, ok := res.(*sdk.CallToolResult)
	if !ok || tr == nil || !tr.IsError {
		return audit.OutcomeOK, ""
	}
	if terr := tr.GetError(); terr != nil {
		return audit.OutcomeError, errorCategory(terr)
	}
	return audit.OutcomeError, "tool_error"
}

// maxPendingCalls bounds the calls a callLog holds while it does not
// know its user yet.
const maxPendingCalls = 1000

// callLog is a UserIndex's audit log: the log in its user's own
// directory, opened when the user is set. Calls served before that (the
// stdio server answers before OpenProject said whose the key is) wait,
// up to maxPendingCalls, and are written for the user once known: the
// stdio server serves one key, so they were that user's.
type callLog struct {
	opts audit.Options
	log  *slog.Logger

	// useMu serialises use: opening and closing logs.
	useMu gosync.Mutex

	mu      gosync.Mutex
	l       *audit.Log
	user    audit.User
	pending []audit.Entry
	dropped int
}

func newCallLog(opts audit.Options, log *slog.Logger) *callLog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.Logger = log
	return &callLog{opts: opts, log: log}
}

// use makes u's log the one written to (nil: none), opening it in u's own
// directory unless it is open already, and closing the previous one.
func (c *callLog) use(u *sync.User) {
	c.useMu.Lock()
	defer c.useMu.Unlock()
	c.mu.Lock()
	cur := c.l
	c.mu.Unlock()
	if u == nil {
		c.swap(nil, audit.User{})
		if cur != nil {
			if err := cur.Close(); err != nil {
				c.log.Error("close the audit log", "dir", cur.Dir(), "error", err)
			}
		}
		return
	}
	user := audit.User{ID: u.Identity.UserID, Login: u.Identity.Login, Name: u.Identity.Name}
	dir := filepath.Join(u.OwnDir, audit.DirName)
	if cur != nil && cur.Dir() == dir {
		c.mu.Lock()
		c.user = user
		c.mu.Unlock()
		return
	}
	l, err := audit.Open(dir, c.opts)
	if err != nil {
		c.log.Error("the audit log cannot be opened: tool calls are not recorded", "user_id", user.ID, "error", err)
	}
	pending, dropped := c.swap(l, user)
	if cur != nil {
		if err := cur.Close(); err != nil {
			c.log.Error("close the audit log", "dir", cur.Dir(), "error", err)
		}
	}
	if l == nil {
		return
	}
	for _, e := range pending {
		e.User = user
		if err := l.Record(context.Background(), e); err != nil {
			c.log.Error("audit log: record a call", "tool", e.Tool, "request_id", e.RequestID, "error", err)
		}
	}
	if dropped > 0 {
		c.log.Warn("tool calls made before the user was known were not recorded in the audit log: too many", "calls", dropped)
	}
}

// swap sets the log and user, and returns the calls held so far when
// there is a log to write them to.
func (c *callLog) swap(l *audit.Log, user audit.User) ([]audit.Entry, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.l, c.user = l, user
	if l == nil {
		return nil, 0
	}
	p, d := c.pending, c.dropped
	c.pending, c.dropped = nil, 0
	return p, d
}

// record writes e for the current user, or holds it until there is one.
func (c *callLog) record(ctx context.Context, e audit.Entry) {
	for range 2 {
		c.mu.Lock()
		l, user := c.l, c.user
		if l == nil {
			if len(c.pending) < maxPendingCalls {
				c.pending = append(c.pending, e)
			} else {
				c.dropped++
			}
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		e.User = user
		err := l.Record(ctx, e)
		if errors.Is(err, audit.ErrClosed) {
			continue // replaced meanwhile: the next one takes it
		}
		if err != nil {
			c.log.Error("audit log: record a call", "tool", e.Tool, "request_id", e.RequestID, "error", err)
		}
		return
	}
}

// close reports the calls that were never written: no user was known.
func (c *callLog) close() {
	c.use(nil)
	c.mu.Lock()
	n := len(c.pending) + c.dropped
	c.pending, c.dropped = nil, 0
	c.mu.Unlock()
	if n > 0 {
		c.log.Warn("tool calls were not recorded in the audit log: the user was never known (OpenProject not reached)", "calls", n)
	}
}
