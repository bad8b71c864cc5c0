package kubectl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// kubectl debug (ephemeral containers, --copy-to) and kubectl attach -it to
// a container on a terminal, with real kubectl 1.27 (SPDY) and 1.33
// (WebSocket), each under a real pty (script).
var _ = Describe("kubectl debug and attach -it", Ordered, func() {
	var ns, node string

	BeforeAll(func(ctx SpecContext) {
		k := suite.v133
		ns = newNamespace(ctx, k)
		node = localNode(ctx, k)
		manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: app, namespace: %[1]s, labels: {app: dbg}}
spec:
  nodeName: %[2]s
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
---
apiVersion: v1
kind: Pod
metadata: {name: term, namespace: %[1]s}
spec:
  nodeName: %[2]s
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    stdin: true
    tty: true
    command: [sh, -c, "while read l; do echo got $l; stty size; done"]
`, ns, node)
		k.ok(ctx, "apply", "-f", writeFile("debug-pods.yaml", manifest))
		DeferCleanup(func(ctx context.Context) {
			k.run(ctx, "delete", "pods", "--all", "-n", ns, "--wait=false")
		})
		for _, pod := range []string{"app", "term"} {
			if r := k.run(ctx, "wait", "-n", ns, "--for=condition=Ready", "pod/"+pod, "--timeout=25s"); r.code != 0 {
				Fail(fmt.Sprintf("pod %s: %s\n%s", pod, r, k.run(ctx, "get", "-n", ns, "pod", pod, "-o", "yaml").stdout))
			}
		}
	})

	for _, v := range []struct {
		name string
		k    func() *kubectl
	}{
		{"1.27 (SPDY)", func() *kubectl { return suite.v127 }},
		{"1.33 (WebSocket)", func() *kubectl { return suite.v133 }},
	} {
		It("runs kubectl debug -it --target in the target's PID namespace on a terminal with kubectl "+v.name, func(ctx SpecContext) {
			k := v.k()
			targetNS := strings.TrimSpace(k.ok(ctx, "exec", "-n", ns, "app", "-c", "main", "--", "readlink", "/proc/self/ns/pid"))
			Expect(targetNS).To(HavePrefix("pid:["))
			if os.Geteuid() == 0 { // as root the process runtime gives each container its own PID namespace
				host, err := os.Readlink("/proc/self/ns/pid")
				Expect(err).NotTo(HaveOccurred())
				Expect(targetNS).NotTo(Equal(host))
			}
			name := "dbg" + strings.ReplaceAll(strings.Fields(v.name)[0], ".", "")
			// The shell waits for a line, so nothing it prints is lost
			// before kubectl attached.
			line := fmt.Sprintf("stty cols 97 rows 31; %s debug -it -n %s app --image=busybox --target=main -c %s -- sh -c 'read x; echo in $(readlink /proc/self/ns/pid); tty; stty size; exit 3'",
				k.bin, ns, name)
			s := underScript(ctx, k, line)
			Eventually(func() string {
				_, _ = io.WriteString(s.stdin, "go\r")
				return s.out.String()
			}).WithTimeout(30*time.Second).WithPolling(time.Second).Should(ContainSubstring("31 97"), "%s", s.out)
			Expect(s.out.String()).To(ContainSubstring("in "+targetNS), "the debug container is in the target's PID namespace")
			Expect(s.out.String()).To(MatchRegexp(`/dev/pts/\d+`))
			Eventually(func() string {
				return k.ok(ctx, "get", "pod", "-n", ns, "app", "-o", "jsonpath={.status.ephemeralContainerStatuses[?(@.name==\""+name+"\")].state.terminated.exitCode}")
			}).Should(Equal("3"))
			Expect(k.ok(ctx, "get", "pod", "-n", ns, "app", "-o", "jsonpath={.status.containerStatuses[0].restartCount} {.status.phase}")).To(Equal("0 Running"))
		})

		It("attaches to a tty: true container's terminal, which follows resizes and outlives the session, with kubectl "+v.name, func(ctx SpecContext) {
			k := v.k()
			s := underScript(ctx, k, fmt.Sprintf("stty cols 83 rows 27; %s attach -it -n %s term -c main", k.bin, ns))
			Eventually(func() string {
				_, _ = io.WriteString(s.stdin, "hello\r")
				return s.out.String()
			}).WithTimeout(20*time.Second).WithPolling(time.Second).Should(And(ContainSubstring("got hello"), ContainSubstring("27 83")), "%s", s.out)
			s.stop()
			Consistently(func() string {
				return k.ok(ctx, "get", "pod", "-n", ns, "term", "-o", "jsonpath={.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].state.running.startedAt}")
			}).WithTimeout(time.Second).Should(MatchRegexp(`^0 \S+$`), "the container runs on after the client detached")
		})
	}

	It("copies a pod with an extra debug container with kubectl debug --copy-to", func(ctx SpecContext) {
		for _, k := range []*kubectl{suite.v127, suite.v133} {
			copyName := uniqueName("app-copy")
			k.ok(ctx, "debug", "-n", ns, "app", "--copy-to="+copyName, "--same-node", "--container=dbg", "--image=busybox", "--", "sh", "-c", "echo copied; sleep 600")
			if r := k.run(ctx, "wait", "-n", ns, "--for=condition=Ready", "pod/"+copyName, "--timeout=25s"); r.code != 0 {
				Fail(fmt.Sprintf("pod %s: %s\n%s", copyName, r, k.run(ctx, "get", "-n", ns, "pod", copyName, "-o", "yaml").stdout))
			}
			Expect(k.ok(ctx, "get", "pod", "-n", ns, copyName, "-o", "jsonpath={.spec.containers[*].name}")).To(Equal("main dbg"))
			Expect(k.ok(ctx, "exec", "-n", ns, copyName, "-c", "dbg", "--", "echo", "hi")).To(Equal("hi\n"))
			Eventually(func() string { return k.run(ctx, "logs", "-n", ns, copyName, "-c", "dbg").stdout }).Should(Equal("copied\n"))
			k.ok(ctx, "delete", "pod", "-n", ns, copyName, "--wait=false")
		}
	})

	It("answers an unsupported protocol version and a container that does not run with a Status, never a hang", func(ctx SpecContext) {
		k := suite.v133
		k.ok(ctx, "run", "-n", ns, "broken", "--image=busybox", "--overrides", `{"spec":{"nodeName":"`+node+`"}}`, "--command", "--", "/no/such/binary")
		Eventually(func() string {
			return k.ok(ctx, "get", "pod", "-n", ns, "broken", "-o", "jsonpath={.status.containerStatuses[0].state.waiting.reason}")
		}).Should(Equal("CreateContainerError"))
		r := k.run(ctx, "exec", "-n", ns, "broken", "--", "true")
		Expect(r.code).NotTo(BeZero())
		Expect(r.stderr).To(ContainSubstring("container broken is not running in pod " + ns + "/broken"))

		hc := &http.Client{Timeout: 10 * time.Second}
		base := suite.env.URL + "/api/v1/namespaces/" + ns + "/pods/app/exec?command=true&stdout=1&container=main"
		for _, h := range []map[string]string{
			{"Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v9.channel.k8s.io"},
			{"Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "v9.channel.k8s.io"},
		} {
			method := http.MethodPost
			if h["Upgrade"] == "websocket" {
				method = http.MethodGet
			}
			req, err := http.NewRequestWithContext(ctx, method, base, nil)
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Connection", "Upgrade")
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := hc.Do(req)
			Expect(err).NotTo(HaveOccurred(), "%v", h)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			Expect(resp.StatusCode).To(BeNumerically(">=", 400), "%v: %s", h, b)
			Expect(resp.StatusCode).To(BeNumerically("<", 500), "%v: %s", h, b)
			Expect(string(b)).To(And(ContainSubstring(`"kind":"Status"`), ContainSubstring("v9.channel.k8s.io")), "%v", h)
		}
	})

	It("refuses bad ephemeral containers with kubectl's own errors", func(ctx SpecContext) {
		r := suite.v133.run(ctx, "debug", "-n", ns, "app", "--image=busybox", "--target=nope", "-c", "bad", "--", "true")
		Expect(r.code).NotTo(BeZero())
		Expect(r.stderr).To(ContainSubstring("targetContainerName: Not found"), "%s", r)
	})
})

// localNode is the suite's node with an agent (specs add agentless Nodes).
func localNode(ctx context.Context, k *kubectl) string {
	GinkgoHelper()
	var node string
	items, _ := k.json(ctx, "get", "nodes")["items"].([]any)
	for _, n := range items {
		if port, _ := nested(n, "status", "daemonEndpoints", "kubeletEndpoint", "Port").(float64); port > 0 {
			node, _ = nested(n, "metadata", "name").(string)
		}
	}
	Expect(node).NotTo(BeEmpty(), "the suite runs a local node: %v", items)
	return node
}

// scripted is a command line running under script(1), on a real pty.
type scripted struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *syncBuffer
	done  chan struct{}
}

// underScript starts line in a shell on a new pty (script -qec) with k's
// environment; what is written to stdin is typed into the pty. It is
// stopped when the spec ends.
func underScript(ctx context.Context, k *kubectl, line string) *scripted {
	GinkgoHelper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cmd := k.command(ctx, nil)
	cmd.Path, cmd.Args = mustLook("script"), []string{"script", "-qec", line, "/dev/null"}
	s := &scripted{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	var err error
	s.stdin, err = cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed(), "start %s", line)
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	DeferCleanup(func() { cancel(); s.stop() })
	return s
}

// stop kills script and what runs under it and waits for the end.
func (s *scripted) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	<-s.done
}
