package security

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// TestCSRRequesterReportsChanges checks that csrRequester reports a change
// (and makes it) for the creates of CertificateSigningRequests only, and
// that AdmitReport changes what Admit changes.
func TestCSRRequesterReportsChanges(t *testing.T) {
	t.Parallel()
	csrs := api.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	cms := api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	user := &filters.User{Name: "alice", UID: "1", Groups: []string{"devs"}}
	for _, tc := range []struct {
		name        string
		op          admission.Operation
		res         api.GroupVersionResource
		subresource string
		want        bool
	}{
		{"csr create", admission.Create, csrs, "", true},
		{"csr update", admission.Update, csrs, "", false},
		{"csr approval", admission.Create, csrs, "approval", false},
		{"configmap create", admission.Create, cms, "", false},
		{"configmap update", admission.Update, cms, "", false},
	} {
		obj := func() map[string]any {
			return map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"username": "mallory", "request": "cg=="}}
		}
		admitted := &admission.Attributes{Operation: tc.op, Resource: tc.res, Subresource: tc.subresource, Object: obj(), User: user}
		if err := (csrRequester{}).Admit(context.Background(), admitted); err != nil {
			t.Fatal(err)
		}
		reported := &admission.Attributes{Operation: tc.op, Resource: tc.res, Subresource: tc.subresource, Object: obj(), User: user}
		changed, err := csrRequester{}.AdmitReport(context.Background(), reported)
		if err != nil {
			t.Fatal(err)
		}
		if changed != tc.want {
			t.Errorf("%s: changed = %v, want %v", tc.name, changed, tc.want)
		}
		if diff := cmp.Diff(admitted.Object, reported.Object); diff != "" {
			t.Errorf("%s: AdmitReport and Admit differ (-Admit +AdmitReport):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(obj(), reported.Object); (diff != "") != tc.want {
			t.Errorf("%s: changed %v, but the object %s", tc.name, tc.want, map[bool]string{true: "changed", false: "did not"}[diff != ""])
		}
	}
}
