package openapigen

import "testing"

func TestDescription(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"One line.\n", "One line."},
		{"Wrapped\nline.\n", "Wrapped line."},
		{"First.\n\nSecond\nparagraph.\n+optional\n", "First.\n\nSecond paragraph."},
		{"+listType=map\n", ""},
	} {
		if got := description(c.in); got != c.want {
			t.Errorf("description(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHasMarker(t *testing.T) {
	if !hasMarker("Doc.\n+optional\n", "optional") || hasMarker("Doc +optional\n", "optional") {
		t.Error("hasMarker: a marker is a line of its own")
	}
}
