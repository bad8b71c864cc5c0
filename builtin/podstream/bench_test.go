package podstream_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/moby/spdystream"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// BenchmarkStreams measures the streaming subresources end to end (client →
// API server → node agent → target) on loopback:
//
//   - direct-tcp: reading from a TCP server directly (the reference);
//   - portforward-spdy, portforward-websocket: the same reads through
//     pods/portforward (SPDY, and SPDY tunnelled in a WebSocket as kubectl
//     1.30+ does), one forwarded connection per op;
//   - exec-20-concurrent: 20 WebSocket (v5) exec sessions at once, each
//     reading 1 MiB that `head` writes in the pod; max-session-ms is the
//     slowest session of an op.
//
// go test ./builtin/podstream/ -run '^$' -bench Streams -benchtime 20x
func BenchmarkStreams(b *testing.B) {
	ctx := b.Context()
	env, err := testenv.Start(ctx, testenv.Options{LocalNode: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	pod := startPod(b, env)
	const size = 256 << 20 // bytes read per op
	target := sourceServer(b, size)
	port := target.Addr().(*net.TCPAddr).Port

	b.Run("direct-tcp", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			c, err := net.Dial("tcp", target.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			readAll(b, c, size)
			c.Close()
		}
	})
	for _, tunnel := range []bool{false, true} {
		name := map[bool]string{false: "portforward-spdy", true: "portforward-websocket"}[tunnel]
		b.Run(name, func(b *testing.B) {
			conn, closeConn := portForward(b, env.URL, pod, tunnel)
			defer closeConn()
			b.SetBytes(size)
			id := 0
			for b.Loop() {
				id++
				h := http.Header{}
				h.Set("port", fmt.Sprint(port))
				h.Set("requestID", fmt.Sprint(id))
				h.Set("streamType", "error")
				errS, err := conn.CreateStream(h, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				h = h.Clone()
				h.Set("streamType", "data")
				data, err := conn.CreateStream(h, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				_ = data.Close()
				readAll(b, data, size)
				_ = data.Reset()
				_ = errS.Reset()
			}
		})
	}
	b.Run("exec-20-concurrent", func(b *testing.B) {
		u := strings.Replace(env.URL, "http", "ws", 1) + "/api/v1/namespaces/default/pods/" + pod + "/exec?" + url.Values{
			"command": {"head", "-c", "1048576", "/dev/zero"}, "stdout": {"true"}}.Encode()
		var worst time.Duration
		b.SetBytes(20 << 20)
		for b.Loop() {
			var wg sync.WaitGroup
			var mu sync.Mutex
			for range 20 {
				wg.Go(func() {
					t0 := time.Now()
					if n := wsExec(b, u); n != 1<<20 {
						b.Errorf("exec read %d bytes", n)
					}
					d := time.Since(t0)
					mu.Lock()
					worst = max(worst, d)
					mu.Unlock()
				})
			}
			wg.Wait()
		}
		b.ReportMetric(float64(worst.Milliseconds()), "max-session-ms")
	})
}

// startPod runs a pod that only sleeps (exec target; port-forward dials the
// node's loopback, where the benchmark's own server listens).
func startPod(b *testing.B, env *testenv.Environment) string {
	b.Helper()
	sch, err := all.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		b.Fatal(err)
	}
	nodes := &corev1.NodeList{}
	deadline := time.Now().Add(20 * time.Second)
	for len(nodes.Items) == 0 && time.Now().Before(deadline) {
		_ = c.List(b.Context(), nodes)
		time.Sleep(50 * time.Millisecond)
	}
	if len(nodes.Items) == 0 {
		b.Fatal("no node registered")
	}
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = "bench", "default"
	pod.Spec.NodeName = nodes.Items[0].Name
	pod.Spec.TerminationGracePeriodSeconds = api.Ptr[int64](0)
	pod.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "3600"}}}
	if err := c.Create(b.Context(), pod); err != nil {
		b.Fatal(err)
	}
	for time.Now().Before(deadline) {
		p := &corev1.Pod{}
		if err := c.Get(b.Context(), client.ObjectKeyFromObject(pod), p); err == nil && p.Status.Phase == corev1.PodRunning {
			return pod.Name
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("the pod did not start")
	return ""
}

// sourceServer writes size bytes to every connection.
func sourceServer(b *testing.B, size int) net.Listener {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	chunk := make([]byte, 256<<10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for left := size; left > 0; left -= len(chunk) {
					if _, err := c.Write(chunk[:min(left, len(chunk))]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln
}

func readAll(b *testing.B, r io.Reader, want int) {
	n, err := io.CopyBuffer(io.Discard, r, make([]byte, 256<<10))
	if err != nil || n != int64(want) {
		b.Fatalf("read %d bytes (%v), want %d", n, err, want)
	}
}

// portForward opens a pods/portforward connection: SPDY, or SPDY in a
// WebSocket.
func portForward(b *testing.B, base, pod string, tunnel bool) (*spdystream.Connection, func()) {
	b.Helper()
	path := "/api/v1/namespaces/default/pods/" + pod + "/portforward"
	var nc net.Conn
	if tunnel {
		ws, _, err := websocket.Dial(b.Context(), strings.Replace(base, "http", "ws", 1)+path,
			&websocket.DialOptions{Subprotocols: []string{"SPDY/3.1+portforward.k8s.io"}})
		if err != nil {
			b.Fatal(err)
		}
		ws.SetReadLimit(-1)
		nc = websocket.NetConn(context.WithoutCancel(b.Context()), ws, websocket.MessageBinary)
	} else {
		u, _ := url.Parse(base)
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, base+path, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "SPDY/3.1")
		req.Header.Set("X-Stream-Protocol-Version", "portforward.k8s.io")
		if err := req.Write(c); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), req)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			b.Fatalf("upgrade: %v %v", resp, err)
		}
		nc = c
	}
	conn, err := spdystream.NewConnection(nc, false)
	if err != nil {
		b.Fatal(err)
	}
	go conn.Serve(spdystream.NoOpStreamHandler)
	return conn, func() {
		_ = conn.Close()
		_ = conn.Wait(time.Second)
		nc.Close()
	}
}

// wsExec runs one v5 exec session and returns how many stdout bytes it got.
func wsExec(b *testing.B, u string) int {
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"v5.channel.k8s.io"}})
	if err != nil {
		b.Error(err)
		return 0
	}
	defer c.CloseNow()
	c.SetReadLimit(-1)
	n := 0
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return n
		}
		if len(msg) > 0 && msg[0] == 1 {
			n += len(msg) - 1
		}
	}
}
