package node

import "testing"

func TestSplitClaimDir(t *testing.T) {
	t.Parallel()
	const uid = "0b4f4a4e-6a3c-4c57-9a55-2f1a3b5c7d9e"
	tests := []struct {
		in        string
		name, uid string
		ok        bool
	}{
		{in: "data-web-0-" + uid, name: "data-web-0", uid: uid, ok: true},
		{in: "a-" + uid, name: "a", uid: uid, ok: true},
		{in: uid},
		{in: "data_" + uid},
		{in: "data"},
	}
	for _, tt := range tests {
		name, uid, ok := splitClaimDir(tt.in)
		if name != tt.name || uid != tt.uid || ok != tt.ok {
			t.Errorf("splitClaimDir(%q) = %q, %q, %v; want %q, %q, %v", tt.in, name, uid, ok, tt.name, tt.uid, tt.ok)
		}
	}
}
