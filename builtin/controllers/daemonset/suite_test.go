package daemonset_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestDaemonSet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "daemonset controller")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "ds", testenv.Options{Controllers: []string{"daemonset"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })

// namespace creates a fresh namespace; the returned name also prefixes the
// spec's node names, apart from other specs' (nodes are cluster-wide).
func namespace(ctx context.Context) string { return env.Namespace(ctx) }

func createNode(ctx context.Context, name string, lbls map[string]string, taints ...corev1.Taint) *corev1.Node {
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: lbls}, Spec: corev1.NodeSpec{Taints: taints}}
	Expect(c.Create(ctx, n)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(c.Delete(ctx, n))).To(Succeed()) })
	return n
}

func newDaemonSet(ns, name string, mutate func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:1"}}},
			},
		},
	}
	if mutate != nil {
		mutate(ds)
	}
	return ds
}

func getDS(ctx context.Context, ds *appsv1.DaemonSet) *appsv1.DaemonSet {
	out := &appsv1.DaemonSet{}
	Expect(c.Get(ctx, client.ObjectKeyFromObject(ds), out)).To(Succeed())
	return out
}

// pods lists the DaemonSet's pods that are not being deleted.
func pods(ctx context.Context, ds *appsv1.DaemonSet) []corev1.Pod {
	l := &corev1.PodList{}
	Expect(c.List(ctx, l, client.InNamespace(ds.Namespace), client.MatchingLabels{"app": ds.Name})).To(Succeed())
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// podNodes maps each pod to the node its affinity pins it to.
func podNodes(ctx context.Context, ds *appsv1.DaemonSet) []string {
	var out []string
	for _, p := range pods(ctx, ds) {
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		out = append(out, terms[0].MatchFields[0].Values[0])
	}
	return out
}

// runAndReady simulates the node agent: every pod is reported running and
// ready. (It does not bind them through pods/binding: until a pod is bound the
// controller reads its target node from the node affinity it wrote, and
// binding is the scheduler's job, tested with it.)
func runAndReady(ctx context.Context, ds *appsv1.DaemonSet) {
	for _, p := range pods(ctx, ds) {
		if p.Status.Phase != corev1.PodRunning {
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: api.Now()}}
			Expect(c.Status().Update(ctx, &p)).To(Succeed())
		}
	}
}

func events(ctx context.Context, obj api.Object) []string { return env.Events(ctx, obj) }
