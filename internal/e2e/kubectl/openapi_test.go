package kubectl

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/crd"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// The built-in kinds' OpenAPI schemas (builtin/openapi), as kubectl explain
// and apply read them.
var _ = Describe("OpenAPI schemas of the built-in kinds", func() {
	for _, v := range []string{"1.27", "1.33"} {
		k := func() *kubectl {
			if v == "1.27" {
				return suite.v127
			}
			return suite.v133
		}
		It("kubectl "+v+" explains deployment.spec.strategy", func(ctx SpecContext) {
			out := k().ok(ctx, "explain", "deployment.spec.strategy")
			Expect(out).To(ContainSubstring("KIND:       Deployment"))
			Expect(out).To(ContainSubstring("strategy <DeploymentStrategy>"))
			Expect(out).To(ContainSubstring("rollingUpdate\t<RollingUpdateDeployment>"))
		})
		It("kubectl "+v+" explains deployment.spec.strategy from OpenAPI v2 (protobuf)", func(ctx SpecContext) {
			out := k().ok(ctx, "explain", "deployment.spec.strategy", "--output=plaintext-openapiv2")
			Expect(out).To(ContainSubstring("RESOURCE: strategy <Object>"))
			Expect(out).To(MatchRegexp(`rollingUpdate\s+<Object>`))
			Expect(out).To(MatchRegexp(`type\s+<string>`))
		})
		It("kubectl "+v+" explains pod.spec.containers.ports recursively", func(ctx SpecContext) {
			out := k().ok(ctx, "explain", "pod.spec.containers.ports", "--recursive")
			Expect(out).To(ContainSubstring("ports <[]ContainerPort>"))
			Expect(out).To(MatchRegexp(`containerPort\s+<integer> -required-`))
			Expect(out).To(MatchRegexp(`protocol\s+<string>`))
		})
		It("kubectl "+v+" explains svc.spec.ports", func(ctx SpecContext) {
			out := k().ok(ctx, "explain", "svc.spec.ports")
			Expect(out).To(ContainSubstring("ports <[]ServicePort>"))
			Expect(out).To(MatchRegexp(`targetPort\s+<IntOrString>`))
		})
		It("kubectl "+v+" explains cronjobs.spec.jobTemplate", func(ctx SpecContext) {
			out := k().ok(ctx, "explain", "cronjobs.spec.jobTemplate")
			Expect(out).To(ContainSubstring("jobTemplate <JobTemplateSpec>"))
			Expect(out).To(MatchRegexp(`spec\s+<JobSpec>`))
		})
		It("kubectl "+v+" apply --validate=strict rejects an unknown field", func(ctx SpecContext) {
			r := k().runEnv(ctx, nil, `apiVersion: apps/v1
kind: Deployment
metadata: {name: openapi-unknown-`+strings.ReplaceAll(v, ".", "")+`, namespace: default}
spec:
  bogus: 1
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: x, unknownField: 2}]}
`, "apply", "--validate=strict", "-f", "-")
			Expect(r.code).NotTo(BeZero(), "%s", r)
			Expect(r.stderr).To(ContainSubstring(`unknown field "spec.bogus"`))
			Expect(r.stderr).To(ContainSubstring(`unknown field "spec.template.spec.containers[0].unknownField"`))
		})
	}

	Context("every served built-in kind", func() {
		var v2 map[string]any
		v3 := map[string]map[string]any{}
		BeforeEach(func(ctx SpecContext) {
			if v2 != nil {
				return
			}
			Expect(json.Unmarshal([]byte(suite.v133.ok(ctx, "get", "--raw", "/openapi/v2")), &v2)).To(Succeed())
			var index struct {
				Paths map[string]struct {
					URL string `json:"serverRelativeURL"`
				} `json:"paths"`
			}
			Expect(json.Unmarshal([]byte(suite.v133.ok(ctx, "get", "--raw", "/openapi/v3")), &index)).To(Succeed())
			for p, e := range index.Paths {
				var doc map[string]any
				Expect(json.Unmarshal([]byte(suite.v133.ok(ctx, "get", "--raw", e.URL)), &doc)).To(Succeed())
				v3[p] = doc
			}
		})

		It("has every $ref resolve in every document", func() {
			defs, _ := v2["definitions"].(map[string]any)
			Expect(unresolved(v2, "#/definitions/", defs)).To(BeEmpty(), "/openapi/v2")
			Expect(v3).NotTo(BeEmpty())
			for p, doc := range v3 {
				comps, _ := doc["components"].(map[string]any)
				schemas, _ := comps["schemas"].(map[string]any)
				Expect(unresolved(doc, "#/components/schemas/", schemas)).To(BeEmpty(), "/openapi/v3/%s", p)
			}
		})

		var entries []TableEntry
		for _, res := range append(all.Resources(), crd.Resource()) {
			entries = append(entries, Entry(res.GroupVersion.WithResource(res.Resource).String(), res))
		}
		DescribeTable("publishes its kind with its group/version/kind in v2 and v3", func(res *registry.Resource) {
			gvk := map[string]any{"group": res.GroupVersion.Group, "version": res.GroupVersion.Version, "kind": res.Kind}
			defs, _ := v2["definitions"].(map[string]any)
			Expect(hasGVK(defs, gvk)).To(BeTrue(), "/openapi/v2 definitions lack %v", gvk)
			p := "apis/" + res.GroupVersion.Group + "/" + res.GroupVersion.Version
			if res.GroupVersion.Group == "" {
				p = "api/" + res.GroupVersion.Version
			}
			Expect(v3).To(HaveKey(p))
			comps, _ := v3[p]["components"].(map[string]any)
			schemas, _ := comps["schemas"].(map[string]any)
			Expect(hasGVK(schemas, gvk)).To(BeTrue(), "/openapi/v3/%s components lack %v", p, gvk)
		}, entries)
	})
})

// hasGVK says whether one of defs carries gvk in x-kubernetes-group-version-kind.
func hasGVK(defs map[string]any, gvk map[string]any) bool {
	for _, d := range defs {
		dm, _ := d.(map[string]any)
		list, _ := dm["x-kubernetes-group-version-kind"].([]any)
		for _, g := range list {
			gm, _ := g.(map[string]any)
			if gm["group"] == gvk["group"] && gm["version"] == gvk["version"] && gm["kind"] == gvk["kind"] {
				return true
			}
		}
	}
	return false
}

// unresolved lists the references below v that do not name one of defs.
func unresolved(v any, prefix string, defs map[string]any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			if _, found := defs[strings.TrimPrefix(ref, prefix)]; !found || !strings.HasPrefix(ref, prefix) {
				out = append(out, ref)
			}
		}
		for _, c := range v {
			out = append(out, unresolved(c, prefix, defs)...)
		}
	case []any:
		for _, c := range v {
			out = append(out, unresolved(c, prefix, defs)...)
		}
	}
	return out
}
