package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPruneMeta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		obj, want   map[string]any
		wantUnknown []string
	}{
		{
			name: "exact names kept",
			obj: map[string]any{"kind": "X", "metadata": map[string]any{
				"name": "a", "labels": map[string]any{"Any": "key"}, "creationTimestamp": "2026-01-01T00:00:00Z",
				"managedFields": []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}},
			}},
			want: map[string]any{"kind": "X", "metadata": map[string]any{
				"name": "a", "labels": map[string]any{"Any": "key"}, "creationTimestamp": "2026-01-01T00:00:00Z",
				"managedFields": []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}},
			}},
		},
		{
			name:        "case differs",
			obj:         map[string]any{"metadata": map[string]any{"namE": "a", "Labels": map[string]any{"x": "y"}}},
			want:        map[string]any{"metadata": map[string]any{}},
			wantUnknown: []string{"metadata.Labels", "metadata.namE"},
		},
		{
			name: "nested owner reference",
			obj: map[string]any{"metadata": map[string]any{"name": "a", "ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "Kind": "Pod", "name": "p", "uid": "u", "extra": true}}}},
			want: map[string]any{"metadata": map[string]any{"name": "a", "ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "name": "p", "uid": "u"}}}},
			wantUnknown: []string{"metadata.ownerReferences[0].Kind", "metadata.ownerReferences[0].extra"},
		},
		{
			name: "no metadata",
			obj:  map[string]any{"kind": "X"},
			want: map[string]any{"kind": "X"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unknown := PruneMeta(tc.obj)
			if diff := cmp.Diff(tc.wantUnknown, unknown); diff != "" {
				t.Errorf("unknown (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, tc.obj); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
		})
	}
}
