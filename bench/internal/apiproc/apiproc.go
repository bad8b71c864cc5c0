// Package apiproc runs `converge apiserver` processes for the benchmarks
// that compare whole servers: each in the default secure mode (HTTPS,
// client certificates, RBAC, admission) on its own embedded etcd and data
// directory, reached through client-go's transport built from the
// kubeconfig it writes (HTTP/2), with its CPU time read from /proc.
package apiproc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/converge-dev/converge/bench/internal/proc"
)

// Server is one `converge apiserver` process and an HTTP/2 client for it.
type Server struct {
	Name string
	PID  int
	URL  string
	HC   *http.Client
}

// Start runs `converge apiserver` from bin with extra flags, its own data
// directory and port until the benchmark ends, and waits for the kubeconfig
// it writes and for /readyz through an HTTP/2 client built from it.
func Start(tb testing.TB, name, bin string, flags ...string) *Server {
	tb.Helper()
	dir := tb.TempDir()
	data := filepath.Join(dir, "data")
	args := append([]string{"apiserver", "--data-dir", data, "--port", strconv.Itoa(proc.FreePort(tb))}, flags...)
	cmd := proc.Start(tb, dir, nil, bin, args...)
	s := &Server{Name: name, PID: cmd.Process.Pid}
	kubeconfig := filepath.Join(data, "kubeconfig")
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		if last = s.connect(kubeconfig); last == nil {
			return s
		}
	}
	out, _ := os.ReadFile(filepath.Join(dir, filepath.Base(bin)+".log"))
	tb.Fatalf("%s (%s) not ready in 2 minutes: %v\n%s", name, bin, last, out[max(0, len(out)-3000):])
	return nil
}

// connect builds s's client from kubeconfig and checks /readyz over HTTP/2.
func (s *Server) connect(kubeconfig string) error {
	if _, err := os.Stat(kubeconfig); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load %s: %w", kubeconfig, err)
	}
	cfg.QPS = -1
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return fmt.Errorf("client-go transport from %s: %w", kubeconfig, err)
	}
	hc := &http.Client{Transport: rt, Timeout: 30 * time.Second}
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/readyz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(out) != "ok" {
		return fmt.Errorf("readyz: %d %s", resp.StatusCode, out)
	}
	if resp.Proto != "HTTP/2.0" {
		return fmt.Errorf("readyz went over %s, want HTTP/2.0", resp.Proto)
	}
	s.URL, s.HC = strings.TrimSuffix(cfg.Host, "/"), hc
	return nil
}

// Create POSTs body (JSON) to path and reads the response as client-go
// does; anything but 201 Created is an error.
func (s *Server) Create(path string, body []byte) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := s.HC.Do(req)
	if err != nil {
		return fmt.Errorf("create on %s: %w", s.Name, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read %s's create response: %w", s.Name, err)
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("create on %s: status %d: %s", s.Name, resp.StatusCode, out)
	}
	return nil
}

// CPU is the user and system CPU time the server process used so far.
func (s *Server) CPU(tb testing.TB) time.Duration {
	c, err := proc.CPU(s.PID)
	if err != nil {
		tb.Fatalf("%s: %v", s.Name, err)
	}
	return c
}

// Runtime is the time the server's threads ran so far, to the nanosecond
// (proc.Runtime): for short slices.
func (s *Server) Runtime(tb testing.TB) time.Duration {
	c, err := proc.Runtime(s.PID)
	if err != nil {
		tb.Fatalf("%s: %v", s.Name, err)
	}
	return c
}

// Load1 is the machine's one-minute load average.
func Load1() float64 {
	var l float64
	b, _ := os.ReadFile("/proc/loadavg")
	_, _ = fmt.Sscan(string(b), &l)
	return l
}
