package examples

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/builtin/scheduler/config"
)

var _ = Describe("the examples/ folder", func() {
	It("holds only well-formed manifests with a comment saying what they are", func() {
		n := 0
		err := filepath.WalkDir(example("."), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
				return err
			}
			b, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			Expect(strings.HasPrefix(string(b), "#")).To(BeTrue(), "%s must open with a comment", path)
			for _, doc := range bytes.Split(b, []byte("\n---")) {
				var obj struct {
					APIVersion string `json:"apiVersion"`
					Kind       string `json:"kind"`
					Metadata   struct {
						Name string `json:"name"`
					} `json:"metadata"`
				}
				Expect(yaml.UnmarshalStrict(doc, &map[string]any{})).To(Succeed(), path)
				Expect(yaml.Unmarshal(doc, &obj)).To(Succeed(), path)
				Expect(obj.APIVersion).NotTo(BeEmpty(), path)
				Expect(obj.Kind).NotTo(BeEmpty(), path)
				if obj.Kind != "KubeSchedulerConfiguration" {
					Expect(obj.Metadata.Name).NotTo(BeEmpty(), path)
				}
				n++
			}
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeNumerically(">=", 9))
	})

	It("scheduler/profiles.yaml is a valid scheduler configuration", func() {
		cfg, err := config.Load(example("scheduler/profiles.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Complete()).To(Succeed())
		var names []string
		for _, p := range cfg.Profiles {
			names = append(names, p.SchedulerName)
		}
		Expect(names).To(ConsistOf("default-scheduler", "bin-packing"))
	})

	It("hello/ serves HTTP through its Service's ClusterIP", func() {
		kubectl("create", "namespace", "hello")
		kubectl("apply", "-n", "hello", "-f", example("hello"))
		kubectl("rollout", "status", "-n", "hello", "deployment/hello", "--timeout=120s")
		ip := strings.TrimSpace(kubectl("get", "service", "hello", "-n", "hello", "-o", "jsonpath={.spec.clusterIP}"))
		Expect(ip).NotTo(BeEmpty())
		seen := map[string]bool{}
		Eventually(func(g Gomega) {
			resp, err := http.Get("http://" + ip + ":80/")
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
			g.Expect(string(body)).To(HavePrefix("hello from hello-"))
			seen[strings.TrimSpace(string(body))] = true
			g.Expect(seen).To(HaveLen(2), "both replicas answer through the Service")
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	})

	It("crontab/ registers a CRD and creates its object in one apply", func() {
		converge("apply", "-f", example("crontab"))
		out := kubectl("get", "ct", "my-new-cron-object")
		Expect(out).To(ContainSubstring("SPEC"))
		Expect(out).To(ContainSubstring("* * * * */5"))
		// Defaulted by the schema.
		Expect(kubectl("get", "crontab", "my-new-cron-object", "-o", "jsonpath={.spec.replicas}")).To(Equal("1"))
	})

	It("jobs/countdown.yaml completes and logs its countdown", func() {
		kubectl("create", "namespace", "jobs")
		kubectl("apply", "-n", "jobs", "-f", example("jobs/countdown.yaml"))
		kubectl("wait", "-n", "jobs", "--for=condition=Complete", "job/countdown", "--timeout=90s")
		Expect(kubectl("logs", "-n", "jobs", "job/countdown")).To(ContainSubstring("liftoff"))
		// The CronJob is only validated: it would first run at the next minute.
		kubectl("apply", "-n", "jobs", "--dry-run=server", "-f", example("jobs/cronjob.yaml"))
	})

	It("postgres/ passes the operator's schema and CEL rules", func() {
		converge("apply", "-f", filepath.Join(root, "operators/postgres/crd_cluster.yaml"),
			"-f", filepath.Join(root, "operators/postgres/crd_backup.yaml"))
		out := converge("apply", "--dry-run=server", "-f", example("postgres"))
		Expect(out).To(ContainSubstring("pg"))
		Expect(out).To(ContainSubstring("pg-backup-1"))
		// The dry run really validates: the same cluster with 0 instances is refused.
		b, err := os.ReadFile(example("postgres/cluster.yaml"))
		Expect(err).NotTo(HaveOccurred())
		bad := filepath.Join(GinkgoT().TempDir(), "bad.yaml")
		Expect(os.WriteFile(bad, bytes.Replace(b, []byte("instances: 3"), []byte("instances: 0"), 1), 0o644)).To(Succeed())
		Expect(convergeErr("apply", "--dry-run=server", "-f", bad)).To(ContainSubstring("spec.instances"))
	})
})
