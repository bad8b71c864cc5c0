package replicaset_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestReplicaSet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "replicaset controller")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "rs", testenv.Options{Controllers: []string{"replicaset", "replicationcontroller"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

func newRS(ns, name string, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: api.Ptr(replicas),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name, "tier": "web"}, Annotations: map[string]string{"a": "b"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

// pods lists the active pods of ns with label app=name.
func pods(ctx context.Context, ns, app string) []corev1.Pod { return env.Pods(ctx, ns, app) }

// setPodState simulates a node agent (controllertest.Env.SetPodState).
func setPodState(ctx context.Context, p *corev1.Pod, node string, phase corev1.PodPhase, ready bool, readyAt time.Time) {
	GinkgoHelper()
	env.SetPodState(ctx, p, node, phase, ready, readyAt)
}

func markReady(ctx context.Context, p *corev1.Pod) {
	GinkgoHelper()
	env.MarkReady(ctx, p)
}

func getRS(ctx context.Context, ns, name string) *appsv1.ReplicaSet {
	GinkgoHelper()
	rs := &appsv1.ReplicaSet{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rs)).To(Succeed())
	return rs
}

func scale(ctx context.Context, ns, name string, n int32) {
	GinkgoHelper()
	rs := &appsv1.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns}}
	Expect(c.Patch(ctx, rs, client.RawPatch(client.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))))).To(Succeed())
}

func eventReasons(ctx context.Context, ns, name string) []string {
	return env.EventReasons(ctx, ns, "ReplicaSet", name)
}
