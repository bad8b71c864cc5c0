package podproxy_test

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/builtin/podproxy"
)

func TestSplitSchemeNamePort(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id, scheme, name, port string
		ok                     bool
	}{
		{"server", "", "server", "", true},
		{"server:8080", "", "server", "8080", true},
		{"https:server:8443", "https", "server", "8443", true},
		{"http:server:", "http", "server", "", true},
		{"ftp:server:21", "", "", "", false},
		{":8080", "", "", "", false},
		{"", "", "", "", false},
		{"a:b:c:d", "", "", "", false},
	}
	for _, c := range cases {
		scheme, name, port, ok := podproxy.SplitSchemeNamePort(c.id)
		if scheme != c.scheme || name != c.name || port != c.port || ok != c.ok {
			t.Errorf("SplitSchemeNamePort(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", c.id, scheme, name, port, ok, c.scheme, c.name, c.port, c.ok)
		}
	}
}

func FuzzSplitSchemeNamePort(f *testing.F) {
	for _, s := range []string{"server", "server:80", "https:server:443", "a:b:c:d", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		scheme, name, port, ok := podproxy.SplitSchemeNamePort(id)
		if !ok {
			return
		}
		if name == "" || strings.Contains(name, ":") {
			t.Fatalf("%q: accepted name %q", id, name)
		}
		parts := []string{name}
		if port != "" || strings.Count(id, ":") > 0 {
			parts = append(parts, port)
		}
		if scheme != "" {
			parts = append([]string{scheme}, parts...)
		}
		if got := strings.Join(parts, ":"); got != id {
			t.Fatalf("%q splits into %q, %q, %q, which join to %q", id, scheme, name, port, got)
		}
	})
}
