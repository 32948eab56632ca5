package scorer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokenize checks tokenization and normalization of arbitrary text
// (field text and queries alike): Normalize is idempotent on valid UTF-8;
// tokens are non-empty, in order, non-overlapping, inside the input, hold
// no space and are already normalized; and QueryTokens is Tokenize minus
// stopwords (all of it when only stopwords are left).
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"Approval of Q3 budget!", "Müller RÉSUMÉ ﬁnance", "what did we decide about the who",
		"PROJ-12 #123 v2.0.1 e-mail", "Αθήνα Йошкар-Ола 東京", "ͺ a\u0301", "\uFEFF  \t", "x\xffy",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if utf8.ValidString(s) && Normalize(n) != n {
			t.Fatalf("Normalize not idempotent on %q: %q then %q", s, n, Normalize(n))
		}
		toks := Tokenize(s)
		end := 0
		for _, tk := range toks {
			if tk.Text == "" || strings.Contains(tk.Text, " ") {
				t.Fatalf("Tokenize(%q) gave token %q", s, tk.Text)
			}
			if tk.Start < end || tk.End <= tk.Start || tk.End > len(s) {
				t.Fatalf("Tokenize(%q): token %q at [%d,%d) after %d", s, tk.Text, tk.Start, tk.End, end)
			}
			end = tk.End
			if utf8.ValidString(tk.Text) && Normalize(tk.Text) != tk.Text && !strings.Contains(Normalize(tk.Text), " ") {
				t.Fatalf("Tokenize(%q): token %q is not normalized (%q)", s, tk.Text, Normalize(tk.Text))
			}
		}
		var all, kept []string
		for _, tk := range toks {
			all = append(all, tk.Text)
			if !IsStopword(tk.Text) {
				kept = append(kept, tk.Text)
			}
		}
		if len(kept) == 0 {
			kept = all
		}
		if got := QueryTokens(s); !slices.Equal(got, kept) {
			t.Fatalf("QueryTokens(%q) = %q, want %q", s, got, kept)
		}
	})
}
