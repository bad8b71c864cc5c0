package volumebinder

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

func claim(mut ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "data", UID: "u1", Finalizers: []string{FinalizerPVCProtection}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{string(corev1.ResourceStorage): api.MustParseQuantity("1Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	for _, m := range mut {
		m(pvc)
	}
	return pvc
}

func consumer(name, node string, age time.Duration, phase corev1.PodPhase, claims ...string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: api.Time{Time: time.Unix(1000, 0).Add(-age)}},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		pvc        *corev1.PersistentVolumeClaim // nil: absent
		pods       []corev1.Pod
		wantNode   string // "" means no binding
		wantReason string
	}{{
		name: "absent claim",
	}, {
		name:       "no consumer yet: waits",
		pvc:        claim(),
		pods:       []corev1.Pod{consumer("unscheduled", "", 0, corev1.PodPending, "data"), consumer("other", "n1", 0, corev1.PodRunning, "other")},
		wantReason: reasonWaitForFirstConsumer,
	}, {
		name:       "bound to the node of the oldest scheduled consumer",
		pvc:        claim(),
		pods:       []corev1.Pod{consumer("young", "n2", 0, corev1.PodRunning, "data"), consumer("old", "n1", time.Minute, corev1.PodPending, "data")},
		wantNode:   "n1",
		wantReason: reasonProvisioned,
	}, {
		name:       "finished consumers do not count",
		pvc:        claim(),
		pods:       []corev1.Pod{consumer("done", "n1", time.Minute, corev1.PodSucceeded, "data")},
		wantReason: reasonWaitForFirstConsumer,
	}, {
		name:       "selector: not provisioned",
		pvc:        claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.Selector = &api.LabelSelector{} }),
		pods:       []corev1.Pod{consumer("p", "n1", 0, corev1.PodPending, "data")},
		wantReason: reasonProvisioningFailed,
	}, {
		name:       "pre-bound to a volume that does not exist: waits for it",
		pvc:        claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv-1" }),
		pods:       []corev1.Pod{consumer("p", "n1", 0, corev1.PodPending, "data")},
		wantReason: reasonFailedBinding,
	}, {
		name: "already bound: left alone",
		pvc: claim(func(c *corev1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{AnnSelectedNode: "n9"}
			c.Status.Phase = corev1.ClaimBound
		}),
		pods: []corev1.Pod{consumer("p", "n1", 0, corev1.PodPending, "data")},
	}, {
		name:       "node selected but status not written yet: finished on that node",
		pvc:        claim(func(c *corev1.PersistentVolumeClaim) { c.Annotations = map[string]string{AnnSelectedNode: "n9"} }),
		wantNode:   "n9",
		wantReason: reasonProvisioned,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sch, err := all.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			fc := fakeclient.New(sch)
			if tt.pvc != nil {
				if err := fc.Add(tt.pvc); err != nil {
					t.Fatal(err)
				}
			}
			for i := range tt.pods {
				if err := fc.Add(&tt.pods[i]); err != nil {
					t.Fatal(err)
				}
			}
			rec := &fakeclient.Recorder{}
			r := &reconciler{reader: fc, direct: fc, client: fc, recorder: rec}
			if _, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "data"}}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			events := rec.Events()
			if tt.wantReason == "" && len(events) > 0 || tt.wantReason != "" && (len(events) != 1 || !strings.HasPrefix(events[0], "Normal/"+tt.wantReason+":") && !strings.HasPrefix(events[0], "Warning/"+tt.wantReason+":")) {
				t.Errorf("events = %v, want %q", events, tt.wantReason)
			}
			if tt.wantNode == "" {
				if a := fc.Actions(); len(a) > 0 {
					t.Fatalf("writes %v, want the claim left alone", a)
				}
				return
			}
			if a, want := fc.Actions(), []string{"update PersistentVolumeClaim ns/data", "update-status PersistentVolumeClaim ns/data"}; !slices.Equal(a, want) {
				t.Fatalf("writes %v, want %v", a, want)
			}
			updated := &corev1.PersistentVolumeClaim{}
			if err := fc.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "data"}, updated); err != nil {
				t.Fatal(err)
			}
			statusUpdated := updated
			if got := updated.Annotations[AnnSelectedNode]; got != tt.wantNode {
				t.Errorf("selected node = %q, want %q", got, tt.wantNode)
			}
			if updated.Spec.VolumeName != "pvc-u1" || updated.Annotations[AnnBindCompleted] != "yes" {
				t.Errorf("volumeName %q, annotations %v", updated.Spec.VolumeName, updated.Annotations)
			}
			st := statusUpdated.Status
			if q := st.Capacity[string(corev1.ResourceStorage)]; st.Phase != corev1.ClaimBound || q.String() != "1Gi" || len(st.AccessModes) != 1 {
				t.Errorf("status = %+v, want Bound with 1Gi and the access modes", st)
			}
		})
	}
}
