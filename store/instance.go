package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrBadBaseURL is wrapped by the errors UserDir and SetIdentity return for a
// base URL they refuse: not http(s), no host, credentials in it, or a query
// or fragment (which could smuggle a key into a directory name or the file).
var ErrBadBaseURL = errors.New("bad OpenProject base URL")

// maxInstanceLen keeps an instance directory name well inside the 255-byte
// limit common filesystems put on one path element.
const maxInstanceLen = 200

// UserDir returns the directory that holds one user's store (and index):
// <dataDir>/<instance>/<userID>, where instance is InstanceName(baseURL).
// It does not create anything; Open does.
func UserDir(dataDir, baseURL string, userID int64) (string, error) {
	if dataDir == "" {
		return "", errors.New("user dir: empty data dir")
	}
	if userID <= 0 {
		return "", fmt.Errorf("user dir: invalid user id %d", userID)
	}
	inst, err := InstanceName(baseURL)
	if err != nil {
		return "", fmt.Errorf("user dir: %w", err)
	}
	return filepath.Join(dataDir, inst, strconv.FormatInt(userID, 10)), nil
}

// InstanceName derives a directory name for an OpenProject instance from its
// base URL. The name is lowercase, readable and safe on every common
// filesystem:
//
//	https://op.example.com            -> op.example.com
//	http://127.0.0.1:8080             -> 127.0.0.1_8080
//	https://example.com/openproject/  -> example.com_openproject
//
// The scheme is dropped (http and https to one host and port are one
// instance), as are default ports (80 for http, 443 for https) and trailing
// slashes. Distinct instances get distinct names: the port and each path
// segment are appended with "_", and every byte outside [a-z0-9.-] in the
// host or path (including "_" itself) is written as %xx, so the "_"
// separators cannot be forged. A path segment made only of digits gets its
// first digit escaped so it cannot pass for a port. Names longer than 200
// bytes are cut and suffixed with a hash of the whole name.
//
// URLs with credentials (user:password@), a query or a fragment are
// rejected with an error wrapping ErrBadBaseURL.
func InstanceName(baseURL string) (string, error) {
	u, err := parseBaseURL(baseURL)
	if err != nil {
		return "", err
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if strings.Trim(host, ".") == "" {
		return "", fmt.Errorf("%w: invalid host %q", ErrBadBaseURL, u.Hostname())
	}

	var b strings.Builder
	escapeName(&b, host)
	if port := u.Port(); port != "" && !isDefaultPort(u.Scheme, port) {
		// Port is all digits: url.Parse rejects anything else.
		b.WriteByte('_')
		b.WriteString(port)
	}
	if p := strings.TrimRight(strings.TrimPrefix(u.Path, "/"), "/"); p != "" {
		for seg := range strings.SplitSeq(strings.ToLower(p), "/") {
			b.WriteByte('_')
			if seg != "" && strings.Trim(seg, "0123456789") == "" {
				fmt.Fprintf(&b, "%%%02x", seg[0])
				seg = seg[1:]
			}
			escapeName(&b, seg)
		}
	}

	name := b.String()
	if len(name) > maxInstanceLen {
		sum := sha256.Sum256([]byte(name))
		name = name[:maxInstanceLen-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return name, nil
}

// parseBaseURL parses and vets an OpenProject base URL.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url.Error quotes the whole URL, which might hold credentials.
		return nil, fmt.Errorf("%w: cannot parse", ErrBadBaseURL)
	}
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%w: credentials in the URL are not allowed", ErrBadBaseURL)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: scheme must be http or https", ErrBadBaseURL)
	case u.Host == "":
		return nil, fmt.Errorf("%w: no host", ErrBadBaseURL)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("%w: query or fragment not allowed", ErrBadBaseURL)
	}
	return u, nil
}

func isDefaultPort(scheme, port string) bool {
	return (scheme == "http" && port == "80") || (scheme == "https" && port == "443")
}

// escapeName writes s keeping [a-z0-9.-] and writing every other byte as
// %xx (lowercase hex), which is injective and safe on Windows too.
func escapeName(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '.' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(b, "%%%02x", c)
	}
}
