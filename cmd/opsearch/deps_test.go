package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryDoesNotLinkTesting: the opsearch binary runs fakes and the
// demo with optest.Listen; nothing that only tests need may reach it.
// Forbidden are package testing (and testing/...), net/http/httptest, and
// the test helper packages (internal/optesting). A non-test file that
// imports one of them, anywhere below cmd/opsearch, fails this test.
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	goTool := goCommand(t)
	cmd := exec.CommandContext(t.Context(), goTool, "list", "-deps", ".")
	cmd.Stderr = new(strings.Builder)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, cmd.Stderr)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %q", deps)
	}
	for _, p := range deps {
		if testOnly(p) {
			t.Errorf("the opsearch binary links %s, a package only tests may use", p)
		}
	}
}

// testOnly reports whether import path p belongs in tests only.
func testOnly(p string) bool {
	return p == "testing" || strings.HasPrefix(p, "testing/") || p == "net/http/httptest" ||
		strings.Contains(p, "optesting")
}

// goCommand finds the go tool: on PATH, else in $GOROOT/bin; it skips the
// test when there is none.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no go tool on PATH or in $GOROOT/bin")
	return ""
}

func TestTestOnly(t *testing.T) {
	for p, want := range map[string]bool{
		"testing": true, "testing/fstest": true, "net/http/httptest": true,
		"github.com/opsearch/opsearch/internal/optesting": true,
		"internal/testlog": false, "net/http": false, "github.com/opsearch/opsearch/openproject/optest": false,
	} {
		if got := testOnly(p); got != want {
			t.Errorf("testOnly(%q) = %v, want %v", p, got, want)
		}
	}
}
