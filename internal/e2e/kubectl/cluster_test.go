package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs that need only one kubectl: the dispatcher, which runs kubectl 1.32
// against our server (it reports minor version 32).
var _ = Describe("kubectl 1.32 (dispatcher)", func() {
	var (
		k  *kubectl
		ns string
	)
	BeforeEach(func(ctx SpecContext) {
		k = suite.dispatcher
		ns = newNamespace(ctx, k)
	})

	It("reports the server version", func(ctx SpecContext) {
		out := k.ok(ctx, "version", "-o", "json")
		var v struct {
			ClientVersion struct{ GitVersion string }               `json:"clientVersion"`
			ServerVersion struct{ Major, Minor, GitVersion string } `json:"serverVersion"`
		}
		Expect(json.Unmarshal([]byte(out), &v)).To(Succeed(), "kubectl version -o json printed:\n%s", out)
		Expect(v.ServerVersion.Major).To(Equal("1"))
		Expect(v.ServerVersion.Minor).To(Equal("32"))
		Expect(v.ServerVersion.GitVersion).To(HavePrefix("v1.32."))
		Expect(v.ClientVersion.GitVersion).To(HavePrefix("v1.32."), "the dispatcher must pick kubectl 1.32 for a 1.32 server")
		Expect(k.ok(ctx, "version")).To(ContainSubstring("Server Version: v1.32."))
	})

	It("lists api-resources with verbs, short names and scope", func(ctx SpecContext) {
		rows := map[string][]string{}
		out := k.ok(ctx, "api-resources", "-o", "wide")
		all := lines(out)
		Expect(strings.Fields(all[0])).To(Equal([]string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"}))
		for _, l := range all[1:] {
			f := strings.Fields(l)
			if _, dup := rows[f[0]]; !dup { // core first: metrics.k8s.io has pods and nodes too
				rows[f[0]] = f
			}
		}
		Expect(rows).To(HaveKey("pods"), out)
		Expect(rows["pods"][1:5]).To(Equal([]string{"po", "v1", "true", "Pod"}))
		Expect(rows["pods"][5]).To(Equal("create,delete,deletecollection,get,list,patch,update,watch"))
		Expect(rows).To(HaveKey("deployments"), out)
		Expect(rows["deployments"][1:5]).To(Equal([]string{"deploy", "apps/v1", "true", "Deployment"}))
		Expect(rows).To(HaveKey("namespaces"), out)
		Expect(rows["namespaces"][1:5]).To(Equal([]string{"ns", "v1", "false", "Namespace"}))

		Expect(lines(k.ok(ctx, "api-resources", "--namespaced=false", "-o", "name"))).To(ContainElement("namespaces"))
		Expect(lines(k.ok(ctx, "api-resources", "--api-group=apps", "-o", "name"))).To(ContainElement("deployments.apps"))
	})

	It("lists api-versions", func(ctx SpecContext) {
		Expect(lines(k.ok(ctx, "api-versions"))).To(ContainElements("v1", "apps/v1"))
	})

	It("describes a configmap and a deployment", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "desc", "--from-literal=greeting=hello")
		out := k.ok(ctx, "-n", ns, "describe", "configmap", "desc")
		Expect(out).To(And(MatchRegexp(`Name:\s+desc`), MatchRegexp(`Namespace:\s+`+ns), ContainSubstring("greeting"), ContainSubstring("hello")))

		k.ok(ctx, "-n", ns, "create", "deployment", "dd", "--image=nginx:1.27", "--replicas=2")
		out = k.ok(ctx, "-n", ns, "describe", "deployment", "dd")
		Expect(out).To(And(MatchRegexp(`Name:\s+dd`), MatchRegexp(`Replicas:\s+2 desired`), ContainSubstring("nginx:1.27"), MatchRegexp(`Selector:\s+app=dd`)))
	})

	It("watches with get -w and prints ADDED, MODIFIED and DELETED", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "before")
		w := k.start(ctx, "-n", ns, "get", "configmaps", "-w", "--output-watch-events")
		Eventually(w.stdout.String).WithContext(ctx).Should(MatchRegexp(`(?m)^ADDED\s+before\s`), "initial list: %s", w)

		k.ok(ctx, "-n", ns, "create", "configmap", "watched")
		k.ok(ctx, "-n", ns, "label", "configmap", "watched", "step=two")
		k.ok(ctx, "-n", ns, "delete", "configmap", "watched")
		Eventually(func() []string {
			var got []string
			for _, l := range lines(w.stdout.String()) {
				if f := strings.Fields(l); len(f) >= 2 && f[1] == "watched" {
					got = append(got, f[0])
				}
			}
			return got
		}).WithContext(ctx).WithTimeout(10*time.Second).Should(Equal([]string{"ADDED", "MODIFIED", "DELETED"}), "watch output: %s", w)
		Expect(lines(w.stdout.String())[0]).To(MatchRegexp(`^EVENT\s+NAME\s+DATA\s+AGE$`))
		Expect(w.exited()).To(BeFalse(), "the watch must stay open: %s", w)
		w.stop()
		Expect(w.stderr.String()).To(BeEmpty())
	})

	It("prints server-side table rows for a plain get -w", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "deployment", "first", "--image=nginx")
		w := k.start(ctx, "-n", ns, "get", "deployments", "-w")
		Eventually(w.stdout.String).WithContext(ctx).Should(MatchRegexp(`(?m)^first\s+0/1\s+0\s+0\s+\S+$`), "%s", w)
		Expect(lines(w.stdout.String())[0]).To(MatchRegexp(`^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$`))
		k.ok(ctx, "-n", ns, "create", "deployment", "second", "--image=nginx")
		Eventually(w.stdout.String).WithContext(ctx).Should(MatchRegexp(`(?m)^second\s+0/1\s+0\s+0\s+\S+$`), "%s", w)
		k.ok(ctx, "-n", ns, "scale", "deployment", "second", "--replicas=3")
		Eventually(w.stdout.String).WithContext(ctx).Should(MatchRegexp(`(?m)^second\s+0/3\s+0\s+0\s+\S+$`), "%s", w)
		Expect(w.stderr.String()).To(BeEmpty())
	})

	It("blocks delete --wait until another client removes the finalizer", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "fin")
		k.ok(ctx, "-n", ns, "patch", "configmap", "fin", "--type=merge", "-p", `{"metadata":{"finalizers":["e2e.converge.dev/hold"]}}`)
		del := k.start(ctx, "-n", ns, "delete", "configmap", "fin", "--wait=true", "--timeout=60s")
		Eventually(func() any {
			return nested(k.json(ctx, "-n", ns, "get", "configmap", "fin"), "metadata", "deletionTimestamp")
		}).WithContext(ctx).ShouldNot(BeNil(), "delete must mark the object as terminating")
		Consistently(del.exited).WithContext(ctx).WithTimeout(time.Second).Should(BeFalse(), "delete --wait returned while a finalizer remains: %s", del)

		k.ok(ctx, "-n", ns, "patch", "configmap", "fin", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		Eventually(del.exited).WithContext(ctx).WithTimeout(15*time.Second).Should(BeTrue(), "delete --wait did not return after the finalizer was removed: %s", del)
		Expect(del.exitCode()).To(BeZero(), "%s", del)
		Expect(del.stdout.String()).To(ContainSubstring(`configmap "fin" deleted`))
		r := k.fails(ctx, "-n", ns, "get", "configmap", "fin")
		Expect(r.stderr).To(ContainSubstring("NotFound"), "%s", r)
	})

	It("waits for a deletion made by another client", func(ctx SpecContext) {
		k.ok(ctx, "-n", ns, "create", "configmap", "doomed")
		wait := k.start(ctx, "-n", ns, "wait", "--for=delete", "configmap/doomed", "--timeout=30s")
		Consistently(wait.exited).WithContext(ctx).WithTimeout(time.Second).Should(BeFalse(), "%s", wait)
		k.ok(ctx, "-n", ns, "delete", "configmap", "doomed")
		Eventually(wait.exited).WithContext(ctx).WithTimeout(15*time.Second).Should(BeTrue(), "%s", wait)
		Expect(wait.exitCode()).To(BeZero(), "%s", wait)
		Expect(wait.stdout.String()).To(ContainSubstring("condition met"))
	})

	It("rejects malformed manifests and bodies with 400", func(ctx SpecContext) {
		broken := writeFile("broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\ndata: [\n")
		r := k.fails(ctx, "-n", ns, "create", "-f", broken)
		Expect(r.stderr).To(ContainSubstring("error"), "%s", r)

		url := fmt.Sprintf("%s/api/v1/namespaces/%s/configmaps", suite.env.URL, ns)
		for _, c := range []struct{ contentType, body string }{
			{"application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw"`},
			{"application/json", `not json at all`},
			{"application/yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: raw\n  data: [\n"},
		} {
			code, status := rawRequest(ctx, http.MethodPost, url, c.contentType, c.body)
			Expect(code).To(Equal(http.StatusBadRequest), "POST %s %q: %v", c.contentType, c.body, status)
			Expect(status).To(HaveKeyWithValue("kind", "Status"))
			Expect(status).To(HaveKeyWithValue("reason", "BadRequest"))
		}
		Expect(lines(k.ok(ctx, "-n", ns, "get", "configmaps", "-o", "name"))).To(BeEmpty(), "a rejected create must store nothing")
	})

	It("reports strict field validation errors", func(ctx SpecContext) {
		f := writeFile("unknown.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict}\nbogus: 1\n")
		r := k.fails(ctx, "-n", ns, "create", "-f", f)
		Expect(r.stderr).To(ContainSubstring(`strict decoding error: unknown field "bogus"`), "%s", r)
		k.fails(ctx, "-n", ns, "get", "configmap", "strict")
		Expect(k.ok(ctx, "-n", ns, "create", "-f", f, "--validate=false")).To(ContainSubstring("configmap/strict created"))
	})

	It("reports an unknown resource type", func(ctx SpecContext) {
		r := k.fails(ctx, "get", "flurbles")
		Expect(r.stderr).To(ContainSubstring(`the server doesn't have a resource type "flurbles"`), "%s", r)
	})

	It("rejects a Pod without containers with 422 naming spec.containers", func(ctx SpecContext) {
		f := writeFile("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: empty}\nspec: {containers: []}\n")
		r := k.fails(ctx, "-n", ns, "create", "-f", f)
		Expect(r.stderr).To(ContainSubstring(`The Pod "empty" is invalid: spec.containers: Required value`), "%s", r)
		code, status := rawRequest(ctx, http.MethodPost, fmt.Sprintf("%s/api/v1/namespaces/%s/pods", suite.env.URL, ns),
			"application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"empty"},"spec":{"containers":[]}}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", status)
		Expect(status).To(HaveKeyWithValue("reason", "Invalid"))
		r = k.fails(ctx, "-n", ns, "get", "pod", "empty")
		Expect(r.stderr).To(ContainSubstring(`pods "empty" not found`), "%s", r)
	})
})

// rawRequest sends body and decodes the JSON answer.
func rawRequest(ctx SpecContext, method, url, contentType, body string) (int, map[string]any) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewBufferString(body))
	Expect(err).NotTo(HaveOccurred())
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred(), "%s %s", method, url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	var m map[string]any
	Expect(json.Unmarshal(b, &m)).To(Succeed(), "%s %s answered %d with non-JSON: %s", method, url, resp.StatusCode, b)
	return resp.StatusCode, m
}
