package kubectl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/internal/e2etool"
	"github.com/converge-dev/converge/testenv"
)

var _ = Describe("control plane restart", func() {
	It("keeps objects across a restart on the same data dir, and an old watch continues or expires", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		first, err := testenv.Start(ctx, testenv.Options{Dir: dir})
		Expect(err).NotTo(HaveOccurred())
		stopped := false
		DeferCleanup(func() {
			if !stopped {
				_ = first.Stop()
			}
		})
		k := newKubectl(e2etool.KubectlDispatcher, filepath.Join(GinkgoT().TempDir(), "home"), first.Kubeconfig)
		ns := newNamespace(ctx, k)
		k.ok(ctx, "-n", ns, "create", "configmap", "durable", "--from-literal=k=v")
		k.ok(ctx, "-n", ns, "create", "deployment", "durable", "--image=nginx")
		listURL := func(env *testenv.Environment) string {
			return fmt.Sprintf("%s/api/v1/namespaces/%s/configmaps", env.URL, ns)
		}
		code, list := rawRequest(ctx, http.MethodGet, listURL(first), "", "")
		Expect(code).To(Equal(http.StatusOK), "%v", list)
		rv, _ := nested(list, "metadata", "resourceVersion").(string)
		Expect(rv).NotTo(BeEmpty())

		Expect(first.Stop()).To(Succeed())
		stopped = true
		second, err := testenv.Start(ctx, testenv.Options{Dir: dir})
		Expect(err).NotTo(HaveOccurred(), "restart on %s", dir)
		DeferCleanup(second.Stop)

		Expect(nested(k.json(ctx, "-n", ns, "get", "configmap", "durable"), "data", "k")).To(Equal("v"))
		Expect(nested(k.json(ctx, "-n", ns, "get", "deployment", "durable"), "spec", "template", "spec", "containers")).NotTo(BeNil())

		req, err := http.NewRequestWithContext(ctx, http.MethodGet, listURL(second)+"?watch=true&resourceVersion="+rv, nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusGone {
			return // Expired before streaming: acceptable.
		}
		Expect(resp.StatusCode).To(Equal(http.StatusOK), "a watch from the pre-restart RV %s must continue (200) or expire (410)", rv)

		events := make(chan map[string]any, 16)
		go func() {
			defer GinkgoRecover()
			defer close(events)
			dec := json.NewDecoder(bufio.NewReader(resp.Body))
			for {
				var ev map[string]any
				if dec.Decode(&ev) != nil {
					return
				}
				events <- ev
			}
		}()
		k.ok(ctx, "-n", ns, "create", "configmap", "after-restart")
		var first_ map[string]any
		Eventually(events).WithContext(ctx).Should(Receive(&first_), "no event on the resumed watch")
		switch first_["type"] {
		case "ERROR":
			Expect(nested(first_, "object", "code")).To(BeEquivalentTo(http.StatusGone), "%v", first_)
		default:
			Expect(first_["type"]).To(Equal("ADDED"), "%v", first_)
			Expect(nested(first_, "object", "metadata", "name")).To(Equal("after-restart"), "the watch must resume after RV %s without replaying older events: %v", rv, first_)
		}
	})
})
