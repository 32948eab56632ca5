package openproject_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestEitherScheme: a credential that may be an API key or an OAuth
// token (Config.EitherScheme) is sent as an API key first, then, after
// a 401, as a Bearer token, which stays; a bad one fails as before.
func TestEitherScheme(t *testing.T) {
	for _, profile := range []optest.Profile{optest.ProfileCurrent, optest.ProfileLegacy} {
		t.Run(string(profile), func(t *testing.T) {
			f := newFixture(t, optest.Options{Profile: profile})
			token, err := f.srv.IssueToken("alice")
			if err != nil {
				t.Fatal(err)
			}
			either := func(c *openproject.Config) { c.EitherScheme = true }
			for _, tc := range []struct {
				name, cred string
				requests   int // for two calls
			}{
				{"api key", optest.AliceKey, 2},
				{"oauth token", token, 3}, // one refused as an API key, then Bearer for both
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := f.client(t, tc.cred, either)
					before := f.srv.TotalRequests()
					for range 2 {
						me, err := c.Me(t.Context())
						if err != nil || me.Login != "alice" {
							t.Fatalf("Me = %+v, %v; want alice", me, err)
						}
					}
					if n := f.srv.TotalRequests() - before; n != tc.requests {
						t.Errorf("%d requests for two calls, want %d", n, tc.requests)
					}
				})
			}
			t.Run("bad credential", func(t *testing.T) {
				_, err := f.client(t, "nope", either).Me(t.Context())
				if !errors.Is(err, openproject.ErrUnauthenticated) {
					t.Errorf("err = %v, want ErrUnauthenticated", err)
				}
			})
			t.Run("oauth token without EitherScheme", func(t *testing.T) {
				if _, err := f.client(t, token).Me(t.Context()); !errors.Is(err, openproject.ErrUnauthenticated) {
					t.Errorf("an OAuth token sent as an API key: err = %v, want ErrUnauthenticated", err)
				}
			})
		})
	}
}

// TestHint: a failed identity request says what to check; other
// failures get no hint.
func TestHint(t *testing.T) {
	me := func(kind error) error {
		return &openproject.Error{Kind: kind, Method: "GET", Path: "/api/v3/users/me"}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{me(openproject.ErrNetwork), "OPENPROJECT_BASE_URL"},
		{me(openproject.ErrNotFound), "without /api/v3"},
		{me(openproject.ErrMalformed), "without /api/v3"},
		{me(openproject.ErrUnauthenticated), "OPENPROJECT_API_KEY"},
		{&openproject.Error{Kind: openproject.ErrNotFound, Method: "GET", Path: "/api/v3/work_packages/5"}, ""},
		{me(openproject.ErrServer), ""},
		{errors.New("other"), ""},
	} {
		if got := openproject.Hint(c.err); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("Hint(%v) = %q, want it to say %q", c.err, got, c.want)
		}
	}
}
