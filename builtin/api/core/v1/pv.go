package v1

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

var supportedReclaimPolicies = []string{string(PersistentVolumeReclaimDelete), string(PersistentVolumeReclaimRecycle), string(PersistentVolumeReclaimRetain)}

// DefaultPersistentVolume applies Kubernetes' volume defaults: reclaim policy
// Retain, volumeMode Filesystem and status.phase Pending.
func DefaultPersistentVolume(v *PersistentVolume) {
	if v.Spec.PersistentVolumeReclaimPolicy == "" {
		v.Spec.PersistentVolumeReclaimPolicy = PersistentVolumeReclaimRetain
	}
	if v.Spec.VolumeMode == nil {
		v.Spec.VolumeMode = api.Ptr(PersistentVolumeFilesystem)
	}
	if v.Status.Phase == "" {
		v.Status.Phase = VolumePending
	}
}

// ValidatePersistentVolume checks a volume like Kubernetes: supported access
// modes (at least one), a valid positive storage capacity, exactly one volume
// source with its required fields, a supported reclaim policy and volume mode,
// and a valid storage class name.
func ValidatePersistentVolume(v *PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	s := &v.Spec
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), ""))
	}
	errs = append(errs, validateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	sp := p.Child("capacity").Key(string(ResourceStorage))
	if q, ok := s.Capacity[string(ResourceStorage)]; !ok || len(s.Capacity) != 1 {
		errs = append(errs, field.Required(p.Child("capacity"), "must specify storage capacity"))
	} else if m, err := q.MilliValue(); err != nil {
		errs = append(errs, field.Invalid(sp, q.String(), "must be a valid quantity"))
	} else if m <= 0 {
		errs = append(errs, field.Invalid(sp, q.String(), "must be greater than zero"))
	}
	if !slices.Contains(supportedReclaimPolicies, string(s.PersistentVolumeReclaimPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("persistentVolumeReclaimPolicy"), string(s.PersistentVolumeReclaimPolicy), supportedReclaimPolicies))
	}
	if s.StorageClassName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.StorageClassName) {
			errs = append(errs, field.Invalid(p.Child("storageClassName"), s.StorageClassName, msg))
		}
	}
	if s.VolumeMode != nil && !slices.Contains(supportedVolumeModes, string(*s.VolumeMode)) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), string(*s.VolumeMode), supportedVolumeModes))
	}
	if s.NodeAffinity != nil && (s.NodeAffinity.Required == nil || len(s.NodeAffinity.Required.NodeSelectorTerms) == 0) {
		errs = append(errs, field.Required(p.Child("nodeAffinity", "required", "nodeSelectorTerms"), "must have at least one node selector term"))
	}
	return append(errs, validatePersistentVolumeSource(&s.PersistentVolumeSource, v.Spec.NodeAffinity, p)...)
}

func validatePersistentVolumeSource(src *PersistentVolumeSource, aff *VolumeNodeAffinity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if h := src.HostPath; h != nil {
		n++
		if h.Path == "" {
			errs = append(errs, field.Required(p.Child("hostPath", "path"), ""))
		}
	}
	if f := src.NFS; f != nil {
		n++
		if f.Server == "" {
			errs = append(errs, field.Required(p.Child("nfs", "server"), ""))
		}
		if !strings.HasPrefix(f.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("nfs", "path"), f.Path, "must be an absolute path"))
		}
	}
	if l := src.Local; l != nil {
		n++
		if l.Path == "" {
			errs = append(errs, field.Required(p.Child("local", "path"), ""))
		}
		if aff == nil {
			errs = append(errs, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	}
	if c := src.CSI; c != nil {
		n++
		if c.Driver == "" {
			errs = append(errs, field.Required(p.Child("csi", "driver"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(c.Driver)) {
				errs = append(errs, field.Invalid(p.Child("csi", "driver"), c.Driver, msg))
			}
		}
		if c.VolumeHandle == "" {
			errs = append(errs, field.Required(p.Child("csi", "volumeHandle"), ""))
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a volume type"))
	case n > 1:
		errs = append(errs, field.Forbidden(p, "may not specify more than 1 volume type"))
	}
	return errs
}

// ValidatePersistentVolumeUpdate checks an update: the new volume must be
// valid and its source and volume mode are immutable.
func ValidatePersistentVolumeUpdate(v, old *PersistentVolume) field.ErrorList {
	errs := ValidatePersistentVolume(v)
	if !reflect.DeepEqual(v.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is forbidden."))
	}
	if old.Spec.VolumeMode != nil && v.Spec.VolumeMode != nil && *v.Spec.VolumeMode != *old.Spec.VolumeMode {
		errs = append(errs, field.Invalid(field.NewPath("spec", "volumeMode"), string(*v.Spec.VolumeMode), "field is immutable"))
	}
	return errs
}

// PersistentVolumePrinter is the table of kubectl get pv.
func PersistentVolumePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Capacity", Type: "string", Description: "capacity is the description of the persistent volume's resources and capacity."},
			{Name: "Access Modes", Type: "string", Description: "accessModes contains all ways the volume can be mounted."},
			{Name: "Reclaim Policy", Type: "string", Description: "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim."},
			{Name: "Status", Type: "string", Description: "phase indicates if a volume is available, bound to a claim, or released by a claim."},
			{Name: "Claim", Type: "string", Description: "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."},
			{Name: "StorageClass", Type: "string", Description: "storageClassName is the name of StorageClass to which this persistent volume belongs."},
			{Name: "VolumeAttributesClass", Type: "string", Description: "Name of VolumeAttributesClass to which this persistent volume belongs."},
			{Name: "Reason", Type: "string", Description: "reason is a brief CamelCase string that describes any failure."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
			{Name: "VolumeMode", Type: "string", Priority: 1, Description: "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			v, err := registry.FromMap[PersistentVolume](obj)
			if err != nil {
				return nil, fmt.Errorf("decode persistentvolume: %w", err)
			}
			capacity := ""
			if q, ok := v.Spec.Capacity[string(ResourceStorage)]; ok {
				capacity = q.String()
			}
			claim := ""
			if c := v.Spec.ClaimRef; c != nil {
				claim = c.Namespace + "/" + c.Name
			}
			vac, mode := "<unset>", ""
			if v.Spec.VolumeAttributesClassName != nil {
				vac = *v.Spec.VolumeAttributesClassName
			}
			if v.Spec.VolumeMode != nil {
				mode = string(*v.Spec.VolumeMode)
			}
			return []any{v.Name, capacity, AccessModesAsString(v.Spec.AccessModes), string(v.Spec.PersistentVolumeReclaimPolicy),
				string(v.Status.Phase), claim, v.Spec.StorageClassName, vac, v.Status.Reason, registry.Age(v.CreationTimestamp, now), mode}, nil
		},
	}
}
