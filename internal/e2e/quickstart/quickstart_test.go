package quickstart

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/converge-dev/converge/internal/e2etool"
)

// quickstartCommands returns the shell lines of the README's "## Quickstart" code
// block, comments removed.
func quickstartCommands(t *testing.T, readme string) []string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## Quickstart")
	if !ok {
		t.Fatal("README.md has no ## Quickstart section")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("the Quickstart section has no ```sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if i := strings.Index(l, " # "); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

func TestReadmeQuickstart(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := quickstartCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 4 {
		t.Fatalf("quickstart too short: %q", cmds)
	}
	home := t.TempDir() // ~/.converge and kubectl's cache live here
	port, err := e2etool.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(home, ".converge", "kubeconfig")
	env := append(os.Environ(), "HOME="+home)
	// Keep Go's caches where they are: HOME moves, GOPATH and GOCACHE must not.
	for _, v := range []string{"GOPATH", "GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	for _, line := range cmds {
		fields := strings.Fields(strings.ReplaceAll(line, "~", home))
		switch {
		case fields[0] == "export":
			k, v, _ := strings.Cut(fields[1], "=")
			env = append(env, k+"="+v)
			if k == "KUBECONFIG" && v != kubeconfig {
				t.Fatalf("README exports KUBECONFIG=%s, converge up writes %s", v, kubeconfig)
			}
			continue
		case len(fields) > 1 && strings.HasSuffix(fields[0], "converge") && fields[1] == "up":
			// Runs in the foreground in the README; here in the background on a free port.
			up := exec.CommandContext(ctx, fields[0], append(fields[1:], "--port", strconv.Itoa(port))...)
			up.Dir, up.Env = root, env
			up.Cancel = func() error { return up.Process.Signal(syscall.SIGTERM) }
			out, err := up.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			up.Stderr = io.Discard
			if err := up.Start(); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			t.Cleanup(func() { cancel(); _ = up.Wait() })
			sc := bufio.NewScanner(out)
			ready, exported := false, false
			for sc.Scan() {
				exported = exported || strings.Contains(sc.Text(), "export KUBECONFIG="+kubeconfig)
				if strings.Contains(sc.Text(), "is ready at") {
					ready = true
					break
				}
			}
			if !exported {
				t.Errorf("%s did not print export KUBECONFIG=%s", line, kubeconfig)
			}
			if !ready {
				t.Fatalf("%s: never printed the ready line", line)
			}
			go func() { _, _ = io.Copy(io.Discard, out) }()
			continue
		}
		// Every other line runs as a user would type it: through bash, with the
		// README's exports, failing on any failed command of a pipeline.
		var lastOut []byte
		// kubectl may race the controllers (e.g. scale right after apply): retry briefly.
		for attempt := 0; ; attempt++ {
			c := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", line)
			c.Dir, c.Env = root, env
			lastOut, err = c.CombinedOutput()
			if err == nil || attempt == 5 {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			t.Fatalf("README command %q failed: %v\n%s", line, err, lastOut)
		}
		t.Logf("%s\n%s", line, lastOut)
	}
}
