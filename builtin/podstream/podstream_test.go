package podstream_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// TestChecks: the API server answers requests it cannot serve with a Status
// before any upgrade: a pod on a simulated node, an unscheduled pod, a
// missing command or stream, an unknown container, an unknown pod, a wrong
// method; and discovery lists the subresources as Kubernetes does.
func TestChecks(t *testing.T) {
	env, err := testenv.Start(t.Context(), testenv.Options{SimulatedNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	nodes := &corev1.NodeList{}
	for deadline := time.Now().Add(20 * time.Second); len(nodes.Items) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_ = c.List(t.Context(), nodes)
	}
	if len(nodes.Items) == 0 {
		t.Fatal("no simulated node")
	}
	for name, node := range map[string]string{"simulated": nodes.Items[0].Name, "unscheduled": ""} {
		p := &corev1.Pod{}
		p.Name, p.Namespace, p.Spec.NodeName = name, "default", node
		p.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox"}}
		if err := c.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	base := env.URL + "/api/v1/namespaces/default/pods/"
	for _, tt := range []struct {
		name, method, path string
		code               int
		message            string
	}{
		{"simulated node", "POST", "simulated/exec?command=true&stdout=1", 400, "runs on node " + nodes.Items[0].Name + ", whose agent serves no streams"},
		{"simulated node port-forward", "GET", "simulated/portforward?ports=80", 400, "whose agent serves no streams"},
		{"unscheduled", "POST", "unscheduled/attach?stdout=true", 400, "pod unscheduled does not have a host assigned"},
		{"no command", "POST", "simulated/exec?stdout=1", 400, "you must specify at least one command for the container"},
		{"no stream", "GET", "simulated/attach", 400, "you must specify at least 1 of stdin, stdout, stderr"},
		{"unknown container", "POST", "simulated/exec?command=true&stdout=1&container=nope", 400, "container nope is not valid for pod simulated"},
		{"unknown pod", "POST", "nope/exec?command=true&stdout=1", 404, `pods "nope" not found`},
		{"method", "PUT", "simulated/exec?command=true&stdout=1", 405, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, base+tt.path, nil)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "SPDY/3.1")
			req.Header.Set("X-Stream-Protocol-Version", "v4.channel.k8s.io")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var st struct {
				Kind, Message string
			}
			_ = json.Unmarshal(b, &st)
			if resp.StatusCode != tt.code || st.Kind != "Status" || !strings.Contains(st.Message, tt.message) {
				t.Errorf("%s %s = %d %s, want %d with %q", tt.method, tt.path, resp.StatusCode, b, tt.code, tt.message)
			}
		})
	}

	resp, err := http.Get(env.URL + "/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Resources []struct {
			Name, Kind string
			Verbs      []string
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	want := map[string]string{"pods/exec": "PodExecOptions", "pods/attach": "PodAttachOptions", "pods/portforward": "PodPortForwardOptions"}
	for _, r := range list.Resources {
		if kind, ok := want[r.Name]; ok {
			if r.Kind != kind || strings.Join(r.Verbs, ",") != "create,get" {
				t.Errorf("discovery of %s: kind %s verbs %v", r.Name, r.Kind, r.Verbs)
			}
			delete(want, r.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("discovery lacks %v", want)
	}
}
