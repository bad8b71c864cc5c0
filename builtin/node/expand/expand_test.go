package expand

import (
	"strings"
	"testing"
)

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

func TestStrict(t *testing.T) {
	t.Parallel()
	env := map[string]string{"POD_NAME": "foo", "ANNOTATION": "mypath", "EMPTY": "", "ABS": "/tmp", "UP": ".."}
	cases := []struct{ in, want, err string }{
		{"$(POD_NAME)", "foo", ""},
		{"$(ANNOTATION)/$(POD_NAME)", "mypath/foo", ""},
		{"logs/$(POD_NAME)/out", "logs/foo/out", ""},
		{"plain/dir", "plain/dir", ""},
		{"$$(POD_NAME)", "$(POD_NAME)", ""},
		{"$(ABS)", "/tmp", ""}, // the caller rejects absolute results
		{"$(UP)", "..", ""},    // and backsteps
		{"$(MISSING)", "", "missing value for MISSING"},
		{"$(EMPTY)/x", "", "missing value for EMPTY"},
		{"$(Z)/$(A)/$(Z)", "", "missing value for A, Z"},
		{"$(POD_NAME", "$(POD_NAME", ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			got, err := Strict(c.in, MapLookup(env))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("Strict(%q) = %q, %v; want error %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("Strict(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

// FuzzStrict: Strict agrees with Expand whenever it succeeds, and fails only
// when a referenced variable is undefined or empty.
func FuzzStrict(f *testing.F) {
	for _, s := range []string{"$(A)/$(B)", "$$(A)", "$(", "$()", "x$(MISSING)y", "$(E)", "$$$(A)"} {
		f.Add(s)
	}
	env := map[string]string{"A": "a", "B": "b/c", "E": ""}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Strict(s, MapLookup(env))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "missing value for ") {
				t.Fatalf("Strict(%q): unexpected error %v", s, err)
			}
			return
		}
		if want := Expand(s, MapLookup(env)); got != want {
			t.Fatalf("Strict(%q) = %q, Expand = %q", s, got, want)
		}
	})
}
