package optest

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// kv is one member of an ordered JSON object.
type kv struct {
	Key string
	Val any
}

// obj is a JSON object that keeps its members in insertion order. The fake
// renders HAL with it instead of map[string]any so that responses read like
// the real server's (_type and id first) and so that a page of 1000 work
// packages encodes without sorting thousands of map keys.
type obj []kv

// get returns the value stored under key.
func (o obj) get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Val, true
		}
	}
	return nil, false
}

// MarshalJSON lets an obj be passed to encoding/json (tests do); the server
// itself calls appendJSON directly to skip encoding/json's re-validation.
func (o obj) MarshalJSON() ([]byte, error) {
	return appendJSON(nil, o), nil
}

// encodeJSON renders v as compact JSON.
func encodeJSON(v any) []byte {
	return appendJSON(make([]byte, 0, 1024), v)
}

// appendJSON appends the JSON encoding of v. It handles the types the
// renderers produce and falls back to encoding/json for anything else.
func appendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case obj:
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, m.Key)
			b = append(b, ':')
			b = appendJSON(b, m.Val)
		}
		return append(b, '}')
	case []obj:
		return appendArray(b, x, func(b []byte, e obj) []byte { return appendJSON(b, e) })
	case []any:
		return appendArray(b, x, appendJSON)
	case []string:
		return appendArray(b, x, appendJSONString)
	case string:
		return appendJSONString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case *int:
		if x == nil {
			return append(b, "null"...)
		}
		return strconv.AppendInt(b, int64(*x), 10)
	case json.RawMessage:
		return append(b, x...)
	default:
		enc, err := json.Marshal(x)
		if err != nil {
			// Renderers only produce the types above; reaching this is a
			// programming error, and null keeps the document valid.
			return append(b, "null"...)
		}
		return append(b, enc...)
	}
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Like Rails' JSON encoder it
// does not escape HTML characters; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript parsers;
		// escaping them is what every mainstream encoder does.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendArray appends the JSON array of xs, each element by appendElem.
func appendArray[T any](b []byte, xs []T, appendElem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, e := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendElem(b, e)
	}
	return append(b, ']')
}
