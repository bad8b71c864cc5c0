package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
)

func validPVC() *PersistentVolumeClaim {
	c := &PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "data", Namespace: "default"}}
	c.Spec.AccessModes = []PersistentVolumeAccessMode{ReadWriteOnce}
	c.Spec.Resources.Requests = ResourceList{"storage": api.MustParseQuantity("1Gi")}
	DefaultPersistentVolumeClaim(c)
	return c
}

func TestDefaultPersistentVolumeClaim(t *testing.T) {
	t.Parallel()
	out, unknown, errs := resourceByKind("PersistentVolumeClaim").Strategy.Canonicalize(map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "data"},
		"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
	})
	if len(unknown) > 0 || len(errs) > 0 {
		t.Fatalf("unknown %v, errs %v", unknown, errs)
	}
	if got := api.NestedString(out, "spec", "volumeMode"); got != "Filesystem" {
		t.Errorf("spec.volumeMode = %q, want Filesystem", got)
	}
	if got := api.NestedString(out, "status", "phase"); got != "Pending" {
		t.Errorf("status.phase = %q, want Pending", got)
	}
	block := &PersistentVolumeClaim{Spec: PersistentVolumeClaimSpec{VolumeMode: api.Ptr(PersistentVolumeBlock)}}
	DefaultPersistentVolumeClaim(block)
	if *block.Spec.VolumeMode != PersistentVolumeBlock {
		t.Errorf("volumeMode overwritten: %q", *block.Spec.VolumeMode)
	}
}

func TestValidatePersistentVolumeClaim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(c *PersistentVolumeClaim)
		want   string
	}{
		{"valid", func(*PersistentVolumeClaim) {}, ""},
		{"no access modes", func(c *PersistentVolumeClaim) { c.Spec.AccessModes = nil },
			"spec.accessModes: Required value: at least 1 access mode is required"},
		{"bad access mode", func(c *PersistentVolumeClaim) { c.Spec.AccessModes = []PersistentVolumeAccessMode{"ReadSometimes"} },
			`spec.accessModes: Unsupported value: "ReadSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`},
		{"rwop with others", func(c *PersistentVolumeClaim) {
			c.Spec.AccessModes = []PersistentVolumeAccessMode{ReadWriteOncePod, ReadWriteOnce}
		}, "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"},
		{"no storage", func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }, "spec.resources[storage]: Required value"},
		{"zero storage", func(c *PersistentVolumeClaim) { c.Spec.Resources.Requests["storage"] = api.MustParseQuantity("0") },
			`spec.resources[storage]: Invalid value: "0": must be greater than zero`},
		{"bad volume mode", func(c *PersistentVolumeClaim) { c.Spec.VolumeMode = api.Ptr(PersistentVolumeMode("Raw")) },
			`spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validPVC()
			tt.modify(c)
			if got := messages(ValidatePersistentVolumeClaim(c)); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidatePersistentVolumeClaimUpdate(t *testing.T) {
	t.Parallel()
	old := validPVC()
	c := validPVC()
	c.Spec.VolumeName = "pv-1"
	c.Spec.VolumeAttributesClassName = api.Ptr("gold")
	if got := messages(ValidatePersistentVolumeClaimUpdate(c, old)); got != "" {
		t.Errorf("binding an unbound claim: %s", got)
	}
	c.Spec.Resources.Requests = ResourceList{"storage": api.MustParseQuantity("2Gi")}
	want := "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
	if got := messages(ValidatePersistentVolumeClaimUpdate(c, old)); got != want {
		t.Errorf("resizing an unbound claim: %q", got)
	}
	old.Spec.VolumeName, old.Status.Phase = "pv-1", ClaimBound
	if got := messages(ValidatePersistentVolumeClaimUpdate(c, old)); got != "" {
		t.Errorf("resizing a bound claim: %s", got)
	}
}

// TestValidatePersistentVolumeClaimUpdateClass: a claim without a class may
// get one (Kubernetes' retroactive default storage class), not change it.
func TestValidatePersistentVolumeClaimUpdateClass(t *testing.T) {
	t.Parallel()
	old := validPVC()
	old.Spec.StorageClassName = nil
	c := validPVC()
	c.Spec.StorageClassName = api.Ptr("standard")
	if got := messages(ValidatePersistentVolumeClaimUpdate(c, old)); got != "" {
		t.Errorf("giving a claim without a class one: %s", got)
	}
	old.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "x"}
	if got := messages(ValidatePersistentVolumeClaimUpdate(c, old)); got == "" {
		t.Error("a claim with the beta class annotation got a class")
	}
	old = validPVC()
	old.Spec.StorageClassName = api.Ptr("gold")
	if got := messages(ValidatePersistentVolumeClaimUpdate(c, old)); got == "" {
		t.Error("changing a claim's class was allowed")
	}
}

func TestPersistentVolumeClaimPrinter(t *testing.T) {
	t.Parallel()
	p := PersistentVolumeClaimPrinter()
	var names []string
	for _, c := range p.Columns {
		names = append(names, c.Name)
	}
	wantCols := []string{"Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"}
	if diff := cmp.Diff(wantCols, names); diff != "" || p.Columns[8].Priority != 1 {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	pending := validPVC()
	pending.CreationTimestamp = ago(3 * time.Minute)
	pending.Spec.StorageClassName = api.Ptr("standard")
	if diff := cmp.Diff([]any{"data", "Pending", "", "", "", "standard", "<unset>", "3m", "Filesystem"}, printRow(t, p, pending)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	bound := validPVC()
	bound.CreationTimestamp = ago(2 * time.Hour)
	bound.Annotations = map[string]string{BetaStorageClassAnnotation: "fast"}
	bound.Spec.VolumeName = "pv-1"
	bound.Spec.VolumeAttributesClassName = api.Ptr("gold")
	bound.Status = PersistentVolumeClaimStatus{Phase: ClaimBound,
		AccessModes: []PersistentVolumeAccessMode{ReadWriteMany, ReadWriteOnce, ReadWriteOnce},
		Capacity:    ResourceList{"storage": api.MustParseQuantity("10Gi")}}
	if diff := cmp.Diff([]any{"data", "Bound", "pv-1", "10Gi", "RWO,RWX", "fast", "gold", "120m", "Filesystem"}, printRow(t, p, bound)); diff != "" {
		t.Errorf("bound (-want +got):\n%s", diff)
	}
	bound.DeletionTimestamp = api.NewTimePtr(printNow)
	if got := printRow(t, p, bound)[1]; got != "Terminating" {
		t.Errorf("deleting claim status %q", got)
	}
}
