package node_test

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/simulated"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// addEphemeral adds ec to pod name through pods/NAME/ephemeralcontainers.
func addEphemeral(ctx context.Context, name string, ec corev1.EphemeralContainer) {
	GinkgoHelper()
	// An update carries the pod's resourceVersion, which the agent's status
	// writes move: read and write again on a conflict, as clients do.
	Eventually(func() error {
		p, err := getPod(ctx, name)()
		if err != nil {
			return err
		}
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, ec)
		err = suite.c.SubResource("ephemeralcontainers").Update(ctx, p, p)
		if apierrors.IsConflict(err) {
			return err
		}
		if err != nil {
			return StopTrying("update pods/ephemeralcontainers").Wrap(err)
		}
		return nil
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

func ephemeralStatus(ctx context.Context, pod, name string) func() (corev1.ContainerStatus, error) {
	return func() (corev1.ContainerStatus, error) {
		p, err := getPod(ctx, pod)()
		if err != nil {
			return corev1.ContainerStatus{}, err
		}
		for _, s := range p.Status.EphemeralContainerStatuses {
			if s.Name == name {
				return s, nil
			}
		}
		return corev1.ContainerStatus{}, nil
	}
}

var _ = Describe("Ephemeral containers", func() {
	It("run once in a running pod, never restarted, reported in ephemeralContainerStatuses", func(ctx SpecContext) {
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "eph-run"}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers:                    []corev1.Container{helperContainer("main", "sleep", "forever")},
		}}
		createAndBind(ctx, pod)
		Eventually(getPod(ctx, "eph-run")).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodRunning))
		addEphemeral(ctx, "eph-run", corev1.EphemeralContainer{TargetContainerName: "main",
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "busybox", Command: []string{"sh", "-c", "echo debugging; exit 5"}}})
		Eventually(ephemeralStatus(ctx, "eph-run", "dbg")).WithTimeout(20 * time.Second).Should(
			HaveField("State.Terminated", And(Not(BeNil()), HaveField("ExitCode", int32(5)))))
		Consistently(ephemeralStatus(ctx, "eph-run", "dbg")).WithTimeout(time.Second).Should(HaveField("RestartCount", int32(0)))
		p, err := getPod(ctx, "eph-run")()
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "an ephemeral container's exit does not end the pod")
		Expect(suite.c.Delete(ctx, p)).To(Succeed())
	})

	It("are refused with a status and an event on a runtime without processes", func(ctx SpecContext) {
		const simNode = "node-sim-eph"
		agent, err := node.New(node.Options{
			NodeName: simNode, Config: &client.Config{Host: suite.env.URL}, Runtime: simulated.New(simulated.Options{}),
			RootDir: filepath.Join(suite.env.Dir, simNode), PodCIDR: "127.78.0.0/16", Logger: GinkgoLogr,
		})
		Expect(err).NotTo(HaveOccurred())
		actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan error, 1)
		go func() { done <- agent.Start(actx) }()
		DeferCleanup(func() { cancel(); <-done })

		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "eph-sim", Namespace: "default"}, Spec: corev1.PodSpec{
			NodeName: simNode, Containers: []corev1.Container{{Name: "main", Image: "example/app:1"}}}}
		Expect(suite.c.Create(ctx, pod)).To(Succeed())
		Eventually(getPod(ctx, "eph-sim")).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodRunning))
		addEphemeral(ctx, "eph-sim", corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "busybox", Command: []string{"sh"}}})
		Eventually(ephemeralStatus(ctx, "eph-sim", "dbg")).WithTimeout(10 * time.Second).Should(HaveField("State.Waiting", And(Not(BeNil()),
			HaveField("Reason", "CreateContainerError"),
			HaveField("Message", ContainSubstring("its simulated runtime runs no real processes")))))
		Eventually(func() []string {
			evs := &corev1.EventList{}
			_ = suite.c.List(ctx, evs, client.InNamespace("default"))
			var out []string
			for _, e := range evs.Items {
				if e.InvolvedObject.Name == "eph-sim" && e.Type == "Warning" {
					out = append(out, e.Message)
				}
			}
			return out
		}).Should(ContainElement(ContainSubstring("ephemeral containers cannot run on node " + simNode)))
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	})
})
