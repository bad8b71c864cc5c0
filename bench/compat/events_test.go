package compat

import (
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
)

// TestClientGoEventsV1Recorder drives client-go's events.k8s.io/v1 recorder
// (the one kube-scheduler uses: a create, then a strategic merge patch of
// series when the same event repeats) and reads what it wrote through
// core/v1, the other name of the same resource, by field selector.
func TestClientGoEventsV1Recorder(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg, _ := traced(t, env)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := createNamespace(t, cs, "compat-events")
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-0", UID: "0a0b"},
	}

	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	b.StartRecordingToSink(ctx.Done())
	defer b.Shutdown()
	rec := b.NewRecorder(scheme.Scheme, "compat-controller")
	rec.Eventf(pod, nil, corev1.EventTypeWarning, "Checked", "Check", "looked at %s", pod.Name)
	time.Sleep(200 * time.Millisecond) // the second one must find the first in the recorder's cache
	rec.Eventf(pod, nil, corev1.EventTypeWarning, "Checked", "Check", "looked at %s", pod.Name)

	var got *corev1.Event
	eventually(t, 10*time.Second, "the event, with its series, through core/v1", func() (bool, error) {
		list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web-0,reason=Checked"})
		if err != nil || len(list.Items) != 1 {
			return false, err
		}
		got = &list.Items[0]
		return got.Series != nil && got.Series.Count == 2, nil
	})
	if got.Message != "looked at web-0" || got.ReportingController != "compat-controller" || got.Action != "Check" ||
		got.Type != corev1.EventTypeWarning || got.InvolvedObject.UID != "0a0b" || got.EventTime.IsZero() {
		t.Errorf("core/v1 form of the recorded event: %+v", got)
	}
	ev, err := cs.EventsV1().Events(ns).Get(ctx, got.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Note != got.Message || ev.Regarding.Name != "web-0" || ev.Series == nil || ev.Series.Count != 2 {
		t.Errorf("events.k8s.io/v1 form: %+v", ev)
	}
}
