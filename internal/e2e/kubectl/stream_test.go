package kubectl

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
	"github.com/converge-dev/converge/internal/e2etool"
)

// The streaming subresources (pods/exec, attach, portforward) with real
// kubectl: 1.27 speaks SPDY, 1.33 WebSocket (its -v=4 log names the
// negotiated protocol, and a fallback to SPDY if the WebSocket upgrade failed;
// the specs check there is none).
var _ = Describe("kubectl exec, cp, attach and port-forward", Ordered, func() {
	var ns, workDir string
	var webPort int

	BeforeAll(func(ctx SpecContext) {
		k := suite.v133
		ns = newNamespace(ctx, k)
		node := localNode(ctx, k)
		helper := runtimetest.BuildHelper(GinkgoT())
		workDir = GinkgoT().TempDir()
		webPort = freePort()
		manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: shell, namespace: %[1]s}
spec:
  nodeName: %[2]s
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "trap 'exit 0' TERM; while true; do echo tick; sleep 0.2; done"]
    env: [{name: GREETING, value: hello-from-pod}]
    workingDir: %[3]s
  - name: web
    image: helper
    command: [%[4]s, serve, "127.0.0.1:%[5]d", sleep, forever]
---
apiVersion: v1
kind: Pod
metadata: {name: reader-spdy, namespace: %[1]s}
spec:
  nodeName: %[2]s
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, stdin: true, stdinOnce: true, command: [sh, -c, "while read l; do echo got $l; done; echo bye"]}
---
apiVersion: v1
kind: Pod
metadata: {name: reader-websocket, namespace: %[1]s}
spec:
  nodeName: %[2]s
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, stdin: true, stdinOnce: true, command: [sh, -c, "while read l; do echo got $l; done; echo bye"]}
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: %[1]s}
spec:
  nodeName: %[2]s
  restartPolicy: Never
  containers:
  - {name: main, image: busybox, command: [sh, -c, "exit 0"]}
`, ns, node, workDir, helper, webPort)
		k.ok(ctx, "apply", "-f", writeFile("pods.yaml", manifest))
		DeferCleanup(func(ctx context.Context) {
			k.run(ctx, "delete", "pods", "--all", "-n", ns, "--wait=false")
		})
		for pod, cond := range map[string]string{"shell": "condition=Ready", "done": "jsonpath={.status.phase}=Succeeded",
			"reader-spdy": "condition=Ready", "reader-websocket": "condition=Ready"} {
			if r := k.run(ctx, "wait", "-n", ns, "--for="+cond, "pod/"+pod, "--timeout=25s"); r.code != 0 {
				Fail(fmt.Sprintf("pod %s: %s\n%s\n%s", pod, r, k.run(ctx, "get", "-n", ns, "pod", pod, "-o", "yaml").stdout,
					k.run(ctx, "get", "events", "-n", ns).stdout))
			}
		}
	})

	for _, v := range []struct {
		name string
		k    func() *kubectl
		log  string // what kubectl -v=4 logs about the protocol
		pod  string // its stdin: true, stdinOnce: true pod
	}{
		{"1.27 (SPDY)", func() *kubectl { return suite.v127 }, "", "reader-spdy"},
		{"1.33 (WebSocket)", func() *kubectl { return suite.v133 }, "The subprotocol is v5.channel.k8s.io", "reader-websocket"},
	} {
		It("runs commands with the container's env and working dir, stdin and the exit code with kubectl "+v.name, func(ctx SpecContext) {
			k := v.k()
			out := k.ok(ctx, "exec", "-n", ns, "shell", "-c", "main", "--", "sh", "-c", "echo $GREETING; pwd")
			Expect(out).To(Equal("hello-from-pod\n" + workDir + "\n"))

			r := k.runEnv(ctx, nil, "line one\nline two\n", "-v=4", "exec", "-i", "-n", ns, "shell", "-c", "main", "--", "cat")
			Expect(r.code).To(BeZero(), "%s", r)
			Expect(r.stdout).To(Equal("line one\nline two\n"))
			Expect(strings.ToLower(r.stderr)).NotTo(ContainSubstring("fallback"), "the WebSocket upgrade failed")
			Expect(r.stderr).To(ContainSubstring(v.log))

			r = k.run(ctx, "exec", "-n", ns, "shell", "-c", "main", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
			Expect(r.code).To(Equal(3), "%s", r)
			Expect(r.stdout).To(Equal("out\n"))
			Expect(r.stderr).To(ContainSubstring("err\n"))
		})

		It("gives exec -it a real terminal that follows resizes with kubectl "+v.name, func(ctx SpecContext) {
			k := v.k()
			// The node starts the command once the client's first size came, or
			// after cri.InitialSizeWait without it (as the kubelet, which never
			// waits); a size that comes later resizes the terminal. Under CI load
			// the first size was seen to come later than that wait, so the
			// command waits (up to 10 s) for its terminal to get a size before
			// it prints it: the size must be the client's either way.
			script := `tty; i=0; while [ "$(stty size)" = "0 0" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; stty size; exit 4`
			line := fmt.Sprintf("stty cols 97 rows 31; %s exec -it -n %s shell -c main -- sh -c '%s'", k.bin, ns, script)
			cmd := k.command(ctx, nil)
			cmd.Path, cmd.Args = mustLook("script"), []string{"script", "-qec", line, "/dev/null"}
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			var exitErr *exec.ExitError
			Expect(errors.As(err, &exitErr)).To(BeTrue(), "script: %v\n%s", err, out)
			Expect(exitErr.ExitCode()).To(Equal(4), "%s", out)
			Expect(string(out)).To(MatchRegexp(`/dev/pts/\d+`))
			Expect(string(out)).To(ContainSubstring("31 97"))
		})

		It("ends the command when kubectl "+v.name+" goes away", func(ctx SpecContext) {
			arg := fmt.Sprintf("301.%d", time.Now().UnixNano()%1e6) // marks the process
			b := v.k().start(ctx, "exec", "-n", ns, "shell", "-c", "main", "--", "sleep", arg)
			Eventually(func() int { return processesWith(arg) }).WithTimeout(10*time.Second).Should(Equal(1), "the exec did not start")
			Expect(b.cmd.Process.Kill()).To(Succeed())
			Eventually(func() int { return processesWith(arg) }).WithTimeout(10*time.Second).Should(BeZero(), "the exec outlived its client")
		})

		It("passes stdin to a stdin: true container with kubectl attach -i "+v.name, func(ctx SpecContext) {
			r := v.k().runEnv(ctx, nil, "hello\nworld\n", "attach", "-i", "-n", ns, v.pod, "-c", "main")
			Expect(r.code).To(BeZero(), "%s", r)
			Expect(r.stdout).To(Equal("got hello\ngot world\nbye\n"), "%s", r) // stdinOnce: the end of input ends the loop
		})

		It("streams the container's output to kubectl attach "+v.name, func(ctx SpecContext) {
			b := v.k().start(ctx, "attach", "-n", ns, "shell", "-c", "main")
			Eventually(b.stdout.String).WithTimeout(10 * time.Second).Should(ContainSubstring("tick\ntick\n"))
			Expect(b.exited()).To(BeFalse(), "attach ended: %s", b.stderr.String())
		})
	}

	It("forwards ports with two kubectl port-forwards at once (SPDY and WebSocket)", func(ctx SpecContext) {
		old := suite.v127.start(ctx, "port-forward", "-n", ns, "pod/shell", fmt.Sprintf(":%d", webPort))
		cur := suite.v133.start(ctx, "-v=4", "port-forward", "-n", ns, "pod/shell", fmt.Sprintf(":%d", webPort))
		for _, b := range []*background{old, cur} {
			local := forwardedPort(b)
			for range 3 {
				Expect(httpGet(ctx, local)).To(HavePrefix("ok "))
			}
		}
		Expect(strings.ToLower(cur.stderr.String())).NotTo(ContainSubstring("fallback"), "the WebSocket upgrade failed")
		Expect(cur.stderr.String()).To(ContainSubstring("negotiated protocol: portforward.k8s.io"), "SPDY tunnelled in a WebSocket")
	})

	It("reports a port nobody listens on", func(ctx SpecContext) {
		closed := freePort()
		for _, k := range []*kubectl{suite.v127, suite.v133} {
			b := k.start(ctx, "port-forward", "-n", ns, "pod/shell", fmt.Sprintf(":%d", closed))
			local := forwardedPort(b)
			_, err := httpGet(ctx, local)
			Expect(err).To(HaveOccurred())
			Eventually(b.stderr.String).WithTimeout(5 * time.Second).Should(ContainSubstring("error forwarding port"))
		}
	})

	It("copies a 10 MB file both ways with kubectl cp", func(ctx SpecContext) {
		data := make([]byte, 10<<20)
		_, _ = rand.Read(data)
		src := filepath.Join(GinkgoT().TempDir(), "blob")
		Expect(os.WriteFile(src, data, 0o600)).To(Succeed())
		want := sha256.Sum256(data)
		for i, pair := range [][2]*kubectl{{suite.v127, suite.v133}, {suite.v133, suite.v127}} {
			inPod := filepath.Join(workDir, fmt.Sprintf("blob-%d", i))
			pair[0].ok(ctx, "cp", "-n", ns, "-c", "main", src, "shell:"+inPod)
			back := filepath.Join(GinkgoT().TempDir(), "back")
			pair[1].ok(ctx, "cp", "-n", ns, "-c", "main", "shell:"+inPod, back)
			got, err := os.ReadFile(back)
			Expect(err).NotTo(HaveOccurred())
			Expect(sha256.Sum256(got)).To(Equal(want), "checksum after %s up, %s down", pair[0].bin, pair[1].bin)
		}
	})

	It("answers bad requests with a clear error", func(ctx SpecContext) {
		for _, k := range []*kubectl{suite.v127, suite.v133} {
			r := k.run(ctx, "exec", "-n", ns, "shell", "-c", "nope", "--", "true")
			Expect(r.code).NotTo(BeZero())
			Expect(r.stderr).To(ContainSubstring("container nope is not valid for pod shell"))

			r = k.run(ctx, "exec", "-n", ns, "done", "--", "true")
			Expect(r.code).NotTo(BeZero())
			Expect(r.stderr).To(ContainSubstring("completed pod"))

			r = k.run(ctx, "exec", "-n", ns, "shell", "-c", "main", "--", "no-such-command-here")
			Expect(r.code).NotTo(BeZero())
			Expect(r.stderr).To(ContainSubstring("no-such-command-here"))
		}
	})
})

// processesWith counts the host processes whose command line holds arg
// (process-runtime containers are host processes).
func processesWith(arg string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), "sleep\x00") && strings.Contains(string(b), "\x00"+arg) {
			n++
		}
	}
	return n
}

var forwardingFrom = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) ->`)

// forwardedPort waits for kubectl port-forward to listen and returns its port.
func forwardedPort(b *background) string {
	GinkgoHelper()
	var port string
	Eventually(func() string {
		if m := forwardingFrom.FindStringSubmatch(b.stdout.String()); m != nil {
			port = m[1]
		}
		return port
	}).WithTimeout(10*time.Second).ShouldNot(BeEmpty(), "port-forward did not start: %s", b.stderr.String())
	return port
}

func httpGet(ctx context.Context, port string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/", nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func freePort() int {
	GinkgoHelper()
	port, err := e2etool.FreePort()
	Expect(err).NotTo(HaveOccurred())
	return port
}

func mustLook(name string) string {
	GinkgoHelper()
	p, err := exec.LookPath(name)
	Expect(err).NotTo(HaveOccurred(), "%s is required (util-linux)", name)
	return p
}
