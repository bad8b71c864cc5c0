package pullspec_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
)

// kubectl debug's ephemeral container on the containerd runtime: pulled by
// policy (the image is there: IfNotPresent), started in the running pod, in its target's PID namespace.
var _ = Describe("An ephemeral container on the containerd runtime", func() {
	It("runs in the running pod, in its target's PID namespace", func(ctx SpecContext) {
		createAndBind(ctx, pod("eph-ctr", suite.testbin, corev1.PullIfNotPresent, "/bin/testbin", "serve"))
		DeferCleanup(func(ctx context.Context) { deletePod(ctx, "eph-ctr") })
		Eventually(waiting(ctx, "eph-ctr"), 30*time.Second, 100*time.Millisecond).Should(Equal("Running"))
		p := &corev1.Pod{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "eph-ctr"}, p)).To(Succeed())
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{TargetContainerName: "main",
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: suite.testbin, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"/bin/testbin", "serve"}}}}
		Expect(suite.c.SubResource("ephemeralcontainers").Update(ctx, p, p)).To(Succeed())

		// pidNS is the PID namespace of the pod's container name, once it runs.
		pidNS := func(name string) func() (string, error) {
			return func() (string, error) {
				if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "eph-ctr"}, p); err != nil {
					return "", err
				}
				for _, s := range append(p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses...) {
					if s.Name != name || s.State.Running == nil {
						continue
					}
					st, err := suite.rt.Status(ctx, strings.TrimPrefix(s.ContainerID, "containerd://"))
					if err != nil || st.PID == 0 {
						return "", fmt.Errorf("container %s: %+v %v", name, st, err)
					}
					return os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", st.PID))
				}
				return "", fmt.Errorf("container %s does not run: %+v", name, p.Status.EphemeralContainerStatuses)
			}
		}
		main, err := pidNS("main")()
		Expect(err).NotTo(HaveOccurred())
		self, err := os.Readlink("/proc/self/ns/pid")
		Expect(err).NotTo(HaveOccurred())
		Expect(main).NotTo(Equal(self), "the container has a PID namespace of its own")
		Eventually(pidNS("dbg"), 30*time.Second, 100*time.Millisecond).Should(Equal(main))
	})
})
