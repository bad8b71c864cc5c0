package kubectl

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.e2e.converge.dev
spec:
  group: e2e.converge.dev
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all]
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.replicas
    - name: Color
      type: string
      jsonPath: .spec.color
      priority: 1
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 0}
              color: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
`

// The CRD story with the real kubectl: register a CRD from YAML, use it by plural,
// short name and category with its printer columns, scale a custom resource, and
// delete the CRD, which removes its objects and its resource from discovery.
var _ = Describe("kubectl with a CustomResourceDefinition", func() {
	It("applies a CRD, shows printer columns, scales a CR and deletes the CRD", func(ctx SpecContext) {
		k := suite.dispatcher
		ns := newNamespace(ctx, k)
		k.ok(ctx, "apply", "-f", writeFile("widget-crd.yaml", widgetCRD))
		DeferCleanup(func(ctx SpecContext) {
			k.run(ctx, "delete", "crd", "widgets.e2e.converge.dev", "--ignore-not-found", "--wait=false")
		})
		Eventually(func() string {
			return k.run(ctx, "get", "crd", "widgets.e2e.converge.dev", "-o", "jsonpath={.status.conditions[?(@.type==\"Established\")].status}").stdout
		}).WithContext(ctx).Should(Equal("True"))
		Eventually(func() string { return k.run(ctx, "api-resources", "--api-group=e2e.converge.dev").stdout }).
			WithContext(ctx).Should(ContainSubstring("widgets"))

		cr := "apiVersion: e2e.converge.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  replicas: 2\n  color: blue\n"
		crFile := writeFile("widget.yaml", cr)
		Eventually(func() int { return k.run(ctx, "-n", ns, "apply", "-f", crFile).code }).WithContext(ctx).Should(Equal(0))

		out := k.ok(ctx, "-n", ns, "get", "widgets")
		Expect(strings.Fields(lines(out)[0])).To(Equal([]string{"NAME", "SIZE", "AGE"}), out)
		Expect(strings.Fields(lines(out)[1])[:2]).To(Equal([]string{"w1", "2"}), out)
		wide := k.ok(ctx, "-n", ns, "get", "wd", "-o", "wide")
		Expect(strings.Fields(lines(wide)[0])).To(Equal([]string{"NAME", "SIZE", "COLOR", "AGE"}), wide)
		Expect(wide).To(ContainSubstring("blue"))
		Expect(k.ok(ctx, "-n", ns, "get", "widget", "w1", "-o", "name")).To(Equal("widget.e2e.converge.dev/w1\n"))
		Expect(k.ok(ctx, "-n", ns, "get", "all")).To(ContainSubstring("widget.e2e.converge.dev/w1"))

		// A schema violation is refused with the field path.
		bad := k.fails(ctx, "-n", ns, "apply", "-f", writeFile("bad-widget.yaml", strings.Replace(cr, "replicas: 2", "replicas: -1", 1)))
		Expect(bad.stderr).To(ContainSubstring("spec.replicas"))

		k.ok(ctx, "-n", ns, "scale", "widget", "w1", "--replicas=5")
		Expect(k.ok(ctx, "-n", ns, "get", "wd", "w1", "-o", "jsonpath={.spec.replicas}")).To(Equal("5"))

		k.ok(ctx, "delete", "crd", "widgets.e2e.converge.dev", "--timeout=60s")
		Eventually(func() string { return k.run(ctx, "api-resources", "--api-group=e2e.converge.dev").stdout }).
			WithContext(ctx).WithTimeout(30 * time.Second).ShouldNot(ContainSubstring("widgets"))
		Expect(k.fails(ctx, "-n", ns, "get", "widgets").stderr).To(ContainSubstring("the server doesn't have a resource type"))
	})
})
