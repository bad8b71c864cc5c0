package v1

import (
	"strconv"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

var (
	_ registry.Strategy = daemonSetStrategy{}
	_ registry.Preparer = daemonSetStrategy{}
)

// daemonSetStrategy keeps a DaemonSet's template generation, as Kubernetes'
// daemonset strategy does: 1 on create, one more whenever spec.template
// changes, never set by the user. apps/v1 carries it as the
// deprecated.daemonset.template.generation annotation; the controller labels
// pods with it (pod-template-generation), and a pod whose label matches runs
// the current template even when its revision hash does not.
type daemonSetStrategy struct{ registry.Typed[DaemonSet] }

// PrepareForCreate implements registry.Preparer.
func (daemonSetStrategy) PrepareForCreate(obj map[string]any) {
	setTemplateGeneration(obj, 1)
}

// PrepareForUpdate implements registry.Preparer.
func (daemonSetStrategy) PrepareForUpdate(obj, old map[string]any) {
	gen, _ := strconv.ParseInt(api.NestedString(old, "metadata", "annotations", DeprecatedTemplateGeneration), 10, 64)
	if !api.EqualJSON(api.NestedMap(obj, "spec", "template"), api.NestedMap(old, "spec", "template")) {
		gen++
	}
	if gen == 0 {
		// Stored before the generation was kept: nothing to say yet.
		if a := api.NestedMap(obj, "metadata", "annotations"); a != nil {
			delete(a, DeprecatedTemplateGeneration)
		}
		return
	}
	setTemplateGeneration(obj, gen)
}

func setTemplateGeneration(obj map[string]any, gen int64) {
	api.SetNestedField(obj, strconv.FormatInt(gen, 10), "metadata", "annotations", DeprecatedTemplateGeneration)
}
