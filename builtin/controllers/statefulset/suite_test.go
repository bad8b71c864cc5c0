package statefulset_test

import (
	"context"
	"slices"
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

func TestStatefulSet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "statefulset controller")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "sts", testenv.Options{Controllers: []string{"statefulset", "garbagecollector"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

func newSet(ns, name string, replicas int32, mutate func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    api.Ptr(replicas),
			ServiceName: name,
			Selector:    &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db:1"}}},
			},
		},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func getSet(ctx context.Context, s *appsv1.StatefulSet) *appsv1.StatefulSet {
	out := &appsv1.StatefulSet{}
	Expect(c.Get(ctx, client.ObjectKeyFromObject(s), out)).To(Succeed())
	return out
}

// podMap returns the set's live pods by name.
func podMap(ctx context.Context, s *appsv1.StatefulSet) map[string]corev1.Pod {
	l := &corev1.PodList{}
	Expect(c.List(ctx, l, client.InNamespace(s.Namespace), client.MatchingLabels{"app": s.Name})).To(Succeed())
	out := map[string]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p
		}
	}
	return out
}

func podNames(ctx context.Context, s *appsv1.StatefulSet) []string {
	var out []string
	for n := range podMap(ctx, s) {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// makeReady simulates the node agent: the pod runs and is ready.
func makeReady(ctx context.Context, s *appsv1.StatefulSet, name string) {
	p := podMap(ctx, s)[name]
	Expect(p.Name).To(Equal(name))
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: api.Now()}}
	Expect(c.Status().Update(ctx, &p)).To(Succeed())
}

func events(ctx context.Context, obj api.Object) []string { return env.Events(ctx, obj) }
