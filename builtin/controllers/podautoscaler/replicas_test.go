package podautoscaler

import (
	"strconv"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

var testNow = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// podSpec describes one pod of a table case.
type podSpec struct {
	phase     corev1.PodPhase // default Running
	unready   bool            // Ready=False
	deleted   bool
	young     bool  // started 1 min ago, ready since 5 s (inside the CPU initialization period)
	usage     int64 // milli-units; -1: no metric
	requestMi int64 // CPU request in millicores (default 1000)
}

func buildPods(specs []podSpec, resource corev1.ResourceName) ([]*corev1.Pod, map[string]podMetric) {
	var pods []*corev1.Pod
	metrics := map[string]podMetric{}
	for i, s := range specs {
		name := "p" + strconv.Itoa(i)
		req := s.requestMi
		if req == 0 {
			req = 1000
		}
		start, transition := testNow.Add(-time.Hour), testNow.Add(-50*time.Minute)
		if s.young {
			start, transition = testNow.Add(-time.Minute), testNow.Add(-5*time.Second)
		}
		ready := corev1.ConditionTrue
		if s.unready {
			ready = corev1.ConditionFalse
		}
		phase := s.phase
		if phase == "" {
			phase = corev1.PodRunning
		}
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name}}
		p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{string(resource): {S: strconv.FormatInt(req, 10) + "m"}}}}}
		p.Status.Phase = phase
		p.Status.StartTime = api.NewTimePtr(start)
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: api.NewTime(transition)}}
		if s.deleted {
			p.DeletionTimestamp = api.NewTimePtr(testNow)
		}
		pods = append(pods, p)
		if s.usage >= 0 {
			metrics[name] = podMetric{Timestamp: testNow, Window: 15 * time.Second, Value: s.usage}
		}
	}
	return pods, metrics
}

func running(usages ...int64) []podSpec {
	out := make([]podSpec, len(usages))
	for i, u := range usages {
		out[i] = podSpec{usage: u}
	}
	return out
}

func TestUtilizationReplicas(t *testing.T) {
	t.Parallel()
	calc := calculator{tolerance: 0.1, cpuInitializationPeriod: 5 * time.Minute, delayOfInitialReadinessStatus: 30 * time.Second}
	for _, tc := range []struct {
		name            string
		current, target int32
		pods            []podSpec
		want            int32
		wantUtilization int32
		wantErr         bool
	}{
		{name: "scale up", current: 3, target: 30, pods: running(300, 500, 700), want: 5, wantUtilization: 50},
		{name: "scale down", current: 5, target: 50, pods: running(100, 300, 500, 250, 250), want: 3, wantUtilization: 28},
		{name: "within tolerance", current: 3, target: 100, pods: running(1010, 1030, 1020), want: 3, wantUtilization: 102},
		{name: "just beyond tolerance", current: 3, target: 100, pods: running(1110, 1130, 1120), want: 4, wantUtilization: 112},
		{name: "unready pods count as idle when scaling up", current: 3, target: 30,
			pods: []podSpec{{young: true, unready: true, usage: 300}, {usage: 500}, {usage: 700}}, want: 4, wantUtilization: 60},
		{name: "unready pods do not stop a scale down", current: 3, target: 50,
			pods: []podSpec{{young: true, unready: true, usage: 100}, {usage: 100}, {usage: 100}}, want: 1, wantUtilization: 10},
		{name: "an older pod that became unready later still counts", current: 3, target: 50,
			pods: []podSpec{{unready: true, usage: 1000}, {usage: 100}, {usage: 100}}, want: 3, wantUtilization: 40},
		{name: "pending pods are unready", current: 3, target: 30,
			pods: []podSpec{{phase: corev1.PodPending, usage: -1}, {usage: 600}, {usage: 600}}, want: 4, wantUtilization: 60},
		{name: "young pod not measured a full window since ready is unready", current: 2, target: 25,
			pods: []podSpec{{young: true, usage: 1000}, {usage: 1000}}, want: 4, wantUtilization: 100},
		{name: "missing metrics assume full request when scaling down", current: 4, target: 50,
			pods: []podSpec{{usage: 100}, {usage: 100}, {usage: 100}, {usage: -1}}, want: 3, wantUtilization: 10},
		{name: "missing metrics assume nothing when scaling up", current: 4, target: 50,
			pods: []podSpec{{usage: 900}, {usage: 900}, {usage: 900}, {usage: -1}}, want: 6, wantUtilization: 90},
		{name: "missing metrics that flip the direction keep the count", current: 4, target: 50,
			pods: []podSpec{{usage: 600}, {usage: 600}, {usage: -1}, {usage: -1}}, want: 4, wantUtilization: 60},
		{name: "deleted and failed pods are ignored", current: 3, target: 50,
			pods: []podSpec{{deleted: true, usage: 2000}, {phase: corev1.PodFailed, usage: 2000}, {usage: 500}}, want: 3, wantUtilization: 50},
		{name: "per-pod requests weigh usage", current: 2, target: 25,
			pods: []podSpec{{usage: 100, requestMi: 100}, {usage: 100, requestMi: 300}}, want: 4, wantUtilization: 50},
		{name: "no pods", current: 1, target: 50, pods: nil, wantErr: true},
		{name: "no usable metrics", current: 2, target: 50, pods: []podSpec{{usage: -1}, {phase: corev1.PodPending, usage: 5}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pods, metrics := buildPods(tc.pods, corev1.ResourceCPU)
			got, util, _, err := calc.utilizationReplicas(tc.current, tc.target, corev1.ResourceCPU, "", pods, metrics, testNow)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if got != tc.want || util != tc.wantUtilization {
				t.Errorf("replicas, utilization = %d, %d%%; want %d, %d%%", got, util, tc.want, tc.wantUtilization)
			}
		})
	}
}

func TestMissingRequest(t *testing.T) {
	t.Parallel()
	pods, metrics := buildPods(running(100), corev1.ResourceMemory)
	calc := calculator{tolerance: 0.1}
	_, _, _, err := calc.utilizationReplicas(1, 50, corev1.ResourceCPU, "", pods, metrics, testNow)
	if err == nil || err.Error() != "missing request for cpu in container c of Pod p0" {
		t.Errorf("err = %v, want the missing request", err)
	}
}

func TestAverageValueReplicas(t *testing.T) {
	t.Parallel()
	calc := calculator{tolerance: 0.1, cpuInitializationPeriod: 5 * time.Minute, delayOfInitialReadinessStatus: 30 * time.Second}
	const mi = int64(1<<20) * 1000 // 1 MiB in milli-bytes
	for _, tc := range []struct {
		name        string
		current     int32
		target      int64
		pods        []podSpec
		want        int32
		wantAverage int64
	}{
		{name: "memory doubles", current: 2, target: 100 * mi, pods: running(200*mi, 200*mi), want: 4, wantAverage: 200 * mi},
		{name: "memory halves", current: 4, target: 100 * mi, pods: running(50*mi, 50*mi, 50*mi, 50*mi), want: 2, wantAverage: 50 * mi},
		{name: "within tolerance", current: 2, target: 100 * mi, pods: running(105*mi, 95*mi), want: 2, wantAverage: 100 * mi},
		{name: "missing pod assumed at target when scaling down", current: 3, target: 100 * mi,
			pods: []podSpec{{usage: 10 * mi}, {usage: 10 * mi}, {usage: -1}}, want: 2, wantAverage: 10 * mi},
		{name: "unready pods ignored for memory (no CPU rule)", current: 2, target: 100 * mi,
			pods: []podSpec{{unready: true, usage: 300 * mi}, {usage: 300 * mi}}, want: 6, wantAverage: 300 * mi},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pods, metrics := buildPods(tc.pods, corev1.ResourceMemory)
			got, avg, err := calc.averageValueReplicas(tc.current, tc.target, corev1.ResourceMemory, pods, metrics, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || avg != tc.wantAverage {
				t.Errorf("replicas, average = %d, %d; want %d, %d", got, avg, tc.want, tc.wantAverage)
			}
		})
	}
}

func TestDirectionalTolerance(t *testing.T) {
	t.Parallel()
	up, down := 0.5, 0.2
	directional := calculator{tolerance: 0.1, upTolerance: &up, downTolerance: &down}
	plain := calculator{tolerance: 0.1}
	for _, tc := range []struct {
		name              string
		usage             int64
		want, wantDefault int32
	}{
		{"140% of target is within the 50% scale-up tolerance", 700, 10, 14},
		{"320% of target scales up", 1600, 32, 32},
		{"84% of target is within the 20% scale-down tolerance", 420, 10, 9},
		{"70% of target scales down", 350, 7, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				calc calculator
				want int32
			}{{directional, tc.want}, {plain, tc.wantDefault}} {
				usages := make([]int64, 10)
				for i := range usages {
					usages[i] = tc.usage
				}
				pods, metrics := buildPods(running(usages...), corev1.ResourceCPU)
				got, _, _, err := c.calc.utilizationReplicas(10, 50, corev1.ResourceCPU, "", pods, metrics, testNow)
				if err != nil || got != c.want {
					t.Errorf("replicas = %d, %v; want %d", got, err, c.want)
				}
			}
		})
	}
}
