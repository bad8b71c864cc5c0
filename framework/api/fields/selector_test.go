package fields

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []Requirement
		str  string
	}{
		{"", nil, ""},
		{",,", nil, ""},
		{"a=b", []Requirement{{"a", Equals, "b"}}, "a=b"},
		{"a==b", []Requirement{{"a", Equals, "b"}}, "a=b"},
		{"a!=b", []Requirement{{"a", NotEquals, "b"}}, "a!=b"},
		{"a=", []Requirement{{"a", Equals, ""}}, "a="},
		{"=b", []Requirement{{"", Equals, "b"}}, "=b"},
		{"a = b", []Requirement{{"a ", Equals, " b"}}, "a = b"},
		{"metadata.name=x,status.phase!=Running", []Requirement{
			{"metadata.name", Equals, "x"}, {"status.phase", NotEquals, "Running"}},
			"metadata.name=x,status.phase!=Running"},
		{"z=1,a=2,", []Requirement{{"a", Equals, "2"}, {"z", Equals, "1"}}, "a=2,z=1"},
		{`a=x\,y`, []Requirement{{"a", Equals, "x,y"}}, `a=x\,y`},
		{`a=x\=y`, []Requirement{{"a", Equals, "x=y"}}, `a=x\=y`},
		{`a=x\\y`, []Requirement{{"a", Equals, `x\y`}}, `a=x\\y`},
		{`a=x\\,b=y`, []Requirement{{"a", Equals, `x\`}, {"b", Equals, "y"}}, `a=x\\,b=y`},
		{"involvedObject.name=p,involvedObject.namespace=d,involvedObject.uid=u", []Requirement{
			{"involvedObject.name", Equals, "p"}, {"involvedObject.namespace", Equals, "d"}, {"involvedObject.uid", Equals, "u"}},
			"involvedObject.name=p,involvedObject.namespace=d,involvedObject.uid=u"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, s.Requirements()); diff != "" && !(len(c.want) == 0 && len(s.Requirements()) == 0) {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
			if got := s.String(); got != c.str {
				t.Errorf("String = %q, want %q", got, c.str)
			}
			if s.Empty() != (len(c.want) == 0) {
				t.Errorf("Empty = %v", s.Empty())
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"a", "invalid selector: 'a'; can't understand 'a'"},
		{"a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"},
		{"a=b=c", "invalid field selector: unescaped character in value: 61"},
		{`a=b\`, `invalid field selector: invalid escape sequence: \`},
		{`a=b\x`, `invalid field selector: invalid escape sequence: \x`},
		{`a=b\é`, `invalid field selector: invalid escape sequence: \é`},
		{"a>1", "invalid selector: 'a>1'; can't understand 'a>1'"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(c.in)
			if err == nil || err.Error() != c.want {
				t.Fatalf("Parse(%q) error = %v, want %s", c.in, err, c.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	obj := map[string]string{"metadata.name": "p1", "status.phase": "Running", "spec.nodeName": ""}
	cases := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"metadata.name=p1", true},
		{"metadata.name==p1", true},
		{"metadata.name=p2", false},
		{"metadata.name!=p2", true},
		{"metadata.name!=p1", false},
		{"spec.nodeName=", true},
		{"missing=", true},
		{"missing!=x", true},
		{"missing=x", false},
		{"metadata.name=p1,status.phase=Running", true},
		{"metadata.name=p1,status.phase!=Running", false},
	}
	for _, c := range cases {
		s, err := Parse(c.sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Matches(obj); got != c.want {
			t.Errorf("%q.Matches = %v, want %v", c.sel, got, c.want)
		}
	}
	if !Everything().Matches(nil) || !Everything().Empty() {
		t.Error("Everything")
	}
}

func TestRequiresExactMatch(t *testing.T) {
	t.Parallel()
	s, err := Parse("metadata.name=p1,metadata.namespace!=x,spec.nodeName==n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field, value string
		found        bool
	}{
		{"metadata.name", "p1", true},
		{"spec.nodeName", "n", true},
		{"metadata.namespace", "", false},
		{"status.phase", "", false},
	} {
		if v, ok := s.RequiresExactMatch(c.field); v != c.value || ok != c.found {
			t.Errorf("RequiresExactMatch(%q) = %q, %v", c.field, v, ok)
		}
	}
	if v, ok := OneTermEqualSelector("a", "b").RequiresExactMatch("a"); v != "b" || !ok {
		t.Error("OneTermEqualSelector")
	}
	if got := SelectorFromSet(map[string]string{"b": "1", "a": "x,y"}).String(); got != `a=x\,y,b=1` {
		t.Errorf("SelectorFromSet = %q", got)
	}
}

func TestCheckSupported(t *testing.T) {
	t.Parallel()
	supported := func(f string) bool { return f == "metadata.name" || f == "metadata.namespace" }
	ok, _ := Parse("metadata.name=a,metadata.namespace!=b")
	if err := CheckSupported(ok, supported); err != nil {
		t.Errorf("CheckSupported: %v", err)
	}
	bad, _ := Parse("metadata.name=a,spec.x=1,spec.y=2")
	err := CheckSupported(bad, supported)
	var ufe *UnsupportedFieldError
	if err == nil || err.Error() != "field label not supported: spec.x" || !errors.As(err, &ufe) || ufe.Field != "spec.x" {
		t.Errorf("CheckSupported = %v", err)
	}
	if err := CheckSupported(Everything(), supported); err != nil {
		t.Errorf("Everything: %v", err)
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "plain", `a\b`, "a,b", "a=b", `\,=`, "\xff,"} {
		esc := EscapeValue(v)
		got, err := UnescapeValue(esc)
		if err != nil || got != v {
			t.Errorf("UnescapeValue(EscapeValue(%q)) = %q, %v", v, got, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "a=b", "a==b,c!=d", `a=x\,y`, `a\=b=c`, `a\,b=c`, "=", "!=", ",,a=", `a=\\`, "a!==b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		out := s.String()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", in, out, err)
		}
		if again.String() != out {
			t.Fatalf("String not canonical: %q -> %q -> %q", in, out, again.String())
		}
		if diff := cmp.Diff(s.Requirements(), again.Requirements()); diff != "" {
			t.Fatalf("requirements differ for %q: %s", in, diff)
		}
	})
}
