package v1

import "testing"

// TestSelectableFields: certificatesigningrequests are selectable by
// spec.signerName, as in Kubernetes.
func TestSelectableFields(t *testing.T) {
	t.Parallel()
	r := Resources()[0]
	got := r.SelectableFields(map[string]any{"spec": map[string]any{"signerName": "kubernetes.io/kube-apiserver-client"}})
	if got["spec.signerName"] != "kubernetes.io/kube-apiserver-client" {
		t.Fatalf("selectable fields %v", got)
	}
}
