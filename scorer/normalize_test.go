package scorer

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"Müller", "muller"},
		{"Café", "cafe"},
		{"RÉSUMÉ", "resume"},
		{"already lower", "already lower"},
		{"Approval of Q3 budget!", "approval of q3 budget!"},
		{"Привет мир", "привет мир"},
		{"ﬁnance", "finance"},                 // NFKD ligature
		{"Cafe\u0301", "cafe"},                // already decomposed input
		{"ＡＢＣ１２３", "abc123"},                  // fullwidth forms
		{"x²", "x2"},                          // superscript
		{"Ångström", "angstrom"},              // Latin-1
		{"Dvořák", "dvorak"},                  // Latin Extended-A
		{"Tiếng Việt", "tieng viet"},          // Latin Extended Additional
		{"Ἀθῆναι", "αθηναι"},                  // polytonic Greek
		{"Άθήνα", "αθηνα"},                    // monotonic Greek tonos
		{"ЁЛКА Йод", "елка иод"},              // NFKD strips the Cyrillic breve and diaeresis too
		{"ΟΔΟΣ οδός", "οδοσ οδοσ"},            // final sigma folds to σ
		{"İstanbul", "istanbul"},              // dotted capital I
		{"한", "\u1112\u1161\u11AB"},           // Hangul syllable to conjoining jamo
		{"Straße STRASSE", "strasse strasse"}, // beyond NFKD: ß
		{"Łódź", "lodz"},                      // ł has no decomposition
		{"Ærøskøbing", "aeroskobing"},         // æ, ø
		{"Œuvre", "oeuvre"},                   // œ
		{"Þórður", "thordur"},                 // þ, ð
		{"Đorđe", "dorde"},                    // đ
		{"", ""},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []Token
	}{
		{"Approval of Q3 budget!", []Token{
			{"approval", 0, 8}, {"of", 9, 11}, {"q3", 12, 14}, {"budget", 15, 21},
		}},
		{"Привет мир", []Token{{"привет", 0, 12}, {"мир", 13, 19}}},
		// Offsets index the original string: ü takes two bytes.
		{"Anna Müller, Ben", []Token{{"anna", 0, 4}, {"muller", 5, 12}, {"ben", 14, 17}}},
		// The ligature is three bytes and becomes two letters.
		{"the ﬁnal cut", []Token{{"the", 0, 3}, {"final", 4, 10}, {"cut", 11, 14}}},
		{"RÉSUMÉ", []Token{{"resume", 0, 8}}},
		// A combining mark continues the token instead of splitting it.
		{"cafe\u0301s open", []Token{{"cafes", 0, 7}, {"open", 8, 12}}},
		{"net-45 (v2.0)", []Token{{"net", 0, 3}, {"45", 4, 6}, {"v2", 8, 10}, {"0", 11, 12}}},
		{"", nil},
		{" -- !! ", nil},
		{"\u0301abc", []Token{{"abc", 2, 5}}}, // a token never starts with a mark
	}
	for _, tt := range tests {
		got := Tokenize(tt.in)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokenize(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// Every token's text must be the normalisation of the original span it
// points at: that is what makes offsets usable for snippets.
func TestTokenOffsetsIndexOriginal(t *testing.T) {
	inputs := []string{
		"Approval of Q3 budget!",
		"Walked through the new onboarding flow — Anna Müller, Dana Ortiz.",
		"ﬁnal ﬂow: Ærøskøbing, Łódź; Привет мир; 東京 タワー; 한국어",
		"MiXeD CaSe and UPPER and lower",
	}
	for _, in := range inputs {
		for _, tk := range Tokenize(in) {
			if !utf8.ValidString(in[tk.Start:tk.End]) {
				t.Errorf("%q: token %v splits a rune", in, tk)
			}
			if got := Normalize(in[tk.Start:tk.End]); got != tk.Text {
				t.Errorf("%q: token %v: Normalize(original span) = %q", in, tk, got)
			}
		}
	}
}

func TestQueryTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"what did we decide about hiring", []string{"decide", "hiring"}},
		{"approval of the budget", []string{"approval", "budget"}},
		{"The WHO", []string{"the", "who"}}, // all stopwords: keep them all
		{"budget", []string{"budget"}},
		{"Müller", []string{"muller"}},
		{"", []string{}},
		{"!!!", []string{}},
	}
	for _, tt := range tests {
		got := QueryTokens(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("QueryTokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStopwords(t *testing.T) {
	if len(stopwords) != 65 {
		t.Fatalf("stopwords has %d entries, the reference has 65", len(stopwords))
	}
	for _, w := range []string{"a", "about", "which", "your", "its", "us"} {
		if !IsStopword(w) {
			t.Errorf("IsStopword(%q) = false", w)
		}
	}
	for _, w := range []string{"budget", "not", "no", "all"} {
		if IsStopword(w) {
			t.Errorf("IsStopword(%q) = true", w)
		}
	}
}
