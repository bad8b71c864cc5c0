package podlog

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestParseOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query   string
		want    string
		wantErr string
	}{
		{query: "", want: ""},
		{query: "container=c&follow=true&tailLines=10&timestamps=1&previous=false&insecureSkipTLSVerifyBackend=true",
			want: "container=c&follow=true&tailLines=10&timestamps=true"},
		{query: "sinceSeconds=5&limitBytes=100", want: "limitBytes=100&sinceSeconds=5"},
		{query: "sinceTime=2024-05-01T10:00:00%2B02:00", want: "sinceTime=2024-05-01T08%3A00%3A00Z"},
		{query: "follow=maybe", wantErr: `invalid value "maybe" for follow: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{query: "tailLines=x", wantErr: `invalid value "x" for tailLines: strconv.ParseInt: parsing "x": invalid syntax`},
		{query: "tailLines=-1", wantErr: `PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`},
		{query: "limitBytes=0", wantErr: `PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0`},
		{query: "sinceSeconds=5&sinceTime=2024-05-01T10:00:00Z",
			wantErr: "PodLogOptions \"p\" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseOptions(q, "p")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Encode()); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPickContainer(t *testing.T) {
	t.Parallel()
	pod := func(ctrs []string, inits ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "p"}}
		for _, c := range ctrs {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		for _, c := range inits {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: c})
		}
		return p
	}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		container string
		want      string
		wantErr   string
	}{
		{name: "only container", pod: pod([]string{"a"}), want: "a"},
		{name: "named", pod: pod([]string{"a", "b"}), container: "b", want: "b"},
		{name: "init container", pod: pod([]string{"a", "b"}, "setup"), container: "setup", want: "setup"},
		{name: "several", pod: pod([]string{"a", "b"}), wantErr: "a container name must be specified for pod p, choose one of: [a b]"},
		{name: "several with init", pod: pod([]string{"a", "b"}, "setup"),
			wantErr: "a container name must be specified for pod p, choose one of: [a b] or one of the init containers: [setup]"},
		{name: "unknown", pod: pod([]string{"a"}), container: "z", wantErr: "container z is not valid for pod p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := PickContainer(tt.pod, tt.container)
			if got != tt.want || errString(err) != tt.wantErr {
				t.Errorf("PickContainer = %q, %v; want %q, %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNodeAddress(t *testing.T) {
	t.Parallel()
	node := func(port int32, addrs ...corev1.NodeAddress) *corev1.Node {
		n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: "n1"}}
		n.Status.Addresses = addrs
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
		return n
	}
	tests := []struct {
		name     string
		node     *corev1.Node
		wantHost string
		wantErr  string
	}{
		{name: "internal IP first", node: node(10250,
			corev1.NodeAddress{Type: corev1.NodeHostName, Address: "n1"}, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}),
			wantHost: "127.0.0.1"},
		{name: "hostname otherwise", node: node(10250, corev1.NodeAddress{Type: corev1.NodeHostName, Address: "n1"}), wantHost: "n1"},
		{name: "no port", node: node(0, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}),
			wantErr: "node n1 reports no kubelet endpoint port"},
		{name: "no address", node: node(10250), wantErr: "node n1 reports no address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			host, port, err := NodeAddress(tt.node)
			if errString(err) != tt.wantErr || host != tt.wantHost || (err == nil && port != 10250) {
				t.Errorf("NodeAddress = %q, %d, %v; want %q, %q", host, port, err, tt.wantHost, tt.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
