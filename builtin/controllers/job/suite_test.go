package job_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/job"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestJob(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "job controller")
}

var (
	env *controllertest.Env
	c   *client.Client
	mgr *controllertest.Manager
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "job", testenv.Options{Controllers: []string{"garbagecollector"}})
	c = env.Client
	startManager()
})

// startManager runs the Job controller in its own manager, so the suite can
// shorten the backoff between pod recreations and restart the controller.
func startManager() {
	mgr = env.StartManager(manager.Options{GracefulShutdownTimeout: 10 * time.Second, Logger: GinkgoLogr}, func(m *manager.Manager) error {
		return job.New(m, job.Options{BackoffBase: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond})
	})
}

// stopManager stops the controller (a crash as far as the Job is concerned:
// nothing is flushed).
func stopManager() {
	mgr.Stop()
	mgr = nil
}

var _ = AfterSuite(func() {
	mgr.Stop()
	env.Stop()
})

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

func newJob(ns, name string, mutate func(*batchv1.Job)) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			},
		},
	}
	if mutate != nil {
		mutate(j)
	}
	return j
}

func getJob(ctx context.Context, j *batchv1.Job) *batchv1.Job {
	out := &batchv1.Job{}
	Expect(c.Get(ctx, client.ObjectKeyFromObject(j), out)).To(Succeed())
	return out
}

// pods lists the job's pods.
func pods(ctx context.Context, j *batchv1.Job) []corev1.Pod {
	l := &corev1.PodList{}
	Expect(c.List(ctx, l, client.InNamespace(j.Namespace), client.MatchingLabels{batchv1.JobNameLabel: j.Name})).To(Succeed())
	return l.Items
}

// livePods lists the job's pods that are not terminal.
func livePods(ctx context.Context, j *batchv1.Job) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods(ctx, j) {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// finishPod simulates the node agent: the pod runs on a node and its main
// container exits with code.
func finishPod(ctx context.Context, p corev1.Pod, code int32) {
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
	}
	updatePodStatus(ctx, p, func(p *corev1.Pod) {
		p.Status.Phase = phase
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "main", Image: "busybox",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: api.Now()}},
		}}
	})
}

func runPod(ctx context.Context, p corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	updatePodStatus(ctx, p, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	})
}

// updatePodStatus plays the node agent: it applies mutate to the pod's
// latest version and writes its status (the controller may have changed the
// pod's metadata meanwhile).
func updatePodStatus(ctx context.Context, p corev1.Pod, mutate func(*corev1.Pod)) {
	Eventually(func() error {
		cur := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(&p), cur); err != nil {
			return err
		}
		mutate(cur)
		return c.Status().Update(ctx, cur)
	}).Should(Succeed(), func() string { return fmt.Sprint(eventsAll(ctx, p.Namespace)) })
}

func condition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// hasCondition matches a Job with condition t True and the given reason
// ("" = any).
func hasCondition(ctx context.Context, j *batchv1.Job, t batchv1.JobConditionType, reason string) func() bool {
	return func() bool {
		cond := condition(getJob(ctx, j), t)
		return cond != nil && cond.Status == corev1.ConditionTrue && (reason == "" || cond.Reason == reason)
	}
}

// events returns "Type/Reason: message" of the events about obj.
func events(ctx context.Context, obj api.Object) []string { return env.Events(ctx, obj) }

func eventsAll(ctx context.Context, ns string) []string {
	l := &corev1.EventList{}
	Expect(c.List(ctx, l, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range l.Items {
		out = append(out, e.InvolvedObject.Name+" "+e.Reason+": "+e.Message+"\n")
	}
	return out
}
