package run

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// MainPackage finds an operator's main package: dir itself, dir/plugin (the
// scaffold's layout) or the only dir/cmd/<name>.
func MainPackage(dir string) (string, error) {
	candidates := []string{dir, filepath.Join(dir, "plugin")}
	cmds, _ := filepath.Glob(filepath.Join(dir, "cmd", "*"))
	if len(cmds) == 1 {
		candidates = append(candidates, cmds[0])
	}
	for _, c := range candidates {
		if isMain(c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("no main package in %s, %s/plugin or %s/cmd/<name>", dir, dir, dir)
}

func isMain(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "package ") {
				fh.Close()
				if line == "package main" {
					return true
				}
				break
			}
		}
		fh.Close()
	}
	return false
}

// Command is what `converge operator run DIR [-- FLAGS]` executes: `go run`
// of the operator's main package (MainPackage), in its module, with args (the
// Main flags: --kubeconfig, --leader-elect, ...). The operator is compiled as
// an ordinary program, so the plugin constraints (same toolchain, flags and
// module versions as converge) do not apply. The caller wires stdio, runs it
// and forwards signals (go run passes SIGINT to the program).
func Command(ctx context.Context, dir string, args []string) (*exec.Cmd, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	pkg, err := MainPackage(abs)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", "."}, args...)...)
	cmd.Dir = pkg
	// On ctx end, ask for a graceful stop (the operator releases its Lease)
	// before the kill.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 40 * time.Second
	return cmd, nil
}
