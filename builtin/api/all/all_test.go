package all

import (
	"reflect"
	"slices"
	"testing"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	autoscalingv1 "github.com/converge-dev/converge/builtin/api/autoscaling/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// TestResourcesAreRegistered checks that, for every resource of every built-in
// package, the scheme knows its Kind (as the resource's Go type) and, when the
// resource can be listed, its ListKind, in the resource's group/version.
func TestResourcesAreRegistered(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatalf("NewScheme: %v", err)
	}
	for _, g := range Groups() {
		if g.Resources == nil {
			continue
		}
		tc := struct {
			pkg       string
			resources []*registry.Resource
		}{g.Name, g.Resources()}
		if len(tc.resources) == 0 {
			t.Errorf("%s: Resources() is empty", tc.pkg)
		}
		for _, r := range tc.resources {
			t.Run(tc.pkg+"/"+r.Resource, func(t *testing.T) {
				gvk := r.GroupVersion.WithKind(r.Kind)
				obj, err := s.New(gvk)
				if err != nil {
					t.Fatalf("New(%v): %v", gvk, err)
				}
				if got := obj.GroupVersionKind(); got != gvk {
					t.Errorf("New(%v) has kind %v", gvk, got)
				}
				if r.Type != nil {
					if got := reflect.TypeOf(obj).Elem(); got != r.Type {
						t.Errorf("New(%v) is a %v, the resource's Type is %v", gvk, got, r.Type)
					}
				}
				if k, err := s.ObjectKinds(reflect.New(reflect.TypeOf(obj).Elem()).Interface()); err != nil || k != gvk {
					t.Errorf("ObjectKinds(%T) = %v, %v; want %v", obj, k, err, gvk)
				}
				// Typed clients send protobuf: the struct tags must make a schema.
				if r.Type != nil {
					if err := (&protobuf.Decoder{}).DecodeInto(nil, reflect.New(r.Type).Interface()); err != nil {
						t.Errorf("protobuf schema of %v: %v", r.Type, err)
					}
				}

				// Create-only resources (bindings) have no list type.
				if !slices.Contains(r.ServedVerbs(), "list") {
					return
				}
				lgvk := r.GroupVersion.WithKind(r.ListKind)
				list, err := s.NewList(lgvk)
				if err != nil {
					t.Fatalf("NewList(%v): %v", lgvk, err)
				}
				if !s.IsList(list) {
					t.Errorf("IsList(%T) = false", list)
				}
				if k, err := s.ObjectKinds(reflect.New(reflect.TypeOf(list).Elem()).Interface()); err != nil || k != lgvk {
					t.Errorf("ObjectKinds(%T) = %v, %v; want %v", list, k, err, lgvk)
				}
			})
		}
	}
}

// TestNonResourceKinds checks the kinds that are not served resources.
func TestNonResourceKinds(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatalf("NewScheme: %v", err)
	}
	for _, tc := range []struct {
		gvk  api.GroupVersionKind
		want any
	}{
		{corev1.GroupVersion().WithKind("Binding"), &corev1.Binding{}},
		{policyv1.GroupVersion.WithKind("Eviction"), &policyv1.Eviction{}},
		{autoscalingv1.GroupVersion.WithKind("Scale"), &autoscalingv1.Scale{}},
		{appsv1.GroupVersion.WithKind("ControllerRevision"), &appsv1.ControllerRevision{}},
		{corev1.GroupVersion().WithKind("PodTemplate"), &corev1.PodTemplate{}},
	} {
		obj, err := s.New(tc.gvk)
		if err != nil {
			t.Errorf("New(%v): %v", tc.gvk, err)
			continue
		}
		if reflect.TypeOf(obj) != reflect.TypeOf(tc.want) {
			t.Errorf("New(%v) = %T, want %T", tc.gvk, obj, tc.want)
		}
	}
	if gvk, err := s.ObjectKinds(&autoscalingv1.Scale{}); err != nil || gvk.GroupVersion().String() != "autoscaling/v1" {
		t.Errorf("ObjectKinds(Scale) = %v, %v", gvk, err)
	}
}

// TestAddToSchemeIdempotent checks that registering the built-ins twice is fine.
func TestAddToSchemeIdempotent(t *testing.T) {
	s := scheme.New()
	for i := range 2 {
		if err := AddToScheme(s); err != nil {
			t.Fatalf("AddToScheme #%d: %v", i+1, err)
		}
	}
}
