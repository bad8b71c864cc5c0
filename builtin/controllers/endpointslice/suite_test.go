package endpointslice_test

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestEndpointSlice(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "endpointslice controller")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "eps", testenv.Options{Controllers: []string{"endpointslice"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

// service creates a Service selecting app=<app> with a numbered port (http:
// 80→8080) and a named one (metrics: 9000→"metrics").
func service(ctx context.Context, ns, name, app string, mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": app},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: api.FromInt(8080)},
				{Name: "metrics", Port: 9000, TargetPort: api.FromString("metrics")},
			},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	Expect(c.Create(ctx, svc)).To(Succeed())
	return svc
}

// pod creates a pod labelled app=<app> on node, with a container port named
// "metrics" (9100) unless noMetrics, then posts its status (Running, podIP,
// Ready=ready) through the status subresource.
func pod(ctx context.Context, ns, name, app, node, ip string, ready, noMetrics bool) *corev1.Pod {
	ctr := corev1.Container{Name: "c", Image: "busybox"}
	if !noMetrics {
		ctr.Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100}}
	}
	p := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{ctr}},
	}
	Expect(c.Create(ctx, p)).To(Succeed())
	setPodStatus(ctx, p, ip, ready)
	return p
}

func setPodStatus(ctx context.Context, p *corev1.Pod, ip string, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{
		"phase": "Running", "podIP": ip, "podIPs": []any{map[string]any{"ip": ip}},
		"conditions": []any{map[string]any{"type": "Ready", "status": status}},
	}})
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Status().Patch(ctx, p, client.RawPatch(client.MergePatchType, body))).To(Succeed())
}

// slicesOf lists the EndpointSlices of service svc.
func slicesOf(ctx context.Context, ns, svc string) []discoveryv1.EndpointSlice {
	var l discoveryv1.EndpointSliceList
	Expect(c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: svc})).To(Succeed())
	return l.Items
}

// endpointCount counts the endpoints over the slices of svc.
func endpointCount(ctx context.Context, ns, svc string) int {
	n := 0
	for _, s := range slicesOf(ctx, ns, svc) {
		n += len(s.Endpoints)
	}
	return n
}
