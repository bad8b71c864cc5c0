package deployment_test

import (
	"context"
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

func TestDeployment(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "deployment controller")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "deploy", testenv.Options{Controllers: []string{"replicaset", "deployment"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

func newDeployment(ns, name string, replicas int32, image string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: api.Ptr(replicas),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
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

func getDeployment(ctx context.Context, ns, name string) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	return d
}

func replicaSets(ctx context.Context, ns string) []appsv1.ReplicaSet {
	var l appsv1.ReplicaSetList
	Expect(c.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
	return l.Items
}

func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

func patch(ctx context.Context, obj api.Object, body string) {
	GinkgoHelper()
	Expect(c.Patch(ctx, obj, client.RawPatch(client.MergePatchType, []byte(body)))).To(Succeed())
}

// kubelet marks every pending pod of ns Running and Ready and finishes the
// deletion of terminating ones until ctx ends, simulating a node agent.
func kubelet(ctx context.Context, ns string) {
	go func() {
		defer GinkgoRecover()
		for ctx.Err() == nil {
			var l corev1.PodList
			if err := c.List(ctx, &l, client.InNamespace(ns)); err == nil {
				for i := range l.Items {
					p := &l.Items[i]
					switch {
					case p.DeletionTimestamp != nil:
						// As an agent does once the containers stopped.
						_ = c.Delete(ctx, p, client.GracePeriodSeconds(0))
					case p.Status.Phase == "" || p.Status.Phase == corev1.PodPending:
						_ = tryMarkReady(ctx, p)
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
}

func tryMarkReady(ctx context.Context, p *corev1.Pod) error {
	b := &corev1.Binding{ObjectMeta: api.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if p.Spec.NodeName == "" {
		if err := c.Create(ctx, b); err != nil {
			return err
		}
	}
	// p may predate the binding: leave its resourceVersion out of the patch.
	orig := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: p.ResourceVersion}}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: api.Now()}}
	return c.Status().Patch(ctx, p, client.MergeFrom(orig))
}

func getRS(ctx context.Context, ns, name string) *appsv1.ReplicaSet {
	GinkgoHelper()
	rs := &appsv1.ReplicaSet{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rs)).To(Succeed())
	return rs
}

func eventReasons(ctx context.Context, ns, name string) []string {
	return env.EventReasons(ctx, ns, "Deployment", name)
}
