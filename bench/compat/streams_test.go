package compat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestClientGoStreams drives client-go's remotecommand executors (SPDY and
// WebSocket) and its port forwarder (SPDY, and SPDY tunnelled in a
// WebSocket) against a pod of the process runtime.
func TestClientGoStreams(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{LocalNode: true})
	cfg := &rest.Config{Host: env.URL}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var node string
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) == 0 {
			return false, nil
		}
		node = nodes.Items[0].Name
		return true, nil
	}); err != nil {
		t.Fatalf("no node: %v", err)
	}
	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "streams"},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "600"}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	}); err != nil {
		t.Fatalf("pod not running: %v", err)
	}

	execURL := func(cmd ...string) *rest.Request {
		return cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(pod.Name).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: "main", Command: cmd, Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	}
	executors := map[string]func(req *rest.Request) (remotecommand.Executor, error){
		"SPDY": func(req *rest.Request) (remotecommand.Executor, error) {
			return remotecommand.NewSPDYExecutor(cfg, http.MethodPost, req.URL())
		},
		"WebSocket": func(req *rest.Request) (remotecommand.Executor, error) {
			return remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, req.URL().String())
		},
	}
	for name, newExec := range executors {
		t.Run("exec over "+name, func(t *testing.T) {
			ex, err := newExec(execURL("sh", "-c", "cat; echo to-stderr >&2; exit 3"))
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("from stdin\n"), Stdout: &stdout, Stderr: &stderr})
			var code utilexec.CodeExitError
			if !errors.As(err, &code) || code.Code != 3 {
				t.Errorf("exit: %v, want exit code 3", err)
			}
			if stdout.String() != "from stdin\n" || stderr.String() != "to-stderr\n" {
				t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}

	// An ephemeral container added with client-go (PUT
	// pods/NAME/ephemeralcontainers, as kubectl debug's fallback does), on a
	// terminal, attached to with each executor: a TTY session sized by the
	// client's TerminalSizeQueue.
	for i, name := range []string{"SPDY", "WebSocket"} {
		t.Run("ephemeral container attach over "+name, func(t *testing.T) {
			dbg := fmt.Sprintf("debugger-%d", i)
			// The update carries the pod's resourceVersion, which the agent's
			// status writes move: retry on a conflict, as kubectl debug does.
			if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{TargetContainerName: "main",
					EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: dbg, Image: "busybox", Stdin: true, TTY: true,
						Command: []string{"sh", "-c", "read l; echo got $l; stty size"}}})
				_, err = cs.CoreV1().Pods("default").UpdateEphemeralContainers(ctx, pod.Name, p, metav1.UpdateOptions{})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
				p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
				for _, s := range p.Status.EphemeralContainerStatuses {
					if s.Name == dbg && s.State.Running != nil {
						return true, nil
					}
				}
				return false, err
			}); err != nil {
				t.Fatalf("ephemeral container not running: %v", err)
			}
			req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(pod.Name).SubResource("attach").
				VersionedParams(&corev1.PodAttachOptions{Container: dbg, Stdin: true, Stdout: true, TTY: true}, scheme.ParameterCodec)
			ex, err := executors[name](req)
			if err != nil {
				t.Fatal(err)
			}
			inR, inW := io.Pipe()
			defer inW.Close()
			go func() {
				for range 50 { // typed until the session reads it
					if _, err := io.WriteString(inW, "hello\r"); err != nil {
						return
					}
					time.Sleep(200 * time.Millisecond)
				}
			}()
			var out bytes.Buffer
			sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			err = ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: &out, Tty: true, TerminalSizeQueue: &oneSize{}})
			if err != nil || !strings.Contains(out.String(), "got hello") || !strings.Contains(out.String(), "33 91") {
				t.Errorf("attach: %v, output %q; want got hello and 33 91", err, out.String())
			}
		})
	}

	// The forwarded port: a server on the node's loopback (pods share its network).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	pfURL := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(pod.Name).SubResource("portforward").URL()
	dialers := map[string]func() (httpstream.Dialer, error){
		"SPDY": func() (httpstream.Dialer, error) {
			tr, up, err := spdy.RoundTripperFor(cfg)
			if err != nil {
				return nil, err
			}
			return spdy.NewDialer(up, &http.Client{Transport: tr}, http.MethodPost, pfURL), nil
		},
		"SPDY over WebSocket": func() (httpstream.Dialer, error) {
			return portforward.NewSPDYOverWebsocketDialer(pfURL, cfg)
		},
	}
	for name, newDialer := range dialers {
		t.Run("port-forward over "+name, func(t *testing.T) {
			d, err := newDialer()
			if err != nil {
				t.Fatal(err)
			}
			stop, ready := make(chan struct{}), make(chan struct{})
			fw, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() { errc <- fw.ForwardPorts() }()
			defer func() { close(stop); <-errc }()
			select {
			case <-ready:
			case err := <-errc:
				t.Fatalf("forward: %v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the forwarder did not get ready")
			}
			ports, err := fw.GetPorts()
			if err != nil || len(ports) != 1 {
				t.Fatalf("ports %v, %v", ports, err)
			}
			for i := range 3 {
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0].Local))
				if err != nil {
					t.Fatal(err)
				}
				msg := fmt.Sprintf("round trip %d", i)
				_, _ = c.Write([]byte(msg))
				_ = c.(*net.TCPConn).CloseWrite()
				got, _ := io.ReadAll(c)
				c.Close()
				if string(got) != msg {
					t.Errorf("echo %d = %q", i, got)
				}
			}
		})
	}
}

// oneSize is a TerminalSizeQueue that reports 91x33, then stops (nil).
type oneSize struct{ sent bool }

func (q *oneSize) Next() *remotecommand.TerminalSize {
	if q.sent {
		return nil
	}
	q.sent = true
	return &remotecommand.TerminalSize{Width: 91, Height: 33}
}
