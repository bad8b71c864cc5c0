package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/client/rest"
	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
)

// Leader election timing of the components in these scenarios: a standby
// takes over at most leaseDuration + retryPeriod after the leader's last
// renewal.
var fastElection = []string{
	"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=500ms",
}

// startAPIServerOnly runs `converge apiserver` (embedded etcd, no controllers,
// scheduler or node) on ip and waits until it is ready. Its kubeconfig is
// <dataDir>/kubeconfig.
func startAPIServerOnly(ctx context.Context, t testing.TB, ip string) *apiServer {
	t.Helper()
	return startServer(ctx, t, "apiserver", "apiserver", ip, filepath.Join(t.TempDir(), "apiserver"), "")
}

func (s *apiServer) kubeconfig() string { return filepath.Join(s.dataDir, "kubeconfig") }

// startControllerManager runs `converge controller-manager` against srv.
func startControllerManager(t testing.TB, srv *apiServer, name string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"controller-manager", "--kubeconfig", srv.kubeconfig(),
		"--metrics-bind-address=", "--health-probe-bind-address="}, fastElection...)
	return startProc(t, name, nil, converge(t), append(args, extra...)...)
}

// logContains reports whether p's output so far contains s.
func (p *proc) logContains(s string) bool {
	b, _ := os.ReadFile(p.log)
	return strings.Contains(string(b), s)
}

// leaseHolder returns the holderIdentity of the Lease kube-system/name.
func leaseHolder(ctx context.Context, c *rest.Client, name string) (string, error) {
	resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + name})
	if err != nil {
		return "", err
	}
	var l struct {
		Spec struct {
			HolderIdentity string `json:"holderIdentity"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(resp.Body, &l); err != nil {
		return "", err
	}
	return l.Spec.HolderIdentity, nil
}

func scaleDeployment(ctx context.Context, t testing.TB, c *rest.Client, ns, name string, replicas int) {
	t.Helper()
	_, err := c.Do(ctx, rest.Request{Method: http.MethodPatch, Path: "/apis/apps/v1/namespaces/" + ns + "/deployments/" + name,
		ContentType: "application/merge-patch+json", Body: fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)})
	if err != nil {
		t.Fatalf("scale deployment %s to %d: %v", name, replicas, err)
	}
}

// TestControllerManagerLeaderKill runs two controller-managers against one API
// server, kills the leader with SIGKILL while a Deployment scales, and checks
// that the standby leads within 15 s and that no pod is created twice.
func TestControllerManagerLeaderKill(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	const ns = "cm-failover"
	srv := startAPIServerOnly(ctx, t, "127.0.0.30")
	c := apiClient(t, srv)
	cms := []*proc{startControllerManager(t, srv, "controller-manager-a"), startControllerManager(t, srv, "controller-manager-b")}
	createNamespace(ctx, t, c, ns)
	createDeployment(ctx, t, c, ns, "web", 3)
	checkDeploymentConverges(ctx, t, c, ns, "web", 3, 0)

	leader := -1
	if err := poll(ctx, 20*time.Second, func() error {
		for i, p := range cms {
			if p.logContains("Acquired leader lease") {
				leader = i
				return nil
			}
		}
		return errors.New("no controller-manager logged that it leads")
	}); err != nil {
		t.Fatal(err)
	}
	holder, err := leaseHolder(ctx, c, "kube-controller-manager")
	if err != nil || holder == "" {
		t.Fatalf("Lease kube-controller-manager: holder %q, %v", holder, err)
	}
	standby := cms[1-leader]
	if standby.logContains("Acquired leader lease") {
		t.Fatal("both controller-managers logged that they lead")
	}

	// Kill the leader, then ask for more pods at once: only the standby can
	// create them, and only after it takes the Lease over.
	cms[leader].kill(t)
	killed := time.Now()
	scaleDeployment(ctx, t, c, ns, "web", 6)
	if err := poll(ctx, 15*time.Second, func() error {
		h, err := leaseHolder(ctx, c, "kube-controller-manager")
		if err != nil {
			return err
		}
		if h == holder {
			return fmt.Errorf("the Lease is still held by the dead leader %s", h)
		}
		return nil
	}); err != nil {
		t.Fatalf("no new controller-manager leader within 15 s of the kill: %v", err)
	}
	takeover := time.Since(killed)
	// The standby logs once its Lease update has returned: the line may trail
	// the Lease we just read by a moment.
	if err := poll(ctx, 5*time.Second, func() error {
		if !standby.logContains("Acquired leader lease") {
			return errors.New("the Lease changed hands but the standby never logged that it leads")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkDeploymentConverges(ctx, t, c, ns, "web", 6, 3*time.Second)
	converged := time.Since(killed)
	pods := list(ctx, t, c, "/api/v1/namespaces/"+ns+"/pods")
	names := map[string]bool{}
	for _, p := range pods.Items {
		if names[p.Metadata.Name] {
			t.Errorf("pod %s listed twice", p.Metadata.Name)
		}
		names[p.Metadata.Name] = true
	}
	if len(pods.Items) != 6 {
		t.Errorf("%d pods after the failover, want exactly 6 (none created twice)", len(pods.Items))
	}
	t.Logf("FIGURE controller-manager leader takeover after SIGKILL: %s (lease 6s, retry 500ms); Deployment scaled 3→6 by the new leader %s after the kill",
		takeover.Round(time.Millisecond), converged.Round(time.Millisecond))
}

// TestNodeAgentDeath kills one of two node agents: its node goes NotReady
// (Unknown) and is tainted, its pods are evicted after their toleration and
// recreated on the other node.
func TestNodeAgentDeath(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	const ns = "node-death"
	srv := startAPIServerOnly(ctx, t, "127.0.0.40")
	c := apiClient(t, srv)
	// Nodes renew their Lease every 500 ms; 3 s without a renewal marks a node Unknown.
	startControllerManager(t, srv, "controller-manager", "--node-monitor-grace-period=3s")
	startProc(t, "scheduler", nil, converge(t), append([]string{"scheduler", "--kubeconfig", srv.kubeconfig(),
		"--metrics-bind-address=", "--health-probe-bind-address="}, fastElection...)...)
	nodes := map[string]*proc{}
	for i, name := range []string{"worker-1", "worker-2"} {
		root := filepath.Join(t.TempDir(), name)
		nodes[name] = startProc(t, name, nil, converge(t), "node", "--kubeconfig", srv.kubeconfig(), "--name", name,
			"--root-dir", root, "--node-lease-duration=2s", "--pod-cidr", fmt.Sprintf("127.%d.0.0/16", 41+i), "--node-ip", fmt.Sprintf("127.0.0.%d", 41+i))
	}
	for name := range nodes {
		if err := poll(ctx, 30*time.Second, func() error { return nodeReady(ctx, c, name, "True") }); err != nil {
			t.Fatalf("node %s: %v", name, err)
		}
	}
	createNamespace(ctx, t, c, ns)
	// Pods tolerate an unreachable node for 2 s instead of the default 300 s.
	body := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
 "spec":{"replicas":4,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{
   "terminationGracePeriodSeconds":1,
   "tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":2},
                  {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":2}],
   "containers":[{"name":"c","image":"busybox","command":["sleep","3617"]}]}}}}`)
	// A node agent killed with SIGKILL leaves its containers running (they are
	// host processes): reap them when the test ends.
	t.Cleanup(func() { _ = exec.Command("pkill", "-9", "-x", "-f", "sleep 3617").Run() })
	if _, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/apis/apps/v1/namespaces/" + ns + "/deployments", Body: []byte(body)}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	var victim string
	if err := poll(ctx, 60*time.Second, func() error {
		running := runningPodsByNode(ctx, t, c, ns)
		if running["worker-1"]+running["worker-2"] != 4 {
			return fmt.Errorf("running pods by node: %v", running)
		}
		for name, n := range running {
			if n > 0 {
				victim = name
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	survivor := "worker-1"
	if victim == survivor {
		survivor = "worker-2"
	}
	before := runningPodsByNode(ctx, t, c, ns)
	t.Logf("pods running by node: %v; stopping the agent of %s", before, victim)

	nodes[victim].kill(t)
	died := time.Now()
	if err := poll(ctx, 30*time.Second, func() error { return nodeReady(ctx, c, victim, "Unknown") }); err != nil {
		t.Fatalf("node %s never went NotReady (Unknown): %v", victim, err)
	}
	notReady := time.Since(died)
	if err := poll(ctx, 60*time.Second, func() error {
		running := runningPodsByNode(ctx, t, c, ns)
		if running[survivor] != 4 {
			return fmt.Errorf("running pods by node: %v", running)
		}
		return nil
	}); err != nil {
		t.Fatalf("the pods of %s were not recreated on %s: %v", victim, survivor, err)
	}
	t.Logf("FIGURE node death → Ready=Unknown after %s (lease renewed every 500ms, grace 3s); all 4 pods running on %s %s after the agent died (toleration 2s)",
		notReady.Round(time.Millisecond), survivor, time.Since(died).Round(time.Millisecond))
}

// nodeReady returns nil when the node's Ready condition has status want.
func nodeReady(ctx context.Context, c *rest.Client, name, want string) error {
	resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/api/v1/nodes/" + name})
	if err != nil {
		return err
	}
	var n struct {
		Status struct {
			Conditions []struct {
				Type, Status string
			} `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(resp.Body, &n); err != nil {
		return err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == "Ready" {
			if cond.Status == want {
				return nil
			}
			return fmt.Errorf("node %s Ready=%s, want %s", name, cond.Status, want)
		}
	}
	return fmt.Errorf("node %s has no Ready condition", name)
}

// runningPodsByNode counts the Running pods of ns that are not being deleted,
// by node.
func runningPodsByNode(ctx context.Context, t testing.TB, c *rest.Client, ns string) map[string]int {
	t.Helper()
	resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/" + ns + "/pods"})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	var l struct {
		Items []struct {
			Metadata struct {
				DeletionTimestamp string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Spec struct {
				NodeName string `json:"nodeName"`
			} `json:"spec"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(resp.Body, &l); err != nil {
		t.Fatalf("decode pods: %v", err)
	}
	out := map[string]int{}
	for _, p := range l.Items {
		if p.Status.Phase == "Running" && p.Metadata.DeletionTimestamp == "" {
			out[p.Spec.NodeName]++
		}
	}
	return out
}

// TestAPIServerFailover runs two API servers on one etcd and a client that
// knows both; it kills the one the client uses and measures how long until the
// other serves a consistent list holding every acknowledged write.
func TestAPIServerFailover(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	const ns = "failover"
	cluster := newEtcdCluster(t, 1, 60, true)
	cluster.start(ctx, t, etcdstore.ClusterStateNew)
	var servers []*apiServer
	// The replicas share one CA (--pki-dir), so one client trusts both and
	// its admin certificate is accepted by both. The first one creates it.
	pkiDir := filepath.Join(t.TempDir(), "pki")
	for i, ip := range []string{"127.0.0.61", "127.0.0.62"} {
		name := fmt.Sprintf("apiserver-%d", i)
		servers = append(servers, startServer(ctx, t, name, "apiserver", ip, filepath.Join(t.TempDir(), name), pkiDir,
			"--etcd-servers", strings.Join(cluster.endpoints(), ",")))
	}
	c, err := rest.NewClient(&rest.Config{Hosts: []string{servers[0].url, servers[1].url}, MaxTries: 3,
		Timeout: 10 * time.Second, UserAgent: "converge-faults", TLS: servers[0].tls()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	createNamespace(ctx, t, c, ns)
	acked := map[string]string{}
	for i := range 100 {
		name := fmt.Sprintf("cm-%03d", i)
		uid, err := createConfigMap(ctx, c, ns, name, i)
		if err != nil {
			t.Fatalf("create %s before the kill: %v", name, err)
		}
		acked[name] = uid
	}
	servers[0].proc.kill(t)
	killed := time.Now()
	var items []object
	if err := poll(ctx, 30*time.Second, func() error {
		resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/" + ns + "/configmaps"})
		if err != nil {
			return err
		}
		var l objectList
		if err := json.Unmarshal(resp.Body, &l); err != nil {
			return err
		}
		items = l.Items
		return nil
	}); err != nil {
		t.Fatalf("no consistent list through the second API server after the first died: %v", err)
	}
	took := time.Since(killed)
	got := map[string]string{}
	for _, o := range items {
		got[o.Metadata.Name] = o.Metadata.UID
	}
	for name, uid := range acked {
		if got[name] != uid {
			t.Errorf("acknowledged %s (uid %s) missing after failover (got %q)", name, uid, got[name])
		}
	}
	// Writes go on through the survivor.
	if _, err := createConfigMap(ctx, c, ns, "after-failover", 0); err != nil {
		t.Fatalf("create after failover: %v", err)
	}
	t.Logf("FIGURE API server failover: the second API server served a consistent list of %d objects %s after the first was killed",
		len(items), took.Round(time.Millisecond))
}
