package node_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// shContainer runs a host /bin/sh script (the process runtime runs host programs).
func shContainer(name, script string) corev1.Container {
	return corev1.Container{Name: name, Image: "local/sh:1", Command: []string{"/bin/sh", "-c", script}}
}

// fallback sets terminationMessagePolicy FallbackToLogsOnError on c.
func fallback(c corev1.Container) corev1.Container {
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	return c
}

// startPod creates and binds a pod of containers cs (after inits), deleted
// when the spec ends.
func startPod(ctx SpecContext, name string, policy corev1.RestartPolicy, inits []corev1.Container, cs ...corev1.Container) {
	GinkgoHelper()
	pod := &corev1.Pod{}
	pod.Name = name
	pod.Spec.RestartPolicy = policy
	pod.Spec.InitContainers, pod.Spec.Containers = inits, cs
	createAndBind(ctx, pod)
	DeferCleanup(func(ctx SpecContext) { _ = suite.c.Delete(ctx, pod) })
}

// finished runs a RestartPolicy Never pod to its end and returns it.
func finished(ctx SpecContext, name string, phase corev1.PodPhase, cs ...corev1.Container) *corev1.Pod {
	GinkgoHelper()
	startPod(ctx, name, corev1.RestartPolicyNever, nil, cs...)
	Eventually(getPod(ctx, name)).WithContext(ctx).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", phase))
	p, err := getPod(ctx, name)()
	Expect(err).NotTo(HaveOccurred())
	return p
}

func message(p *corev1.Pod, container string) string {
	GinkgoHelper()
	t := status(p, container).State.Terminated
	Expect(t).NotTo(BeNil(), "container %s terminated", container)
	return t.Message
}

var _ = Describe("Termination messages on the process runtime", func() {
	BeforeEach(func() {
		if os.Geteuid() != 0 {
			Fail("termination message files are mounted in the container's own mount namespace: run the suite as root")
		}
	})

	It("reports the file written at the default path", func(ctx SpecContext) {
		c := shContainer("main", "printf DONE > /dev/termination-log")
		p := finished(ctx, "termmsg-file", corev1.PodSucceeded, c)
		Expect(message(p, "main")).To(Equal("DONE"))
	}, SpecTimeout(40*time.Second))

	It("reports the file of a non-root user at a non-default path", func(ctx SpecContext) {
		c := shContainer("main", "printf DONE > /dev/termination-custom-log")
		c.TerminationMessagePath = "/dev/termination-custom-log"
		c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(int64(10000))}
		p := finished(ctx, "termmsg-nonroot", corev1.PodSucceeded, c)
		Expect(message(p, "main")).To(Equal("DONE"))
		Expect(suite.c.Delete(ctx, p)).To(Succeed())
		Eventually(func() bool {
			_, err := os.Stat("/dev/termination-custom-log")
			return os.IsNotExist(err)
		}).WithContext(ctx).Should(BeTrue(), "the mount point made on the host goes with the container")
	}, SpecTimeout(40*time.Second))

	It("falls back to the end of the log of a failed container with FallbackToLogsOnError", func(ctx SpecContext) {
		c := fallback(shContainer("main", "printf DONE; exit 1"))
		p := finished(ctx, "termmsg-logs", corev1.PodFailed, c)
		Expect(message(p, "main")).To(Equal("DONE"))
	}, SpecTimeout(40*time.Second))

	It("keeps the last 80 lines, at most 2048 bytes, of the log", func(ctx SpecContext) {
		c := fallback(shContainer("main", "i=0; while [ $i -lt 100 ]; do echo line-$i; i=$((i+1)); done; exit 3"))
		long := fallback(shContainer("long", "i=0; while [ $i -lt 60 ]; do printf '%0100d\\n' $i; i=$((i+1)); done; exit 3"))
		p := finished(ctx, "termmsg-tail", corev1.PodFailed, c, long)
		var want strings.Builder
		for i := 20; i < 100; i++ {
			fmt.Fprintf(&want, "line-%d\n", i)
		}
		Expect(message(p, "main")).To(Equal(want.String()))
		m := message(p, "long")
		Expect(m).To(HaveLen(2048))
		Expect(m).To(HaveSuffix(fmt.Sprintf("%0100d\n", 59)))
	}, SpecTimeout(40*time.Second))

	It("reports no message for a success with FallbackToLogsOnError, and the file when written", func(ctx SpecContext) {
		empty := fallback(shContainer("empty", "printf DONE"))
		file := fallback(shContainer("file", "printf OK > /dev/termination-log; printf logged; exit 2"))
		p := finished(ctx, "termmsg-fallback", corev1.PodFailed, empty, file)
		Expect(message(p, "empty")).To(BeEmpty())
		Expect(message(p, "file")).To(Equal("OK"))
	}, SpecTimeout(40*time.Second))

	It("keeps the last 4096 bytes of a file, and 12 KiB across the pod's containers", func(ctx SpecContext) {
		write := "i=0; while [ $i -lt 50 ]; do printf '%0100d' $i; i=$((i+1)); done > /dev/termination-log"
		one := finished(ctx, "termmsg-big", corev1.PodSucceeded, shContainer("main", write))
		Expect(message(one, "main")).To(HaveLen(4096))
		Expect(message(one, "main")).To(HaveSuffix(fmt.Sprintf("%0100d", 49)))

		cs := []corev1.Container{shContainer("a", write), shContainer("b", write), shContainer("c", write), shContainer("d", write)}
		four := finished(ctx, "termmsg-pod-budget", corev1.PodSucceeded, cs...)
		for _, c := range cs {
			Expect(message(four, c.Name)).To(HaveLen(12*1024/4), "container %s", c.Name)
		}
	}, SpecTimeout(60*time.Second))

	It("keeps a container's file mounted when another pod sharing the mount point is removed", func(ctx SpecContext) {
		first := finished(ctx, "termmsg-first", corev1.PodSucceeded, shContainer("main", "printf first > /dev/termination-log"))
		startPod(ctx, "termmsg-second", corev1.RestartPolicyNever, nil, shContainer("main", "sleep 3; printf second > /dev/termination-log"))
		Eventually(getPod(ctx, "termmsg-second")).WithContext(ctx).Should(HaveField("Status.Phase", corev1.PodRunning))
		Expect(suite.c.Delete(ctx, first)).To(Succeed())
		Eventually(func() bool {
			_, err := getPod(ctx, "termmsg-first")()
			return apierrors.IsNotFound(err)
		}).WithContext(ctx).WithTimeout(20*time.Second).Should(BeTrue(), "the first pod and its container are gone")
		Eventually(getPod(ctx, "termmsg-second")).WithContext(ctx).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodSucceeded))
		p, err := getPod(ctx, "termmsg-second")()
		Expect(err).NotTo(HaveOccurred())
		Expect(message(p, "main")).To(Equal("second"))
	}, SpecTimeout(60*time.Second))

	It("reports the message of the previous run in lastState after a restart", func(ctx SpecContext) {
		startPod(ctx, "termmsg-restart", corev1.RestartPolicyOnFailure, nil, shContainer("main", "printf attempt > /dev/termination-log; sleep 1; exit 1"))
		Eventually(getPod(ctx, "termmsg-restart")).WithContext(ctx).WithTimeout(20 * time.Second).Should(
			HaveField("Status.ContainerStatuses", ContainElement(HaveField("LastTerminationState.Terminated.Message", "attempt"))))
	}, SpecTimeout(40*time.Second))
})

var _ = Describe("readOnlyRootFilesystem on the process runtime", func() {
	It("fails writes to the root filesystem", func(ctx SpecContext) {
		if os.Geteuid() != 0 {
			Fail("a read-only root needs the container's own mount namespace: run the suite as root")
		}
		file := fmt.Sprintf("/converge-node-rofs-%d", time.Now().UnixNano())
		DeferCleanup(func() { _ = os.Remove(file) })
		c := shContainer("main", "echo test > "+file)
		c.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true)}
		finished(ctx, "read-only-root", corev1.PodFailed, c)
		Expect(podLogs(ctx, "read-only-root", "main", "")).To(ContainSubstring("Read-only file system"))
		_, err := os.Stat(file)
		Expect(os.IsNotExist(err)).To(BeTrue(), "nothing was written on the host: %v", err)
	}, SpecTimeout(40*time.Second))
})

var _ = Describe("A RestartPolicy Never pod whose init container fails", func() {
	It("is Failed, not initialized (naming the failed init container), and never starts its app containers", func(ctx SpecContext) {
		startPod(ctx, "init-fails", corev1.RestartPolicyNever, []corev1.Container{shContainer("init1", "true"), shContainer("init2", "false")}, shContainer("run1", "true"))
		Eventually(getPod(ctx, "init-fails")).WithContext(ctx).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodFailed))
		p, err := getPod(ctx, "init-fails")()
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.PodInitialized), HaveField("Status", corev1.ConditionFalse),
			HaveField("Reason", "ContainersNotInitialized"), HaveField("Message", "containers with incomplete status: [init2]"))))
		Expect(status(p, "init1").State.Terminated).To(HaveField("ExitCode", BeZero()))
		Expect(status(p, "init2").State.Terminated).To(HaveField("ExitCode", Not(BeZero())))
		Expect(status(p, "run1").State.Waiting).To(HaveField("Reason", "PodInitializing"))
	}, SpecTimeout(40*time.Second))

	It("a pod that succeeds is initialized with reason PodCompleted", func(ctx SpecContext) {
		startPod(ctx, "init-completes", corev1.RestartPolicyNever, []corev1.Container{shContainer("init1", "true")}, shContainer("run1", "true"))
		Eventually(getPod(ctx, "init-completes")).WithContext(ctx).WithTimeout(20 * time.Second).Should(And(
			HaveField("Status.Phase", corev1.PodSucceeded),
			HaveField("Status.Conditions", ContainElement(And(
				HaveField("Type", corev1.PodInitialized), HaveField("Status", corev1.ConditionTrue), HaveField("Reason", "PodCompleted"))))))
	}, SpecTimeout(40*time.Second))
})
