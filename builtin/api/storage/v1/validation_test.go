package v1

import (
	"strings"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

func TestValidateCSINode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		drivers []CSINodeDriver
		want    string // "" for valid
	}{
		{"none", nil, ""},
		{"one", []CSINodeDriver{{Name: "csi.example.com", NodeID: "n1", Allocatable: &VolumeNodeResources{Count: api.Ptr[int32](3)}}}, ""},
		{"unnamed", []CSINodeDriver{{NodeID: "n1"}}, "spec.drivers[0].name: Required value"},
		{"twice", []CSINodeDriver{{Name: "d", NodeID: "n1"}, {Name: "d", NodeID: "n1"}}, `spec.drivers[1].name: Duplicate value: "d"`},
		{"no node ID", []CSINodeDriver{{Name: "d"}}, "spec.drivers[0].nodeID: Required value"},
		{"negative count", []CSINodeDriver{{Name: "d", NodeID: "n1", Allocatable: &VolumeNodeResources{Count: api.Ptr[int32](-1)}}}, "must be greater than or equal to 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ValidateCSINode(&CSINode{ObjectMeta: api.ObjectMeta{Name: "n1"}, Spec: CSINodeSpec{Drivers: tc.drivers}}).ToError()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("unexpected errors: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v, want one containing %q", got, tc.want)
			}
		})
	}
}

func TestValidateStorageKinds(t *testing.T) {
	t.Parallel()
	retain, recycle := corev1.PersistentVolumeReclaimRetain, corev1.PersistentVolumeReclaimRecycle
	late, bogus := VolumeBindingWaitForFirstConsumer, VolumeBindingMode("Later")
	sc := func(mut func(*StorageClass)) field.ErrorList {
		c := &StorageClass{Provisioner: "kubernetes.io/no-provisioner"}
		mut(c)
		return ValidateStorageClass(c)
	}
	drv := func(mut func(*CSIDriver)) field.ErrorList {
		d := &CSIDriver{ObjectMeta: api.ObjectMeta{Name: "csi.example.com"}}
		mut(d)
		return ValidateCSIDriver(d)
	}
	va := func(mut func(*VolumeAttachment)) field.ErrorList {
		v := &VolumeAttachment{Spec: VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "n1",
			Source: VolumeAttachmentSource{PersistentVolumeName: api.Ptr("pv")}}}
		mut(v)
		return ValidateVolumeAttachment(v)
	}
	csc := func(mut func(*CSIStorageCapacity)) field.ErrorList {
		c := &CSIStorageCapacity{StorageClassName: "sc"}
		mut(c)
		return ValidateCSIStorageCapacity(c)
	}
	for _, tc := range []struct {
		name string
		errs field.ErrorList
		want string // "" for valid
	}{
		{"storage class", sc(func(*StorageClass) {}), ""},
		{"storage class full", sc(func(c *StorageClass) {
			c.ReclaimPolicy, c.VolumeBindingMode = &retain, &late
			c.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "zone", Values: []string{"a"}}}}}
		}), ""},
		{"no provisioner", sc(func(c *StorageClass) { c.Provisioner = "" }), "provisioner: Required value"},
		{"recycle", sc(func(c *StorageClass) { c.ReclaimPolicy = &recycle }), `reclaimPolicy: Unsupported value: "Recycle"`},
		{"binding mode", sc(func(c *StorageClass) { c.VolumeBindingMode = &bogus }), `volumeBindingMode: Unsupported value: "Later"`},
		{"empty topology values", sc(func(c *StorageClass) {
			c.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: "zone"}}}}
		}), "allowedTopologies[0].matchLabelExpressions[0].values: Required value"},
		{"csi driver", drv(func(*CSIDriver) {}), ""},
		{"driver name", drv(func(d *CSIDriver) { d.Name = "not_a_name" }), "metadata.name: Invalid value"},
		{"lifecycle mode", drv(func(d *CSIDriver) { d.Spec.VolumeLifecycleModes = []VolumeLifecycleMode{"Sometimes"} }), "spec.volumeLifecycleModes: Unsupported value"},
		{"token audiences", drv(func(d *CSIDriver) { d.Spec.TokenRequests = []TokenRequest{{Audience: "a"}, {Audience: "a"}} }), "spec.tokenRequests[1].audience: Duplicate value"},
		{"volume attachment", va(func(*VolumeAttachment) {}), ""},
		{"no node", va(func(v *VolumeAttachment) { v.Spec.NodeName = "" }), "spec.nodeName: Required value"},
		{"no source", va(func(v *VolumeAttachment) { v.Spec.Source = VolumeAttachmentSource{} }), "spec.source: Required value"},
		{"two sources", va(func(v *VolumeAttachment) {
			v.Spec.Source.InlineVolumeSpec = &corev1.PersistentVolumeSpec{}
		}), "spec.source: Forbidden"},
		{"capacity", csc(func(c *CSIStorageCapacity) { c.Capacity = api.Ptr(api.MustParseQuantity("1Gi")) }), ""},
		{"no class", csc(func(c *CSIStorageCapacity) { c.StorageClassName = "" }), "storageClassName: Required value"},
		{"negative capacity", csc(func(c *CSIStorageCapacity) { c.Capacity = api.Ptr(api.MustParseQuantity("-1")) }), "capacity: Invalid value"},
		{"attributes class", ValidateVolumeAttributesClass(&VolumeAttributesClass{DriverName: "csi.example.com", Parameters: map[string]string{"iops": "1"}}), ""},
		{"attributes class without parameters", ValidateVolumeAttributesClass(&VolumeAttributesClass{DriverName: "csi.example.com"}), "parameters: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.errs.ToError()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("unexpected errors: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v, want one containing %q", got, tc.want)
			}
		})
	}
}

func TestValidateStorageUpdates(t *testing.T) {
	t.Parallel()
	old := &StorageClass{Provisioner: "p", Parameters: map[string]string{"a": "1"}}
	DefaultStorageClass(old)
	c := *old
	c.Parameters = map[string]string{"a": "2"}
	if errs := ValidateStorageClassUpdate(&c, old); len(errs) != 1 || errs[0].Field != "parameters" {
		t.Errorf("changing parameters: %v", errs)
	}
	c = *old
	c.AllowVolumeExpansion = api.Ptr(true)
	if errs := ValidateStorageClassUpdate(&c, old); len(errs) != 0 {
		t.Errorf("allowing expansion: %v", errs)
	}
	va := &VolumeAttachment{Spec: VolumeAttachmentSpec{Attacher: "a", NodeName: "n1", Source: VolumeAttachmentSource{PersistentVolumeName: api.Ptr("pv")}}}
	moved := *va
	moved.Spec.NodeName = "n2"
	if errs := ValidateVolumeAttachmentUpdate(&moved, va); len(errs) != 1 || errs[0].Field != "spec" {
		t.Errorf("moving a VolumeAttachment: %v", errs)
	}
	d := &CSIDriver{ObjectMeta: api.ObjectMeta{Name: "d"}}
	DefaultCSIDriver(d)
	d2 := *d
	d2.Spec.AttachRequired = api.Ptr(false)
	if errs := ValidateCSIDriverUpdate(&d2, d); len(errs) != 1 || errs[0].Field != "spec.attachRequired" {
		t.Errorf("changing attachRequired: %v", errs)
	}
}
