package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	subdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	labelMsg     = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	dns1035Msg   = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`
	qnameMsg     = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
	valueMsg     = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
)

func TestIsFunctions(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct {
		name string
		fn   func(string) []string
		in   string
		want []string
	}{
		{"subdomain ok", IsDNS1123Subdomain, "example.com", nil},
		{"subdomain 253", IsDNS1123Subdomain, long(63) + "." + long(63) + "." + long(63) + "." + long(61), nil},
		{"subdomain upper", IsDNS1123Subdomain, "Example", []string{subdomainMsg}},
		{"subdomain empty", IsDNS1123Subdomain, "", []string{subdomainMsg}},
		{"subdomain dash end", IsDNS1123Subdomain, "a-", []string{subdomainMsg}},
		{"subdomain too long", IsDNS1123Subdomain, long(254), []string{"must be no more than 253 characters"}},
		{"label ok", IsDNS1123Label, "my-name", nil},
		{"label digits first", IsDNS1123Label, "1abc", nil},
		{"label dots", IsDNS1123Label, "a.b", []string{"must not contain dots"}},
		{"label underscore", IsDNS1123Label, "a_b", []string{labelMsg}},
		{"label too long", IsDNS1123Label, long(64), []string{"must be no more than 63 characters"}},
		{"1035 ok", IsDNS1035Label, "my-svc", nil},
		{"1035 digit first", IsDNS1035Label, "1svc", []string{dns1035Msg}},
		{"1035 too long", IsDNS1035Label, long(64), []string{"must be no more than 63 characters"}},
		{"qname ok", IsQualifiedName, "app.kubernetes.io/Name_x", nil},
		{"qname plain", IsQualifiedName, "MyName", nil},
		{"qname empty", IsQualifiedName, "", []string{"name part must be non-empty", qnameMsg}},
		{"qname empty prefix", IsQualifiedName, "/a", []string{"prefix part must be non-empty"}},
		{"qname bad prefix", IsQualifiedName, "A/a", []string{"prefix part " + subdomainMsg}},
		{"qname long name", IsQualifiedName, "x/" + long(64), []string{"name part must be no more than 63 characters"}},
		{"qname two slashes", IsQualifiedName, "a/b/c", []string{`a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`}},
		{"qname bad char", IsQualifiedName, "a b", []string{qnameMsg}},
		{"value ok", IsValidLabelValue, "My_value-1.2", nil},
		{"value empty", IsValidLabelValue, "", nil},
		{"value bad", IsValidLabelValue, "-x", []string{valueMsg}},
		{"value long", IsValidLabelValue, long(64), []string{"must be no more than 63 characters"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.want, c.fn(c.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNameFuncs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fn     NameFunc
		in     string
		prefix bool
		valid  bool
	}{
		{"subdomain", NameIsDNSSubdomain, "a.b", false, true},
		{"subdomain trailing dash", NameIsDNSSubdomain, "web-", false, false},
		{"subdomain generateName", NameIsDNSSubdomain, "web-", true, true},
		{"subdomain generateName dot dash", NameIsDNSSubdomain, "a.-", true, true},
		{"subdomain generateName bad", NameIsDNSSubdomain, "Web-", true, false},
		{"subdomain lone dash", NameIsDNSSubdomain, "-", true, false},
		{"label", NameIsDNSLabel, "ns-1", false, true},
		{"label generateName", NameIsDNSLabel, "ns-", true, true},
		{"label dots", NameIsDNSLabel, "a.b-", true, false},
		{"1035", NameIsDNS1035Label, "svc", false, true},
		{"1035 generateName", NameIsDNS1035Label, "svc-", true, true},
		{"1035 digit", NameIsDNS1035Label, "1svc-", true, false},
		{"namespace", ValidateNamespaceName, "kube-system", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if errs := c.fn(c.in, c.prefix); (len(errs) == 0) != c.valid {
				t.Errorf("%q prefix=%v: %v", c.in, c.prefix, errs)
			}
		})
	}
}
