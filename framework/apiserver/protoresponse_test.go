package apiserver

import "testing"

func TestPrefersProtobuf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"application/json", false},
		{"*/*", false},
		{"application/vnd.kubernetes.protobuf", true},
		{"application/vnd.kubernetes.protobuf, */*", true}, // client-go
		{"application/vnd.kubernetes.protobuf,application/json", true},
		{"application/json, application/vnd.kubernetes.protobuf", false},
		{"application/json;q=0.9, application/vnd.kubernetes.protobuf", true},
		{"application/vnd.kubernetes.protobuf;q=0.5, application/json", false},
		{"application/vnd.kubernetes.protobuf;q=0", false},
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json", false},
		{"application/cbor, application/vnd.kubernetes.protobuf", true},
		{"application/vnd.kubernetes.protobuf;q=abc, application/json", false},
		{";;;, application/vnd.kubernetes.protobuf", true},
	}
	for _, tc := range tests {
		t.Run(tc.accept, func(t *testing.T) {
			t.Parallel()
			if got := prefersProtobuf(tc.accept); got != tc.want {
				t.Errorf("prefersProtobuf(%q) = %v, want %v", tc.accept, got, tc.want)
			}
		})
	}
}
