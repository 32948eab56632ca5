package scorer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSnippet(t *testing.T) {
	long := strings.Repeat("a", 100) + "TARGET" + strings.Repeat("b", 200) // 306 chars
	tests := []struct {
		name    string
		text    string
		offsets []int
		maxLen  int
		want    string
	}{
		{"empty", "", []int{0}, 160, ""},
		{"short text whole and trimmed", "  Design review  ", []int{2}, 160, "Design review"},
		{"exactly maxLen is whole", strings.Repeat("x", 160), nil, 160, strings.Repeat("x", 160)},
		{"no offsets cut from the head", long, nil, 160, long[:160] + "..."},
		{"window starts 40 before the match", long, []int{100}, 160, "..." + long[60:220] + "..."},
		{"earliest offset wins", long, []int{250, 100}, 160, "..." + long[60:220] + "..."},
		{"match near the start: no leading ellipsis", long, []int{10}, 160, long[:160] + "..."},
		{"match near the end: window clamped, no trailing ellipsis", long, []int{300}, 160, "..." + long[146:]},
		{"maxLen <= 0 means the default", long, []int{100}, 0, "..." + long[60:220] + "..."},
		{"small window keeps the default context", "0123456789abcdefghij", []int{12}, 5, "01234..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Snippet(tt.text, tt.offsets, tt.maxLen); got != tt.want {
				t.Errorf("Snippet = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSnippetContextBefore(t *testing.T) {
	if got := snippet("0123456789abcdefghij", []int{12}, 5, 2); got != "...abcde..." {
		t.Errorf("snippet = %q, want %q", got, "...abcde...")
	}
}

// The window counts runes and cuts at rune boundaries: multibyte text is
// never split inside a UTF-8 sequence.
func TestSnippetRuneBoundaries(t *testing.T) {
	text := strings.Repeat("ä", 100) + "Ziel" + strings.Repeat("ö", 200)
	off := strings.Index(text, "Ziel") // a byte offset
	got := Snippet(text, []int{off}, 160)
	if !utf8.ValidString(got) {
		t.Fatalf("snippet is not valid UTF-8: %q", got)
	}
	want := "..." + strings.Repeat("ä", 40) + "Ziel" + strings.Repeat("ö", 116) + "..."
	if got != want {
		t.Errorf("Snippet = %q, want %q", got, want)
	}
	if n := utf8.RuneCountInString(strings.Trim(got, ".")); n != 160 {
		t.Errorf("window has %d runes, want 160", n)
	}
	// An offset inside a multibyte rune still yields valid text.
	if got := Snippet(text, []int{off - 1}, 160); !utf8.ValidString(got) {
		t.Errorf("offset inside a rune gave invalid UTF-8: %q", got)
	}
	// Short multibyte text: 150 runes but 300 bytes is still "short".
	short := strings.Repeat("ü", 150)
	if got := Snippet(short, []int{10}, 160); got != short {
		t.Errorf("short multibyte text was cut: %q", got)
	}
}
