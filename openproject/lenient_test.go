package openproject

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"

	json "github.com/go-json-experiment/json/v1"
)

// The decoders the lenient types had before they read their values in
// place (UnmarshalJSONFrom): each took its value's bytes and decoded
// them again with encoding/json. They are the reference
// FuzzLenientTypes holds the types to. (A time's layouts were and are
// parseLenientTime's: what changed is how the string is read.)

type refFormattable struct{ Raw string }

func (f *refFormattable) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '"' {
		return json.Unmarshal(b, &f.Raw)
	}
	var obj struct {
		Raw *string `json:"raw"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil
	}
	if obj.Raw != nil {
		f.Raw = *obj.Raw
	}
	return nil
}

type refTime struct{ time.Time }

func (t *refTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return nil
	}
	if v, ok := parseLenientTime(s); ok {
		t.Time = v
	}
	return nil
}

type refNumber struct {
	Value float64
	Set   bool
}

func (n *refNumber) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		n.Value, n.Set = f, true
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			n.Value, n.Set = f, true
		}
	}
	return nil
}

type refInt int64

func (n *refInt) UnmarshalJSON(b []byte) error {
	var ln refNumber
	_ = ln.UnmarshalJSON(b)
	*n = refInt(ln.Value)
	return nil
}

// lenientShapes are the places a lenient value sits in a HAL body: a
// field, a field behind a pointer, an array's elements, and twice in one
// object (the last one counts).
type lenientShapes[T any] struct {
	V   T   `json:"v"`
	P   *T  `json:"p"`
	A   []T `json:"a"`
	Sub *struct {
		W T `json:"w"`
	} `json:"sub"`
}

// sameDecoding decodes b as the new type N and the reference R, alone and
// in every shape, and fails unless both give the same success and, where
// they succeed, the same values (a body that fails to decode is dropped
// whole). conv maps a reference value onto the new type.
func sameDecoding[N, R any](t *testing.T, name string, b []byte, conv func(R) N) {
	t.Helper()
	var n, wantN N
	var r R
	errN, errR := decodeBody(b, &n), decodeBody(b, &r)
	wantN = conv(r)
	if (errN == nil) != (errR == nil) || errR == nil && !reflect.DeepEqual(n, wantN) {
		t.Fatalf("%s %q: got %+v (error %v), reference %+v (error %v)", name, b, n, errN, wantN, errR)
	}
	var sn lenientShapes[N]
	var sr lenientShapes[R]
	errN, errR = decodeBody(b, &sn), decodeBody(b, &sr)
	want := lenientShapes[N]{V: conv(sr.V)}
	if sr.P != nil {
		p := conv(*sr.P)
		want.P = &p
	}
	if sr.A != nil {
		want.A = make([]N, len(sr.A))
		for i, v := range sr.A {
			want.A[i] = conv(v)
		}
	}
	if sr.Sub != nil {
		want.Sub = &struct {
			W N `json:"w"`
		}{conv(sr.Sub.W)}
	}
	if (errN == nil) != (errR == nil) || errR == nil && !reflect.DeepEqual(sn, want) {
		t.Fatalf("%s in shapes %q: got %+v (error %v), reference %+v (error %v)", name, b, sn, errN, want, errR)
	}
}

// FuzzLenientTypes holds formattable, lenientTime, lenientNumber and
// lenientInt to the decoders they replaced, on any bytes: the same
// values, the same fields left alone, and the same inputs refused.
func FuzzLenientTypes(f *testing.F) {
	for _, s := range []string{
		`"plain"`, `{"format":"markdown","raw":"x","html":"<p>x</p>"}`, `{"raw":null}`, `{"RAW":"y"}`, `{"raw":5}`,
		`{"raw":"a","raw":"b"}`, `{"raw":"a","raw":null}`, `{"raw":"a","raw":[1]}`, `null`, `[1,2]`, `true`, `12`,
		`"2024-05-01T10:00:00Z"`, `"2024-05-01T10:00:00.123+02:00"`, `"2024-05-01"`, `"2024-05-01T10:00:00"`, `""`,
		`"-0001-01-01T00:00:00Z"`, `"9999-12-31T23:00:00-02:00"`, `"40"`, `"1.5"`, `1e400`, `"Infinity"`, `"NaN"`, `-0`,
		`"\u00e9t\u00e9"`, "\"\xff\xfe\"", `{"v":"x","p":{"raw":"y"},"a":["z",{"raw":"w"},null],"sub":{"w":"q"}}`,
		`{"v":"2024-05-01","p":null,"a":["2024-05-01T10:00:00Z",5],"sub":null}`, `{"v":"7","v":8,"a":[null,"9"]}`,
		`{"v":{"raw":"a"},"v":{"raw":5}}`, `{"v":`, `{"a":[1,}`, ` "spaced" `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameDecoding(t, "formattable", b, func(r refFormattable) formattable { return formattable(r) })
		sameDecoding(t, "lenientTime", b, func(r refTime) lenientTime { return lenientTime(r) })
		sameDecoding(t, "lenientNumber", b, func(r refNumber) lenientNumber { return lenientNumber(r) })
		sameDecoding(t, "lenientInt", b, func(r refInt) lenientInt { return lenientInt(r) })
	})
}
