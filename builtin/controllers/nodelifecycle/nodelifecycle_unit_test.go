package nodelifecycle

import (
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestEvictionDelay(t *testing.T) {
	t.Parallel()
	unreachable := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	tol := func(key string, secs *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}
	}
	tests := []struct {
		name    string
		tols    []corev1.Toleration
		delay   time.Duration
		forever bool
	}{
		{"untolerated", nil, 0, false},
		{"other key", []corev1.Toleration{tol("x", nil)}, 0, false},
		{"forever", []corev1.Toleration{tol(corev1.TaintNodeUnreachable, nil)}, 0, true},
		{"bounded", []corev1.Toleration{tol(corev1.TaintNodeUnreachable, api.Ptr(int64(5)))}, 5 * time.Second, false},
		{"shortest", []corev1.Toleration{tol(corev1.TaintNodeUnreachable, api.Ptr(int64(5))), tol("", api.Ptr(int64(2)))}, 2 * time.Second, false},
		{"negative", []corev1.Toleration{tol(corev1.TaintNodeUnreachable, api.Ptr(int64(-3)))}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.tols}}
			d, f := evictionDelay(p, []corev1.Taint{unreachable})
			if d != tc.delay || f != tc.forever {
				t.Errorf("evictionDelay = %v, %v; want %v, %v", d, f, tc.delay, tc.forever)
			}
		})
	}
}

func TestZoneLimiter(t *testing.T) {
	t.Parallel()
	l := newZoneLimiter()
	now := time.Unix(1000, 0)
	if ok, _ := l.take("a", 0.1, now); !ok {
		t.Fatal("first take should pass (burst 1)")
	}
	ok, wait := l.take("a", 0.1, now.Add(time.Second))
	if ok || wait < 8*time.Second || wait > 10*time.Second {
		t.Fatalf("second take = %v, %v; want refused for ~9s", ok, wait)
	}
	if ok, _ := l.take("b", 0.1, now); !ok {
		t.Fatal("zones are independent")
	}
	if ok, _ := l.take("a", 0.1, now.Add(10*time.Second)); !ok {
		t.Fatal("a token is back after 1/rate")
	}
	l.refund("a")
	if ok, _ := l.take("a", 0.1, now.Add(10*time.Second)); !ok {
		t.Fatal("refunded token")
	}
	if ok, _ := l.take("c", 0, now); ok {
		t.Fatal("rate 0 never passes")
	}
}
