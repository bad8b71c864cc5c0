package scheme_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/scheme"
)

type Widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
}

type WidgetList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []Widget `json:"items"`
}

type Gadget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
}

var gv = api.GroupVersion{Group: "example.com", Version: "v1"}

func TestScheme(t *testing.T) {
	t.Parallel()
	s := scheme.New()
	if err := s.AddKnownTypes(gv, &Widget{}, &WidgetList{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		obj  any
		want api.GroupVersionKind
		err  string
	}{
		{"registered", &Widget{}, gv.WithKind("Widget"), ""},
		{"list", &WidgetList{}, gv.WithKind("WidgetList"), ""},
		{"TypeMeta wins", &Gadget{TypeMeta: api.TypeMeta{APIVersion: "x.io/v2", Kind: "Gadget"}}, api.GroupVersionKind{Group: "x.io", Version: "v2", Kind: "Gadget"}, ""},
		{"unstructured", &api.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}, api.GroupVersionKind{Version: "v1", Kind: "Pod"}, ""},
		{"unstructured list", &api.UnstructuredList{APIVersion: "apps/v1", Kind: "DeploymentList"}, api.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DeploymentList"}, ""},
		{"unregistered", &Gadget{}, api.GroupVersionKind{}, "no kind is registered for the Go type github.com/converge-dev/converge/framework/scheme_test.Gadget; register it with Scheme.Add(gvk, &Gadget{})"},
		{"unstructured without kind", &api.Unstructured{}, api.GroupVersionKind{}, "SetGroupVersionKind"},
		{"not a pointer", Widget{}, api.GroupVersionKind{}, "not a pointer to a struct"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.ObjectKinds(tc.obj)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}

	obj, err := s.New(gv.WithKind("Widget"))
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := obj.(*Widget); !ok || w.Kind != "Widget" || w.APIVersion != "example.com/v1" {
		t.Fatalf("New = %#v", obj)
	}
	l, err := s.NewList(gv.WithKind("WidgetList"))
	if err != nil {
		t.Fatal(err)
	}
	if wl, ok := l.(*WidgetList); !ok || wl.Kind != "WidgetList" {
		t.Fatalf("NewList = %#v", l)
	}
	if _, err := s.New(gv.WithKind("Nope")); !errors.Is(err, scheme.ErrNotRegistered) {
		t.Fatalf("New(unknown) err = %v", err)
	}
	if !s.IsList(&WidgetList{}) || s.IsList(&Widget{}) || !s.Recognizes(gv.WithKind("Widget")) {
		t.Fatal("IsList/Recognizes wrong")
	}

	// Conflicts.
	if err := s.Add(gv.WithKind("Widget"), &Gadget{}); err == nil {
		t.Fatal("registering a second type for a kind succeeded")
	}
	if err := s.Add(gv.WithKind("Other"), &Widget{}); err == nil {
		t.Fatal("registering a type under a second kind succeeded")
	}
	if err := s.Add(gv.WithKind("Widget"), &Widget{}); err != nil {
		t.Fatalf("re-registering the same pair: %v", err)
	}
	if err := s.AddList(gv.WithKind("GadgetList"), &Gadget{}); err == nil {
		t.Fatal("AddList accepted an object type")
	}
}
