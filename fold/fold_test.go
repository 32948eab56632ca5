package fold

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"Müller", "muller"},
		{"RÉSUMÉ", "resume"},
		{"Straße", "strasse"},
		{"Łódź", "lodz"},
		{"Håkon Bjørnstad", "hakon bjornstad"},
		{"Guðrún Ólafsdóttir", "gudrun olafsdottir"},
		{"Αθήνα", "αθηνα"},
		{"Йошкар-Ола", "иошкар-ола"},
		{"ﬁle", "file"},
		{"Ｆｕｌｌ", "full"},
		{"Thảo Phạm", "thao pham"},
		{"Ayşe Oğuz", "ayse oguz"},
		{"한", "\u1112\u1161\u11ab"}, // Hangul decomposed into its jamo
	}
	for _, tc := range tests {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTableInvariants(t *testing.T) {
	for i, e := range table {
		if i > 0 && table[i-1].r >= e.r {
			t.Fatalf("table not strictly sorted at %U", e.r)
		}
		if !utf8.ValidString(e.s) {
			t.Errorf("%U: invalid UTF-8 %q", e.r, e.s)
		}
		for _, r := range e.s {
			if IsMark(r) {
				t.Errorf("%U: folded form %q keeps a mark", e.r, e.s)
			}
		}
		if got := String(e.s); got != e.s {
			t.Errorf("%U: String(%q) = %q, not idempotent", e.r, e.s, got)
		}
	}
	for _, r := range "ßøłæœðþđħ" {
		if f, ok := lookup(r); !ok || strings.ContainsRune(f, r) {
			t.Errorf("%q: fold = %q, %v", r, f, ok)
		}
	}
}

// TestTableUpToDate regenerates the table from golang.org/x/text and
// compares it with the committed one.
func TestTableUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	out := filepath.Join(t.TempDir(), "table.go")
	cmd := exec.Command("go", "run", "gen_table.go", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gen_table.go: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("table.go is not what gen_table.go generates: run go generate ./fold")
	}
}

func FuzzString(f *testing.F) {
	f.Add("Müller Αθήνα Йошкар")
	f.Fuzz(func(t *testing.T, s string) {
		once := String(s)
		if utf8.ValidString(s) && String(once) != once {
			t.Fatalf("String not idempotent on %q: %q then %q", s, once, String(once))
		}
	})
}
