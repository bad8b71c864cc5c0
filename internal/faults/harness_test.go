package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/client/rest"
	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
	"github.com/converge-dev/converge/internal/e2etool"
)

// memberEnv carries a member's options (JSON) to a re-executed test binary.
const memberEnv = "CONVERGE_FAULTS_ETCD_MEMBER"

var (
	buildDir  string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(memberEnv); spec != "" {
		os.Exit(runMemberProcess(spec))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "converge-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	buildDir = dir
	defer os.RemoveAll(dir)
	return m.Run()
}

// runMemberProcess is the body of a re-executed member: it runs until SIGTERM
// (clean stop) or SIGKILL.
func runMemberProcess(spec string) int {
	var opts etcdstore.MemberOptions
	if err := json.Unmarshal([]byte(spec), &opts); err != nil {
		fmt.Fprintln(os.Stderr, "member options:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := etcdstore.RunMember(ctx, opts, func(e *etcdstore.Embedded) {
		fmt.Printf("etcd member %s ready at %v\n", e.Name(), e.Endpoints())
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// converge returns the path of the converge binary, built once per test binary.
func converge(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := e2etool.RepoRoot(context.Background())
		if err != nil {
			buildErr = err
			return
		}
		start := time.Now()
		binPath = filepath.Join(buildDir, "converge")
		if buildErr = e2etool.GoBuild(context.Background(), root, binPath, "./cmd/converge", nil); buildErr != nil {
			return
		}
		t.Logf("built converge in %s", time.Since(start).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// freeAddr returns ip:port with a port free on ip (a 127.0.0.x address).
func freeAddr(t testing.TB, ip string) string {
	t.Helper()
	addr, err := e2etool.FreeAddr(ip)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// proc is a child process; its output goes to a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startProc starts a child process, killed (by PID) at test end if still
// running; its output is printed if the test failed.
func startProc(t testing.TB, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "=== %s %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("--- output of %s (tail) ---\n%s", name, b)
		}
	})
	return p
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL to the process (not its group) and waits for it.
func (p *proc) kill(t testing.TB) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s (pid %d) did not die after SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// stop sends SIGTERM and waits up to 15 s, then kills.
func (p *proc) stop(t testing.TB) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Errorf("%s did not stop within 15s of SIGTERM; killing it", p.name)
		p.kill(t)
	}
}

// etcdCluster is a cluster of member processes on 127.0.0.<base+i>.
type etcdCluster struct {
	opts  []etcdstore.MemberOptions
	procs []*proc
}

// newEtcdCluster allocates n members (not started) on 127.0.0.<base+1..n>.
func newEtcdCluster(t testing.TB, n, base int, noFsync bool) *etcdCluster {
	t.Helper()
	c := &etcdCluster{opts: make([]etcdstore.MemberOptions, n), procs: make([]*proc, n)}
	var initial []string
	dir := t.TempDir()
	for i := range n {
		ip := fmt.Sprintf("127.0.0.%d", base+i+1)
		c.opts[i] = etcdstore.MemberOptions{
			Name:              fmt.Sprintf("etcd%d", i),
			Dir:               filepath.Join(dir, fmt.Sprintf("etcd%d", i)),
			ClientURL:         "http://" + freeAddr(t, ip),
			PeerURL:           "http://" + freeAddr(t, ip),
			NoFsync:           noFsync,
			HeartbeatInterval: 50 * time.Millisecond,
			ElectionTimeout:   500 * time.Millisecond,
			StartTimeout:      30 * time.Second,
			LogLevel:          "warn",
		}
		initial = append(initial, c.opts[i].Name+"="+c.opts[i].PeerURL)
	}
	for i := range c.opts {
		c.opts[i].InitialCluster = strings.Join(initial, ",")
	}
	return c
}

// startMember starts member i as a child process (state new or existing).
func (c *etcdCluster) startMember(t testing.TB, i int, state string) {
	t.Helper()
	o := c.opts[i]
	o.InitialClusterState = state
	spec, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c.procs[i] = startProc(t, o.Name, []string{memberEnv + "=" + string(spec)}, exe, "-test.run=^$")
}

// start starts all members (concurrently, as a new cluster needs a quorum) and
// waits until each reports healthy.
func (c *etcdCluster) start(ctx context.Context, t testing.TB, state string) {
	t.Helper()
	for i := range c.opts {
		c.startMember(t, i, state)
	}
	for i := range c.opts {
		c.waitHealthy(ctx, t, i)
	}
}

func (c *etcdCluster) endpoints() []string {
	var eps []string
	for _, o := range c.opts {
		eps = append(eps, o.ClientURL)
	}
	return eps
}

// waitHealthy polls the member's /health (which needs a leader) until it says
// true.
func (c *etcdCluster) waitHealthy(ctx context.Context, t testing.TB, i int) {
	t.Helper()
	url := c.opts[i].ClientURL + "/health"
	err := poll(ctx, 30*time.Second, func() error {
		if !c.procs[i].running() {
			return errStop{fmt.Errorf("member %s exited", c.opts[i].Name)}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var h struct {
			Health string `json:"health"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || h.Health != "true" {
			return fmt.Errorf("health %q (%v)", h.Health, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("member %s not healthy: %v", c.opts[i].Name, err)
	}
}

// client connects an etcd client to all members.
func (c *etcdCluster) client(ctx context.Context, t testing.TB) *clientv3.Client {
	t.Helper()
	cl, err := etcdstore.Connect(ctx, etcdstore.ExternalOptions{Endpoints: c.endpoints(), DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// leader returns the index of the member that is leader according to a
// majority-backed Status call.
func (c *etcdCluster) leader(ctx context.Context, t testing.TB, cl *clientv3.Client) int {
	t.Helper()
	var lead = -1
	err := poll(ctx, 10*time.Second, func() error {
		for i, o := range c.opts {
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			st, err := cl.Status(sctx, o.ClientURL)
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				lead = i
				return nil
			}
		}
		return errors.New("no leader")
	})
	if err != nil {
		t.Fatal(err)
	}
	return lead
}

// apiServer is a `converge up` child process. It serves HTTPS with
// authentication (the default); the test authenticates with the admin
// certificate from its PKI directory.
type apiServer struct {
	proc    *proc
	url     string
	dataDir string
	// pkiDir is the --pki-dir shared with other API servers, or empty for
	// <dataDir>/pki.
	pkiDir string
	args   []string
}

// startAPIServer runs `converge up` on 127.0.0.<ipSuffix> with dataDir (and
// etcdServers when not empty) and waits until /readyz answers.
func startAPIServer(ctx context.Context, t testing.TB, name, ip, dataDir string, etcdServers []string) *apiServer {
	t.Helper()
	args := []string{"--pod-cidr", "127.56.0.0/16"}
	if len(etcdServers) > 0 {
		args = append(args, "--etcd-servers", strings.Join(etcdServers, ","))
	}
	return startServer(ctx, t, name, "up", ip, dataDir, "", args...)
}

// startServer runs `converge COMMAND` (up or apiserver) on a free port of ip
// with dataDir (and the shared pkiDir when not empty) and waits until /readyz
// answers.
func startServer(ctx context.Context, t testing.TB, name, command, ip, dataDir, pkiDir string, extra ...string) *apiServer {
	t.Helper()
	addr := freeAddr(t, ip)
	_, port, _ := net.SplitHostPort(addr)
	args := []string{command, "--data-dir", dataDir, "--bind-address", ip, "--port", port}
	if pkiDir != "" {
		args = append(args, "--pki-dir", pkiDir)
	}
	s := &apiServer{url: "https://" + addr, dataDir: dataDir, pkiDir: pkiDir, args: append(args, extra...)}
	s.start(ctx, t, name)
	return s
}

// pki is the directory of the server's CA and admin certificate.
func (s *apiServer) pki() string {
	if s.pkiDir != "" {
		return s.pkiDir
	}
	return filepath.Join(s.dataDir, "pki")
}

// tls authenticates as the admin of s (its CA, its admin certificate).
func (s *apiServer) tls() rest.TLSConfig {
	return rest.TLSConfig{CAFile: filepath.Join(s.pki(), pki.CACertFile),
		CertFile: filepath.Join(s.pki(), pki.AdminCertFile), KeyFile: filepath.Join(s.pki(), pki.AdminKeyFile)}
}

func (s *apiServer) start(ctx context.Context, t testing.TB, name string) {
	t.Helper()
	start := time.Now()
	s.proc = startProc(t, name, nil, converge(t), s.args...)
	var c *rest.Client
	err := poll(ctx, 60*time.Second, func() error {
		if !s.proc.running() {
			return errStop{errors.New("converge up exited")}
		}
		if c == nil {
			// The certificates exist once the server is about to listen.
			if _, err := os.Stat(filepath.Join(s.pki(), pki.AdminKeyFile)); err != nil {
				return err
			}
			c = apiClient(t, s)
		}
		if _, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/readyz"}); err != nil {
			return err
		}
		// The kubeconfig is written once the server answers: components
		// started from it must not race its creation.
		_, err := os.Stat(s.kubeconfig())
		return err
	})
	if err != nil {
		t.Fatalf("%s not ready: %v", name, err)
	}
	t.Logf("%s ready at %s in %s", name, s.url, time.Since(start).Round(time.Millisecond))
}

// apiClient is a client of servers (which share a CA) that does not retry
// (MaxTries 1), so the test sees every failure.
func apiClient(t testing.TB, servers ...*apiServer) *rest.Client {
	t.Helper()
	hosts := make([]string, len(servers))
	for i, s := range servers {
		hosts[i] = s.url
	}
	c, err := rest.NewClient(&rest.Config{Hosts: hosts, MaxTries: 1, Timeout: 15 * time.Second, UserAgent: "converge-faults",
		TLS: servers[0].tls()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// errStop makes poll give up at once.
type errStop struct{ error }

// poll calls f every 50 ms until it returns nil, returns errStop, or timeout
// passes (or ctx ends); it returns f's last error then.
func poll(ctx context.Context, timeout time.Duration, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := f()
		if err == nil {
			return nil
		}
		var stop errStop
		if errors.As(err, &stop) {
			return stop.error
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %w", timeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// --- API helpers ---

// meta is the part of an object the checks look at.
type meta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid"`
	ResourceVersion   string            `json:"resourceVersion"`
	CreationTimestamp string            `json:"creationTimestamp"`
	DeletionTimestamp string            `json:"deletionTimestamp"`
	Labels            map[string]string `json:"labels"`
	OwnerReferences   []struct {
		UID        string `json:"uid"`
		Controller bool   `json:"controller"`
	} `json:"ownerReferences"`
}

type object struct {
	Kind     string            `json:"kind"`
	Metadata meta              `json:"metadata"`
	Data     map[string]string `json:"data"`
	Spec     struct {
		Replicas *int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Replicas int32 `json:"replicas"`
	} `json:"status"`
}

type objectList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []object `json:"items"`
}

func createNamespace(ctx context.Context, t testing.TB, c *rest.Client, name string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name)
	if _, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces", Body: []byte(body)}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

func configMapBody(name string, i int) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"faults":"writes"}},"data":{"i":%q,"payload":%q}}`,
		name, strconv.Itoa(i), strings.Repeat("p", 256))
}

// createConfigMap posts a ConfigMap; it returns the uid of a 201 answer.
func createConfigMap(ctx context.Context, c *rest.Client, ns, name string, i int) (string, error) {
	resp, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/" + ns + "/configmaps", Body: configMapBody(name, i)})
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("create %s: HTTP %d", name, resp.StatusCode)
	}
	var o object
	if err := json.Unmarshal(resp.Body, &o); err != nil || o.Metadata.UID == "" {
		return "", fmt.Errorf("create %s: bad answer %q: %v", name, resp.Body, err)
	}
	return o.Metadata.UID, nil
}

func list(ctx context.Context, t testing.TB, c *rest.Client, path string) objectList {
	t.Helper()
	resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: path})
	if err != nil {
		t.Fatalf("list %s: %v", path, err)
	}
	var l objectList
	if err := json.Unmarshal(resp.Body, &l); err != nil {
		t.Fatalf("list %s: decode: %v", path, err)
	}
	return l
}

func get(ctx context.Context, c *rest.Client, path string) (object, error) {
	resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: path})
	if err != nil {
		return object{}, err
	}
	var o object
	err = json.Unmarshal(resp.Body, &o)
	return o, err
}

const deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q},
 "spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},
  "template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":"busybox","command":["sleep","3600"]}]}}}}`

func createDeployment(ctx context.Context, t testing.TB, c *rest.Client, ns, name string, replicas int) string {
	t.Helper()
	body := fmt.Sprintf(deploymentJSON, name, replicas, name, name)
	resp, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/apis/apps/v1/namespaces/" + ns + "/deployments", Body: []byte(body)})
	if err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	var o object
	if err := json.Unmarshal(resp.Body, &o); err != nil {
		t.Fatal(err)
	}
	return o.Metadata.UID
}

// ownedBy returns the live (not being deleted) items controlled by uid.
func ownedBy(items []object, uid string) []object {
	var out []object
	for _, o := range items {
		if o.Metadata.DeletionTimestamp != "" {
			continue
		}
		for _, ref := range o.Metadata.OwnerReferences {
			if ref.UID == uid && ref.Controller {
				out = append(out, o)
			}
		}
	}
	return out
}

// checkDeploymentConverges waits until the Deployment has exactly one
// ReplicaSet with replicas pods and reports replicas in its status, failing at
// once if a second ReplicaSet ever shows up, then checks it stays so for hold.
func checkDeploymentConverges(ctx context.Context, t testing.TB, c *rest.Client, ns, name string, replicas int, hold time.Duration) {
	t.Helper()
	check := func() error {
		d, err := get(ctx, c, "/apis/apps/v1/namespaces/"+ns+"/deployments/"+name)
		if err != nil {
			return err
		}
		rsl := list(ctx, t, c, "/apis/apps/v1/namespaces/"+ns+"/replicasets")
		rss := ownedBy(rsl.Items, d.Metadata.UID)
		if len(rss) > 1 {
			var names []string
			for _, rs := range rss {
				names = append(names, rs.Metadata.Name)
			}
			return errStop{fmt.Errorf("deployment %s has %d ReplicaSets: %v", name, len(rss), names)}
		}
		if len(rss) == 0 {
			return errors.New("no ReplicaSet yet")
		}
		pods := ownedBy(list(ctx, t, c, "/api/v1/namespaces/"+ns+"/pods").Items, rss[0].Metadata.UID)
		if len(pods) > replicas {
			return fmt.Errorf("%d pods, want %d (may be transient)", len(pods), replicas)
		}
		if len(pods) != replicas || d.Status.Replicas != int32(replicas) {
			return fmt.Errorf("%d pods, status.replicas %d, want %d", len(pods), d.Status.Replicas, replicas)
		}
		return nil
	}
	start := time.Now()
	if err := poll(ctx, 45*time.Second, check); err != nil {
		t.Fatalf("deployment %s/%s: %v", ns, name, err)
	}
	t.Logf("deployment %s/%s converged in %s", ns, name, time.Since(start).Round(time.Millisecond))
	deadline := time.Now().Add(hold)
	for time.Now().Before(deadline) {
		if err := check(); err != nil {
			t.Fatalf("deployment %s/%s after converging: %v", ns, name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// snapshotState lists ConfigMaps of ns as name → uid@resourceVersion.
func snapshotState(ctx context.Context, t testing.TB, c *rest.Client, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range list(ctx, t, c, "/api/v1/namespaces/"+ns+"/configmaps").Items {
		out[o.Metadata.Name] = o.Metadata.UID + "@" + o.Metadata.ResourceVersion
	}
	return out
}

// internalRecords are the key prefixes of the control plane's own records
// under /registry/ that are not API objects: Service IP and node port
// reservations (servicenet) and the API servers' leases (apiendpoints).
var internalRecords = []string{"/registry/ranges/", "/registry/masterleases/"}

// scanEtcd checks that every value under /registry/ decodes as one JSON
// object, and every API object has metadata.uid and
// metadata.creationTimestamp: nothing is half-written.
func scanEtcd(ctx context.Context, t testing.TB, cl *clientv3.Client) int {
	t.Helper()
	resp, err := cl.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("scan etcd: %v", err)
	}
	for _, kv := range resp.Kvs {
		var o object
		dec := json.NewDecoder(bytes.NewReader(kv.Value))
		if err := dec.Decode(&o); err != nil || dec.More() {
			t.Errorf("key %s: value does not decode as one JSON object: %v (%q)", kv.Key, err, truncate(kv.Value))
			continue
		}
		internal := slices.ContainsFunc(internalRecords, func(p string) bool { return strings.HasPrefix(string(kv.Key), p) })
		if !internal && (o.Metadata.UID == "" || o.Metadata.CreationTimestamp == "") {
			t.Errorf("key %s: no uid or creationTimestamp: %q", kv.Key, truncate(kv.Value))
		}
	}
	return len(resp.Kvs)
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
