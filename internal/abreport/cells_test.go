//go:build linux

package abreport

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWrap: lines of at most w runes, broken at the last space that
// fits, else hard; spaces at a break dropped; a byte that is not UTF-8
// counted as one rune, not read past (FuzzReport's crasher 134bd4ef: a
// setup line with invalid UTF-8 cut at a byte offset beyond its end).
func TestWrap(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want []string
	}{
		{"", 5, []string{""}},
		{"abc", 5, []string{"abc"}},
		{"aaa bbb ccc", 7, []string{"aaa bbb", "ccc"}},
		{"aaa  bbb", 4, []string{"aaa ", "bbb"}},
		{"abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"héllo wörld", 6, []string{"héllo", "wörld"}},
		{"a\xff\xfe\xfd b\xffc d", 5, []string{"a\uFFFD\uFFFD\uFFFD", "b\uFFFDc d"}},
	} {
		got := wrap(c.s, c.w)
		if !slices.Equal(got, c.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
		for _, l := range got {
			if n := utf8.RuneCountInString(l); n > max(c.w, 1) || strings.HasPrefix(l, " ") {
				t.Errorf("wrap(%q, %d): line %q has %d runes or starts with a space", c.s, c.w, l, n)
			}
		}
	}
}
