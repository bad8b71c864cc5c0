package v1

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/converge-dev/converge/builtin/api/internal/apivalidation"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// BetaStorageClassAnnotation is the deprecated annotation that names a claim's
// storage class; it takes precedence over spec.storageClassName.
const BetaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

const pvcUpdateMsg = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"

var (
	supportedAccessModes = []string{string(ReadOnlyMany), string(ReadWriteMany), string(ReadWriteOnce), string(ReadWriteOncePod)}
	supportedVolumeModes = []string{string(PersistentVolumeBlock), string(PersistentVolumeFilesystem)}
)

// DefaultPersistentVolumeClaim applies Kubernetes' claim defaults: volumeMode
// Filesystem and status.phase Pending. StatefulSets apply it to their volume
// claim templates too.
func DefaultPersistentVolumeClaim(c *PersistentVolumeClaim) {
	DefaultPersistentVolumeClaimSpec(&c.Spec)
	if c.Status.Phase == "" {
		c.Status.Phase = ClaimPending
	}
}

// DefaultPersistentVolumeClaimSpec sets volumeMode Filesystem when unset; it is
// shared with ephemeral volumes' claim templates.
func DefaultPersistentVolumeClaimSpec(s *PersistentVolumeClaimSpec) {
	if s.VolumeMode == nil {
		s.VolumeMode = api.Ptr(PersistentVolumeFilesystem)
	}
}

// ValidatePersistentVolumeClaim checks a claim (metadata excluded).
func ValidatePersistentVolumeClaim(c *PersistentVolumeClaim) field.ErrorList {
	return ValidatePersistentVolumeClaimSpec(&c.Spec, field.NewPath("spec"))
}

// ValidatePersistentVolumeClaimSpec checks a claim's spec like Kubernetes: at
// least one supported access mode (ReadWriteOncePod alone), a positive storage
// request, a valid selector, storage class name and volume mode.
func ValidatePersistentVolumeClaimSpec(s *PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	errs = append(errs, apivalidation.ValidateLabelSelector(s.Selector, p.Child("selector"))...)
	errs = append(errs, validateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	sp := p.Child("resources").Key(string(ResourceStorage))
	if q, ok := s.Resources.Requests[string(ResourceStorage)]; !ok {
		errs = append(errs, field.Required(sp, ""))
	} else if m, err := q.MilliValue(); err != nil {
		errs = append(errs, field.Invalid(sp, q.String(), "must be a valid quantity"))
	} else if m <= 0 {
		errs = append(errs, field.Invalid(sp, q.String(), "must be greater than zero"))
	}
	if s.StorageClassName != nil && *s.StorageClassName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(*s.StorageClassName) {
			errs = append(errs, field.Invalid(p.Child("storageClassName"), *s.StorageClassName, msg))
		}
	}
	if s.VolumeMode != nil && !slices.Contains(supportedVolumeModes, string(*s.VolumeMode)) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), string(*s.VolumeMode), supportedVolumeModes))
	}
	return errs
}

// validateAccessModes checks a claim's or a volume's access modes: each
// supported, ReadWriteOncePod only alone.
func validateAccessModes(modes []PersistentVolumeAccessMode, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rwop, other := false, false
	for _, m := range modes {
		if !slices.Contains(supportedAccessModes, string(m)) {
			errs = append(errs, field.NotSupported(p, string(m), supportedAccessModes))
		}
		if m == ReadWriteOncePod {
			rwop = true
		} else {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// ValidatePersistentVolumeClaimUpdate checks an update: the spec is immutable
// except that an unbound claim may get a volumeName, a claim without a storage
// class may get one, a bound claim may change its storage request, and
// volumeAttributesClassName may change.
func ValidatePersistentVolumeClaimUpdate(c, old *PersistentVolumeClaim) field.ErrorList {
	errs := ValidatePersistentVolumeClaim(c)
	a, b := c.Spec, old.Spec
	if b.VolumeName == "" {
		b.VolumeName = a.VolumeName
	}
	// Retroactive default storage class: a claim without a class (nor the
	// beta class annotation) may be given one.
	if _, beta := old.Annotations["volume.beta.kubernetes.io/storage-class"]; b.StorageClassName == nil && !beta {
		b.StorageClassName = a.StorageClassName
	}
	a.VolumeAttributesClassName, b.VolumeAttributesClassName = nil, nil
	if old.Status.Phase == ClaimBound {
		a.Resources.Requests = withoutStorage(a.Resources.Requests)
		b.Resources.Requests = withoutStorage(b.Resources.Requests)
	}
	if !reflect.DeepEqual(a, b) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), pvcUpdateMsg))
	}
	return errs
}

func withoutStorage(l ResourceList) ResourceList {
	out := maps.Clone(l)
	delete(out, string(ResourceStorage))
	if len(out) == 0 {
		return nil
	}
	return out
}

// PersistentVolumeClaimPrinter renders kubectl's persistentvolumeclaim columns.
func PersistentVolumeClaimPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Status", Type: "string", Description: "phase represents the current phase of PersistentVolumeClaim."},
			{Name: "Volume", Type: "string", Description: "volumeName is the binding reference to the PersistentVolume backing this claim."},
			{Name: "Capacity", Type: "string", Description: "capacity represents the actual resources of the underlying volume."},
			{Name: "Access Modes", Type: "string", Description: "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"},
			{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
			{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
			ageColumn,
			{Name: "VolumeMode", Type: "string", Priority: 1, Description: "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec."},
		},
		Row: rowFunc(pvcRow),
	}
}

// pvcRow follows Kubernetes' printPersistentVolumeClaim: capacity and access
// modes are the bound volume's, shown only once the claim has a volume.
func pvcRow(c *PersistentVolumeClaim, now time.Time) []any {
	phase := string(c.Status.Phase)
	if c.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if c.Spec.VolumeName != "" {
		modes = AccessModesAsString(c.Status.AccessModes)
		capacity = "0"
		if q, ok := c.Status.Capacity[string(ResourceStorage)]; ok && q.String() != "" {
			capacity = q.String()
		}
	}
	vac, mode := "<unset>", "<unset>"
	if c.Spec.VolumeAttributesClassName != nil {
		vac = *c.Spec.VolumeAttributesClassName
	}
	if c.Spec.VolumeMode != nil {
		mode = string(*c.Spec.VolumeMode)
	}
	return []any{c.Name, phase, c.Spec.VolumeName, capacity, modes, PersistentVolumeClaimClass(c), vac,
		registry.Age(c.CreationTimestamp, now), mode}
}

// PersistentVolumeClaimClass is the claim's storage class: the beta annotation
// if present, else spec.storageClassName, else "".
func PersistentVolumeClaimClass(c *PersistentVolumeClaim) string {
	if class, ok := c.Annotations[BetaStorageClassAnnotation]; ok {
		return class
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

// AccessModesAsString abbreviates access modes as kubectl does ("RWO,ROX"), in
// the fixed order RWO, ROX, RWX, RWOP, without duplicates.
func AccessModesAsString(modes []PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode PersistentVolumeAccessMode
		abbr string
	}{{ReadWriteOnce, "RWO"}, {ReadOnlyMany, "ROX"}, {ReadWriteMany, "RWX"}, {ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.abbr)
		}
	}
	return strings.Join(out, ",")
}
