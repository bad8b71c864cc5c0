package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/operators/examples/greeting"
	"github.com/converge-dev/converge/operators/loader"
	"github.com/converge-dev/converge/operators/postgres"
)

// status runs `converge status -o json` against the running converge up.
func status() (out string, reports []loader.Report) {
	GinkgoHelper()
	cmd := exec.Command(suite.bin, "status", "-o", "json", "--kubeconfig", suite.kubeconfig)
	b, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "converge status: %s", b)
	var r struct {
		Operators []loader.Report `json:"operators"`
	}
	Expect(json.Unmarshal(b, &r)).To(Succeed(), "%s", b)
	suite.reports = r.Operators
	return string(b), r.Operators
}

func readyz() {
	GinkgoHelper()
	// The control plane serves HTTPS (the default): use the kubeconfig's CA
	// and credentials.
	cfg, _, err := kubeconfig.LoadKubeconfig(suite.kubeconfig, "")
	Expect(err).NotTo(HaveOccurred())
	rc, err := rest.NewClient(cfg)
	Expect(err).NotTo(HaveOccurred())
	defer rc.CloseIdleConnections()
	resp, err := rc.Do(context.Background(), rest.Request{Method: http.MethodGet, Path: "/readyz"})
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
}

var _ = Describe("converge up --operator", func() {
	It("refuses mismatched plugins with the first difference and the rebuild command, and keeps serving", func() {
		_, reports := status()
		byPath := map[string]loader.Report{}
		for _, r := range reports {
			byPath[r.Path] = r
		}
		for _, tc := range []struct{ plugin, want string }{
			{"uuid", "module github.com/google/uuid differs (converge: github.com/google/uuid@v1.6.0, plugin: github.com/google/uuid@v1.5.0)"},
			{"race", "-race differs (converge: false, plugin: true)"},
			{"toolchain", "Go version differs (converge: go1.26"},
			{"bogus", "bogus.so"},
		} {
			path := suite.plugins[tc.plugin]
			r, ok := byPath[path]
			Expect(ok).To(BeTrue(), "no report for %s in %+v", path, reports)
			Expect(r.State).To(BeEquivalentTo("Failed"), tc.plugin)
			Expect(r.Error).To(ContainSubstring(tc.want), tc.plugin)
			Expect(r.Error).To(ContainSubstring("converge operator build"), tc.plugin)
			Expect(r.Error).NotTo(ContainSubstring("plugin was built with"), tc.plugin)
			Expect(suite.banner).To(MatchRegexp(`✗ operator \S+ \(`+regexp.QuoteMeta(path)+`\) `), tc.plugin)
		}
		Expect(byPath[suite.plugins["toolchain"]].Error).To(ContainSubstring("plugin: go1.25"))
		for _, name := range []string{"postgres", "memcached"} {
			r := byPath[suite.plugins[name]]
			Expect(r.State).To(BeEquivalentTo("Running"), "%s: %+v", name, r)
			Expect(r.Name).To(Equal(name))
			Expect(suite.banner).To(ContainSubstring("✓ operator " + name))
		}
		readyz()
	})

	// The greeting operator runs standalone against converge up here (and
	// against testenv in operators/run, as a plugin in operators/loader).
	It("runs the greeting sample operator standalone with converge operator run", func(ctx SpecContext) {
		health := fmt.Sprintf("127.0.0.1:%d", freePort())
		cmd := exec.Command(suite.bin, "operator", "run", "./operators/examples/greeting", "--kubeconfig", suite.kubeconfig, "--",
			"--metrics-bind-address", "0", "--health-probe-bind-address", health, "--leader-election-namespace", "kube-system")
		cmd.Dir = suite.root
		// Its own process group: the interrupt reaches converge, go run and the operator.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
		Expect(cmd.Start()).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		DeferCleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			select {
			case err := <-done:
				GinkgoWriter.Printf("converge operator run exited: %v\n", err)
			case <-time.After(45 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				Fail("the standalone operator did not stop within 45 s of SIGINT")
			}
		})
		// go run compiles it first.
		Eventually(ctx, func() (int, error) {
			resp, err := http.Get("http://" + health + "/readyz")
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			return resp.StatusCode, nil
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Equal(http.StatusOK))

		g := &greeting.Greeting{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "hello"},
			Spec: greeting.GreetingSpec{Message: "hi from a standalone operator"}}
		Expect(suite.c.Create(ctx, g)).To(Succeed())
		eventually(ctx, 30*time.Second, func() string {
			cm := &corev1.ConfigMap{}
			if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: greeting.ConfigMapName("hello")}, cm); err != nil {
				return err.Error()
			}
			if cm.Data["message"] != "hi from a standalone operator" || controllerutil.GetControllerOf(cm) == nil {
				return "ConfigMap not reconciled"
			}
			return ""
		})
	})

	It("runs a freshly scaffolded operator", func(ctx SpecContext) {
		m := &api.Unstructured{Object: map[string]any{"apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached",
			"metadata": map[string]any{"namespace": "default", "name": "cache"}, "spec": map[string]any{"message": "scaffolded"}}}
		Expect(suite.c.Create(ctx, m)).To(Succeed())
		eventually(ctx, 30*time.Second, func() string {
			cm := &corev1.ConfigMap{}
			if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "memcached-cache"}, cm); err != nil {
				return err.Error()
			}
			if ref := controllerutil.GetControllerOf(cm); ref == nil || ref.Kind != "Memcached" {
				return "ConfigMap has no controller reference to the Memcached"
			}
			live := &api.Unstructured{Object: map[string]any{"apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached"}}
			if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cache"}, live); err != nil {
				return err.Error()
			}
			conds := api.NestedSlice(live.Object, "status", "conditions")
			for _, c := range conds {
				if c, ok := c.(map[string]any); ok && c["type"] == "Ready" && c["status"] == "True" {
					return ""
				}
			}
			return "Memcached not Ready"
		})
	})

	It("runs the PostgreSQL operator: a 1-instance cluster with real PostgreSQL becomes Ready", func(ctx SpecContext) {
		storage := filepath.Join(suite.work, "pgdata")
		c := &postgres.PostgresCluster{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "db"},
			Spec: postgres.ClusterSpec{Instances: 1, Storage: postgres.StorageSpec{Path: storage}}}
		start := time.Now()
		Expect(suite.c.Create(ctx, c)).To(Succeed())
		eventually(ctx, 90*time.Second, func() string {
			if err := suite.c.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
				return err.Error()
			}
			if !controllerutil.IsStatusConditionTrue(c.Status.Conditions, "Ready") || c.Status.ReadyInstances != 1 {
				return "cluster not Ready: " + c.Status.Phase
			}
			return ""
		})
		GinkgoWriter.Printf("PostgresCluster Ready in %s\n", time.Since(start).Round(time.Millisecond))
		Expect(c.Status.CurrentPrimary).To(Equal("db-1"))
		Expect(postgres.DataDir(storage, "db-1")).To(BeADirectory())

		// Real PostgreSQL answers through the -rw Service.
		sec := &corev1.Secret{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: postgres.SecretName("db")}, sec)).To(Succeed())
		svc := &corev1.Service{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "db-rw"}, svc)).To(Succeed())
		Eventually(ctx, func() (string, error) {
			cmd := exec.CommandContext(ctx, "psql", "-XAtq", "-d", "host="+svc.Spec.ClusterIP+" port=5432 connect_timeout=3 user="+
				string(sec.Data["username"])+" dbname="+string(sec.Data["dbname"]), "-c", "SELECT 40 + 2")
			cmd.Env = append(os.Environ(), "PGPASSWORD="+string(sec.Data["password"]))
			out, err := cmd.CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}).WithTimeout(20 * time.Second).Should(Equal("42"))

		// Deleting it removes its data directory (finalizer), so nothing is left behind.
		Expect(suite.c.Delete(ctx, c)).To(Succeed())
		Eventually(ctx, func() bool {
			return apierrors.IsNotFound(suite.c.Get(ctx, client.ObjectKeyFromObject(c), &postgres.PostgresCluster{}))
		}).WithTimeout(60 * time.Second).Should(BeTrue())
		_, err := os.Stat(storage)
		Expect(os.IsNotExist(err)).To(BeTrue(), "data directory: %v", err)
		readyz()
	})
})
