package kubectl

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// commandTimeout bounds every kubectl invocation that is not a long-running watch.
const commandTimeout = 30 * time.Second

// kubectl runs one kubectl binary with an isolated HOME and discovery cache.
type kubectl struct {
	bin        string
	home       string
	kubeconfig string
}

func newKubectl(bin, home, kubeconfig string) *kubectl {
	Expect(os.MkdirAll(home, 0o700)).To(Succeed())
	return &kubectl{bin: bin, home: home, kubeconfig: kubeconfig}
}

// result is what one kubectl invocation did.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("kubectl %s\nexit code: %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// command prepares kubectl args with the suite's environment; extraEnv entries
// are KEY=VALUE.
func (k *kubectl) command(ctx context.Context, extraEnv []string, args ...string) *exec.Cmd {
	full := append([]string{"--cache-dir=" + filepath.Join(k.home, "cache")}, args...)
	cmd := exec.CommandContext(ctx, k.bin, full...)
	cmd.Env = append([]string{
		"HOME=" + k.home,
		"KUBECONFIG=" + k.kubeconfig,
		"PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + os.TempDir(),
	}, extraEnv...)
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// runEnv runs kubectl to completion (or commandTimeout) and reports what happened.
func (k *kubectl) runEnv(ctx context.Context, extraEnv []string, stdin string, args ...string) result {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := k.command(ctx, extraEnv, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	default:
		Fail(fmt.Sprintf("run %s: %v\n%s", k.bin, err, r))
	}
	if ctx.Err() != nil {
		Fail(fmt.Sprintf("kubectl timed out after %s\n%s", commandTimeout, r))
	}
	return r
}

// run runs kubectl and returns its result, whatever the exit code.
func (k *kubectl) run(ctx context.Context, args ...string) result {
	GinkgoHelper()
	return k.runEnv(ctx, nil, "", args...)
}

// ok runs kubectl, expects success and returns stdout.
func (k *kubectl) ok(ctx context.Context, args ...string) string {
	GinkgoHelper()
	r := k.run(ctx, args...)
	Expect(r.code).To(BeZero(), "kubectl failed:\n%s", r)
	return r.stdout
}

// fails runs kubectl, expects a non-zero exit code and returns the result.
func (k *kubectl) fails(ctx context.Context, args ...string) result {
	GinkgoHelper()
	r := k.run(ctx, args...)
	Expect(r.code).NotTo(BeZero(), "kubectl succeeded but should have failed:\n%s", r)
	return r
}

// json runs kubectl with -o json and decodes the output.
func (k *kubectl) json(ctx context.Context, args ...string) map[string]any {
	GinkgoHelper()
	out := k.ok(ctx, append(args, "-o", "json")...)
	var m map[string]any
	Expect(json.Unmarshal([]byte(out), &m)).To(Succeed(), "decode kubectl %v output:\n%s", args, out)
	return m
}

// background is a long-running kubectl (get -w, delete --wait, wait).
type background struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

// start runs kubectl in the background; it is killed when the spec ends.
func (k *kubectl) start(ctx context.Context, args ...string) *background {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &background{cancel: cancel, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	b.cmd = k.command(ctx, nil, args...)
	b.cmd.Stdout, b.cmd.Stderr = b.stdout, b.stderr
	Expect(b.cmd.Start()).To(Succeed(), "start kubectl %v", args)
	go func() {
		b.err = b.cmd.Wait()
		close(b.done)
	}()
	DeferCleanup(b.stop)
	return b
}

// exited reports whether the process has ended.
func (b *background) exited() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// exitCode waits for the end and returns the exit code.
func (b *background) exitCode() int {
	<-b.done
	var exitErr *exec.ExitError
	if errors.As(b.err, &exitErr) {
		return exitErr.ExitCode()
	}
	if b.err != nil {
		return -1
	}
	return 0
}

func (b *background) stop() {
	b.cancel()
	<-b.done
}

func (b *background) String() string {
	return fmt.Sprintf("kubectl %s\nstdout:\n%s\nstderr:\n%s", strings.Join(b.cmd.Args[1:], " "), b.stdout, b.stderr)
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// uniqueName returns prefix followed by a random DNS-label suffix.
func uniqueName(prefix string) string {
	return prefix + "-" + strings.ToLower(rand.Text()[:8])
}

// writeFile writes content into a fresh file in the spec's temp dir.
func writeFile(name, content string) string {
	GinkgoHelper()
	p := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.WriteFile(p, []byte(content), 0o600)).To(Succeed())
	return p
}

// newNamespace creates a namespace for one spec and deletes it afterwards.
func newNamespace(ctx context.Context, k *kubectl) string {
	GinkgoHelper()
	ns := uniqueName("e2e")
	k.ok(ctx, "create", "namespace", ns)
	return ns
}

// nested returns the value at path in obj (nil when absent).
func nested(obj any, path ...string) any {
	for _, p := range path {
		m, ok := obj.(map[string]any)
		if !ok {
			return nil
		}
		obj = m[p]
	}
	return obj
}

// lines splits output into non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
