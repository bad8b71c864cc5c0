package labels

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // canonical String
	}{
		{"", ""},
		{"   ", ""},
		{"x=a", "x=a"},
		{"x==a", "x==a"},
		{"x!=a", "x!=a"},
		{"x=", "x="},
		{"x!=", "x!="},
		{"x", "x"},
		{"!x", "!x"},
		{" ! x ", "!x"},
		{"x>1", "x>1"},
		{"x<10", "x<10"},
		{"x in (b,a)", "x in (a,b)"},
		{"x in (a,a,b)", "x in (a,b)"},
		{"x notin (b, a )", "x notin (a,b)"},
		{"x in ()", "x in ()"},
		{"x in (,a)", "x in (,a)"},
		{"x in (a,)", "x in (,a)"},
		{"x in (a,,b)", "x in (,a,b)"},
		{"x in (in,notin)", "x in (in,notin)"},
		{"in in (in)", "in in (in)"},
		{"notin=notin", "notin=notin"},
		{"!in", "!in"},
		{"z=1,a=2", "a=2,z=1"},
		{"a=2,a!=1", "a!=1,a=2"},
		{"x=a,y!=b,z", "x=a,y!=b,z"},
		{"example.com/app=v", "example.com/app=v"},
		{"\tx\t=\ta\n,\ry", "x=a,y"},
		{"app in (p1,p2),tier notin (x),!foo,app!=zz", "app in (p1,p2),app!=zz,!foo,tier notin (x)"},
		{"a.b-c_D=E.f-g_H", "a.b-c_D=E.f-g_H"},
		{"x=" + strings.Repeat("a", 63), "x=" + strings.Repeat("a", 63)},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(c.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.in, err)
			}
			if got := s.String(); got != c.want {
				t.Fatalf("Parse(%q).String() = %q, want %q", c.in, got, c.want)
			}
			if s.Empty() != (c.want == "") {
				t.Errorf("Empty() = %v", s.Empty())
			}
			again, err := Parse(s.String())
			if err != nil || again.String() != c.want {
				t.Errorf("round trip: %v, %q", err, again)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const qnameMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	const valueMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
	cases := []struct {
		in, want string
	}{
		{",", "found ',', expected: !, identifier, or 'end of string'"},
		{"x=a,", "found '', expected: identifier after ','"},
		{"x=a,,y", "found ',', expected: identifier after ','"},
		{"x=a y", "found 'y', expected: ',' or 'end of string'"},
		{"x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"},
		{"x in a", "unable to parse requirement: found 'a' expected: '('"},
		{"x in (a", "unable to parse requirement: found '', expected: ',' or ')'"},
		{"x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
		{"x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
		{"x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"},
		{"x===a", "unable to parse requirement: found '=', expected: identifier"},
		{"x=(", "unable to parse requirement: found '(', expected: identifier"},
		{"!=a", "found '!=', expected: !, identifier, or 'end of string'"},
		{"!", "unable to parse requirement: found '', expected: identifier"},
		{"!(", "unable to parse requirement: found '(', expected: identifier"},
		{"!x=a", "found '=', expected: ',' or 'end of string'"},
		{"(", "found '(', expected: !, identifier, or 'end of string'"},
		{"x>a", `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`},
		{"x>-1", `unable to parse requirement: values[0][x]: Invalid value: "-1": ` + valueMsg},
		{"x y=a", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"},
		{"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
		{"-x=a", `unable to parse requirement: <nil>: Invalid value: "-x": ` + qnameMsg},
		{"x=a b", "found 'b', expected: ',' or 'end of string'"},
		{"x=-a", `unable to parse requirement: values[0][x]: Invalid value: "-a": ` + valueMsg},
		{"x=" + strings.Repeat("a", 64), `unable to parse requirement: values[0][x]: Invalid value: "` + strings.Repeat("a", 64) + `": must be no more than 63 characters`},
		{"a/b/c", `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		{"Example.com/x", `unable to parse requirement: <nil>: Invalid value: "Example.com/x": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{strings.Repeat("k", 64), `unable to parse requirement: <nil>: Invalid value: "` + strings.Repeat("k", 64) + `": name part must be no more than 63 characters`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(c.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", c.in, s)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Parse(%q) error:\n got %s\nwant %s", c.in, err, c.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	lbls := map[string]string{"app": "web", "tier": "front", "n": "5", "empty": "", "bad": "x"}
	cases := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"app=web", true},
		{"app==web", true},
		{"app=db", false},
		{"app!=db", true},
		{"app!=web", false},
		{"missing!=x", true},
		{"missing=x", false},
		{"missing=", false},
		{"empty=", true},
		{"empty", true},
		{"app", true},
		{"missing", false},
		{"!missing", true},
		{"!app", false},
		{"app in (web,db)", true},
		{"app in (db)", false},
		{"missing in (a)", false},
		{"app notin (web)", false},
		{"app notin (db)", true},
		{"missing notin (a)", true},
		{"n>4", true},
		{"n>5", false},
		{"n<6", true},
		{"n<5", false},
		{"missing>1", false},
		{"bad>1", false},
		{"bad<1", false},
		{"app=web,tier=front", true},
		{"app=web,tier=back", false},
		{"empty in ()", true},
	}
	for _, c := range cases {
		t.Run(c.sel, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(c.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Matches(lbls); got != c.want {
				t.Errorf("%q.Matches = %v, want %v", c.sel, got, c.want)
			}
		})
	}
}

func TestEverythingNothing(t *testing.T) {
	t.Parallel()
	if !Everything().Matches(nil) || !Everything().Empty() || Everything().String() != "" {
		t.Error("Everything")
	}
	if Nothing().Matches(map[string]string{}) || Nothing().Empty() || Nothing().String() != "" || Nothing().Requirements() != nil {
		t.Error("Nothing")
	}
	if _, ok := Nothing().RequiresExactMatch("a"); ok {
		t.Error("Nothing exact match")
	}
}

func TestRequiresExactMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		sel, key, want string
		found          bool
	}{
		{"a=b", "a", "b", true},
		{"a==b", "a", "b", true},
		{"a in (b)", "a", "b", true},
		{"a in (b,c)", "a", "", false},
		{"a!=b", "a", "", false},
		{"a", "a", "", false},
		{"x=y", "a", "", false},
	}
	for _, c := range cases {
		s, err := Parse(c.sel)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := s.RequiresExactMatch(c.key)
		if v != c.want || ok != c.found {
			t.Errorf("%q.RequiresExactMatch(%q) = %q, %v", c.sel, c.key, v, ok)
		}
	}
}

func TestSelectorFromSet(t *testing.T) {
	t.Parallel()
	s := SelectorFromSet(map[string]string{"b": "2", "a": "1"})
	if got := s.String(); got != "a=1,b=2" {
		t.Errorf("String = %q", got)
	}
	if !s.Matches(map[string]string{"a": "1", "b": "2", "c": "3"}) || s.Matches(map[string]string{"a": "1"}) {
		t.Error("Matches")
	}
	if !SelectorFromSet(nil).Empty() || !SelectorFromSet(nil).Matches(nil) {
		t.Error("nil set")
	}
	reqs := s.Requirements()
	if len(reqs) != 2 || reqs[0].Key() != "a" || reqs[0].Operator() != Equals || reqs[0].Values()[0] != "1" {
		t.Errorf("Requirements = %v", reqs)
	}
}

func TestNewRequirement(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key    string
		op     Operator
		values []string
		want   string // error, "" for none
	}{
		{"a", In, []string{"x"}, ""},
		{"a", In, nil, "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"},
		{"a", Equals, []string{"x", "y"}, `values: Invalid value: []string{"x", "y"}: exact-match compatibility requires one single value`},
		{"a", Exists, []string{"x"}, `values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist`},
		{"a", GreaterThan, []string{"1", "2"}, `values: Invalid value: []string{"1", "2"}: for 'Gt', 'Lt' operators, exactly one value is required`},
		{"a", "bogus", nil, `operator: Unsupported value: "bogus": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"`},
		{"", Exists, nil, `key: Invalid value: "": name part must be non-empty; name part must consist of`},
	}
	for _, c := range cases {
		_, err := NewRequirement(c.key, c.op, c.values)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("NewRequirement(%q, %q, %q): %v", c.key, c.op, c.values, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("NewRequirement(%q, %q, %q) = %v, want %s", c.key, c.op, c.values, err, c.want)
		}
	}
}

func TestFromLabelSelector(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      *api.LabelSelector
		want    string
		wantErr string
		nothing bool
	}{
		{name: "nil", in: nil, nothing: true},
		{name: "empty", in: &api.LabelSelector{}, want: ""},
		{name: "matchLabels", in: &api.LabelSelector{MatchLabels: map[string]string{"app": "d1"}}, want: "app=d1"},
		{name: "all ops", in: &api.LabelSelector{
			MatchLabels: map[string]string{"z": "1"},
			MatchExpressions: []api.LabelSelectorRequirement{
				{Key: "app", Operator: "In", Values: []string{"b", "a"}},
				{Key: "tier", Operator: "NotIn", Values: []string{"x"}},
				{Key: "e", Operator: "Exists"},
				{Key: "d", Operator: "DoesNotExist"},
			}}, want: "app in (a,b),!d,e,tier notin (x),z=1"},
		{name: "in without values", in: &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "a", Operator: "In"}}},
			wantErr: "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"},
		{name: "exists with values", in: &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "a", Operator: "Exists", Values: []string{"x"}}}},
			wantErr: `values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist`},
		{name: "bad operator", in: &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "a", Operator: "Gt"}}},
			wantErr: `"Gt" is not a valid label selector operator`},
		{name: "bad value", in: &api.LabelSelector{MatchLabels: map[string]string{"a": "-"}},
			wantErr: `values[0][a]: Invalid value: "-": a valid label must be`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := FromLabelSelector(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %s", err, c.wantErr)
				}
				if got := FormatLabelSelector(c.in); got != "<error>" {
					t.Errorf("FormatLabelSelector = %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.nothing {
				if s.Matches(map[string]string{}) || s.Empty() {
					t.Error("nil selector must select nothing")
				}
			} else if got := s.String(); got != c.want {
				t.Errorf("String = %q, want %q", got, c.want)
			}
			if got := FormatLabelSelector(c.in); got != c.want {
				t.Errorf("FormatLabelSelector = %q, want %q", got, c.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "x=a", "x==a,y!=b", "x in (a,b),!z", "x notin (,a)", "x>1,y<2", "in in (in)",
		"a/b=c", "x=a y", "x in ((", "!!x", "a,,b", "x in ()", "k=\x00"} {
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
		a, b := s.Requirements(), again.Requirements()
		if len(a) != len(b) {
			t.Fatalf("requirements differ: %v vs %v", a, b)
		}
		for i := range a {
			if !a[i].Equal(b[i]) {
				t.Fatalf("requirement %d differs: %v vs %v", i, a[i], b[i])
			}
		}
		lbls := map[string]string{}
		for _, r := range a {
			if v := r.Values(); len(v) > 0 {
				lbls[r.Key()] = v[0]
			}
		}
		if s.Matches(lbls) != again.Matches(lbls) {
			t.Fatalf("match differs for %q", in)
		}
	})
}
