package e2etool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// RepoRoot is the directory of the Go module the test runs in (go env GOMOD).
func RepoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the converge module")
	}
	return filepath.Dir(mod), nil
}

// Free ports are chosen below the kernel's ephemeral range (32768+) and the
// node port range (30000+): a port chosen with ":0" is from the ephemeral
// range and may be handed to some outgoing connection before the process
// that is given it binds it.
const (
	firstPort = 20000
	numPorts  = 10000
	tries     = 200
)

// FreeAddr returns ip:port with a port free on ip (127.0.0.1 or another
// loopback address).
func FreeAddr(ip string) (string, error) {
	for range tries {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(firstPort+rand.IntN(numPorts))))
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		if err := l.Close(); err != nil {
			return "", fmt.Errorf("close the listener on %s: %w", addr, err)
		}
		return addr, nil
	}
	return "", fmt.Errorf("no free port on %s in %d tries", ip, tries)
}

// FreePort returns a port free on 127.0.0.1.
func FreePort() (int, error) {
	addr, err := FreeAddr("127.0.0.1")
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("split %s: %w", addr, err)
	}
	return strconv.Atoi(port)
}

// KubectlDispatcher is the Google Cloud SDK's kubectl dispatcher (WIRE.md §1,
// "Local quirk"): the versioned kubectl binaries live beside the file it links
// to.
const KubectlDispatcher = "/usr/bin/kubectl"

// Kubectl is the real kubectl of version (as "1.33") beside the dispatcher,
// kubectl.<version>.
func Kubectl(version string) (string, error) {
	real, err := filepath.EvalSymlinks(KubectlDispatcher)
	if err != nil {
		return "", fmt.Errorf("kubectl dispatcher %s: %w", KubectlDispatcher, err)
	}
	p := filepath.Join(filepath.Dir(real), "kubectl."+version)
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("kubectl %s beside %s: %w", version, real, err)
	}
	if st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable", p)
	}
	return p, nil
}

// GoBuild builds the package pkg of the module in dir into out, with the
// extra environment env (as CGO_ENABLED=0) and build flags.
func GoBuild(ctx context.Context, dir, out, pkg string, env []string, flags ...string) error {
	args := append([]string{"build", "-o", out}, flags...)
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
