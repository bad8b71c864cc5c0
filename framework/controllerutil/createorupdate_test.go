package controllerutil_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClient(t *testing.T) *client.Client {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{})
	cfg, _, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.REST().CloseIdleConnections)
	return c
}

func TestCreateOrUpdateAndPatch(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	steps := []struct {
		name  string
		patch bool
		value string
		want  controllerutil.OperationResult
	}{
		{"create", false, "a", controllerutil.OperationResultCreated},
		{"unchanged", false, "a", controllerutil.OperationResultNone},
		{"update", false, "b", controllerutil.OperationResultUpdated},
		{"patch unchanged", true, "b", controllerutil.OperationResultNone},
		{"patch", true, "c", controllerutil.OperationResultUpdated},
	}
	for _, st := range steps {
		cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "desired"}}
		mutate := func() error {
			cm.Data = map[string]string{"value": st.value}
			return nil
		}
		var got controllerutil.OperationResult
		var err error
		if st.patch {
			got, err = controllerutil.CreateOrPatch(ctx, c, cm, mutate)
		} else {
			got, err = controllerutil.CreateOrUpdate(ctx, c, cm, mutate)
		}
		if err != nil || got != st.want {
			t.Fatalf("%s: got %q, %v; want %q", st.name, got, err, st.want)
		}
		if cm.Data["value"] != st.value || cm.ResourceVersion == "" {
			t.Fatalf("%s: object not the server's state: %+v", st.name, cm)
		}
	}

	cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "desired"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error { cm.Name = "renamed"; return nil }); err == nil {
		t.Error("renaming in mutate was accepted")
	}

	pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "p"}}
	spec := func() { pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}} }
	if res, err := controllerutil.CreateOrPatch(ctx, c, pod, func() error { spec(); return nil }); err != nil || res != controllerutil.OperationResultCreated {
		t.Fatalf("create pod: %q, %v", res, err)
	}
	res, err := controllerutil.CreateOrPatch(ctx, c, pod, func() error { pod.Status.Message = "hello"; return nil })
	if err != nil || res != controllerutil.OperationResultUpdatedStatusOnly {
		t.Fatalf("status only: %q, %v", res, err)
	}
	res, err = controllerutil.CreateOrPatch(ctx, c, pod, func() error {
		pod.Labels = map[string]string{"x": "y"}
		pod.Status.Message = "bye"
		return nil
	})
	if err != nil || res != controllerutil.OperationResultUpdatedStatus {
		t.Fatalf("both: %q, %v", res, err)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Message != "bye" || got.Labels["x"] != "y" {
		t.Fatalf("pod = labels %v, status message %q", got.Labels, got.Status.Message)
	}
}
