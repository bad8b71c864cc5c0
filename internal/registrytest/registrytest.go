// Package registrytest runs Debian's Distribution registry
// (/usr/bin/docker-registry, package docker-registry) for tests: Start serves
// a registry with a temporary storage directory on 127.0.0.1 at a free port,
// plain HTTP, optionally behind htpasswd basic auth or Docker's token
// authentication (a bearer token server of its own), and stops it when the
// test ends. A missing binary fails the test with how to install it; it never
// skips.
//
// A loopback registry is plain HTTP: Docker, containerd and Converge's
// containerd runtime reach it without TLS configuration.
package registrytest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/converge-dev/converge/internal/e2etool"
)

// DefaultBinary is where Debian's docker-registry package installs the registry.
const DefaultBinary = "/usr/bin/docker-registry"

// TB is what Start needs from a test: *testing.T, *testing.B and Ginkgo's
// GinkgoT() all satisfy it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// Options configure Start. The zero value serves an open registry.
type Options struct {
	// Username and Password, when Username is set, protect the registry with
	// htpasswd basic auth (every /v2/ request needs them).
	Username, Password string
	// Token, with Username, protects the registry with Docker's token
	// authentication instead: /v2/ answers 401 with a Bearer challenge whose
	// realm is a token server (on another loopback port) that exchanges
	// Username and Password for a JWT.
	Token bool
	// Binary is the registry executable (default DefaultBinary).
	Binary string
}

// Registry is a running registry.
type Registry struct {
	// Host is "127.0.0.1:<port>", the registry part of image references
	// ("127.0.0.1:41234/demo/hello:v1").
	Host string
	// Dir holds the config file, the storage and the registry's log.
	Dir string

	cmd      *exec.Cmd
	token    *tokenServer // nil unless Options.Token
	exited   chan struct{}
	stopOnce sync.Once
}

// Start runs a registry and waits until /v2/ answers; it is stopped when the
// test ends (or earlier with Stop). Any failure fails the test.
func Start(t TB, opts Options) *Registry {
	t.Helper()
	bin := opts.Binary
	if bin == "" {
		bin = DefaultBinary
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("registrytest: the Distribution registry %s is required: apt-get install -y docker-registry (hack/ci-deps.sh): %v", bin, err)
	}
	dir := t.TempDir()
	var lastErr error
	for range 3 { // the free port may be taken between picking and binding it
		r, err := start(bin, dir, opts)
		if err == nil {
			t.Cleanup(r.Stop)
			return r
		}
		lastErr = err
	}
	t.Fatalf("registrytest: %v", lastErr)
	return nil
}

func start(bin, dir string, opts Options) (*Registry, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var tok *tokenServer
	if opts.Token && opts.Username != "" {
		if tok, err = startTokenServer(opts.Username, opts.Password, filepath.Join(dir, "token.crt")); err != nil {
			return nil, err
		}
	}
	cfg, err := writeConfig(dir, host, opts, tok)
	if err != nil {
		if tok != nil {
			tok.close()
		}
		return nil, err
	}
	logPath := filepath.Join(dir, "registry.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create registry log: %w", err)
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// The parent-death signal fires when the forking thread ends (Go ends a
	// thread whose locked goroutine exits): fork on a thread locked until the
	// registry has exited.
	startErr := make(chan error, 1)
	r := &Registry{Host: host, Dir: dir, cmd: cmd, token: tok, exited: make(chan struct{})}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		_ = cmd.Wait()
		logf.Close()
		close(r.exited)
	}()
	if err := <-startErr; err != nil {
		logf.Close()
		if tok != nil {
			tok.close()
		}
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	if err := r.waitReady(10 * time.Second); err != nil {
		r.Stop()
		b, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("registry on %s: %w; its log:\n%s", host, err, bytes.TrimSpace(b))
	}
	return r, nil
}

// writeConfig writes the registry's config.yml (and htpasswd) under dir.
func writeConfig(dir, host string, opts Options, tok *tokenServer) (string, error) {
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return "", fmt.Errorf("create registry storage: %w", err)
	}
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %q
  delete:
    enabled: true
http:
  addr: %q
`, storage, host)
	switch {
	case tok != nil:
		cfg += fmt.Sprintf("auth:\n  token:\n    realm: %q\n    service: %q\n    issuer: %q\n    rootcertbundle: %q\n",
			tok.url, tokenService, tokenIssuer, filepath.Join(dir, "token.crt"))
	case opts.Username != "":
		hash, err := bcrypt.GenerateFromPassword([]byte(opts.Password), bcrypt.MinCost)
		if err != nil {
			return "", fmt.Errorf("hash htpasswd password: %w", err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(opts.Username+":"+string(hash)+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("write htpasswd: %w", err)
		}
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: registrytest\n    path: %q\n", htpasswd)
	}
	path := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return "", fmt.Errorf("write registry config: %w", err)
	}
	return path, nil
}

func freePort() (int, error) {
	port, err := e2etool.FreePort()
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	return port, nil
}

// waitReady polls /v2/ until it answers 200 or 401 (auth required).
func (r *Registry) waitReady(timeout time.Duration) error {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-r.exited:
			return errors.New("exited before serving")
		default:
		}
		resp, err := c.Get("http://" + r.Host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
			err = fmt.Errorf("GET /v2/: %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %w", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the registry (SIGTERM, SIGKILL after 5 s) and waits for it to
// exit. It is idempotent.
func (r *Registry) Stop() {
	r.stopOnce.Do(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(5 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
		if r.token != nil {
			r.token.close()
		}
	})
}
