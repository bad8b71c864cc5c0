package node

import (
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestDeletionDeadline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pod := func(ts *time.Time, grace, spec *int64) *corev1.Pod {
		p := &corev1.Pod{}
		if ts != nil {
			t := api.NewTime(*ts)
			p.DeletionTimestamp = &t
		}
		p.DeletionGracePeriodSeconds = grace
		p.Spec.TerminationGracePeriodSeconds = spec
		return p
	}
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	i := api.Ptr[int64]
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		gone bool
		seen time.Time
		want time.Time
	}{
		{name: "the grace from when the deletion was seen", pod: pod(at(30*time.Second), i(30), i(30)), seen: now, want: now.Add(30 * time.Second)},
		{name: "no later than the deletion timestamp plus its truncation",
			pod: pod(at(5*time.Second), i(30), nil), seen: now, want: now.Add(6 * time.Second)},
		{name: "a deletion seen late (agent restart) keeps only what is left",
			pod: pod(at(-10*time.Second), i(30), nil), seen: now, want: now.Add(-9 * time.Second)},
		{name: "a shortened grace counts from when the deletion was seen",
			pod: pod(at(0), i(10), nil), seen: now.Add(-8 * time.Second), want: now.Add(time.Second)},
		{name: "the spec's grace without a deletion grace", pod: pod(nil, nil, i(7)), seen: now, want: now.Add(7 * time.Second)},
		{name: "30 s by default", pod: pod(nil, nil, nil), seen: now, want: now.Add(30 * time.Second)},
		{name: "a force-deleted pod gets at most goneGrace", pod: pod(at(30*time.Second), i(30), nil), gone: true, seen: now,
			want: now.Add(goneGrace)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := deletionDeadline(tc.pod, tc.gone, tc.seen, now); !got.Equal(tc.want) {
				t.Errorf("deadline = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestTerminalPhase(t *testing.T) {
	t.Parallel()
	exited := func(code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	neverRan := corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	backingOff := corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}
	for _, tc := range []struct {
		name     string
		statuses []corev1.ContainerStatus
		want     corev1.PodPhase
	}{
		{"all exited 0", []corev1.ContainerStatus{exited(0), exited(0)}, corev1.PodSucceeded},
		{"one killed", []corev1.ContainerStatus{exited(0), exited(137)}, corev1.PodFailed},
		{"one waiting to restart", []corev1.ContainerStatus{exited(0), backingOff}, corev1.PodFailed},
		{"one still running", []corev1.ContainerStatus{exited(0), running}, ""},
		{"one never ran", []corev1.ContainerStatus{neverRan}, ""},
		{"no containers", nil, ""},
	} {
		if got := terminalPhase(tc.statuses); got != tc.want {
			t.Errorf("%s: terminalPhase = %q, want %q", tc.name, got, tc.want)
		}
	}
}
