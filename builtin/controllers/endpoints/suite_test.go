package endpoints_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestEndpoints(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "endpoints controller")
}

var (
	env *testenv.Environment
	c   *client.Client
	nsN atomic.Int32
)

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(25 * time.Millisecond)
	var err error
	env, err = testenv.Start(context.WithoutCancel(ctx), testenv.Options{Controllers: []string{"endpoints"}})
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func namespace(ctx context.Context) string {
	name := fmt.Sprintf("ep-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

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
