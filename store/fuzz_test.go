package store

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// FuzzInstanceName checks the instance directory name derived from a base
// URL: an accepted URL gives a non-empty name of at most 200 bytes made
// only of [a-z0-9._%-] (so no path separator, and never "." or ".."), the
// same every time, and unchanged by a trailing slash or the scheme's
// default port; a rejected URL gives an error wrapping ErrBadBaseURL that
// never repeats a password from the URL.
func FuzzInstanceName(f *testing.F) {
	for _, s := range []string{
		"https://op.example.com", "http://127.0.0.1:8080", "https://example.com/openproject/",
		"https://Example.COM./a_b/2024", "http://[::1]:3000/x", "https://user:secret@op.example.com",
		"ftp://op.example.com", "https://op.example.com/?q=1", "https://op.example.com/#f", "https://.../",
		"https://op.example.com/" + strings.Repeat("long/", 60), "http://op.example.com:80", "https://h%C3%BCgel.de/a%2Fb",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		name, err := InstanceName(raw)
		if err != nil {
			if !errors.Is(err, ErrBadBaseURL) {
				t.Fatalf("InstanceName(%q) error %v does not wrap ErrBadBaseURL", raw, err)
			}
			if u, perr := url.Parse(strings.TrimSpace(raw)); perr == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(err.Error(), pw) {
					t.Fatalf("InstanceName(%q) error %q repeats the password", raw, err)
				}
			}
			return
		}
		if name == "" || name == "." || name == ".." || len(name) > maxInstanceLen {
			t.Fatalf("InstanceName(%q) = %q", raw, name)
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("._%-", c) >= 0) {
				t.Fatalf("InstanceName(%q) = %q holds byte %q", raw, name, c)
			}
		}
		if again, err := InstanceName(raw); err != nil || again != name {
			t.Fatalf("InstanceName(%q) is not stable: %q then %q, %v", raw, name, again, err)
		}
		u, _ := url.Parse(strings.TrimSpace(raw))
		if u.Port() == "" && (u.Scheme == "http" || u.Scheme == "https") {
			def := map[string]string{"http": ":80", "https": ":443"}[u.Scheme]
			v := *u
			v.Host += def
			if got, err := InstanceName(v.String()); err == nil && got != name {
				t.Fatalf("default port changes the name: %q gives %q, %q gives %q", raw, name, v.String(), got)
			}
		}
		if !strings.HasSuffix(u.Path, "/") {
			v := *u
			v.Path += "/"
			v.RawPath = ""
			if got, err := InstanceName(v.String()); err == nil && got != name {
				t.Fatalf("a trailing slash changes the name: %q gives %q, %q gives %q", raw, name, v.String(), got)
			}
		}
	})
}

// FuzzEntityValue decodes arbitrary bytes as a stored entity value, in
// either encoding: it must return an entity or an error, never panic or
// allocate without bound, and a value it accepts as compact must encode
// back to a value that decodes to the same entity.
func FuzzEntityValue(f *testing.F) {
	c, err := newCodec()
	if err != nil {
		f.Fatal(err)
	}
	defer c.close()
	good, _ := c.marshal(kind.Project, sampleMeeting(31))
	// Meetings get a dictionary, so values in all three encodings are
	// fuzzed.
	if err := c.addDict(kind.Meeting, testDict(f, c), true); err != nil {
		f.Fatal(err)
	}
	withDict, _ := c.marshal(kind.Meeting, sampleMeeting(32))
	for _, raw := range [][]byte{good, good[:len(good)/2], withDict, withDict[:len(withDict)/2], []byte(`{"id":3,"title":"x"}`), []byte(`null`), {compactMark, 0x28, 0xb5, 0x2f, 0xfd}, {dictMark}, {}} {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m openproject.Meeting
		if err := c.unmarshal(raw, &m); err != nil {
			return
		}
		again, err := c.marshal(kind.Meeting, m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var m2 openproject.Meeting
		if err := c.unmarshal(again, &m2); err != nil {
			t.Fatalf("decode the re-encoded value: %v", err)
		}
		a, _ := c.enc.Marshal(m)
		b, _ := c.enc.Marshal(m2)
		if !bytes.Equal(a, b) {
			t.Fatalf("round trip changed the meeting")
		}
	})
}

// FuzzWorkPackageValue feeds arbitrary bytes to the codec as a stored
// work package and as an activity list (MessagePack since msgpMark, CBOR
// and JSON before): it must refuse or decode, never panic, and what it
// decodes must survive a round trip.
func FuzzWorkPackageValue(f *testing.F) {
	c, err := newCodec()
	if err != nil {
		f.Fatal(err)
	}
	defer c.close()
	msgp, _ := c.marshal(kind.WorkPackage, sampleWorkPackage(5))
	plain, _ := c.enc.Marshal(sampleWorkPackage(6))
	cbor := c.zip.EncodeAll(plain, []byte{compactMark})
	for _, raw := range [][]byte{msgp, msgp[:len(msgp)/2], cbor, []byte(`{"id":3,"subject":"x"}`), {msgpMark, 0x28, 0xb5, 0x2f, 0xfd}, {msgpDictMark}, {}} {
		f.Add(raw)
	}
	acts, _ := c.marshal(kind.Activity, sampleActivities(5))
	f.Add(acts)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var list []openproject.Activity
		if err := c.unmarshal(raw, &list); err == nil {
			again, err := c.marshal(kind.Activity, list)
			if err != nil {
				t.Fatalf("re-encode the activities: %v", err)
			}
			var list2 []openproject.Activity
			if err := c.unmarshal(again, &list2); err != nil {
				t.Fatalf("decode the re-encoded activities: %v", err)
			}
			a, _ := openproject.ActivityList(list).MarshalMsg(nil)
			b, _ := openproject.ActivityList(list2).MarshalMsg(nil)
			if !bytes.Equal(a, b) {
				t.Fatalf("round trip changed the activities")
			}
		}
		var wp openproject.WorkPackage
		if err := c.unmarshal(raw, &wp); err != nil {
			return
		}
		again, err := c.marshal(kind.WorkPackage, wp)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var wp2 openproject.WorkPackage
		if err := c.unmarshal(again, &wp2); err != nil {
			t.Fatalf("decode the re-encoded value: %v", err)
		}
		a, _ := wp.MarshalMsg(nil)
		b, _ := wp2.MarshalMsg(nil)
		if !bytes.Equal(a, b) {
			t.Fatalf("round trip changed the work package")
		}
	})
}
