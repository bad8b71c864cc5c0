package apiserver

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestFieldManagerName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ query, ua, want string }{
		{"fieldManager=ctrl", "kubectl/v1.33.0 (linux/amd64)", "ctrl"},
		{"", "kubectl/v1.33.0 (linux/amd64) kubernetes/abc", "kubectl"},
		{"", "kube-controller-manager/v1.32.0 (linux/amd64) kubernetes/x/system:serviceaccount:kube-system:deployment-controller", "kube-controller-manager"},
		{"", "Go-http-client/1.1", "Go-http-client"},
		{"", "", ""},
		{"", "no slash at all", "no slash at all"},
		{"", "tab\there/1", "tabhere"},
		{"", strings.Repeat("é", 100) + "/1", strings.Repeat("é", 64)},
	} {
		r := httptest.NewRequest("PATCH", "/api/v1/namespaces/a/configmaps/b?"+tc.query, nil)
		r.Header.Set("User-Agent", tc.ua)
		q := &request{r: r, query: url.Values(r.URL.Query())}
		if got := fieldManagerName(q); got != tc.want {
			t.Errorf("query %q, User-Agent %q: got %q, want %q", tc.query, tc.ua, got, tc.want)
		}
	}
}
