package podgc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/podgc"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestPodGC(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "podgc controller")
}

// The controller runs with a short period and quarantine and a threshold of
// terminated pods small enough to test; each spec uses its own namespace, and
// the terminated pod spec is the only one leaving terminated pods behind.
const (
	period     = 200 * time.Millisecond
	quarantine = 1 * time.Second
	threshold  = 3
)

var (
	env *controllertest.Env
	c   *client.Client
	mgr *controllertest.Manager
	seq atomic.Int32 // node names
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "gc", testenv.Options{})
	c = env.Client
	mgr = env.StartManager(manager.Options{}, func(m *manager.Manager) error {
		return podgc.New(m, podgc.Options{Period: period, Quarantine: quarantine, TerminatedPodThreshold: threshold})
	})
})

var _ = AfterSuite(func() {
	mgr.Stop()
	env.Stop()
})

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

// node creates a node reporting Ready=ready with taints.
func node(ctx context.Context, ready corev1.ConditionStatus, taints ...corev1.Taint) *corev1.Node {
	GinkgoHelper()
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("node-%d", seq.Add(1))}}
	n.Spec.Taints = taints
	Expect(c.Create(ctx, n)).To(Succeed())
	now := api.Now()
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: now, LastTransitionTime: now},
	}}})
	Expect(err).NotTo(HaveOccurred())
	Expect(c.Status().Patch(ctx, n, client.RawPatch(client.MergePatchType, body))).To(Succeed())
	return n
}

// pod creates a pod bound to nodeName ("" for none) with a finalizer-free
// spec; phase, if set, is written to its status.
func pod(ctx context.Context, ns, name, nodeName string, phase corev1.PodPhase) *corev1.Pod {
	GinkgoHelper()
	p := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	Expect(c.Create(ctx, p)).To(Succeed())
	if phase != "" {
		body := []byte(fmt.Sprintf(`{"status":{"phase":%q}}`, phase))
		Expect(c.Status().Patch(ctx, p, client.RawPatch(client.MergePatchType, body))).To(Succeed())
	}
	return p
}

// get returns the pod, or nil once it is gone.
func get(ctx context.Context, p *corev1.Pod) *corev1.Pod {
	GinkgoHelper()
	got := &corev1.Pod{}
	err := c.Get(ctx, client.ObjectKeyFromObject(p), got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return got
}

// watchPod records every version of the pod the API server reports until ctx
// ends; the returned function gives the versions seen so far.
func watchPod(ctx context.Context, p *corev1.Pod) func() []*corev1.Pod {
	GinkgoHelper()
	var (
		mu   sync.Mutex
		seen []*corev1.Pod
	)
	w, err := c.Watch(ctx, &corev1.PodList{}, client.InNamespace(p.Namespace))
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			got, ok := ev.Object.(*corev1.Pod)
			if !ok || got.Name != p.Name {
				continue
			}
			mu.Lock()
			seen = append(seen, got)
			mu.Unlock()
		}
	}()
	return func() []*corev1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return append([]*corev1.Pod(nil), seen...)
	}
}
