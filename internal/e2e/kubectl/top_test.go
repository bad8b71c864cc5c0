package kubectl

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
)

// kubectl top reads metrics.k8s.io, which the API server answers from the
// node agents' stats: the spec runs a node agent on the process runtime (the
// suite's control plane has none) sampling every 300 ms, and a pod on it.
var _ = Describe("kubectl top", Ordered, func() {
	var nodeName, ns string

	BeforeAll(func(ctx SpecContext) {
		nodeName = uniqueName("top-node")
		n, err := controlplane.NewNode(ctx, controlplane.NodeOptions{Agent: node.Options{
			NodeName: nodeName, Config: &client.Config{Host: suite.env.URL}, RootDir: filepath.Join(GinkgoT().TempDir(), "node"),
			PodCIDR: "127.203.0.0/16", StatsInterval: 300 * time.Millisecond,
		}})
		Expect(err).NotTo(HaveOccurred())
		nodeCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); _ = n.Start(nodeCtx) }()
		DeferCleanup(func() { stop(); <-done })

		k := suite.v133
		ns = newNamespace(ctx, k)
		k.ok(ctx, "apply", "-n", ns, "-f", writeFile("pod.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: sleeper, labels: {app: top}}
spec:
  nodeName: %s
  terminationGracePeriodSeconds: 0
  containers:
  - {name: main, image: busybox, command: [sh, -c, "exec sleep 3600"]}
  - {name: side, image: busybox, command: [sh, -c, "exec sleep 3600"]}
`, nodeName)))
		Eventually(func() string {
			return k.ok(ctx, "get", "pod", "-n", ns, "sleeper", "-o", "jsonpath={.status.phase}")
		}).WithTimeout(20 * time.Second).Should(Equal("Running"))
	}, NodeTimeout(40*time.Second))

	for _, v := range []string{"1.27", "1.33"} {
		It("shows node and pod usage with kubectl "+v, func(ctx SpecContext) {
			k := suite.v127
			if v == "1.33" {
				k = suite.v133
			}
			// NAME CPU(cores) CPU% MEMORY(bytes) MEMORY%
			nodeLine := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(nodeName) + `\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$`)
			Eventually(func() string { return k.run(ctx, "top", "node", nodeName).stdout }).
				WithTimeout(15 * time.Second).Should(MatchRegexp(nodeLine.String()))
			out := k.ok(ctx, "top", "nodes")
			Expect(out).To(MatchRegexp(`NAME\s+CPU\(cores\)\s+CPU(%|\(%\))\s+MEMORY\(bytes\)\s+MEMORY(%|\(%\))`))

			// POD NAME CPU(cores) MEMORY(bytes), one line per container.
			Eventually(func() string { return k.run(ctx, "top", "pods", "-n", ns, "--containers").stdout }).
				WithTimeout(15 * time.Second).Should(And(
				MatchRegexp(`(?m)^sleeper\s+main\s+\d+m\s+\d+Mi\s*$`),
				MatchRegexp(`(?m)^sleeper\s+side\s+\d+m\s+\d+Mi\s*$`)))
			Expect(k.ok(ctx, "top", "pod", "-n", ns, "-l", "app=top")).To(MatchRegexp(`(?m)^sleeper\s+\d+m\s+\d+Mi\s*$`))
			Expect(k.ok(ctx, "get", "nodes.metrics.k8s.io", nodeName)).To(MatchRegexp(`(?m)^NAME\s+CPU\s+MEMORY\s+WINDOW\s*\n` + regexp.QuoteMeta(nodeName) + `\s+\d+n\s+\d+Ki\s+\S+s`))
			Expect(k.ok(ctx, "get", "podmetrics", "-n", ns)).To(MatchRegexp(`(?m)^sleeper\s+2\s+\S+s\s*$`))
			r := k.run(ctx, "top", "pod", "-n", ns, "-l", "app=nothing")
			Expect(r.stderr).To(ContainSubstring("No resources found"), "%s", r)
			GinkgoWriter.Println(out, k.ok(ctx, "top", "pods", "-n", ns, "--containers"))
		})
	}
})

var _ = Describe("kubectl autoscale", func() {
	for _, v := range []string{"1.27", "1.33"} {
		It("creates a HorizontalPodAutoscaler that get, describe and both API versions show with kubectl "+v, func(ctx SpecContext) {
			k := suite.v127
			if v == "1.33" {
				k = suite.v133
			}
			ns := newNamespace(ctx, k)
			k.ok(ctx, "-n", ns, "create", "deployment", "web", "--image=busybox")
			k.ok(ctx, "-n", ns, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=60")
			out := k.ok(ctx, "-n", ns, "get", "hpa", "web")
			Expect(out).To(MatchRegexp(`NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE`))
			Expect(out).To(MatchRegexp(`(?m)^web\s+Deployment/web\s+cpu: <unknown>/60%\s+2\s+5\s+0\s+`))
			v1 := k.json(ctx, "-n", ns, "get", "horizontalpodautoscalers.v1.autoscaling", "web")
			Expect(nested(v1, "spec", "targetCPUUtilizationPercentage")).To(BeEquivalentTo(60))
			v2 := k.json(ctx, "-n", ns, "get", "horizontalpodautoscalers.v2.autoscaling", "web")
			Expect(nested(v2, "spec", "metrics")).To(HaveLen(1))
			Expect(k.ok(ctx, "-n", ns, "describe", "hpa", "web")).To(And(ContainSubstring("Deployment/web"), MatchRegexp(`Min replicas:\s+2`)))
			r := k.run(ctx, "-n", ns, "autoscale", "deployment", "other", "--min=3", "--max=2")
			Expect(r.code).NotTo(BeZero(), "%s", r)
		})
	}
})
