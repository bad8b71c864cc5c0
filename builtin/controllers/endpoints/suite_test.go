package endpoints_test

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestEndpoints(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "endpoints controller")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "ep", testenv.Options{Controllers: []string{"endpoints"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

func pod(ctx context.Context, ns, name, app, ip string, ready, metricsPort bool) *corev1.Pod {
	ctr := corev1.Container{Name: "c", Image: "busybox"}
	if metricsPort {
		ctr.Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100}}
	}
	p := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{ctr}},
	}
	Expect(c.Create(ctx, p)).To(Succeed())
	status := "False"
	if ready {
		status = "True"
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{
		"phase": "Running", "podIP": ip, "conditions": []any{map[string]any{"type": "Ready", "status": status}},
	}})
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Status().Patch(ctx, p, client.RawPatch(client.MergePatchType, body))).To(Succeed())
	return p
}
