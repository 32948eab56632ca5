package openproject

import (
	"strings"
	"testing"
)

func TestPlainText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Nothing to do here.", "Nothing to do here."},
		{"mention", `Ask <mention class="mention" data-id="5" data-type="user" data-text="@Anna Müller">@Anna Müller</mention> first.`, "Ask @Anna Müller first."},
		{"blocks", "<p>One</p><p>Two<br>three</p>", "\nOne\n\nTwo\nthree\n"},
		{"table", "<table><tr><td>a</td><td>b</td></tr></table>", "\n\n\na\n\nb\n\n\n"},
		{"entities", "Fish &amp; chips &lt;3 &#169;", "Fish & chips <3 ©"},
		{"code keeps brackets", "Use Vec<String> and a <b c", "Use Vec<String> and a <b c"},
		{"inline", "<strong>bold</strong> and <em>it</em>", "bold and it"},
		{"macro", `<macro class="toc"></macro>Intro`, "Intro"},
		{"uppercase", "<P>x</P>", "\nx\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlainText(tc.in); got != tc.want {
				t.Errorf("PlainText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzPlainText(f *testing.F) {
	f.Add(`<mention class="mention" data-id="1">@A</mention>`)
	f.Add("<p>x</p>&amp;")
	f.Add("a <b> c")
	f.Fuzz(func(t *testing.T, s string) {
		out := PlainText(s)
		if htmlTag.MatchString(out) && !strings.Contains(s, "&lt;") && !strings.Contains(s, "&#") {
			// A tag can only survive by being spelled as references.
			t.Fatalf("PlainText(%q) = %q still holds a tag", s, out)
		}
		if PlainText(out) != out && !strings.ContainsAny(out, "&<") {
			t.Fatalf("PlainText is not stable on %q", out)
		}
	})
}
