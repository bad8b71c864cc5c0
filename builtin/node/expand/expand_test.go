package expand

import "testing"

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"VAR": "value", "EMPTY": "", "NESTED": "$(VAR)"}
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(VAR)", "value"},
		{"a-$(VAR)-b", "a-value-b"},
		{"$(VAR)$(VAR)", "valuevalue"},
		{"$(MISSING)", "$(MISSING)"},
		{"$(EMPTY)x", "x"},
		{"$$(VAR)", "$(VAR)"},
		{"$$$(VAR)", "$value"},
		{"$$", "$"},
		{"$VAR", "$VAR"},
		{"$", "$"},
		{"trailing $", "trailing $"},
		{"$(VAR", "$(VAR"},
		{"$()", "$()"},
		{"$(NESTED)", "$(VAR)"},
		{"100$", "100$"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			if got := Expand(c.in, MapLookup(env)); got != c.want {
				t.Errorf("Expand(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
