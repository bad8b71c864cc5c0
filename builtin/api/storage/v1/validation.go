package v1

import (
	"reflect"
	"slices"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/api/internal/apivalidation"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

var (
	supportedReclaimPolicies = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}
	supportedBindingModes    = []string{string(VolumeBindingImmediate), string(VolumeBindingWaitForFirstConsumer)}
	supportedLifecycleModes  = []string{string(VolumeLifecyclePersistent), string(VolumeLifecycleEphemeral)}
	supportedFSGroupPolicies = []string{string(ReadWriteOnceWithFSTypeFSGroupPolicy), string(FileFSGroupPolicy), string(NoneFSGroupPolicy)}
)

func immutable(p *field.Path, v any) *field.Error {
	return field.Invalid(p, v, "field is immutable")
}

// validateDriverName checks a CSI driver or provisioner name: required, at
// most 63 characters, a DNS subdomain (upper case allowed, as in Kubernetes).
func validateDriverName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(p, name, 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(lower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// validateProvisioner checks a StorageClass provisioner or a
// VolumeAttributesClass driver name: required, a qualified name
// ("kubernetes.io/no-provisioner"), upper case allowed.
func validateProvisioner(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(lower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// DefaultStorageClass applies Kubernetes' defaults: reclaimPolicy Delete and
// volumeBindingMode Immediate.
func DefaultStorageClass(c *StorageClass) {
	if c.ReclaimPolicy == nil {
		p := corev1.PersistentVolumeReclaimDelete
		c.ReclaimPolicy = &p
	}
	if c.VolumeBindingMode == nil {
		m := VolumeBindingImmediate
		c.VolumeBindingMode = &m
	}
}

// ValidateStorageClass checks a StorageClass: a valid provisioner, a
// supported reclaim policy and binding mode, and valid topology terms.
func ValidateStorageClass(c *StorageClass) field.ErrorList {
	errs := validateProvisioner(c.Provisioner, field.NewPath("provisioner"))
	if c.ReclaimPolicy != nil && !slices.Contains(supportedReclaimPolicies, string(*c.ReclaimPolicy)) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), string(*c.ReclaimPolicy), supportedReclaimPolicies))
	}
	if c.VolumeBindingMode != nil && !slices.Contains(supportedBindingModes, string(*c.VolumeBindingMode)) {
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), string(*c.VolumeBindingMode), supportedBindingModes))
	}
	for i, term := range c.AllowedTopologies {
		tp := field.NewPath("allowedTopologies").Index(i)
		if len(term.MatchLabelExpressions) == 0 {
			errs = append(errs, field.Required(tp, "must have at least one label requirement"))
		}
		for j, r := range term.MatchLabelExpressions {
			rp := tp.Child("matchLabelExpressions").Index(j)
			for _, msg := range validation.IsQualifiedName(r.Key) {
				errs = append(errs, field.Invalid(rp.Child("key"), r.Key, msg))
			}
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must specify as least one value"))
			}
		}
	}
	return errs
}

// ValidateStorageClassUpdate checks an update: parameters, provisioner,
// reclaim policy and binding mode are immutable.
func ValidateStorageClassUpdate(c, old *StorageClass) field.ErrorList {
	errs := ValidateStorageClass(c)
	if !reflect.DeepEqual(c.Parameters, old.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if c.Provisioner != old.Provisioner {
		errs = append(errs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !reflect.DeepEqual(c.ReclaimPolicy, old.ReclaimPolicy) {
		errs = append(errs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	if !reflect.DeepEqual(c.VolumeBindingMode, old.VolumeBindingMode) {
		errs = append(errs, immutable(field.NewPath("volumeBindingMode"), c.VolumeBindingMode))
	}
	return errs
}

// DefaultCSIDriver applies Kubernetes' defaults: attachRequired true, podInfoOnMount,
// storageCapacity, requiresRepublish and seLinuxMount false, fsGroupPolicy
// ReadWriteOnceWithFSType and the Persistent lifecycle mode.
func DefaultCSIDriver(d *CSIDriver) {
	t := true
	s := &d.Spec
	if s.AttachRequired == nil {
		s.AttachRequired = &t
	}
	for _, p := range []**bool{&s.PodInfoOnMount, &s.StorageCapacity, &s.RequiresRepublish, &s.SELinuxMount} {
		if *p == nil {
			*p = new(bool)
		}
	}
	if s.FSGroupPolicy == nil {
		p := ReadWriteOnceWithFSTypeFSGroupPolicy
		s.FSGroupPolicy = &p
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []VolumeLifecycleMode{VolumeLifecyclePersistent}
	}
}

// ValidateCSIDriver checks a CSIDriver: its name is a driver name, the
// lifecycle modes and fsGroup policy are supported, token audiences unique.
func ValidateCSIDriver(d *CSIDriver) field.ErrorList {
	errs := validateDriverName(d.Name, field.NewPath("metadata", "name"))
	p := field.NewPath("spec")
	for _, m := range d.Spec.VolumeLifecycleModes {
		if !slices.Contains(supportedLifecycleModes, string(m)) {
			errs = append(errs, field.NotSupported(p.Child("volumeLifecycleModes"), string(m), supportedLifecycleModes))
		}
	}
	if g := d.Spec.FSGroupPolicy; g != nil && !slices.Contains(supportedFSGroupPolicies, string(*g)) {
		errs = append(errs, field.NotSupported(p.Child("fsGroupPolicy"), string(*g), supportedFSGroupPolicies))
	}
	seen := map[string]bool{}
	for i, t := range d.Spec.TokenRequests {
		tp := p.Child("tokenRequests").Index(i)
		if seen[t.Audience] {
			errs = append(errs, field.Duplicate(tp.Child("audience"), t.Audience))
		}
		seen[t.Audience] = true
		if t.ExpirationSeconds != nil && (*t.ExpirationSeconds < 600 || *t.ExpirationSeconds > 1<<32) {
			errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not be less than 10 minutes or more than 2^32 seconds"))
		}
	}
	if n := d.Spec.NodeAllocatableUpdatePeriodSeconds; n != nil && *n < 10 {
		errs = append(errs, field.Invalid(p.Child("nodeAllocatableUpdatePeriodSeconds"), *n, "must be greater than or equal to 10 seconds"))
	}
	return errs
}

// ValidateCSIDriverUpdate checks an update: attachRequired and
// volumeLifecycleModes are immutable.
func ValidateCSIDriverUpdate(d, old *CSIDriver) field.ErrorList {
	errs := ValidateCSIDriver(d)
	p := field.NewPath("spec")
	if !reflect.DeepEqual(d.Spec.AttachRequired, old.Spec.AttachRequired) {
		errs = append(errs, immutable(p.Child("attachRequired"), d.Spec.AttachRequired))
	}
	if !reflect.DeepEqual(d.Spec.VolumeLifecycleModes, old.Spec.VolumeLifecycleModes) {
		errs = append(errs, immutable(p.Child("volumeLifecycleModes"), d.Spec.VolumeLifecycleModes))
	}
	return errs
}

// ValidateVolumeAttachment checks a VolumeAttachment: attacher a driver name,
// a node name, and exactly one source.
func ValidateVolumeAttachment(va *VolumeAttachment) field.ErrorList {
	p := field.NewPath("spec")
	errs := validateDriverName(va.Spec.Attacher, p.Child("attacher"))
	if va.Spec.NodeName == "" {
		errs = append(errs, field.Required(p.Child("nodeName"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(va.Spec.NodeName) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), va.Spec.NodeName, msg))
		}
	}
	src, sp := va.Spec.Source, p.Child("source")
	switch {
	case src.PersistentVolumeName == nil && src.InlineVolumeSpec == nil:
		errs = append(errs, field.Required(sp, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.PersistentVolumeName != nil && src.InlineVolumeSpec != nil:
		errs = append(errs, field.Forbidden(sp, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		errs = append(errs, field.Required(sp.Child("persistentVolumeName"), "must specify non empty persistentVolumeName"))
	case src.InlineVolumeSpec != nil && src.InlineVolumeSpec.CSI == nil:
		errs = append(errs, field.Required(sp.Child("inlineVolumeSpec", "csi"), "inline volume spec must be a CSI volume"))
	}
	return append(errs, validateVolumeAttachmentStatus(&va.Status)...)
}

func validateVolumeAttachmentStatus(s *VolumeAttachmentStatus) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("status")
	for _, e := range []struct {
		name string
		v    *VolumeError
	}{{"attachError", s.AttachError}, {"detachError", s.DetachError}} {
		if e.v != nil && len(e.v.Message) > 1024 {
			errs = append(errs, field.TooLong(sp.Child(e.name, "message"), e.v.Message, 1024))
		}
	}
	size := 0
	for k, v := range s.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > 256*1024 {
		errs = append(errs, field.TooLong(sp.Child("attachmentMetadata"), "", 256*1024))
	}
	return errs
}

// ValidateVolumeAttachmentUpdate checks an update: the spec is immutable.
func ValidateVolumeAttachmentUpdate(va, old *VolumeAttachment) field.ErrorList {
	errs := ValidateVolumeAttachment(va)
	if !reflect.DeepEqual(va.Spec, old.Spec) {
		errs = append(errs, field.Invalid(field.NewPath("spec"), "", "field is immutable"))
	}
	return errs
}

// ValidateCSIStorageCapacity checks a CSIStorageCapacity: a valid node
// topology selector, a storage class name, non-negative quantities.
func ValidateCSIStorageCapacity(c *CSIStorageCapacity) field.ErrorList {
	errs := apivalidation.ValidateLabelSelector(c.NodeTopology, field.NewPath("nodeTopology"))
	if c.StorageClassName == "" {
		errs = append(errs, field.Required(field.NewPath("storageClassName"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(c.StorageClassName) {
			errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
		}
	}
	if c.Capacity != nil {
		if m, err := c.Capacity.MilliValue(); err != nil || m < 0 {
			errs = append(errs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), "must be greater than or equal to 0"))
		}
	}
	if c.MaximumVolumeSize != nil {
		if m, err := c.MaximumVolumeSize.MilliValue(); err != nil || m < 0 {
			errs = append(errs, field.Invalid(field.NewPath("maximumVolumeSize"), c.MaximumVolumeSize.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

// ValidateCSIStorageCapacityUpdate checks an update: everything but capacity,
// maximumVolumeSize and metadata is immutable.
func ValidateCSIStorageCapacityUpdate(c, old *CSIStorageCapacity) field.ErrorList {
	errs := ValidateCSIStorageCapacity(c)
	if !reflect.DeepEqual(c.NodeTopology, old.NodeTopology) {
		errs = append(errs, immutable(field.NewPath("nodeTopology"), c.NodeTopology))
	}
	if c.StorageClassName != old.StorageClassName {
		errs = append(errs, immutable(field.NewPath("storageClassName"), c.StorageClassName))
	}
	return errs
}

// ValidateVolumeAttributesClass checks a VolumeAttributesClass: a valid
// driver name and at least one parameter.
func ValidateVolumeAttributesClass(c *VolumeAttributesClass) field.ErrorList {
	errs := validateProvisioner(c.DriverName, field.NewPath("driverName"))
	if len(c.Parameters) == 0 {
		errs = append(errs, field.Required(field.NewPath("parameters"), "must provide at least 1 parameter"))
	}
	return errs
}

// ValidateVolumeAttributesClassUpdate checks an update: driverName and
// parameters are immutable.
func ValidateVolumeAttributesClassUpdate(c, old *VolumeAttributesClass) field.ErrorList {
	errs := ValidateVolumeAttributesClass(c)
	if c.DriverName != old.DriverName {
		errs = append(errs, immutable(field.NewPath("driverName"), c.DriverName))
	}
	if !reflect.DeepEqual(c.Parameters, old.Parameters) {
		errs = append(errs, immutable(field.NewPath("parameters"), c.Parameters))
	}
	return errs
}

// ValidateCSINode checks a CSINode: each driver named once, with a node ID,
// and a non-negative allocatable count.
func ValidateCSINode(n *CSINode) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		p := field.NewPath("spec", "drivers").Index(i)
		switch {
		case d.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case seen[d.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), d.Name))
		}
		seen[d.Name] = true
		if d.NodeID == "" {
			errs = append(errs, field.Required(p.Child("nodeID"), ""))
		}
		if a := d.Allocatable; a != nil && a.Count != nil && *a.Count < 0 {
			errs = append(errs, field.Invalid(p.Child("allocatable", "count"), *a.Count, "must be greater than or equal to 0"))
		}
	}
	return errs
}

// AnnIsDefaultClass marks the StorageClass a claim without one gets.
const AnnIsDefaultClass = "storageclass.kubernetes.io/is-default-class"

// DefaultClass returns the default StorageClass among classes, as Kubernetes
// chooses it when several are annotated AnnIsDefaultClass "true": the newest,
// then the first by name; nil when none is.
func DefaultClass(classes []StorageClass) *StorageClass {
	var def *StorageClass
	for i := range classes {
		sc := &classes[i]
		if sc.Annotations[AnnIsDefaultClass] != "true" {
			continue
		}
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			sc.CreationTimestamp.Time.Equal(def.CreationTimestamp.Time) && sc.Name < def.Name {
			def = sc
		}
	}
	return def
}
