package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestValidatePersistentVolume(t *testing.T) {
	t.Parallel()
	base := func(mut func(*PersistentVolume)) *PersistentVolume {
		v := &PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv"}, Spec: PersistentVolumeSpec{
			Capacity:               ResourceList{"storage": api.MustParseQuantity("1Gi")},
			AccessModes:            []PersistentVolumeAccessMode{ReadWriteOnce},
			PersistentVolumeSource: PersistentVolumeSource{HostPath: &HostPathVolumeSource{Path: "/tmp/pv"}},
		}}
		mut(v)
		DefaultPersistentVolume(v)
		return v
	}
	affinity := &VolumeNodeAffinity{Required: &NodeSelector{NodeSelectorTerms: []NodeSelectorTerm{{
		MatchExpressions: []NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: NodeSelectorOpIn, Values: []string{"n1"}}}}}}}
	for _, tc := range []struct {
		name string
		pv   *PersistentVolume
		want string // "" for valid
	}{
		{"hostPath", base(func(*PersistentVolume) {}), ""},
		{"csi", base(func(v *PersistentVolume) {
			v.Spec.PersistentVolumeSource = PersistentVolumeSource{CSI: &CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h"}}
		}), ""},
		{"nfs", base(func(v *PersistentVolume) {
			v.Spec.PersistentVolumeSource = PersistentVolumeSource{NFS: &NFSVolumeSource{Server: "10.0.0.1", Path: "/exports"}}
		}), ""},
		{"local with affinity", base(func(v *PersistentVolume) {
			v.Spec.PersistentVolumeSource = PersistentVolumeSource{Local: &LocalVolumeSource{Path: "/mnt/disk"}}
			v.Spec.NodeAffinity = affinity
		}), ""},
		{"local without affinity", base(func(v *PersistentVolume) {
			v.Spec.PersistentVolumeSource = PersistentVolumeSource{Local: &LocalVolumeSource{Path: "/mnt/disk"}}
		}), "spec.nodeAffinity: Required value"},
		{"no source", base(func(v *PersistentVolume) { v.Spec.PersistentVolumeSource = PersistentVolumeSource{} }), "spec: Required value: must specify a volume type"},
		{"two sources", base(func(v *PersistentVolume) { v.Spec.NFS = &NFSVolumeSource{Server: "s", Path: "/x"} }), "may not specify more than 1 volume type"},
		{"no capacity", base(func(v *PersistentVolume) { v.Spec.Capacity = nil }), "spec.capacity: Required value"},
		{"zero capacity", base(func(v *PersistentVolume) { v.Spec.Capacity = ResourceList{"storage": api.MustParseQuantity("0")} }), "must be greater than zero"},
		{"no access modes", base(func(v *PersistentVolume) { v.Spec.AccessModes = nil }), "spec.accessModes: Required value"},
		{"bad access mode", base(func(v *PersistentVolume) { v.Spec.AccessModes = []PersistentVolumeAccessMode{"Sometimes"} }), "spec.accessModes: Unsupported value"},
		{"bad reclaim policy", base(func(v *PersistentVolume) { v.Spec.PersistentVolumeReclaimPolicy = "Keep" }), "spec.persistentVolumeReclaimPolicy: Unsupported value"},
		{"bad class", base(func(v *PersistentVolume) { v.Spec.StorageClassName = "Not_Valid" }), "spec.storageClassName: Invalid value"},
		{"csi without handle", base(func(v *PersistentVolume) {
			v.Spec.PersistentVolumeSource = PersistentVolumeSource{CSI: &CSIPersistentVolumeSource{Driver: "csi.example.com"}}
		}), "spec.csi.volumeHandle: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ValidatePersistentVolume(tc.pv).ToError()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("unexpected errors: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v, want one containing %q", got, tc.want)
			}
		})
	}
	old := base(func(*PersistentVolume) {})
	moved := base(func(v *PersistentVolume) { v.Spec.HostPath = &HostPathVolumeSource{Path: "/elsewhere"} })
	if err := ValidatePersistentVolumeUpdate(moved, old).ToError(); err == nil || !strings.Contains(err.Error(), "spec.persistentvolumesource") {
		t.Errorf("changing the source: %v", err)
	}
	relabeled := base(func(v *PersistentVolume) { v.Labels = map[string]string{"a": "b"}; v.Spec.StorageClassName = "manual" })
	if errs := ValidatePersistentVolumeUpdate(relabeled, old); len(errs) != 0 {
		t.Errorf("changing labels and class: %v", errs)
	}
}
