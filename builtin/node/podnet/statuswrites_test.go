package podnet_test

import (
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("A pod's status as it starts on containerd with CNI", func() {
	// Every status patch costs the API server and etcd a write, and a burst
	// of starts pays for each (BenchmarkPodStartup's writes/pod): the pod IP
	// (ready while the container is being prepared) and the image ID go out
	// with the Running status, as on the kubelet, not in writes of their own.
	It("is written twice: Pending, then Running with the pod IP, the image ID and PodReadyToStartContainers", func(ctx SpecContext) {
		const name = "two-writes"
		w, err := suite.c.Watch(ctx, &corev1.PodList{}, client.InNamespace("default"),
			&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		p := &corev1.Pod{}
		p.Name = name
		p.Spec.TerminationGracePeriodSeconds = new(int64)
		p.Spec.Containers = []corev1.Container{sh("c", "exec /bin/busybox sleep 3600")}
		createOn(ctx, suite.a, p)
		DeferCleanup(func(ctx SpecContext) { _ = suite.c.Delete(ctx, p) })
		var run *corev1.Pod
		var before []corev1.PodStatus // the agent's statuses before Running
		for run == nil {
			select {
			case ev, ok := <-w.ResultChan():
				Expect(ok).To(BeTrue(), "the watch ended")
				got, isPod := ev.Object.(*corev1.Pod)
				switch {
				case !isPod:
				case got.Status.Phase == corev1.PodRunning:
					run = got
				case got.Status.StartTime != nil && (len(before) == 0 || !reflect.DeepEqual(before[len(before)-1], got.Status)):
					before = append(before, got.Status)
				}
			case <-ctx.Done():
				Fail("the pod never ran")
			}
		}
		Expect(before).To(HaveLen(1), "%+v", before)
		Expect(run.Status.PodIP).To(Satisfy(inCIDR(suite.a.cidr)))
		Expect(run.Status.ContainerStatuses).To(ConsistOf(HaveField("ImageID", Not(BeEmpty()))))
		Expect(run.Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.PodReadyToStartContainers), HaveField("Status", corev1.ConditionTrue))))
	}, SpecTimeout(60*time.Second))
})
