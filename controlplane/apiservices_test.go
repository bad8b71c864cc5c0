package controlplane_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client/rest"
)

// TestLocalAPIServices: every served group version has a local APIService,
// Available with reason Local, including a custom resource's group while its
// CRD exists.
func TestLocalAPIServices(t *testing.T) {
	ctx := t.Context()
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: t.TempDir(), NoFsync: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	cfg, err := cp.ClientConfig("apiservices-test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rest.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) (map[string]any, error) {
		resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/apis/apiregistration.k8s.io/v1/apiservices/" + name})
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(resp.Body, &m)
	}
	available := func(name string) error {
		s, err := get(name)
		if err != nil {
			return err
		}
		conds, _ := s["status"].(map[string]any)["conditions"].([]any)
		for _, c := range conds {
			c := c.(map[string]any)
			if c["type"] == "Available" && c["status"] == "True" && c["reason"] == "Local" {
				return nil
			}
		}
		return fmt.Errorf("apiservice %s: conditions %v", name, conds)
	}
	eventually := func(check func() error) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := check()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, name := range []string{"v1.", "v1.apps", "v1.apiregistration.k8s.io", "v2.autoscaling"} {
		eventually(func() error { return available(name) })
	}
	s, err := get("v1.apps")
	if err != nil {
		t.Fatal(err)
	}
	spec := s["spec"].(map[string]any)
	if spec["group"] != "apps" || spec["version"] != "v1" || spec["service"] != nil || spec["groupPriorityMinimum"].(float64) <= 1000 {
		t.Errorf("v1.apps spec %v", spec)
	}

	crd := []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
	"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`)
	if _, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: crd}); err != nil {
		t.Fatal(err)
	}
	eventually(func() error { return available("v1.example.com") })
	if _, err := c.Do(ctx, rest.Request{Method: http.MethodDelete, Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"}); err != nil {
		t.Fatal(err)
	}
	eventually(func() error {
		if _, err := get("v1.example.com"); err == nil {
			return fmt.Errorf("v1.example.com still exists after its CRD went")
		}
		return nil
	})
}
