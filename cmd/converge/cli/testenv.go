package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
)

type testenvOptions struct {
	crdDirs     []string
	withNode    bool
	controllers []string
	printEnv    bool
	insecure    bool
	keep        bool
	timeout     time.Duration
	perPackage  bool
	self        string // the converge binary (for --per-package)
}

// exitCodeError carries a child process's exit code out of Execute.
type exitCodeError struct{ code int }

func (e exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newTestenvCommand(g *globalOptions) *cobra.Command {
	o := &testenvOptions{}
	cmd := &cobra.Command{
		Use:   "testenv [flags] -- COMMAND [ARGS...]",
		Short: "Run a command against an ephemeral control plane (a drop-in for envtest)",
		Long: `Start an ephemeral control plane in a temporary data directory (HTTPS with an admin
kubeconfig, the built-in controllers, no scheduler or node agent unless --with-node), apply the
CRDs found in --crd-dir and wait until they are Established, then run COMMAND with KUBECONFIG
pointing at it and USE_EXISTING_CLUSTER=true, so that an unmodified envtest-based suite (which
then uses the existing cluster instead of starting kube-apiserver and etcd) runs against it.
The control plane is torn down when COMMAND exits; its exit code is converge's.

With --print-env, print the environment instead and keep the control plane running until
Ctrl-C (for IDEs: paste the exports, run tests from the IDE).

When COMMAND is go test, each test package gets its own control plane, as under envtest (each
suite installs its CRDs, webhook configurations and conversion webhooks pointing at its own
webhook server): go test runs every test binary under "converge testenv" (go test -exec), in
parallel as usual. --per-package=false shares one control plane between the packages.`,
		Example: `  converge testenv --crd-dir config/crd/bases -- go test ./...
  converge testenv --crd-dir config/crd/bases --per-package=false -- go test ./...
  converge testenv --crd-dir config/crd/bases --print-env`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.printEnv != (len(args) == 0) {
				return errors.New("give either a command after -- or --print-env")
			}
			perPackage := o.perPackage
			if !cmd.Flags().Changed("per-package") {
				perPackage = defaultPerPackage(args)
			}
			if perPackage {
				return runPerPackage(cmd.Context(), g, o, args)
			}
			return runTestenv(cmd.Context(), g, o, args)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // converge testenv go test -v ./... works without --
	f.StringSliceVar(&o.crdDirs, "crd-dir", nil, "directory (or file) of CRD manifests to apply first; repeatable; other kinds in it are skipped")
	f.BoolVar(&o.withNode, "with-node", false, "also run the scheduler and a local node agent (pods really run as processes)")
	f.StringSliceVar(&o.controllers, "controllers", []string{"*"}, `built-in controllers to run ("*": all; "" : none, as envtest)`)
	f.BoolVar(&o.printEnv, "print-env", false, "print the exports and keep running until Ctrl-C instead of running a command")
	f.BoolVar(&o.insecure, "insecure", false, "serve plain HTTP without authentication or authorization")
	f.BoolVar(&o.keep, "keep", false, "keep the data directory (its path is printed) instead of removing it")
	f.DurationVar(&o.timeout, "crd-timeout", 30*time.Second, "how long to wait for the CRDs to be Established")
	f.BoolVar(&o.perPackage, "per-package", false, "one control plane per test package (COMMAND must be go test; uses go test -exec); the default for go test without -exec")
	self, _ := os.Executable()
	f.StringVar(&o.self, "converge-binary", self, "the converge binary that runs each package (--per-package)")
	_ = f.MarkHidden("converge-binary")
	return cmd
}

func runTestenv(ctx context.Context, g *globalOptions, o *testenvOptions, args []string) (err error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "converge-testenv-")
	if err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	defer func() {
		if o.keep {
			fmt.Fprintf(g.stderr, "testenv: data kept in %s\n", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	var controllers []string
	for _, c := range o.controllers {
		if c != "" {
			controllers = append(controllers, c)
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		DataDir: dir, NoFsync: true, Port: 0, Logger: testenvLogger(g), CompactionInterval: -1,
		Controllers: controllers, Scheduler: o.withNode, LocalNode: o.withNode, Secure: !o.insecure,
		ShutdownGrace: -1, // the child has exited: no one to wait for
	})
	if err != nil {
		return fmt.Errorf("start control plane: %w", err)
	}
	defer func() {
		if cerr := cp.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("stop control plane: %w", cerr)
		}
	}()
	kc := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kc); err != nil {
		return err
	}
	n, err := applyCRDDirs(ctx, kc, o.crdDirs, o.timeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stderr, "testenv: control plane at %s ready in %s (%d CRDs established)\n", cp.URL(),
		time.Since(start).Round(time.Millisecond), n)
	env := []string{"KUBECONFIG=" + kc, "USE_EXISTING_CLUSTER=true"}
	if o.printEnv {
		for _, e := range env {
			fmt.Fprintf(g.stdout, "export %s\n", e)
		}
		fmt.Fprintln(g.stderr, "testenv: press Ctrl-C to stop")
		select {
		case <-ctx.Done():
			return nil
		case err := <-cp.Err():
			return err
		}
	}
	c := exec.Command(args[0], args[1:]...)
	c.Env = append(os.Environ(), env...)
	c.Stdin, c.Stdout, c.Stderr = g.stdin, g.stdout, g.stderr
	if err := c.Start(); err != nil {
		return fmt.Errorf("run %s: %w", args[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		// Ctrl-C: the child usually got it too (same process group); make
		// sure, then wait for it before tearing down.
		_ = c.Process.Signal(syscall.SIGTERM)
		select {
		case werr = <-done:
		case <-time.After(10 * time.Second):
			_ = c.Process.Kill()
			werr = <-done
		}
	}
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return nil
	case errors.As(werr, &ee):
		code := ee.ExitCode()
		if code < 0 {
			code = 128 + int(syscall.SIGTERM)
		}
		return exitCodeError{code: code}
	default:
		return fmt.Errorf("run %s: %w", args[0], werr)
	}
}

// defaultPerPackage reports whether a command runs per package when
// --per-package is not given: go test does (as under envtest, where every
// test binary starts its own API server, a suite may leave webhook
// configurations and CRD conversion webhooks that point at its own webhook
// server, gone when it exits), unless it already has an -exec of its own.
func defaultPerPackage(args []string) bool {
	if len(args) < 2 || filepath.Base(args[0]) != "go" || args[1] != "test" {
		return false
	}
	for _, a := range args[2:] {
		if a == "--" || a == "-args" || a == "--args" {
			break // the rest is the test binary's
		}
		if a == "-exec" || a == "--exec" || strings.HasPrefix(a, "-exec=") || strings.HasPrefix(a, "--exec=") {
			return false
		}
	}
	return true
}

// runPerPackage runs `go test` with -exec "converge testenv ... --", so that
// each test binary runs against its own control plane.
func runPerPackage(ctx context.Context, g *globalOptions, o *testenvOptions, args []string) error {
	if len(args) < 2 || filepath.Base(args[0]) != "go" || args[1] != "test" {
		return fmt.Errorf("--per-package needs a go test command, not %q", strings.Join(args, " "))
	}
	inner := []string{strconv.Quote(o.self), "testenv"}
	for _, d := range o.crdDirs {
		abs, err := filepath.Abs(d) // test binaries run in their package's directory
		if err != nil {
			return err
		}
		inner = append(inner, "--crd-dir", strconv.Quote(abs))
	}
	if o.withNode {
		inner = append(inner, "--with-node")
	}
	if o.insecure {
		inner = append(inner, "--insecure")
	}
	inner = append(inner, "--controllers", strconv.Quote(strings.Join(o.controllers, ",")), "--crd-timeout", o.timeout.String(), "--")
	goArgs := append([]string{"test", "-exec", strings.Join(inner, " ")}, args[2:]...)
	c := exec.CommandContext(ctx, args[0], goArgs...)
	c.Stdin, c.Stdout, c.Stderr = g.stdin, g.stdout, g.stderr
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 10 * time.Second
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return exitCodeError{code: max(ee.ExitCode(), 1)}
	}
	return err
}

// testenvLogger logs warnings and errors only, unless -v asks for more:
// the command's output is the child's.
func testenvLogger(g *globalOptions) logr.Logger {
	if g.verbosity > 0 {
		return g.logger()
	}
	return logr.FromSlogHandler(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

var docSeparator = regexp.MustCompile(`(?m)^---.*$`)

// applyCRDDirs applies every CustomResourceDefinition in the YAML and JSON
// files under dirs (or named by them) and waits until all are Established.
func applyCRDDirs(ctx context.Context, kc string, dirs []string, timeout time.Duration) (int, error) {
	var docs [][]byte
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			switch strings.ToLower(filepath.Ext(p)) {
			case ".yaml", ".yml", ".json":
			default:
				return nil
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, doc := range docSeparator.Split(string(raw), -1) {
				var head struct {
					Kind string `json:"kind"`
				}
				if yaml.Unmarshal([]byte(doc), &head) == nil && head.Kind == "CustomResourceDefinition" {
					docs = append(docs, []byte(doc))
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("read CRDs from %s: %w", d, err)
		}
	}
	if len(docs) == 0 {
		return 0, nil
	}
	cfg, _, err := kubeconfig.LoadKubeconfig(kc, "")
	if err != nil {
		return 0, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return 0, err
	}
	if err := operators.ApplyCRDs(ctx, c, docs, timeout); err != nil {
		return 0, err
	}
	return len(docs), nil
}
