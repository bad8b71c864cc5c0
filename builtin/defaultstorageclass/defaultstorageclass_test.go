package defaultstorageclass_test

import (
	"context"
	"testing"
	"time"

	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/builtin/defaultstorageclass"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

func class(name string, def bool, created time.Time) storagev1.StorageClass {
	sc := storagev1.StorageClass{Provisioner: "example.com/" + name}
	sc.Name, sc.CreationTimestamp = name, api.NewTime(created)
	if def {
		sc.Annotations = map[string]string{storagev1.AnnIsDefaultClass: "true"}
	}
	return sc
}

func TestAdmit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pvcs := api.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	for _, tc := range []struct {
		name    string
		classes []storagev1.StorageClass
		op      admission.Operation
		res     api.GroupVersionResource
		spec    map[string]any
		want    any  // spec.storageClassName after admission (nil: absent)
		set     bool // the plugin sets it
	}{
		{"a claim without a class gets the default", []storagev1.StorageClass{class("a", false, t0), class("b", true, t0)}, admission.Create, pvcs, map[string]any{}, "b", true},
		{"a null class is no class", []storagev1.StorageClass{class("b", true, t0)}, admission.Create, pvcs, map[string]any{"storageClassName": nil}, "b", true},
		{"the newest of two defaults", []storagev1.StorageClass{class("old", true, t0), class("new", true, t0.Add(time.Hour))}, admission.Create, pvcs, map[string]any{}, "new", true},
		{"of two defaults as old, the first by name", []storagev1.StorageClass{class("z", true, t0), class("m", true, t0)}, admission.Create, pvcs, map[string]any{}, "m", true},
		{`class "" is kept`, []storagev1.StorageClass{class("b", true, t0)}, admission.Create, pvcs, map[string]any{"storageClassName": ""}, "", false},
		{"a named class is kept", []storagev1.StorageClass{class("b", true, t0)}, admission.Create, pvcs, map[string]any{"storageClassName": "fast"}, "fast", false},
		{"no default class", []storagev1.StorageClass{class("a", false, t0)}, admission.Create, pvcs, map[string]any{}, nil, false},
		{"updates are left alone", []storagev1.StorageClass{class("b", true, t0)}, admission.Update, pvcs, map[string]any{}, nil, false},
		{"other resources are left alone", []storagev1.StorageClass{class("b", true, t0)}, admission.Create, api.GroupVersionResource{Version: "v1", Resource: "pods"}, map[string]any{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := defaultstorageclass.New(func(context.Context) ([]storagev1.StorageClass, error) { return tc.classes, nil })
			a := &admission.Attributes{Operation: tc.op, Resource: tc.res, Namespace: "ns", Object: map[string]any{"spec": tc.spec}}
			changed, err := p.AdmitReport(t.Context(), a)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := tc.spec["storageClassName"]
			if !ok {
				got = nil
			}
			if got != tc.want {
				t.Errorf("storageClassName %v, want %v", got, tc.want)
			}
			if wantChanged := tc.set && got != nil; changed != wantChanged {
				t.Errorf("changed %v, want %v", changed, wantChanged)
			}
		})
	}
}
