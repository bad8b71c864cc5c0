package e2etool

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/converge-dev/converge\n") {
		t.Fatalf("%s is not the converge module's root: %v", root, err)
	}
}

func TestFreeAddr(t *testing.T) {
	for _, ip := range []string{"127.0.0.1", "127.0.0.7"} {
		addr, err := FreeAddr(ip)
		if err != nil {
			t.Fatal(err)
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil || host != ip {
			t.Fatalf("FreeAddr(%s) = %s: %v", ip, addr, err)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("the free address %s cannot be bound: %v", addr, err)
		}
		l.Close()
	}
	port, err := FreePort()
	if err != nil || port < firstPort || port >= firstPort+numPorts {
		t.Fatalf("FreePort() = %d, %v", port, err)
	}
}

// The suites need kubectl 1.27 and 1.33 beside the dispatcher
// (hack/ci-deps.sh installs them).
func TestKubectl(t *testing.T) {
	for _, v := range []string{"1.27", "1.33"} {
		p, err := Kubectl(v)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) != "kubectl."+v {
			t.Errorf("Kubectl(%s) = %s", v, p)
		}
	}
	if _, err := Kubectl("0.1"); err == nil {
		t.Error("kubectl 0.1 found")
	}
}
