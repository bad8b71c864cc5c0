package kubectl

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The core CRUD specs run against the dispatcher (which picks kubectl 1.32 for
// our server) and against kubectl 1.27 and 1.33 directly.
var _ = Describe("kubectl 1.32 (dispatcher) CRUD", func() {
	crudSpecs(func() *kubectl { return suite.dispatcher })
})

var _ = Describe("kubectl 1.27 CRUD", func() {
	crudSpecs(func() *kubectl { return suite.v127 })
})

var _ = Describe("kubectl 1.33 CRUD", func() {
	crudSpecs(func() *kubectl { return suite.v133 })
})

const deploymentManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
        - containerPort: 443
`

func crudSpecs(kc func() *kubectl) {
	var (
		k  *kubectl
		ns string
	)
	BeforeEach(func(ctx SpecContext) {
		k = kc()
		ns = newNamespace(ctx, k)
	})

	It("creates objects with the generator subcommands (protobuf bodies)", func(ctx SpecContext) {
		Expect(k.json(ctx, "get", "namespace", ns)).To(HaveKeyWithValue("kind", "Namespace"))

		Expect(k.ok(ctx, "-n", ns, "create", "configmap", "cm1", "--from-literal=a=1", "--from-literal=b=two")).
			To(ContainSubstring("configmap/cm1 created"))
		cm := k.json(ctx, "-n", ns, "get", "configmap", "cm1")
		Expect(cm["data"]).To(Equal(map[string]any{"a": "1", "b": "two"}))

		Expect(k.ok(ctx, "-n", ns, "create", "secret", "generic", "s1", "--from-literal=password=hunter2")).
			To(ContainSubstring("secret/s1 created"))
		s := k.json(ctx, "-n", ns, "get", "secret", "s1")
		Expect(s["type"]).To(Equal("Opaque"))
		Expect(nested(s, "data", "password")).To(Equal(base64.StdEncoding.EncodeToString([]byte("hunter2"))))

		Expect(k.ok(ctx, "-n", ns, "create", "deployment", "d1", "--image=nginx:1.27", "--replicas=2")).
			To(ContainSubstring("deployment.apps/d1 created"))
		d := k.json(ctx, "-n", ns, "get", "deployment", "d1")
		Expect(nested(d, "spec", "replicas")).To(BeEquivalentTo(2))
		containers, _ := nested(d, "spec", "template", "spec", "containers").([]any)
		Expect(containers).To(HaveLen(1))
		Expect(nested(containers[0], "image")).To(Equal("nginx:1.27"))
	})

	It("creates from a file", func(ctx SpecContext) {
		f := writeFile("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromfile\n  labels: {tier: x}\ndata:\n  k: v\n")
		Expect(k.ok(ctx, "-n", ns, "create", "-f", f)).To(ContainSubstring("configmap/fromfile created"))
		cm := k.json(ctx, "-n", ns, "get", "configmap", "fromfile")
		Expect(cm["data"]).To(Equal(map[string]any{"k": "v"}))
		Expect(nested(cm, "metadata", "labels", "tier")).To(Equal("x"))
	})

	It("rejects unknown fields with strict server-side validation", func(ctx SpecContext) {
		f := writeFile("unknown.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict}\nbogus: 1\n")
		r := k.fails(ctx, "-n", ns, "create", "-f", f)
		Expect(r.stderr).To(ContainSubstring(`strict decoding error: unknown field "bogus"`), "%s", r)
		k.fails(ctx, "-n", ns, "get", "configmap", "strict")
	})

	It("applies a Deployment three times: create, patch a field, drop a list element", func(ctx SpecContext) {
		f := writeFile("deploy.yaml", deploymentManifest)
		Expect(k.ok(ctx, "-n", ns, "apply", "-f", f)).To(ContainSubstring("deployment.apps/web created"))
		d := k.json(ctx, "-n", ns, "get", "deployment", "web")
		Expect(nested(d, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")).NotTo(BeNil())

		Expect(writeTo(f, strings.Replace(deploymentManifest, "nginx:1.25", "nginx:1.26", 1))).To(Succeed())
		Expect(k.ok(ctx, "-n", ns, "apply", "-f", f)).To(ContainSubstring("deployment.apps/web configured"))
		c := firstContainer(k.json(ctx, "-n", ns, "get", "deployment", "web"))
		Expect(c["image"]).To(Equal("nginx:1.26"))
		Expect(containerPorts(c)).To(Equal([]float64{80, 443}))

		noTLS := strings.Replace(strings.Replace(deploymentManifest, "nginx:1.25", "nginx:1.26", 1), "        - containerPort: 443\n", "", 1)
		Expect(writeTo(f, noTLS)).To(Succeed())
		Expect(k.ok(ctx, "-n", ns, "apply", "-f", f)).To(ContainSubstring("deployment.apps/web configured"))
		c = firstContainer(k.json(ctx, "-n", ns, "get", "deployment", "web"))
		Expect(containerPorts(c)).To(Equal([]float64{80}), "port 443 was removed from the file and must be gone: %v", c)
		Expect(c["image"]).To(Equal("nginx:1.26"))

		Expect(k.ok(ctx, "-n", ns, "apply", "-f", f)).To(ContainSubstring("deployment.apps/web unchanged"))
	})

	It("gets in every output format", func(ctx SpecContext) {
		for i := range 5 {
			k.ok(ctx, "-n", ns, "create", "configmap", fmt.Sprintf("cm%d", i), fmt.Sprintf("--from-literal=i=%d", i))
		}
		k.ok(ctx, "-n", ns, "label", "configmap", "cm1", "cm3", "pick=yes")
		k.ok(ctx, "-n", ns, "create", "deployment", "d1", "--image=nginx:1.27")

		table := lines(k.ok(ctx, "-n", ns, "get", "deployments"))
		Expect(strings.Fields(table[0])).To(Equal([]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}))
		Expect(strings.Fields(table[1])[0]).To(Equal("d1"))

		wide := lines(k.ok(ctx, "-n", ns, "get", "deployments", "-o", "wide"))
		Expect(strings.Fields(wide[0])).To(Equal([]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}))
		Expect(wide[1]).To(ContainSubstring("nginx:1.27"))

		Expect(k.ok(ctx, "-n", ns, "get", "configmap", "cm2", "-o", "yaml")).To(And(
			ContainSubstring("kind: ConfigMap"), ContainSubstring("name: cm2"), ContainSubstring(`i: "2"`)))
		Expect(nested(k.json(ctx, "-n", ns, "get", "configmap", "cm2"), "data", "i")).To(Equal("2"))

		names := lines(k.ok(ctx, "-n", ns, "get", "configmaps", "-o", "name"))
		Expect(names).To(ContainElements("configmap/cm0", "configmap/cm1", "configmap/cm2", "configmap/cm3", "configmap/cm4"))

		Expect(k.ok(ctx, "-n", ns, "get", "configmap", "cm4", "-o", "jsonpath={.data.i}")).To(Equal("4"))

		picked := lines(k.ok(ctx, "-n", ns, "get", "configmaps", "-l", "pick=yes", "-o", "name"))
		Expect(picked).To(ConsistOf("configmap/cm1", "configmap/cm3"))

		byField := lines(k.ok(ctx, "-n", ns, "get", "configmaps", "--field-selector", "metadata.name=cm2", "-o", "name"))
		Expect(byField).To(ConsistOf("configmap/cm2"))

		chunked := lines(k.ok(ctx, "-n", ns, "get", "configmaps", "--chunk-size=2", "-o", "name"))
		Expect(chunked).To(ContainElements("configmap/cm0", "configmap/cm1", "configmap/cm2", "configmap/cm3", "configmap/cm4"))
		chunkedTable := k.ok(ctx, "-n", ns, "get", "configmaps", "--chunk-size=2")
		for i := range 5 {
			Expect(chunkedTable).To(ContainSubstring(fmt.Sprintf("cm%d ", i)))
		}

		all := lines(k.ok(ctx, "get", "configmaps", "-A"))
		Expect(strings.Fields(all[0])).To(Equal([]string{"NAMESPACE", "NAME", "DATA", "AGE"}))
		var ours int
		for _, l := range all[1:] {
			f := strings.Fields(l)
			Expect(len(f)).To(BeNumerically(">=", 4), "row with an empty column in:\n%s", strings.Join(all, "\n"))
			if f[0] == ns {
				ours++
			}
		}
		Expect(ours).To(BeNumerically(">=", 5), "-A must fill the NAMESPACE column:\n%s", strings.Join(all, "\n"))
	})

	It("labels, annotates and patches (json, merge, strategic)", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "p", "--from-literal=a=1")
		Expect(k.ok(ctx, "-n", ns, "label", "configmap", "p", "color=blue")).To(ContainSubstring("configmap/p labeled"))
		Expect(k.ok(ctx, "-n", ns, "annotate", "configmap", "p", "note=hello")).To(ContainSubstring("configmap/p annotate"), "kubectl 1.27 prints \"annotate\"")
		k.ok(ctx, "-n", ns, "patch", "configmap", "p", "--type=json", "-p", `[{"op":"add","path":"/data/b","value":"2"}]`)
		k.ok(ctx, "-n", ns, "patch", "configmap", "p", "--type=merge", "-p", `{"data":{"a":null,"c":"3"}}`)
		cm := k.json(ctx, "-n", ns, "get", "configmap", "p")
		Expect(cm["data"]).To(Equal(map[string]any{"b": "2", "c": "3"}))
		Expect(nested(cm, "metadata", "labels", "color")).To(Equal("blue"))
		Expect(nested(cm, "metadata", "annotations", "note")).To(Equal("hello"))

		k.ok(ctx, "-n", ns, "label", "configmap", "p", "color-")
		Expect(nested(k.json(ctx, "-n", ns, "get", "configmap", "p"), "metadata", "labels", "color")).To(BeNil())

		k.ok(ctx, "-n", ns, "create", "-f", writeFile("d.yaml", deploymentManifest))
		k.ok(ctx, "-n", ns, "patch", "deployment", "web", "--type=strategic", "-p",
			`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.99"},{"name":"side","image":"busybox"}]}}}}`)
		d := k.json(ctx, "-n", ns, "get", "deployment", "web")
		cs, _ := nested(d, "spec", "template", "spec", "containers").([]any)
		Expect(cs).To(HaveLen(2), "strategic merge must merge containers by name: %v", cs)
		Expect(nested(cs[0], "image")).To(Equal("nginx:1.99"))
		Expect(containerPorts(cs[0].(map[string]any))).To(Equal([]float64{80, 443}))
		Expect(nested(cs[1], "name")).To(Equal("side"))
	})

	It("edits through KUBE_EDITOR", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "ed", "--from-literal=color=red")
		editor := writeFile("editor.sh", "#!/bin/sh\nsed -i 's/color: red/color: green/' \"$1\"\n")
		Expect(os.Chmod(editor, 0o700)).To(Succeed())
		r := k.runEnv(ctx, []string{"KUBE_EDITOR=" + editor, "EDITOR=" + editor}, "", "-n", ns, "edit", "configmap", "ed")
		Expect(r.code).To(BeZero(), "kubectl edit failed:\n%s", r)
		Expect(r.stdout).To(ContainSubstring("configmap/ed edited"))
		Expect(nested(k.json(ctx, "-n", ns, "get", "configmap", "ed"), "data", "color")).To(Equal("green"))
	})

	It("replaces from a file and rejects a stale resourceVersion", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "r", "--from-literal=v=1")
		stale := k.ok(ctx, "-n", ns, "get", "configmap", "r", "-o", "yaml")
		fresh := strings.Replace(stale, `v: "1"`, `v: "2"`, 1)
		Expect(fresh).NotTo(Equal(stale))
		Expect(k.ok(ctx, "-n", ns, "replace", "-f", writeFile("fresh.yaml", fresh))).To(ContainSubstring("configmap/r replaced"))
		Expect(nested(k.json(ctx, "-n", ns, "get", "configmap", "r"), "data", "v")).To(Equal("2"))

		staleEdit := strings.Replace(stale, `v: "1"`, `v: "3"`, 1)
		r := k.fails(ctx, "-n", ns, "replace", "-f", writeFile("stale.yaml", staleEdit))
		Expect(r.stderr).To(And(ContainSubstring("Conflict"), ContainSubstring("the object has been modified")), "%s", r)
		Expect(nested(k.json(ctx, "-n", ns, "get", "configmap", "r"), "data", "v")).To(Equal("2"), "a conflicting replace must store nothing")
	})

	It("rejects creating an existing name", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "dup", "--from-literal=v=1")
		r := k.fails(ctx, "-n", ns, "create", "configmap", "dup", "--from-literal=v=2")
		Expect(r.stderr).To(ContainSubstring(`configmaps "dup" already exists`), "%s", r)
		f := writeFile("dup.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata: {v: \"3\"}\n")
		r = k.fails(ctx, "-n", ns, "create", "-f", f)
		Expect(r.stderr).To(ContainSubstring("AlreadyExists"), "%s", r)
		Expect(nested(k.json(ctx, "-n", ns, "get", "configmap", "dup"), "data", "v")).To(Equal("1"))
	})

	It("deletes by name, by label and --all", func(ctx SpecContext) {
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			k.ok(ctx, "-n", ns, "create", "configmap", n)
		}
		k.ok(ctx, "-n", ns, "label", "configmap", "b", "c", "gone=yes")
		Expect(k.ok(ctx, "-n", ns, "delete", "configmap", "a")).To(ContainSubstring(`configmap "a" deleted`))
		Expect(k.ok(ctx, "-n", ns, "delete", "configmap", "-l", "gone=yes")).To(And(
			ContainSubstring(`configmap "b" deleted`), ContainSubstring(`configmap "c" deleted`)))
		Expect(lines(k.ok(ctx, "-n", ns, "get", "configmaps", "-o", "name"))).To(ConsistOf("configmap/d", "configmap/e"))
		Expect(k.ok(ctx, "-n", ns, "delete", "configmaps", "--all")).To(And(
			ContainSubstring(`configmap "d" deleted`), ContainSubstring(`configmap "e" deleted`)))
		r := k.run(ctx, "-n", ns, "get", "configmaps", "-o", "name")
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(lines(r.stdout)).To(BeEmpty())
		r = k.fails(ctx, "-n", ns, "get", "configmap", "a")
		Expect(r.stderr).To(ContainSubstring(`configmaps "a" not found`), "%s", r)
	})

	It("scales a deployment through the scale subresource", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "deployment", "s", "--image=nginx")
		Expect(k.ok(ctx, "-n", ns, "scale", "deployment", "s", "--replicas=4")).To(ContainSubstring("deployment.apps/s scaled"))
		Expect(nested(k.json(ctx, "-n", ns, "get", "deployment", "s"), "spec", "replicas")).To(BeEquivalentTo(4))
		Expect(k.ok(ctx, "-n", ns, "scale", "deployment", "s", "--current-replicas=4", "--replicas=2")).To(ContainSubstring("scaled"))
		Expect(nested(k.json(ctx, "-n", ns, "get", "deployment", "s"), "spec", "replicas")).To(BeEquivalentTo(2))
	})
}

func writeTo(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func firstContainer(d map[string]any) map[string]any {
	GinkgoHelper()
	cs, _ := nested(d, "spec", "template", "spec", "containers").([]any)
	Expect(cs).NotTo(BeEmpty(), "no containers in %v", d)
	c, _ := cs[0].(map[string]any)
	return c
}

func containerPorts(c map[string]any) []float64 {
	ps, _ := c["ports"].([]any)
	out := []float64{}
	for _, p := range ps {
		n, _ := nested(p, "containerPort").(float64)
		out = append(out, n)
	}
	return out
}
