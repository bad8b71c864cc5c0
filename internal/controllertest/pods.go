package controllertest

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// Pods lists the pods of ns labelled app=<app> that are not being deleted.
func (e *Env) Pods(ctx context.Context, ns, app string) []corev1.Pod {
	l := &corev1.PodList{}
	Expect(e.Client.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(Succeed())
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// SetPodState does what a scheduler and node agent would: it binds the pod
// to node (when node is set and the pod is unbound) and reports phase and
// readiness (ready since readyAt).
func (e *Env) SetPodState(ctx context.Context, p *corev1.Pod, node string, phase corev1.PodPhase, ready bool, readyAt time.Time) {
	GinkgoHelper()
	if node != "" && p.Spec.NodeName == "" {
		b := &corev1.Binding{ObjectMeta: api.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}
		Expect(e.Client.Create(ctx, b)).To(Succeed())
		p.Spec.NodeName = node
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	// p may predate the binding: leave its resourceVersion out of the patch.
	orig := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: p.ResourceVersion}}
	p.Status.Phase = phase
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: api.NewTime(readyAt.UTC().Truncate(time.Second))}}
	Expect(e.Client.Status().Patch(ctx, p, client.MergeFrom(orig))).To(Succeed())
}

// MarkReady binds p to node-1 and reports it running and ready now.
func (e *Env) MarkReady(ctx context.Context, p *corev1.Pod) {
	GinkgoHelper()
	e.SetPodState(ctx, p, "node-1", corev1.PodRunning, true, time.Now())
}
