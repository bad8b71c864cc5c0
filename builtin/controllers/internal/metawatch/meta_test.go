package metawatch

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

func unstructuredPod(t *testing.T) *api.Unstructured {
	t.Helper()
	m, err := api.DecodeMap([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1",
		"resourceVersion":"7","deletionTimestamp":"2026-01-02T03:04:05Z","finalizers":["f1","f2"],"labels":{"a":"b"},
		"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u0","controller":true}]},
		"spec":{"containers":[{"name":"c","image":"i"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	return &api.Unstructured{Object: m}
}

// TestMetaOf: Meta keeps the metadata the garbage collector's graph reads.
func TestMetaOf(t *testing.T) {
	u := unstructuredPod(t)
	gvk := api.GroupVersionKind{Version: "v1", Kind: "Pod"}
	m := MetaOf(u, &gvk)
	got := map[string]any{"gvk": m.GroupVersionKind(), "name": m.GetName(), "namespace": m.GetNamespace(), "uid": m.GetUID(),
		"rv": m.GetResourceVersion(), "deleting": m.GetDeletionTimestamp().String(), "finalizers": m.GetFinalizers(),
		"owners": m.GetOwnerReferences()}
	want := map[string]any{"gvk": gvk, "name": "p", "namespace": "ns", "uid": "u1", "rv": "7",
		"deleting": u.GetDeletionTimestamp().String(), "finalizers": []string{"f1", "f2"}, "owners": u.GetOwnerReferences()}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Meta (-want +got):\n%s", d)
	}
	if len(m.GetOwnerReferences()) != 1 || m.GetOwnerReferences()[0].UID != "u0" || m.GetLabels() != nil {
		t.Errorf("owners %v, labels %v", m.GetOwnerReferences(), m.GetLabels())
	}
}

var errGone = errors.New("gone")

type fakeWatcher struct {
	ch      chan client.Event
	stopped bool
}

func (f *fakeWatcher) ResultChan() <-chan client.Event { return f.ch }
func (f *fakeWatcher) Stop()                           { f.stopped = true }

// TestMetaWatcher: events carry Meta objects; errors pass through; the
// channel closes with the inner watch.
func TestMetaWatcher(t *testing.T) {
	inner := &fakeWatcher{ch: make(chan client.Event, 3)}
	inner.ch <- client.Event{Type: client.Added, Object: unstructuredPod(t)}
	inner.ch <- client.Event{Type: client.Bookmark, Object: &api.Unstructured{Object: map[string]any{
		"kind": "Pod", "metadata": map[string]any{"resourceVersion": "9"}}}}
	inner.ch <- client.Event{Type: client.Error, Err: errGone}
	close(inner.ch)
	gvk := api.GroupVersionKind{Version: "v1", Kind: "Pod"}
	mw := &metaWatcher{w: inner, ch: make(chan client.Event), done: make(chan struct{})}
	go mw.run(&gvk)
	var got []string
	for ev := range mw.ResultChan() {
		switch o := ev.Object.(type) {
		case *Meta:
			got = append(got, string(ev.Type)+" "+o.GetName()+" "+o.GetResourceVersion())
		case nil:
			got = append(got, string(ev.Type)+" "+ev.Err.Error())
		default:
			t.Errorf("event object %T", o)
		}
	}
	want := []string{"ADDED p 7", "BOOKMARK  9", "ERROR gone"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	mw.Stop()
	if !inner.stopped {
		t.Error("Stop did not stop the inner watch")
	}
}
