package podproxy

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

func TestRewriteURL(t *testing.T) {
	t.Parallel()
	rw := rewriter{prefix: "/api/v1/namespaces/ns/services/web:80/proxy", targetHost: "10.0.0.5:8080"}
	cases := []struct{ in, want string }{
		{"/rewriteme", "/api/v1/namespaces/ns/services/web:80/proxy/rewriteme"},
		{"/dir/", "/api/v1/namespaces/ns/services/web:80/proxy/dir/"},
		{"/", "/api/v1/namespaces/ns/services/web:80/proxy/"},
		{"/x?q=1#f", "/api/v1/namespaces/ns/services/web:80/proxy/x?q=1#f"},
		{"http://10.0.0.5:8080/abs", "/api/v1/namespaces/ns/services/web:80/proxy/abs"},
		{"/api/v1/namespaces/ns/services/web:80/proxy/already", "/api/v1/namespaces/ns/services/web:80/proxy/already"},
		{"relative/path", "relative/path"},
		{"http://other.example/abs", "http://other.example/abs"},
		{"//other.example/abs", "//other.example/abs"},
		{"mailto:a@b.c", "mailto:a@b.c"},
		{"ftp://10.0.0.5:8080/abs", "ftp://10.0.0.5:8080/abs"},
	}
	for _, c := range cases {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := rw.rewriteURL(u); got != c.want {
			t.Errorf("rewriteURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzRewriteHTML: any input is copied without error, and input without
// tags comes out unchanged.
func FuzzRewriteHTML(f *testing.F) {
	for _, s := range []string{`<a href="/x">t</a>`, `<script>if (a<b) {}</script>`, `plain text`, `<IMG SRC=/a.png>`, `<a href="%zz">`, `<!-- c --><p>`} {
		f.Add(s)
	}
	rw := rewriter{prefix: "/api/v1/nodes/n/proxy", targetHost: "h:1"}
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		if err := rw.rewriteHTML(&out, strings.NewReader(in)); err != nil {
			t.Fatalf("rewriteHTML(%q): %v", in, err)
		}
		if !strings.ContainsAny(in, "<&") && out.String() != in {
			t.Fatalf("rewriteHTML(%q) = %q, want it unchanged", in, out.String())
		}
	})
}
