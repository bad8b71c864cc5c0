package metricsapi_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	metricsv1beta1 "github.com/converge-dev/converge/builtin/api/metrics/v1beta1"
	"github.com/converge-dev/converge/builtin/metricsapi"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/simulated"
	"github.com/converge-dev/converge/builtin/node/stats"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// agent serves /stats/summary from a real Sampler over a simulated runtime
// running pods web-0 (2 containers) and web-1 of namespace ns.
func agent(t *testing.T) (host string, port int) {
	t.Helper()
	ctx := t.Context()
	rt := simulated.New(simulated.Options{Usage: func(spec cri.ContainerSpec) simulated.Usage {
		if spec.Name == "side" {
			return simulated.Usage{CPUMilli: 50, MemoryBytes: 8 << 20}
		}
		return simulated.Usage{CPUMilli: 200, MemoryBytes: 64 << 20}
	}})
	var pods []stats.Pod
	for _, p := range []struct {
		name string
		ctrs []string
	}{{"web-0", []string{"main", "side"}}, {"web-1", []string{"main"}}} {
		sp := stats.Pod{Namespace: "ns", Name: p.name, UID: "uid-" + p.name}
		for _, name := range p.ctrs {
			id, err := rt.Start(ctx, cri.ContainerSpec{PodNamespace: "ns", PodName: p.name, Name: name, LogPath: filepath.Join(t.TempDir(), "log")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rt.Stop(context.WithoutCancel(ctx), id, 0) })
			sp.Containers = append(sp.Containers, stats.Container{Name: name, ID: id})
		}
		pods = append(pods, sp)
	}
	s, err := stats.New(stats.Options{NodeName: "n1", Runtime: rt, Pods: func() []stats.Pod { return pods }})
	if err != nil {
		t.Fatal(err)
	}
	s.Sample(ctx)
	time.Sleep(100 * time.Millisecond)
	s.Sample(ctx)
	mux := http.NewServeMux()
	s.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	h, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ = strconv.Atoi(p)
	return h, port
}

func TestServe(t *testing.T) {
	t.Parallel()
	host, port := agent(t)
	node := corev1.Node{ObjectMeta: api.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}}}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: host}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	pod := func(name string, phase corev1.PodPhase, labels map[string]string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-" + name, Labels: labels}}
		p.Spec.NodeName, p.Status.Phase = "n1", phase
		return p
	}
	down := corev1.Node{ObjectMeta: api.ObjectMeta{Name: "n2"}} // its agent does not answer
	down.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	down.Status.DaemonEndpoints.KubeletEndpoint.Port = 1
	objects := map[string][]any{
		"nodes": {node, down},
		"pods": {pod("web-0", corev1.PodRunning, map[string]string{"app": "web", "i": "0"}), pod("web-1", corev1.PodRunning, map[string]string{"app": "web"}),
			pod("done", corev1.PodSucceeded, map[string]string{"app": "web"})},
	}
	m := metricsapi.New(metricsapi.Options{})
	m.Attach(func(_ context.Context, gvr api.GroupVersionResource, ns string) ([][]byte, int64, error) {
		var out [][]byte
		for _, o := range objects[gvr.Resource] {
			b, _ := json.Marshal(o)
			out = append(out, b)
		}
		return out, 1, nil
	})
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := filters.WithRequestInfoFilter(m.Wrap(next))
	do := func(path string) (int, []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.Bytes()
	}

	code, body := do("/apis/metrics.k8s.io/v1beta1/nodes")
	var nodes metricsv1beta1.NodeMetricsList
	if err := json.Unmarshal(body, &nodes); code != 200 || err != nil || len(nodes.Items) != 1 || nodes.Items[0].Name != "n1" || nodes.Items[0].Usage["cpu"].S == "" {
		t.Fatalf("list nodes = %d %s", code, body)
	}
	if code, body = do("/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Db"); code != 200 || string(body) == "" {
		t.Fatalf("selected nodes = %d %s", code, body)
	}
	_ = json.Unmarshal(body, &nodes)
	if len(nodes.Items) != 0 {
		t.Errorf("zone=b selected %d nodes", len(nodes.Items))
	}

	code, body = do("/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods?labelSelector=app%3Dweb")
	var pods metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(body, &pods); code != 200 || err != nil || len(pods.Items) != 2 {
		t.Fatalf("list pods = %d %s", code, body)
	}
	for _, p := range pods.Items {
		if p.Name == "web-0" {
			if len(p.Containers) != 2 || p.Window.Duration <= 0 {
				t.Errorf("web-0 = %+v", p)
			}
			cpu, _ := p.Containers[0].Usage["cpu"].MilliValue()
			mem, _ := p.Containers[0].Usage["memory"].Value()
			if cpu < 150 || cpu > 250 || mem != 64<<20 {
				t.Errorf("web-0 main usage = %dm, %d bytes; want about 200m, 64Mi", cpu, mem)
			}
		}
	}
	if code, body = do("/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/web-1"); code != 200 {
		t.Errorf("get web-1 = %d %s", code, body)
	}
	for path, want := range map[string]int{
		"/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/done":        http.StatusNotFound, // not running
		"/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/missing":     http.StatusNotFound,
		"/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods?watch=true":  http.StatusMethodNotAllowed,
		"/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=a%3D%3D%3D": http.StatusBadRequest,
		"/api/v1/namespaces/ns/pods":                                  http.StatusTeapot, // not ours
	} {
		if code, body := do(path); code != want {
			t.Errorf("GET %s = %d %s, want %d", path, code, body, want)
		}
	}
}
