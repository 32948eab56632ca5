package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstanceName(t *testing.T) {
	tests := []struct {
		url  string
		want string
	}{
		{"https://op.example.com", "op.example.com"},
		{"https://op.example.com/", "op.example.com"},
		{"https://OP.Example.COM/", "op.example.com"},
		{"http://op.example.com", "op.example.com"},
		{"https://op.example.com:443", "op.example.com"},
		{"http://op.example.com:80/", "op.example.com"},
		{"http://127.0.0.1:8080", "127.0.0.1_8080"},
		{"https://127.0.0.1:8080/", "127.0.0.1_8080"},
		{"http://op.example.com:443", "op.example.com_443"},
		{"https://example.com/openproject", "example.com_openproject"},
		{"https://example.com/openproject/", "example.com_openproject"},
		{"https://example.com/OpenProject", "example.com_openproject"},
		{"https://example.com:8443/a/b", "example.com_8443_a_b"},
		{"https://example.com/open_project", "example.com_open%5fproject"},
		{"https://example.com/8080", "example.com_%38080"},
		{"https://example.com/a b", "example.com_a%20b"},
		{"http://[::1]:3000", "%3a%3a1_3000"},
		{"https://example.com./", "example.com"},
		{"  https://op.example.com  ", "op.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := InstanceName(tt.url)
			if err != nil {
				t.Fatalf("InstanceName(%q): %v", tt.url, err)
			}
			if got != tt.want {
				t.Errorf("InstanceName(%q) = %q, want %q", tt.url, got, tt.want)
			}
			if strings.ContainsAny(got, `/\:*?"<>|`) || strings.Contains(got, "//") {
				t.Errorf("InstanceName(%q) = %q: not filesystem-safe", tt.url, got)
			}
		})
	}
}

func TestInstanceNameRejects(t *testing.T) {
	tests := []struct {
		name, url, secret string
	}{
		{"userinfo", "https://alice:s3cret@op.example.com", "s3cret"},
		{"user only", "https://apikey@op.example.com", "apikey"},
		{"query", "https://op.example.com/?key=s3cret", "s3cret"},
		{"fragment", "https://op.example.com/#s3cret", "s3cret"},
		{"no scheme", "op.example.com", ""},
		{"ftp", "ftp://op.example.com", ""},
		{"no host", "https:///openproject", ""},
		{"dot host", "https://./", ""},
		{"dotdot host", "https://../", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InstanceName(tt.url)
			if !errors.Is(err, ErrBadBaseURL) {
				t.Fatalf("InstanceName(%q) = %q, %v; want ErrBadBaseURL", tt.url, got, err)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}

func TestInstanceNamesNeverCollide(t *testing.T) {
	urls := []string{
		"https://example.com",
		"https://example.com:8080",
		"https://example.com/8080",
		"https://example.com:8080/a",
		"https://example.com/8080/a",
		"https://example.com/a/b",
		"https://example.com/a_b",
		"https://example.com/a%2520b",
		"https://example.com/a%20b",
		"https://example.com/a//b",
		"https://example.com/_",
		"https://example.com_8080",
		"https://example.com_a",
		"https://example.com.a",
		"https://sub.example.com",
		"https://example.co",
		"https://example.com:81",
		"https://example.com:443/x",
		"https://example.com:444/x",
		"https://example.com/" + strings.Repeat("x", 300),
		"https://example.com/" + strings.Repeat("x", 299) + "y",
	}
	// Percent-encodings of the same path ("/a%5fb" and "/a_b") are the same
	// URL and rightly share a name, so the list has none of those.
	seen := map[string]string{}
	for _, u := range urls {
		name, err := InstanceName(u)
		if err != nil {
			// Hosts such as "example.com_8080" are invalid for url.Parse on
			// some versions; a refusal cannot collide.
			continue
		}
		if len(name) > maxInstanceLen {
			t.Errorf("InstanceName(%q) is %d bytes, want <= %d", u, len(name), maxInstanceLen)
		}
		if prev, ok := seen[name]; ok {
			t.Errorf("InstanceName(%q) = InstanceName(%q) = %q", u, prev, name)
		}
		seen[name] = u
	}
}

func TestUserDir(t *testing.T) {
	tests := []struct {
		name    string
		dataDir string
		url     string
		user    int64
		want    string
		wantErr bool
	}{
		{"plain", "/data", "https://op.example.com", 7, "/data/op.example.com/7", false},
		{"port", "/data", "http://127.0.0.1:8080/", 12, "/data/127.0.0.1_8080/12", false},
		{"path", "/data", "https://example.com/openproject/", 1, "/data/example.com_openproject/1", false},
		{"userinfo", "/data", "https://u:p@example.com", 1, "", true},
		{"zero user", "/data", "https://example.com", 0, "", true},
		{"negative user", "/data", "https://example.com", -3, "", true},
		{"empty data dir", "", "https://example.com", 1, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UserDir(tt.dataDir, tt.url, tt.user)
			if (err != nil) != tt.wantErr {
				t.Fatalf("UserDir() = %q, %v; wantErr %v", got, err, tt.wantErr)
			}
			if got != filepath.FromSlash(tt.want) {
				t.Errorf("UserDir() = %q, want %q", got, tt.want)
			}
		})
	}
}
