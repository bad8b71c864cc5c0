package statefulset_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestStatefulSet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "statefulset controller")
}

var (
	env *testenv.Environment
	c   *client.Client
	nsN atomic.Int32
)

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	var err error
	env, err = testenv.Start(ctx, testenv.Options{Controllers: []string{"statefulset", "garbagecollector"}})
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
	name := fmt.Sprintf("sts-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

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

func events(ctx context.Context, obj api.Object) []string {
	l := &corev1.EventList{}
	Expect(c.List(ctx, l, client.InNamespace(obj.GetNamespace()))).To(Succeed())
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Name == obj.GetName() && e.InvolvedObject.UID == obj.GetUID() {
			out = append(out, e.Type+"/"+e.Reason+": "+e.Message)
		}
	}
	return out
}
