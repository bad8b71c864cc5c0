package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// nodeLease is a Lease as a node agent writes it into kube-node-lease.
const nodeLease = `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"n1","namespace":"kube-node-lease",
	"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"6f1c","controller":false,"blockOwnerDeletion":false}]},
	"spec":{"holderIdentity":"n1","leaseDurationSeconds":40,"acquireTime":"2024-01-01T00:00:00.000000Z","renewTime":"2024-01-01T00:05:00.123456Z","leaseTransitions":2}}`

func leaseResource(t *testing.T) *registry.Resource {
	t.Helper()
	rs := Resources()
	if len(rs) != 1 || rs[0].Resource != "leases" {
		t.Fatalf("resources %v", rs)
	}
	return rs[0]
}

func TestLeaseRoundTrip(t *testing.T) {
	t.Parallel()
	in, err := api.DecodeMap([]byte(nodeLease))
	if err != nil {
		t.Fatal(err)
	}
	r := leaseResource(t)
	out, unknown, errs := r.Strategy.Canonicalize(api.DeepCopyJSON(in))
	if len(unknown) > 0 || len(errs) > 0 {
		t.Fatalf("unknown %v, errs %v", unknown, errs)
	}
	// Leases have no defaults: the canonical form is the input, with a null
	// creationTimestamp (as in Kubernetes) until the server sets it.
	want := api.DeepCopyJSON(in)
	want["metadata"].(map[string]any)["creationTimestamp"] = nil
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("canonical form (-in +out):\n%s", diff)
	}
	if errs := r.Strategy.ValidateCreate(t.Context(), out); len(errs) > 0 {
		t.Errorf("ValidateCreate: %v", errs.ToError())
	}
}

func TestValidateLease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec LeaseSpec
		want string
	}{
		{"valid", LeaseSpec{HolderIdentity: api.Ptr("n1"), LeaseDurationSeconds: api.Ptr[int32](40)}, ""},
		{"zero duration", LeaseSpec{LeaseDurationSeconds: api.Ptr[int32](0)},
			"spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"},
		{"negative transitions", LeaseSpec{LeaseTransitions: api.Ptr[int32](-1)},
			"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"},
		{"preferred without holder", LeaseSpec{PreferredHolder: api.Ptr("n2")},
			"spec.preferredHolder: Forbidden: may only be specified if `holderIdentity` is specified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if err := ValidateLease(&Lease{Spec: tt.spec}).ToError(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLeasePrinter(t *testing.T) {
	t.Parallel()
	p := leaseResource(t).Printer
	now := time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC)
	l := &Lease{ObjectMeta: api.ObjectMeta{Name: "n1", CreationTimestamp: api.NewTime(now.Add(-90 * time.Second))},
		Spec: LeaseSpec{HolderIdentity: api.Ptr("n1_4f2a")}}
	obj, err := registry.ToMap(l)
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.Row(obj, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"n1", "n1_4f2a", "90s"}, row); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	if row, _ := p.Row(map[string]any{"metadata": map[string]any{"name": "x"}}, now); len(row) != len(p.Columns) || row[1] != "" {
		t.Errorf("row without holder %v", row)
	}
}
