package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/controllers"
	"github.com/converge-dev/converge/builtin/controllers/nodelifecycle"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/operators/postgres"
)

// crashableRuntime lets a node agent die abruptly: once crashed it neither
// stops, removes nor starts containers, so the agent's shutdown leaves its
// processes running, as an agent killed with SIGKILL would.
type crashableRuntime struct {
	cri.Runtime
	crashed atomic.Bool
}

var errCrashed = errors.New("the node agent crashed")

func (r *crashableRuntime) Start(ctx context.Context, spec cri.ContainerSpec) (string, error) {
	if r.crashed.Load() {
		return "", errCrashed
	}
	return r.Runtime.Start(ctx, spec)
}

func (r *crashableRuntime) Stop(ctx context.Context, id string, grace time.Duration) error {
	if r.crashed.Load() {
		return nil
	}
	return r.Runtime.Stop(ctx, id, grace)
}

func (r *crashableRuntime) Remove(ctx context.Context, id string) error {
	if r.crashed.Load() {
		return nil
	}
	return r.Runtime.Remove(ctx, id)
}

func (r *crashableRuntime) Exec(ctx context.Context, id string, cmd []string) (int, []byte, error) {
	if r.crashed.Load() {
		return 0, nil, errCrashed
	}
	return r.Runtime.Exec(ctx, id, cmd)
}

// runningAgent is a node agent started by a spec.
type runningAgent struct {
	cancel context.CancelFunc
	done   chan error
}

// startAgent runs a process-runtime node agent named name on this machine.
func startAgent(name, podCIDR string, rt cri.Runtime) *runningAgent {
	GinkgoHelper()
	agent, err := node.New(node.Options{
		NodeName: name, Config: &client.Config{Host: suite.env.URL}, Runtime: rt,
		RootDir: filepath.Join(suite.env.Dir, name), PodCIDR: podCIDR, CrashLoopBackOffBase: 500 * time.Millisecond,
		CrashLoopBackOffMax: 2 * time.Second, NodeStatusUpdateInterval: time.Second, LeaseRenewInterval: time.Second,
		Logger: GinkgoLogr.WithName(name),
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	a := &runningAgent{cancel: cancel, done: make(chan error, 1)}
	go func() { a.done <- agent.Start(ctx) }()
	return a
}

// nodeReady returns the status of the node's Ready condition ("" when absent).
func nodeReady(ctx context.Context, name string) string {
	n := &corev1.Node{}
	if err := suite.c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		return "error: " + err.Error()
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return string(c.Status)
		}
	}
	return ""
}

// cordon sets the node's spec.unschedulable.
func cordon(ctx context.Context, name string, on bool) {
	GinkgoHelper()
	Eventually(func() error {
		n := &corev1.Node{}
		if err := suite.c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			return err
		}
		n.Spec.Unschedulable = on
		return suite.c.Update(ctx, n)
	}).Should(Succeed())
}

func podNode(ctx context.Context, name string) string {
	p := &corev1.Pod{}
	if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p); err != nil {
		return ""
	}
	return p.Spec.NodeName
}

// readyEndpoints lists the ready addresses behind a Service.
func readyEndpoints(ctx context.Context, svc string) ([]string, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := suite.c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				out = append(out, e.Addresses...)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// The primary's node goes NotReady: its agent dies abruptly and the postgres
// it ran keeps running as an orphan host process. The node lifecycle
// controller (5 s grace here) marks the node Unknown; the operator shuts the
// orphan down (it still answers SQL), promotes the replica on the other node
// and moves -rw. The agent then comes back and the old primary rejoins.
var _ = Describe("PostgresCluster when the primary's node goes NotReady", Ordered, func() {
	const (
		name   = "pgn"
		victim = "pg-node-2"
		grace  = 5 * time.Second
	)
	var (
		rt        *crashableRuntime
		agent     *runningAgent
		stopLC    context.CancelFunc
		lcDone    chan error
		orphanPID int
	)

	BeforeAll(func(ctx SpecContext) {
		// The node lifecycle controller with a short monitor grace period,
		// in its own manager for the length of these specs.
		cfg, _, err := kubeconfig.LoadKubeconfig(suite.env.Kubeconfig, "")
		Expect(err).NotTo(HaveOccurred())
		sch, err := all.NewScheme()
		Expect(err).NotTo(HaveOccurred())
		mgr, err := manager.New(cfg, manager.Options{Scheme: sch, Logger: GinkgoLogr.WithName("nodelifecycle")})
		Expect(err).NotTo(HaveOccurred())
		Expect(controllers.SetupWithOptions(mgr, []string{"nodelifecycle"}, controllers.Options{
			NodeLifecycle: nodelifecycle.Options{NodeMonitorGracePeriod: grace, NodeStartupGracePeriod: 30 * time.Second},
		})).To(Succeed())
		var lcCtx context.Context
		lcCtx, stopLC = context.WithCancel(context.Background())
		lcDone = make(chan error, 1)
		go func() { lcDone <- mgr.Start(lcCtx) }()

		rt = &crashableRuntime{Runtime: process.New(process.Options{})}
		agent = startAgent(victim, "127.55.0.0/16", rt)
		Eventually(func() string { return nodeReady(ctx, victim) }).WithTimeout(30 * time.Second).Should(Equal("True"))
		// The suite's own node may still be registering when this container runs first.
		Eventually(func() string { return nodeReady(ctx, "pg-node") }).WithTimeout(30 * time.Second).Should(Equal("True"))
	})

	AfterAll(func(ctx SpecContext) {
		// Never leave an orphaned postmaster behind.
		if orphanPID > 0 {
			_ = syscall.Kill(orphanPID, syscall.SIGKILL)
		}
		cordon(ctx, "pg-node", false)
		if agent != nil && rt.crashed.Load() {
			// A spec failed while the node was down: bring it back.
			agent.cancel()
			rt = &crashableRuntime{Runtime: process.New(process.Options{})}
			agent = startAgent(victim, "127.55.0.0/16", rt)
		}
		if agent != nil {
			// Delete the cluster while the second node runs, so that its
			// pods stop and the cleanup pod removes the data directories.
			c := newCluster(name, 2)
			if err := suite.c.Delete(ctx, c); err == nil || !apierrors.IsNotFound(err) {
				Eventually(func() bool {
					return apierrors.IsNotFound(suite.c.Get(ctx, client.ObjectKeyFromObject(c), &postgres.PostgresCluster{}))
				}).WithTimeout(60 * time.Second).Should(BeTrue())
			}
			agent.cancel()
			Eventually(agent.done, 30*time.Second).Should(Receive())
		}
		n := &corev1.Node{}
		n.Name = victim
		Expect(client.IgnoreNotFound(suite.c.Delete(ctx, n))).To(Succeed())
		if stopLC != nil {
			stopLC()
			Eventually(lcDone, 30*time.Second).Should(Receive())
		}
	})

	It("places the primary and the replica on different nodes", func(ctx SpecContext) {
		// pg-node is cordoned until the primary is bound to the second node,
		// which is then cordoned in turn, so the replica lands on pg-node.
		cordon(ctx, "pg-node", true)
		c := newCluster(name, 2)
		c.Spec.SynchronousReplication = true
		start := time.Now()
		Expect(suite.c.Create(ctx, c)).To(Succeed())
		Eventually(func() string { return podNode(ctx, name+"-1") }).WithTimeout(20 * time.Second).Should(Equal(victim))
		cordon(ctx, victim, true)
		cordon(ctx, "pg-node", false)
		Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(healthy(2))
		GinkgoWriter.Printf("2 instances on 2 nodes ready in %s\n", time.Since(start).Round(time.Millisecond))
		Expect(podNode(ctx, name+"-2")).To(Equal("pg-node"))
		Expect(getCluster(ctx, name).Status.CurrentPrimary).To(Equal(name + "-1"))
	})

	It("promotes the replica when the primary's node goes NotReady, fences the orphaned primary and loses no acknowledged row", func(ctx SpecContext) {
		Eventually(func() error {
			_, err := psql(ctx, name, name+"-rw", "CREATE TABLE IF NOT EXISTS items (id int primary key, v text)")
			return err
		}).WithTimeout(20 * time.Second).Should(Succeed())
		_, err := psql(ctx, name, name+"-rw", "INSERT INTO items SELECT g, 'v' || g FROM generate_series(1, 50) g")
		Expect(err).NotTo(HaveOccurred())
		root := filepath.Join(suite.base, "data", "default", name)
		orphanPID = postmasterPID(postgres.DataDir(root, name+"-1"))
		oldIP := getCluster(ctx, name).Status.InstancesStatus[0].PodIP
		Expect(oldIP).NotTo(BeEmpty())
		// Acknowledged with synchronous replication right before the node dies.
		_, err = psql(ctx, name, name+"-rw", "INSERT INTO items VALUES (51, 'last')")
		Expect(err).NotTo(HaveOccurred())

		rt.crashed.Store(true)
		agent.cancel()
		died := time.Now()
		Eventually(func() string { return nodeReady(ctx, victim) }).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).
			Should(Equal("Unknown"))
		notReady := time.Since(died)
		Eventually(func() string { return getCluster(ctx, name).Status.CurrentPrimary }).
			WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(name + "-2"))
		moved := time.Since(died)
		Eventually(func() (string, error) { return psql(ctx, name, name+"-rw", "SELECT pg_is_in_recovery()") }).
			WithTimeout(30 * time.Second).Should(Equal("f"))
		GinkgoWriter.Printf("node %s Unknown after %s; primary moved after %s; %s-2 serving through -rw %s after the agent died\n",
			victim, notReady.Round(time.Millisecond), moved.Round(time.Millisecond), name, time.Since(died).Round(time.Millisecond))
		Expect(psql(ctx, name, name+"-rw", "SELECT count(*) FROM items")).To(Equal("51"))
		// With synchronous replication, new commits wait for a replica: the
		// only one left is the old primary, which rejoins in the next spec.

		// Fenced: the orphaned postmaster was shut down by the operator (its
		// agent is gone, nothing else would stop it), and -rw only ever has
		// the new primary behind it.
		Eventually(func() bool { return syscall.Kill(orphanPID, 0) != nil }).WithTimeout(15*time.Second).
			Should(BeTrue(), "the old primary's postmaster (pid %d) still runs", orphanPID)
		orphanPID = 0
		newIP := ""
		for _, is := range getCluster(ctx, name).Status.InstancesStatus {
			if is.Name == name+"-2" {
				newIP = is.PodIP
			}
		}
		Eventually(func() ([]string, error) { return readyEndpoints(ctx, name+"-rw") }).Should(Equal([]string{newIP}))
		Consistently(func() ([]string, error) { return readyEndpoints(ctx, name+"-rw") }).
			WithTimeout(2 * time.Second).Should(Equal([]string{newIP}))
		Expect(newIP).NotTo(Equal(oldIP))
		events := &corev1.EventList{}
		Expect(suite.c.List(ctx, events, client.InNamespace("default"))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name {
				reasons = append(reasons, e.Reason)
			}
		}
		Expect(reasons).To(ContainElements("FailingOver", "Fenced", "Promoted"))
	})

	It("rejoins the old primary as a replica when its node comes back", func(ctx SpecContext) {
		start := time.Now()
		rt = &crashableRuntime{Runtime: process.New(process.Options{})}
		agent = startAgent(victim, "127.55.0.0/16", rt)
		Eventually(func() string { return nodeReady(ctx, victim) }).WithTimeout(30 * time.Second).Should(Equal("True"))
		Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(healthy(2))
		c := getCluster(ctx, name)
		Expect(c.Status.CurrentPrimary).To(Equal(name + "-2"))
		for _, is := range c.Status.InstancesStatus {
			if is.Name == name+"-1" {
				Expect(is.Role).To(Equal("replica"), fmt.Sprintf("%+v", is))
				Expect(is.NodeName).To(Equal(victim))
			}
		}
		_, err := psql(ctx, name, name+"-rw", "INSERT INTO items VALUES (52, 'after failover')")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() (string, error) { return psql(ctx, name, name+"-ro", "SELECT count(*) FROM items") }).
			WithTimeout(15 * time.Second).Should(Equal("52"))
		GinkgoWriter.Printf("old primary rejoined as a replica %s after its node came back\n", time.Since(start).Round(time.Millisecond))
	})
	It("finishes a failover whose old primary's pod is stuck terminating on the NotReady node", func(ctx SpecContext) {
		// The primary back on the second node: switch over to pgn-1.
		Eventually(func() error {
			c := getCluster(ctx, name)
			c.Spec.Primary = name + "-1"
			return suite.c.Update(ctx, c)
		}).Should(Succeed())
		Eventually(func() string { return getCluster(ctx, name).Status.CurrentPrimary }).WithTimeout(30 * time.Second).Should(Equal(name + "-1"))
		Eventually(func() error {
			c := getCluster(ctx, name)
			c.Spec.Primary = ""
			return suite.c.Update(ctx, c)
		}).Should(Succeed())
		Eventually(clusterFn(ctx, name)).WithTimeout(45 * time.Second).WithPolling(500 * time.Millisecond).Should(healthy(2))
		_, err := psql(ctx, name, name+"-rw", "INSERT INTO items VALUES (53, 'before the second node death')")
		Expect(err).NotTo(HaveOccurred())
		root := filepath.Join(suite.base, "data", "default", name)
		orphanPID = postmasterPID(postgres.DataDir(root, name+"-1"))

		// The node dies and the primary's pod is deleted gracefully (as an
		// eviction would): no agent will ever finish that deletion.
		rt.crashed.Store(true)
		agent.cancel()
		died := time.Now()
		pod := &corev1.Pod{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-1"}, pod)).To(Succeed())
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		Eventually(func() string { return getCluster(ctx, name).Status.CurrentPrimary }).
			WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(name + "-2"))
		moved := time.Since(died)
		Eventually(func() (string, error) { return psql(ctx, name, name+"-rw", "SELECT count(*) FROM items") }).
			WithTimeout(30 * time.Second).Should(Equal("53"))
		GinkgoWriter.Printf("second node death: primary moved after %s, %s-2 serving through -rw after %s\n",
			moved.Round(time.Millisecond), name, time.Since(died).Round(time.Millisecond))
		Eventually(func() bool { return syscall.Kill(orphanPID, 0) != nil }).WithTimeout(15*time.Second).
			Should(BeTrue(), "the old primary's postmaster (pid %d) still runs", orphanPID)
		orphanPID = 0

		rt = &crashableRuntime{Runtime: process.New(process.Options{})}
		agent = startAgent(victim, "127.55.0.0/16", rt)
		Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(healthy(2))
		Eventually(func() (string, error) { return psql(ctx, name, name+"-ro", "SELECT count(*) FROM items") }).
			WithTimeout(15 * time.Second).Should(Equal("53"))
	})
})
