package peer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/converge-dev/converge/bench/internal/proc"
)

// server is one side of the comparison: the processes that make it up (the
// API server and, for kube-apiserver, its etcd) and client-go's configuration
// from its kubeconfig.
type server struct {
	name   string
	pids   []int
	config *rest.Config
}

// cpu is the user and system CPU time the server's processes used so far.
func (s *server) cpu(tb testing.TB) time.Duration {
	var total time.Duration
	for _, pid := range s.pids {
		c, err := proc.CPU(pid)
		if err != nil {
			tb.Fatalf("%s: %v", s.name, err)
		}
		total += c
	}
	return total
}

// rss is the resident set size of the server's processes, in bytes.
func (s *server) rss(tb testing.TB) int64 {
	var total int64
	for _, pid := range s.pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			tb.Fatalf("read RSS of %s (pid %d): %v", s.name, pid, err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += kb << 10
			}
		}
	}
	return total
}

// binaries builds converge (or takes $PEER_CONVERGE) and peeretcd into a
// temporary directory and finds
// kube-apiserver: $PEER_KUBE_APISERVER, or bench/.envtest-bin/kube-apiserver
// as `make peer-bin` (or `make envtest-compare`) builds it from k8s.io/kubernetes.
func binaries(tb testing.TB) (converge, etcd, kubeAPIServer string) {
	tb.Helper()
	kubeAPIServer = os.Getenv("PEER_KUBE_APISERVER")
	if kubeAPIServer == "" {
		kubeAPIServer, _ = filepath.Abs("../.envtest-bin/kube-apiserver")
	}
	if _, err := os.Stat(kubeAPIServer); err != nil {
		tb.Fatalf("kube-apiserver is missing (%v): build it with `make peer-bin` (k8s.io/kubernetes v1.34 from bench/envtestbin) or set PEER_KUBE_APISERVER", err)
	}
	dir := tb.TempDir()
	converge, etcd = filepath.Join(dir, "converge"), filepath.Join(dir, "peeretcd")
	builds := []struct{ dir, out, pkg string }{{"..", etcd, "./cmd/peeretcd"}}
	if bin := os.Getenv("PEER_CONVERGE"); bin != "" {
		converge = bin // a converge built elsewhere (another commit's, to compare)
	} else {
		builds = append(builds, struct{ dir, out, pkg string }{"../..", converge, "./cmd/converge"})
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return converge, etcd, kubeAPIServer
}

// spawn starts a process that lives until the benchmark ends, logging to dir.
func spawn(tb testing.TB, dir, name string, args ...string) *exec.Cmd {
	tb.Helper()
	return spawnEnv(tb, dir, nil, name, args...)
}

// spawnEnv is spawn with env added to the process's environment.
func spawnEnv(tb testing.TB, dir string, env []string, name string, args ...string) *exec.Cmd {
	tb.Helper()
	return proc.Start(tb, dir, env, name, args...)
}

func freePort(tb testing.TB) int { return proc.FreePort(tb) }

// startConverge runs `converge up --no-node` (the default secure control
// plane: API server with TLS, client certificates, RBAC and admission,
// controllers and scheduler, on its embedded etcd) and connects with the
// kubeconfig it writes. MEMORY_LIMIT=256Mi adds --memory-limit 256Mi;
// KEEP_IDLE_MEMORY=1 adds --keep-idle-memory;
// CONVERGE_GOGC=50 runs it with GOGC=50 (kube-apiserver keeps the default).
func startConverge(tb testing.TB, bin string) *server {
	dir := tb.TempDir()
	args := []string{"up", "--no-node", "--data-dir", filepath.Join(dir, "data"), "--port", strconv.Itoa(freePort(tb))}
	if l := os.Getenv("MEMORY_LIMIT"); l != "" {
		args = append(args, "--memory-limit", l)
	}
	if os.Getenv("KEEP_IDLE_MEMORY") != "" {
		args = append(args, "--keep-idle-memory")
	}
	var env []string
	if g := os.Getenv("CONVERGE_GOGC"); g != "" {
		env = []string{"GOGC=" + g}
	}
	cmd := spawnEnv(tb, dir, env, bin, args...)
	kubeconfig := filepath.Join(dir, "data", "kubeconfig")
	s := &server{name: "converge", pids: []int{cmd.Process.Pid}}
	waitReady(tb, s, dir, func() (*rest.Config, error) {
		if _, err := os.Stat(kubeconfig); err != nil {
			return nil, err
		}
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	})
	return s
}

// startKubeAPIServer runs kube-apiserver with TLS, client-certificate
// authentication and RBAC on its own etcd (peeretcd: Converge's embedded etcd
// settings; PEER_ETCD_CATCHUP=5000 gives it etcd's own in-memory raft log
// retention), and connects with a kubeconfig
// holding a system:masters client certificate.
func startKubeAPIServer(tb testing.TB, etcdBin, bin string) *server {
	dir := tb.TempDir()
	etcdPort := freePort(tb)
	etcdArgs := []string{"-data-dir", filepath.Join(dir, "etcd"), "-port", strconv.Itoa(etcdPort)}
	if n := os.Getenv("PEER_ETCD_CATCHUP"); n != "" {
		etcdArgs = append(etcdArgs, "-snapshot-catchup-entries", n)
	}
	etcd := spawn(tb, dir, etcdBin, etcdArgs...)
	p := writePKI(tb, dir)
	port := freePort(tb)
	kas := spawn(tb, dir, bin,
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--cert-dir", dir, "--tls-cert-file", p.serverCert, "--tls-private-key-file", p.serverKey,
		"--client-ca-file", p.caCert, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", p.saKey,
		"--service-account-signing-key-file", p.saKey, "--service-cluster-ip-range", "10.0.0.0/24",
		"--v", "0")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["peer"] = &clientcmdapi.Cluster{Server: fmt.Sprintf("https://127.0.0.1:%d", port), CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.adminCertPEM, ClientKeyData: p.adminKeyPEM}
	cfg.Contexts["peer"] = &clientcmdapi.Context{Cluster: "peer", AuthInfo: "admin"}
	cfg.CurrentContext = "peer"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		tb.Fatal(err)
	}
	s := &server{name: "kube-apiserver", pids: []int{kas.Process.Pid, etcd.Process.Pid}}
	waitReady(tb, s, dir, func() (*rest.Config, error) { return clientcmd.BuildConfigFromFlags("", kubeconfig) })
	return s
}

// waitReady waits until /readyz answers ok with the configuration load gives.
func waitReady(tb testing.TB, s *server, logDir string, load func() (*rest.Config, error)) {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		cfg, err := load()
		if err != nil {
			last = err
			continue
		}
		cfg.QPS, cfg.Burst = -1, 0
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && string(body) == "ok" {
			s.config = cfg
			return
		}
		last = fmt.Errorf("%v: %s", err, body)
	}
	logs, _ := filepath.Glob(filepath.Join(logDir, "*.log"))
	var tail string
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		tail += fmt.Sprintf("\n--- %s\n%s", l, b[max(0, len(b)-3000):])
	}
	tb.Fatalf("%s not ready in 3 minutes: %v%s", s.name, last, tail)
}

// pki holds the files and PEM blocks of the peer's certificates.
type pki struct {
	caCert, serverCert, serverKey, saKey string
	caPEM, adminCertPEM, adminKeyPEM     []byte
}

// writePKI creates a CA, a serving certificate for 127.0.0.1, a client
// certificate of a system:masters user and a ServiceAccount signing key.
func writePKI(tb testing.TB, dir string) pki {
	tb.Helper()
	caKey := newKey(tb)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "peer-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	leaf := func(serial int64, subject pkix.Name, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, []byte) {
		k := newKey(tb)
		der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
			DNSNames: []string{"localhost"}}, ca, &k.PublicKey, caKey)
		if err != nil {
			tb.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(k)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	}
	srvCert, srvKey := leaf(2, pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	admCert, admKey := leaf(3, pkix.Name{CommonName: "bench-admin", Organization: []string{"system:masters"}}, x509.ExtKeyUsageClientAuth, nil)
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	p := pki{caCert: filepath.Join(dir, "ca.crt"), serverCert: filepath.Join(dir, "server.crt"), serverKey: filepath.Join(dir, "server.key"),
		saKey: filepath.Join(dir, "sa.key"), caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		adminCertPEM: admCert, adminKeyPEM: admKey}
	for path, data := range map[string][]byte{p.caCert: p.caPEM, p.serverCert: srvCert, p.serverKey: srvKey,
		p.saKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(sa)})} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}
