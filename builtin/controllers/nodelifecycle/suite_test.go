package nodelifecycle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/nodelifecycle"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestNodeLifecycle(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "nodelifecycle controller")
}

const grace = 2 * time.Second

var (
	env *controllertest.Env
	c   *client.Client
	mgr *controllertest.Manager
	seq atomic.Int32 // node names
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "nl", testenv.Options{})
	c = env.Client
	// The controller with a short grace period, in a manager of our own.
	mgr = env.StartManager(manager.Options{}, func(m *manager.Manager) error {
		return nodelifecycle.New(m, nodelifecycle.Options{NodeMonitorGracePeriod: grace, EvictionRate: 100})
	})
})

var _ = AfterSuite(func() {
	mgr.Stop()
	env.Stop()
})

// node creates a node reporting Ready=ready with a fresh Lease.
func node(ctx context.Context, zone string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("node-%d", seq.Add(1))}}
	if zone != "" {
		n.Labels = map[string]string{nodelifecycle.LabelZone: zone}
	}
	Expect(c.Create(ctx, n)).To(Succeed())
	postReady(ctx, n, corev1.ConditionTrue)
	l := &coordinationv1.Lease{
		ObjectMeta: api.ObjectMeta{Namespace: nodelifecycle.LeaseNamespace, Name: n.Name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: api.Ptr(n.Name), LeaseDurationSeconds: api.Ptr(int32(40)), RenewTime: api.Ptr(api.NowMicro()),
		},
	}
	Expect(c.Create(ctx, l)).To(Succeed())
	return n
}

// postReady posts the node's Ready condition as its agent would.
func postReady(ctx context.Context, n *corev1.Node, status corev1.ConditionStatus) {
	now := api.Now()
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: status, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: now, LastTransitionTime: now},
	}}})
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Status().Patch(ctx, n, client.RawPatch(client.MergePatchType, body))).To(Succeed())
}

// renew renews the node's Lease.
func renew(ctx context.Context, name string) {
	l := &coordinationv1.Lease{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: nodelifecycle.LeaseNamespace, Name: name}, l)).To(Succeed())
	l.Spec.RenewTime = api.Ptr(api.NowMicro())
	Expect(c.Update(ctx, l)).To(Succeed())
}

// boundPod creates a Ready pod on node; tolerationSeconds, if set, bounds its
// toleration of the unreachable taint.
func boundPod(ctx context.Context, ns, name, nodeName string, tolerationSeconds *int64) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if tolerationSeconds != nil {
		p.Spec.Tolerations = []corev1.Toleration{{
			Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: tolerationSeconds,
		}}
	}
	Expect(c.Create(ctx, p)).To(Succeed())
	body := []byte(`{"status":{"phase":"Running","podIP":"10.9.0.1","conditions":[{"type":"Ready","status":"True"}]}}`)
	Expect(c.Status().Patch(ctx, p, client.RawPatch(client.MergePatchType, body))).To(Succeed())
	return p
}

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

// events returns the reasons of the events about the object named name in ns.
func events(ctx context.Context, ns, name string) []string {
	return env.EventReasons(ctx, ns, "", name)
}

func taintKeys(n *corev1.Node) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	return out
}
