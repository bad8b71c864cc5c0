package validation

import (
	"regexp"
	"testing"
)

// The regular expressions the matchers stand for.
var matchers = []struct {
	name  string
	re    *regexp.Regexp
	match func(string) bool
}{
	{"qualifiedName", regexp.MustCompile("^" + qualifiedNameFmt + "$"), matchQualifiedName},
	{"labelValue", regexp.MustCompile("^" + labelValueFmt + "$"), matchLabelValue},
	{"dns1123Label", regexp.MustCompile("^" + dns1123LabelFmt + "$"), matchDNS1123Label},
	{"dns1123Subdomain", regexp.MustCompile("^" + dns1123SubdomainFmt + "$"), matchDNS1123Subdomain},
	{"dns1035Label", regexp.MustCompile("^" + dns1035LabelFmt + "$"), matchDNS1035Label},
}

var matchCorpus = []string{
	"", "a", "A", "0", "-", ".", "_", "a-b", "a--b", "-a", "a-", "a.b", "a..b", ".a", "a.", "a.b.c", "a_b", "A_b.C-d",
	"abc\n", "\na", "ab$", "é", "a.-b", "a-.b", "1abc", "abc1", "a.1", "my-name", "example.com", "a b", "a\x00",
}

func TestMatchersMatchTheirExpressions(t *testing.T) {
	t.Parallel()
	for _, s := range matchCorpus {
		checkMatchers(t, s)
	}
}

// FuzzNameMatchers checks the name matchers against the regular expressions.
func FuzzNameMatchers(f *testing.F) {
	for _, s := range matchCorpus {
		f.Add(s)
	}
	f.Fuzz(checkMatchers)
}

func checkMatchers(t *testing.T, s string) {
	for _, m := range matchers {
		if got, want := m.match(s), m.re.MatchString(s); got != want {
			t.Errorf("%s(%q) = %v, the expression says %v", m.name, s, got, want)
		}
	}
}
