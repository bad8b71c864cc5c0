package cronjob_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/cronjob"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestCronJob(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "cronjob controller")
}

// fakeClock is the controller's "now", moved by the specs.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
}

var (
	env   *controllertest.Env
	c     *client.Client
	clock *fakeClock
	mgr   *controllertest.Manager
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "cronjob", testenv.Options{})
	c = env.Client
	// The controller runs in the suite's manager with a fake clock: specs
	// cannot wait for real minutes.
	clock = &fakeClock{now: time.Now()}
	mgr = env.StartManager(manager.Options{GracefulShutdownTimeout: 10 * time.Second}, func(m *manager.Manager) error {
		return cronjob.New(m, cronjob.Options{Now: clock.Now})
	})
})

var _ = AfterSuite(func() {
	mgr.Stop()
	env.Stop()
})

func namespace(ctx context.Context) string { return env.Namespace(ctx) }

func newCronJob(ns, name string, mutate func(*batchv1.CronJob)) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *",
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"cron": name}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				}}},
			},
		},
	}
	if mutate != nil {
		mutate(cj)
	}
	return cj
}

// poke changes an annotation so the controller reconciles after the spec moved
// the fake clock (its own requeue runs on the real clock).
func poke(ctx context.Context, cj *batchv1.CronJob) {
	body := fmt.Sprintf(`{"metadata":{"annotations":{"test/poke":"%d"}}}`, time.Now().UnixNano())
	Expect(c.Patch(ctx, &batchv1.CronJob{ObjectMeta: api.ObjectMeta{Name: cj.Name, Namespace: cj.Namespace}},
		client.RawPatch(client.MergePatchType, []byte(body)))).To(Succeed())
}

func getCronJob(ctx context.Context, cj *batchv1.CronJob) *batchv1.CronJob {
	out := &batchv1.CronJob{}
	Expect(c.Get(ctx, client.ObjectKeyFromObject(cj), out)).To(Succeed())
	return out
}

func jobNames(ctx context.Context, ns string) []string {
	l := &batchv1.JobList{}
	Expect(c.List(ctx, l, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, j := range l.Items {
		if j.DeletionTimestamp == nil {
			out = append(out, j.Name)
		}
	}
	return out
}

// completeJob simulates the Job controller finishing a Job.
func completeJob(ctx context.Context, ns, name string, typ batchv1.JobConditionType) {
	j := &batchv1.Job{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j)).To(Succeed())
	now := api.Now()
	j.Status.StartTime = &now
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue,
		LastTransitionTime: now, LastProbeTime: now})
	if typ == batchv1.JobComplete {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet,
			Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now})
		j.Status.CompletionTime = &now
		j.Status.Succeeded = 1
	} else {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailureTarget,
			Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now})
		j.Status.Failed = 1
	}
	Expect(c.Status().Update(ctx, j)).To(Succeed())
}

func events(ctx context.Context, obj api.Object) []string { return env.Events(ctx, obj) }
