package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	gosync "sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool arguments are checked here, before the SDK sees them, because the
// SDK's own checks answer in its internals' words: a schema violation
// reads "validating /properties/offset: type: <invalid reflect.Value> has
// type \"null\"", and a number too large for the Go field reads "cannot
// unmarshal number ... into Go struct field mcp.searchAllIn.offset of type
// int". checkArgs says the same in the caller's words, naming the
// parameter, and MCP and the REST bridge give the same answer.

// toolSchemas returns every tool's input schema by tool name, write tools
// included. The tools are the same for every server, so they are listed
// once, on first use (ListTools builds a server, whose middleware calls
// this: a package-level initialiser would be a cycle).
func toolSchemas() (map[string]*jsonschema.Schema, error) {
	schemasOnce.Do(func() { schemas, schemasErr = listSchemas() })
	return schemas, schemasErr
}

var (
	schemasOnce gosync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

func listSchemas() (map[string]*jsonschema.Schema, error) {
	tools, err := ListTools(context.Background(), Options{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*jsonschema.Schema, len(tools))
	for _, t := range tools {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("encode schema of %s: %w", t.Name, err)
		}
		var sch jsonschema.Schema
		if err := json.Unmarshal(b, &sch); err != nil {
			return nil, fmt.Errorf("decode schema of %s: %w", t.Name, err)
		}
		out[t.Name] = &sch
	}
	return out, nil
}

// decodeArgs decodes a tool's JSON arguments, keeping numbers exact (a
// float64 would round an id beyond 2^53 and hide an overflow).
func decodeArgs(raw []byte) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("the arguments are not valid JSON (at byte %d): %s", se.Offset, se.Error())
		}
		return nil, errors.New("the arguments are not valid JSON: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return nil, errors.New("the arguments are not valid JSON: more than one value")
	}
	switch m := v.(type) {
	case map[string]any:
		return m, nil
	case nil:
		return args, nil
	default:
		return nil, fmt.Errorf("the arguments must be a JSON object of named parameters, not %s", jsonKind(v))
	}
}

// checkArgs checks args against a tool's input schema and returns an
// *ArgError naming the first problem (parameters in name order, so the
// answer does not change between calls). It covers what our schemas use:
// types, required, additionalProperties, enum, minimum, maximum,
// maxLength, array items and the fields of objects (named as in
// rows[2].lockVersion).
func checkArgs(sch *jsonschema.Schema, args map[string]any) error {
	return checkFields("", sch, args)
}

// checkFields checks the fields of an object: the arguments themselves
// (prefix "") or an object inside them, named by prefix.
func checkFields(prefix string, sch *jsonschema.Schema, args map[string]any) error {
	param := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	for _, name := range sch.Required {
		if _, ok := args[name]; !ok {
			return argErr(param(name), "is required")
		}
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, ok := sch.Properties[name]
		if !ok {
			if sch.AdditionalProperties != nil && sch.AdditionalProperties.Not != nil {
				if prefix != "" {
					return argErr(param(name), "is not a field of %s (it takes %s)", prefix, paramList(sch))
				}
				return argErr(name, "is not a parameter of this tool (it takes %s)", paramList(sch))
			}
			continue
		}
		if err := checkValue(param(name), p, args[name]); err != nil {
			return err
		}
	}
	return nil
}

func paramList(sch *jsonschema.Schema) string {
	if len(sch.Properties) == 0 {
		return "no parameters"
	}
	names := make([]string, 0, len(sch.Properties))
	for n := range sch.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// dropNulls removes optional arguments given as null, and reports whether
// it removed any. Many agents send null for a parameter they mean to
// leave out; where null is not a value the parameter takes, leaving it
// out is the only thing it can mean. A required parameter given as null,
// and a name the tool does not take, stay, to be refused by name.
//
// The same holds for the optional fields of objects in a list (the rows
// of a bulk write).
func dropNulls(sch *jsonschema.Schema, args map[string]any) bool {
	dropped := false
	for name, v := range args {
		p, ok := sch.Properties[name]
		if list, isList := v.([]any); isList && ok && p.Items != nil && len(p.Items.Properties) > 0 {
			for _, it := range list {
				if obj, isObj := it.(map[string]any); isObj && dropNulls(p.Items, obj) {
					dropped = true
				}
			}
			continue
		}
		if v != nil || slices.Contains(sch.Required, name) {
			continue
		}
		if !ok || p.Type == "null" || slices.Contains(p.Types, "null") {
			continue // an unknown name is refused by name
		}
		delete(args, name)
		dropped = true
	}
	return dropped
}

// checkValue checks one parameter's value.
func checkValue(name string, p *jsonschema.Schema, v any) error {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if v == nil {
		if slices.Contains(types, "null") {
			return nil
		}
		return argErr(name, "must be %s, not null (leave it out for the default)", typeWords(types))
	}
	got := jsonKind(v)
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return isKind(v, t) }) {
		return argErr(name, "must be %s, not %s", typeWords(types), got)
	}
	if len(p.Enum) > 0 && !slices.ContainsFunc(p.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		opts := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			opts[i] = fmt.Sprint(e)
		}
		return argErr(name, "must be one of %s, not %s", strings.Join(opts, ", "), shortValue(v))
	}
	switch x := v.(type) {
	case string:
		if p.MaxLength != nil && utf8.RuneCountInString(x) > *p.MaxLength {
			return argErr(name, "is longer than %d characters", *p.MaxLength)
		}
	case json.Number:
		f, _ := new(big.Float).SetString(x.String())
		if f == nil {
			break
		}
		if p.Minimum != nil && f.Cmp(big.NewFloat(*p.Minimum)) < 0 {
			return argErr(name, "must be %s or more, not %s", fmtBound(*p.Minimum), x)
		}
		if p.Maximum != nil && f.Cmp(big.NewFloat(*p.Maximum)) > 0 {
			return argErr(name, "must be %s or less, not %s", fmtBound(*p.Maximum), x)
		}
		if slices.Contains(types, "integer") && !slices.Contains(types, "number") {
			// The tools read integers into 64-bit fields: a larger one
			// would fail in the SDK's unmarshalling, in Go's words.
			if i, _ := f.Int(nil); !i.IsInt64() {
				if f.Sign() < 0 {
					return argErr(name, "%s is too small to be an id, page or count", x)
				}
				return argErr(name, "%s is too large to be an id, page or count", x)
			}
		}
	case []any:
		if p.Items != nil {
			for i, it := range x {
				if err := checkValue(fmt.Sprintf("%s[%d]", name, i), p.Items, it); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		if len(p.Properties) > 0 {
			return checkFields(name, p, x)
		}
	}
	return nil
}

// isKind reports whether v is of JSON Schema type t.
func isKind(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "number":
		switch v.(type) {
		case json.Number, float64:
			return true
		}
	case "integer":
		switch n := v.(type) {
		case json.Number:
			f, ok := new(big.Float).SetString(n.String())
			return ok && f.IsInt()
		case float64:
			return n == math.Trunc(n)
		}
	}
	return false
}

// typeWords says which JSON types a parameter takes.
func typeWords(types []string) string {
	words := make([]string, 0, len(types))
	for _, t := range types {
		switch t {
		case "integer":
			words = append(words, "a whole number")
		case "number":
			words = append(words, "a number")
		case "string":
			words = append(words, "a string")
		case "boolean":
			words = append(words, "true or false")
		case "array":
			words = append(words, "a list")
		case "object":
			words = append(words, "an object")
		}
	}
	if len(words) == 0 {
		return "a value"
	}
	return strings.Join(words, " or ")
}

// jsonKind names v's JSON type for a message.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean (" + fmt.Sprint(x) + ")"
	case string:
		return "a string (" + shortValue(x) + ")"
	case json.Number:
		if isKind(x, "integer") {
			return "the number " + x.String()
		}
		return "the fraction " + x.String()
	case float64:
		return "the number " + fmt.Sprint(x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// shortValue quotes a value for a message, cut to a readable length.
func shortValue(v any) string {
	s, ok := v.(string)
	if !ok {
		return fmt.Sprint(v)
	}
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func fmtBound(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprint(f)
}

// sdkArgPrefix starts the SDK's own answer to arguments it refused.
const sdkArgPrefix = `validating "arguments"`

// checkToolArgs is the receiving middleware that checks tools/call
// arguments with checkArgs, so a bad argument is answered in the
// caller's words before the SDK unmarshals it. Should the SDK still
// refuse arguments checkArgs let through, its answer is replaced by a
// plain one: it would name Go types.
func (s *server) checkToolArgs(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		cr, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || cr.Params == nil {
			return next(ctx, method, req)
		}
		if schemas, err := toolSchemas(); err == nil {
			if sch, ok := schemas[cr.Params.Name]; ok {
				args, err := decodeArgs(cr.Params.Arguments)
				if err == nil && dropNulls(sch, args) {
					// Re-encoded from the decoder's json.Number values,
					// so every other argument keeps its literal.
					cr.Params.Arguments, err = json.Marshal(args)
				}
				if err == nil {
					err = checkArgs(sch, args)
				}
				if err != nil {
					return argFailure(err), nil
				}
			}
		}
		res, err := next(ctx, method, req)
		if tr, ok := res.(*sdk.CallToolResult); ok && err == nil && tr.IsError && sdkRefused(tr) {
			s.log.WarnContext(ctx, "the SDK refused arguments the tool's check allowed", "tool", cr.Params.Name, "error", toolText(tr))
			return argFailure(errors.New("invalid arguments: they do not match what the tool accepts (see its input schema in tools/list)")), nil
		}
		return res, err
	}
}

// sdkRefused reports whether a tool error is the SDK's refusal of the
// arguments (schema or unmarshalling), not the tool's own answer.
func sdkRefused(r *sdk.CallToolResult) bool {
	t := toolText(r)
	return strings.HasPrefix(t, sdkArgPrefix) || strings.HasPrefix(t, "json: ") || strings.Contains(t, "Go struct field") ||
		strings.Contains(t, "Go value of type")
}

func toolText(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// argFailure is the answer to arguments refused before the tool ran.
func argFailure(err error) *sdk.CallToolResult {
	var r sdk.CallToolResult
	var ae *ArgError
	if !errors.As(err, &ae) {
		err = argsRefused{err}
	}
	r.SetError(err)
	return &r
}

// argsRefused is a refusal of a call's arguments as a whole (not JSON,
// not an object, or what the SDK refused), told apart from a tool's
// failure by errorCategory; its text is the refusal's.
type argsRefused struct{ error }

func (e argsRefused) Unwrap() error { return e.error }
