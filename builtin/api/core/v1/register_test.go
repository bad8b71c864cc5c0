package v1

import (
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestResources(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Resources() {
		if seen[r.Resource] {
			t.Errorf("duplicate resource %s", r.Resource)
		}
		seen[r.Resource] = true
		if r.Type == nil || r.Strategy == nil || r.NameValidation == nil {
			t.Errorf("%s: missing Type, Strategy or NameValidation", r.Resource)
		}
		if r.Type != nil && r.Type.Name() != r.Kind {
			t.Errorf("%s: Type %s for kind %s", r.Resource, r.Type.Name(), r.Kind)
		}
		if r.GroupVersion != (api.GroupVersion{Version: "v1"}) {
			t.Errorf("%s: group version %v", r.Resource, r.GroupVersion)
		}
	}
	for _, want := range []string{"namespaces", "configmaps", "secrets", "serviceaccounts", "events", "pods", "podtemplates", "persistentvolumeclaims", "nodes", "services", "endpoints", "bindings"} {
		if !seen[want] {
			t.Errorf("missing %s", want)
		}
	}
	if errs := resourceByKind("Service").NameValidation("1abc", false); len(errs) == 0 {
		t.Error("service names must be DNS-1035 labels")
	}
	if errs := resourceByKind("Namespace").NameValidation("a.b", false); len(errs) == 0 {
		t.Error("namespace names must be DNS labels")
	}
}

func TestSelectableFields(t *testing.T) {
	pod := map[string]any{"spec": map[string]any{"nodeName": "n1", "hostNetwork": true}, "status": map[string]any{"phase": "Running"}}
	f := resourceByKind("Pod").SelectableFields(pod)
	if f["spec.nodeName"] != "n1" || f["spec.hostNetwork"] != "true" || f["status.phase"] != "Running" || f["status.podIP"] != "" {
		t.Errorf("pod fields %v", f)
	}
	ev := map[string]any{"involvedObject": map[string]any{"name": "p", "kind": "Pod"}, "source": map[string]any{"component": "kubelet"}}
	f = resourceByKind("Event").SelectableFields(ev)
	if f["involvedObject.name"] != "p" || f["involvedObject.kind"] != "Pod" || f["source"] != "kubelet" {
		t.Errorf("event fields %v", f)
	}
	if f := resourceByKind("Node").SelectableFields(map[string]any{}); f["spec.unschedulable"] != "false" {
		t.Errorf("node fields %v", f)
	}
}
