package postgres_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/proxy"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/postgres"
	"github.com/converge-dev/converge/testenv"
)

func TestPostgres(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Postgres operator suite")
}

const binDir = "/usr/lib/postgresql/15/bin"

// suite is the suite's shared state, set in BeforeSuite.
var suite struct {
	env    *testenv.Environment
	c      *client.Client
	base   string
	cancel context.CancelFunc
	done   []chan error
	// ahead is how far the operator's clock runs ahead of real time
	// (backup schedules and retention follow it).
	ahead atomic.Int64
	// conflicts carries the operator's requests; specs arm it to make one
	// of its writes conflict.
	conflicts *conflicts
	// cache is the operator's view of the cluster (its manager's cache).
	cache client.Reader
}

// advanceClock moves the operator's clock forward by d.
func advanceClock(d time.Duration) { suite.ahead.Add(int64(d)) }

var _ = BeforeSuite(func() {
	for _, b := range []string{"postgres", "initdb", "pg_basebackup", "pg_isready", "pg_rewind"} {
		_, err := os.Stat(filepath.Join(binDir, b))
		Expect(err).NotTo(HaveOccurred(), "PostgreSQL 15 server binaries are required in %s", binDir)
	}
	_, err := exec.LookPath("psql")
	Expect(err).NotTo(HaveOccurred(), "psql is required on PATH")
	Expect(os.Geteuid()).To(Equal(0), "the suite runs postgres as uid 101 through the process runtime, which needs root")

	ctx, cancel := context.WithCancel(context.Background())
	suite.cancel = cancel
	// Every built-in controller but the node lifecycle one: the two-node
	// specs run it themselves with a short node monitor grace period.
	var ctrls []string
	for _, n := range controllers.Names() {
		if n != "nodelifecycle" {
			ctrls = append(ctrls, n)
		}
	}
	env, err := testenv.Start(ctx, testenv.Options{Controllers: ctrls, Scheduler: true})
	Expect(err).NotTo(HaveOccurred())
	suite.env = env
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	Expect(postgres.AddToScheme(sch)).To(Succeed())
	suite.c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	// The base directory must be traversable by the postgres user.
	suite.base, err = os.MkdirTemp("", "converge-postgres-")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chmod(suite.base, 0o755)).To(Succeed())

	agent, err := node.New(node.Options{
		NodeName: "pg-node", Config: &client.Config{Host: env.URL}, Runtime: process.New(process.Options{}),
		RootDir: filepath.Join(env.Dir, "node"), PodCIDR: "127.54.0.0/16", CrashLoopBackOffBase: 500 * time.Millisecond,
		CrashLoopBackOffMax: 2 * time.Second, NodeStatusUpdateInterval: time.Second, LeaseRenewInterval: time.Second,
		Logger: GinkgoLogr.WithName("node"),
	})
	Expect(err).NotTo(HaveOccurred())
	px, err := proxy.New(proxy.Options{Client: suite.c, RetryInterval: time.Second, Logger: GinkgoLogr.WithName("proxy")})
	Expect(err).NotTo(HaveOccurred())

	cfg, _, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	Expect(err).NotTo(HaveOccurred())
	suite.conflicts = newConflicts(http.DefaultTransport.(*http.Transport).Clone())
	cfg.Transport = suite.conflicts
	mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New(), Logger: GinkgoLogr.WithName("manager")})
	Expect(err).NotTo(HaveOccurred())
	suite.cache = mgr.Reader()
	op := postgres.NewWithOptions(postgres.Options{BaseDir: suite.base, PollInterval: time.Second,
		Now: func() time.Time { return time.Now().Add(time.Duration(suite.ahead.Load())) }})
	Expect(operators.Install(ctx, mgr, op)).To(Succeed())

	for _, start := range []func(context.Context) error{agent.Start, px.Start, mgr.Start} {
		done := make(chan error, 1)
		suite.done = append(suite.done, done)
		go func() { done <- start(ctx) }()
	}
})

var _ = AfterSuite(func() {
	if suite.cancel != nil {
		suite.cancel()
		for _, d := range suite.done {
			Eventually(d, 60*time.Second).Should(Receive())
		}
	}
	if suite.env != nil {
		Expect(suite.env.Stop()).To(Succeed())
	}
	if suite.base != "" {
		_ = os.RemoveAll(suite.base)
	}
})

// helpers

func getCluster(ctx context.Context, name string) *postgres.PostgresCluster {
	GinkgoHelper()
	c := &postgres.PostgresCluster{}
	Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, c)).To(Succeed())
	return c
}

// createCluster creates cluster name (default) with n instances and waits
// until it is healthy.
func createCluster(ctx context.Context, name string, n int32) {
	GinkgoHelper()
	Expect(suite.c.Create(ctx, newCluster(name, n))).To(Succeed())
	Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(healthy(n))
}

// createBackup creates backup name of cluster (default) and waits until it
// completed; b is the completed backup.
func createBackup(ctx context.Context, cluster, name string) (b *postgres.PostgresBackup) {
	GinkgoHelper()
	b = &postgres.PostgresBackup{Spec: postgres.BackupObjectSpec{Cluster: cluster}}
	b.Name, b.Namespace = name, "default"
	Expect(suite.c.Create(ctx, b)).To(Succeed())
	waitCompleted(ctx, b)
	return b
}

// waitCompleted waits until backup b completed, and reads it into b.
func waitCompleted(ctx context.Context, b *postgres.PostgresBackup) {
	GinkgoHelper()
	Eventually(func() (string, error) {
		err := suite.c.Get(ctx, client.ObjectKeyFromObject(b), b)
		return b.Status.Phase + " " + b.Status.Error, err
	}).WithTimeout(60 * time.Second).Should(HavePrefix(postgres.BackupCompleted))
}

// deleteCluster deletes cluster name (default) and waits until it is gone.
func deleteCluster(ctx context.Context, name string) {
	GinkgoHelper()
	Expect(client.IgnoreNotFound(suite.c.Delete(ctx, newCluster(name, 1)))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &postgres.PostgresCluster{}))
	}).WithTimeout(60 * time.Second).Should(BeTrue())
}

func clusterFn(ctx context.Context, name string) func() (*postgres.PostgresCluster, error) {
	return func() (*postgres.PostgresCluster, error) {
		c := &postgres.PostgresCluster{}
		err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, c)
		return c, err
	}
}

// healthy matches a cluster that is Ready with n ready instances and a settled primary.
func healthy(n int32) OmegaMatcher {
	return SatisfyAll(
		WithTransform(func(c *postgres.PostgresCluster) int32 { return c.Status.ReadyInstances }, Equal(n)),
		WithTransform(func(c *postgres.PostgresCluster) int32 { return c.Status.Instances }, Equal(n)),
		WithTransform(func(c *postgres.PostgresCluster) string { return c.Status.Phase }, Equal("Healthy")),
		WithTransform(func(c *postgres.PostgresCluster) bool {
			for _, cond := range c.Status.Conditions {
				if cond.Type == "Ready" {
					return cond.Status == "True" && cond.ObservedGeneration == c.Generation
				}
			}
			return false
		}, BeTrue()),
	)
}

func secret(ctx context.Context, cluster string) map[string]string {
	GinkgoHelper()
	s := &corev1.Secret{}
	Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: postgres.SecretName(cluster)}, s)).To(Succeed())
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

func clusterIP(ctx context.Context, svc string) string {
	GinkgoHelper()
	s := &corev1.Service{}
	Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: svc}, s)).To(Succeed())
	Expect(s.Spec.ClusterIP).NotTo(BeEmpty())
	return s.Spec.ClusterIP
}

// psql runs sql as the application user through a Service's cluster IP.
func psql(ctx context.Context, cluster, svc, sql string) (string, error) {
	return psqlAs(ctx, cluster, svc, "", sql)
}

// psqlAs is psql in database db (default: the Secret's).
func psqlAs(ctx context.Context, cluster, svc, db, sql string) (string, error) {
	sec := secret(ctx, cluster)
	if db == "" {
		db = sec["dbname"]
	}
	return psqlAt(ctx, clusterIP(ctx, svc), sec["username"], sec["password"], db, sql)
}

// psqlSuper runs sql as the superuser on cluster's primary (through -rw).
func psqlSuper(ctx context.Context, cluster, sql string) (string, error) {
	return psqlAt(ctx, clusterIP(ctx, cluster+"-rw"), "postgres", secret(ctx, cluster)[postgres.KeySuperuserPassword], "postgres", sql)
}

// psqlAt runs sql on host as user in database db.
func psqlAt(ctx context.Context, host, user, password, db, sql string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-d",
		"host="+host+" port=5432 connect_timeout=3 user="+user+" dbname="+db, "-c", sql)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &psqlError{err: err, out: strings.TrimSpace(string(out))}
	}
	return strings.TrimSpace(string(out)), nil
}

type psqlError struct {
	err error
	out string
}

func (e *psqlError) Error() string { return e.err.Error() + ": " + e.out }

// postmasterPID finds the host PID of the postmaster serving dataDir.
func postmasterPID(dataDir string) int {
	GinkgoHelper()
	return findProcess("postmaster for "+dataDir, func(_ int, args []string) bool {
		return len(args) > 2 && args[0] == filepath.Join(binDir, "postgres") && args[1] == "-D" && args[2] == dataDir
	})
}

// childPID finds the host PID of the child of parent whose process title
// contains title (postgres: <cluster>: checkpointer).
func childPID(parent int, title string) int {
	GinkgoHelper()
	return findProcess(title+" child of "+strconv.Itoa(parent), func(ppid int, args []string) bool {
		return ppid == parent && strings.Contains(strings.Join(args, " "), title)
	})
}

// findProcess returns the host PID of a process whose parent's PID and argv
// satisfy match, failing the spec (saying what) when there is none.
func findProcess(what string, match func(ppid int, args []string) bool) int {
	GinkgoHelper()
	ents, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		_, rest, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if match(ppid, strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")) {
			return pid
		}
	}
	Fail("no " + what)
	return 0
}

func kubectl(args ...string) (string, error) {
	out, err := exec.Command("kubectl", append([]string{"--kubeconfig", suite.env.Kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// On failure, show the clusters and the last lines of every container log.
var _ = ReportAfterEach(func(r SpecReport) {
	if !r.Failed() || suite.env == nil {
		return
	}
	ctx := context.Background()
	list := &postgres.PostgresClusterList{}
	if err := suite.c.List(ctx, list, client.InNamespace("default")); err == nil {
		for _, c := range list.Items {
			GinkgoWriter.Printf("cluster %s: %+v\n", c.Name, c.Status)
		}
	}
	// Every node agent's root directory is in env.Dir (node, pg-node-2).
	_ = filepath.WalkDir(suite.env.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".log") {
			return nil
		}
		b, _ := os.ReadFile(p)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		GinkgoWriter.Printf("==> %s\n%s\n", p, strings.Join(lines, "\n"))
		return nil
	})
})
