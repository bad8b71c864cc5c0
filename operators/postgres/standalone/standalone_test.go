package standalone_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/converge-dev/converge/builtin/api/all"
	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/internal/e2etool"
	"github.com/converge-dev/converge/operators/postgres"
	"github.com/converge-dev/converge/testenv"
)

func TestStandalone(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Postgres operator standalone suite")
}

const binDir = "/usr/lib/postgresql/15/bin"

var suite struct {
	env  *testenv.Environment
	c    *client.Client
	base string
	// bins are the built programs: "main" (../plugin, run.Main) and
	// "custom" (./custombinary, operators.Install in its own manager).
	bins map[string]string
}

var _ = BeforeSuite(func(ctx SpecContext) {
	for _, b := range []string{"postgres", "initdb", "pg_isready"} {
		_, err := os.Stat(filepath.Join(binDir, b))
		Expect(err).NotTo(HaveOccurred(), "PostgreSQL 15 server binaries are required in %s", binDir)
	}
	_, err := exec.LookPath("psql")
	Expect(err).NotTo(HaveOccurred(), "psql is required on PATH")
	Expect(os.Geteuid()).To(Equal(0), "postgres runs as uid 101 through the process runtime, which needs root")

	suite.bins = map[string]string{}
	for name, pkg := range map[string]string{"main": "../plugin", "custom": "./custombinary"} {
		bin := filepath.Join(GinkgoT().TempDir(), name)
		out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "go build %s: %s", pkg, out)
		suite.bins[name] = bin
	}

	// The control plane: testenv with its local node (process runtime) and
	// the service proxy, and no operator in it.
	suite.env, err = testenv.Start(context.Background(), testenv.Options{Controllers: []string{"*"}, Scheduler: true,
		LocalNode: true, Logger: GinkgoLogr.WithName("controlplane").V(1)})
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	Expect(postgres.AddToScheme(sch)).To(Succeed())
	suite.c, err = client.New(&client.Config{Host: suite.env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	suite.base, err = os.MkdirTemp("", "converge-postgres-standalone-")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chmod(suite.base, 0o755)).To(Succeed(), "the postgres user must traverse it")
})

var _ = AfterSuite(func() {
	if suite.env != nil {
		Expect(suite.env.Stop()).To(Succeed())
	}
	if suite.base != "" {
		_ = os.RemoveAll(suite.base)
	}
})

// startOperator runs one of the built programs against the control plane
// with the operator's settings in its environment.
func startOperator(bin string, args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(suite.bins[bin], append([]string{"--kubeconfig", suite.env.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), postgres.EnvBaseDir+"="+suite.base, postgres.EnvPollInterval+"=1s")
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// stopOperator stops it with SIGTERM and expects a clean exit, so that the
// next container's operator is the only one reconciling.
func stopOperator(s *gexec.Session) {
	GinkgoHelper()
	if s == nil {
		return
	}
	s.Signal(syscall.SIGTERM)
	Eventually(s, 30*time.Second).Should(gexec.Exit(0), "the operator stops cleanly on SIGTERM")
}

// reconcilesOneInstance creates a 1-instance cluster, waits for it to be
// Ready and serve SQL through -rw, then deletes it and checks that the
// finalizer removed its data.
func reconcilesOneInstance(ctx context.Context, name string) {
	GinkgoHelper()
	key := client.ObjectKey{Namespace: "default", Name: name}
	Eventually(func() error {
		return suite.c.List(ctx, &postgres.PostgresClusterList{}, client.InNamespace("default"))
	}).WithTimeout(60*time.Second).Should(Succeed(), "the operator applied the PostgresCluster CRD")
	c := &postgres.PostgresCluster{Spec: postgres.ClusterSpec{Instances: 1}}
	c.Name, c.Namespace = name, "default"
	start := time.Now()
	Expect(suite.c.Create(ctx, c)).To(Succeed())
	Eventually(func() (string, error) {
		err := suite.c.Get(ctx, key, c)
		ready := controllerutil.IsStatusConditionTrue(c.Status.Conditions, "Ready")
		return fmt.Sprintf("%s ready=%v", c.Status.Phase, ready), err
	}).WithTimeout(90 * time.Second).WithPolling(500 * time.Millisecond).Should(Equal("Healthy ready=true"))
	GinkgoWriter.Printf("%s: 1 instance Ready in %s\n", name, time.Since(start).Round(time.Millisecond))
	Expect(c.Status.CurrentPrimary).To(Equal(name + "-1"))
	root := filepath.Join(suite.base, "data", "default", name)
	Expect(postgres.DataDir(root, name+"-1")).To(BeADirectory(), "the data lives under the base directory given in the environment")
	Eventually(func() (string, error) {
		return psql(ctx, name, "CREATE TABLE IF NOT EXISTS t (v int); INSERT INTO t VALUES (7); SELECT min(v) FROM t")
	}).WithTimeout(20 * time.Second).Should(Equal("7"))

	Expect(suite.c.Delete(ctx, &postgres.PostgresCluster{ObjectMeta: objectMeta(key)})).To(Succeed())
	Eventually(func() bool { return apierrors.IsNotFound(suite.c.Get(ctx, key, &postgres.PostgresCluster{})) }).
		WithTimeout(60 * time.Second).Should(BeTrue())
	_, err := os.Stat(root)
	Expect(os.IsNotExist(err)).To(BeTrue(), "data directory: %v", err)
}

var _ = Describe("The postgres operator run standalone (run.Main)", Ordered, func() {
	var (
		health string
		op     *gexec.Session
	)

	BeforeAll(func() {
		var err error
		health, err = e2etool.FreeAddr("127.0.0.1")
		Expect(err).NotTo(HaveOccurred())
		op = startOperator("main", "--metrics-bind-address", "0", "--health-probe-bind-address", health,
			"--leader-election-namespace", "default")
	})
	AfterAll(func() { stopOperator(op) })

	It("takes its Lease and serves /readyz", func(ctx SpecContext) {
		Eventually(func() (string, error) {
			l := &coordinationv1.Lease{}
			err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "postgres-operator"}, l)
			if err != nil || l.Spec.HolderIdentity == nil {
				return "", err
			}
			return *l.Spec.HolderIdentity, nil
		}).WithTimeout(60 * time.Second).ShouldNot(BeEmpty())
		Eventually(func() (int, error) { return httpGet(ctx, "http://"+health+"/readyz") }).
			WithTimeout(30 * time.Second).Should(Equal(200))
	})

	It("reconciles a 1-instance PostgresCluster to Ready and runs its finalizer", func(ctx SpecContext) {
		reconcilesOneInstance(ctx, "solo")
	})
})

var _ = Describe("The postgres operator compiled into a custom binary", Ordered, func() {
	var op *gexec.Session

	BeforeAll(func() { op = startOperator("custom") })
	AfterAll(func() { stopOperator(op) })

	It("reconciles a 1-instance PostgresCluster to Ready and runs its finalizer", func(ctx SpecContext) {
		reconcilesOneInstance(ctx, "custom")
	})
})

// psql runs sql as the application user through the -rw Service.
func psql(ctx context.Context, cluster, sql string) (string, error) {
	sec := &corev1.Secret{}
	if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: postgres.SecretName(cluster)}, sec); err != nil {
		return "", err
	}
	svc := &corev1.Service{}
	if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: cluster + "-rw"}, svc); err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d",
		"host="+svc.Spec.ClusterIP+" port=5432 connect_timeout=3 user="+string(sec.Data["username"])+" dbname="+string(sec.Data["dbname"]), "-c", sql)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+string(sec.Data["password"]))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &psqlError{err: err, out: strings.TrimSpace(string(out))}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

func httpGet(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func objectMeta(key client.ObjectKey) api.ObjectMeta {
	return api.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
}

type psqlError struct {
	err error
	out string
}

func (e *psqlError) Error() string { return e.err.Error() + ": " + e.out }
