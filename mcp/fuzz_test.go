package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject"
)

// goInternals are fragments of encoding/json and reflect errors that name
// Go types or fields. Whatever a caller sends, the answer must describe
// the input, not them.
var goInternals = []string{"Go value", "Go struct", "struct field", "reflect", "map[", "RawMessage", "interface {}", "mcp."}

func leaksGoTypes(msg string) string {
	for _, s := range goInternals {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

// notFoundRT answers every request 404 at once: the tools get past their
// argument decoding to a real client error, with no network and no wait.
type notFoundRT struct{}

func (notFoundRT) RoundTrip(r *http.Request) (*http.Response, error) {
	body := `{"_type":"Error","errorIdentifier":"urn:openproject-org:api:v3:errors:NotFound","message":"The requested resource could not be found."}`
	return &http.Response{StatusCode: 404, Header: http.Header{"Content-Type": {"application/hal+json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// notReadyIndex is an index still being built.
type notReadyIndex struct{}

func (notReadyIndex) Searcher() (Searcher, error)                     { return nil, ErrIndexNotReady }
func (notReadyIndex) RefreshWorkPackage(context.Context, int64) error { return nil }

// fuzzSession is an MCP client session on a full server (write tools
// included) whose OpenProject answers 404 and whose index is not ready.
func fuzzSession(f *testing.F) (*sdk.ClientSession, []string) {
	client, err := openproject.New(openproject.Config{BaseURL: "http://op.invalid", APIKey: "fuzz-key",
		HTTPClient: &http.Client{Transport: notFoundRT{}}})
	if err != nil {
		f.Fatal(err)
	}
	srv := NewServer(client, notReadyIndex{}, Options{})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		f.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "fuzz", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { cs.Close(); ss.Close() })
	var names []string
	for t, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			f.Fatal(err)
		}
		names = append(names, t.Name)
	}
	return cs, names
}

// FuzzToolArguments sends arbitrary JSON object arguments to every tool
// over MCP. Each call must end in a result (a tool answer or an isError
// result), never a panic or a broken session, and no message may name Go
// types or struct fields: an argument the schema lets through but the
// input struct cannot hold must be refused in the caller's terms.
// (Arguments that are not an object are the SDK's to refuse, before any
// tool code runs.)
func FuzzToolArguments(f *testing.F) {
	cs, names := fuzzSession(f)
	for i, args := range []string{
		`{}`, `{"query":"budget review"}`, `{"query":"#12","kinds":["work_package"],"projectId":"demo","matchMode":"exact","offset":2,"pageSize":5}`,
		`{"query":"x","projectId":3}`, `{"query":"x","projectId":1.5}`, `{"query":"x","offset":1e20}`, `{"query":"x","pageSize":-1}`,
		`{"id":12}`, `{"id":"12"}`, `{"id":0}`, `{"project":"demo","filters":"[{\"status\":{\"operator\":\"o\",\"values\":[]}}]","sortBy":"id:desc"}`,
		`{"filters":"[1]"}`, `{"sortBy":"[[\"id\",\"up\"]]"}`, `{"subject":"New","project":"demo","type":"Task"}`,
		`{"id":3,"lockVersion":1,"subject":"s","assigneeId":null}`, `{"workPackageId":5,"comment":"hi"}`, `{"projectId":{"a":1}}`,
	} {
		f.Add(uint8(i), args)
	}
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		var obj map[string]any
		if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			return
		}
		name := names[int(tool)%len(names)]
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			if leak := leaksGoTypes(err.Error()); leak != "" {
				t.Fatalf("%s(%s): error %q names Go internals (%q)", name, args, err, leak)
			}
			return
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if res.IsError {
			if leak := leaksGoTypes(text.String()); leak != "" {
				t.Fatalf("%s(%s): error %q names Go internals (%q)", name, args, text.String(), leak)
			}
		}
	})
}
