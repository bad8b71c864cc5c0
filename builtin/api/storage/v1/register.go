package v1

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

var (
	nameColumn = registry.Column{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."}
	ageColumn  = registry.Column{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."}
)

// Resources returns the storage.k8s.io/v1 resources: storageclasses,
// csidrivers, csinodes, volumeattachments and volumeattributesclasses
// (cluster-scoped) and csistoragecapacities (namespaced). Each call builds
// fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "storageclasses", Kind: "StorageClass", ListKind: "StorageClassList", Singular: "storageclass",
			ShortNames:     []string{"sc"},
			Strategy:       registry.Typed[StorageClass]{Default: DefaultStorageClass, Validate: ValidateStorageClass, ValidateUpdateFunc: ValidateStorageClassUpdate},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[StorageClass](),
			Printer:        storageClassPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "csidrivers", Kind: "CSIDriver", ListKind: "CSIDriverList", Singular: "csidriver",
			Strategy:       registry.Typed[CSIDriver]{Default: DefaultCSIDriver, Validate: ValidateCSIDriver, ValidateUpdateFunc: ValidateCSIDriverUpdate},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[CSIDriver](),
			Printer:        csiDriverPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "csinodes", Kind: "CSINode", ListKind: "CSINodeList", Singular: "csinode",
			Strategy:       registry.Typed[CSINode]{Validate: ValidateCSINode, ValidateUpdateFunc: func(n, _ *CSINode) field.ErrorList { return ValidateCSINode(n) }},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[CSINode](),
			Printer: &registry.Printer{
				Columns: []registry.Column{
					nameColumn,
					{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
					ageColumn,
				},
				Row: func(obj map[string]any, now time.Time) ([]any, error) {
					n, err := registry.FromMap[CSINode](obj)
					if err != nil {
						return nil, fmt.Errorf("decode csinode: %w", err)
					}
					return []any{n.Name, int64(len(n.Spec.Drivers)), registry.Age(n.CreationTimestamp, now)}, nil
				},
			},
		},
		{
			GroupVersion: GroupVersion, Resource: "csistoragecapacities", Kind: "CSIStorageCapacity", ListKind: "CSIStorageCapacityList", Singular: "csistoragecapacity",
			Namespaced:     true,
			Strategy:       registry.Typed[CSIStorageCapacity]{Validate: ValidateCSIStorageCapacity, ValidateUpdateFunc: ValidateCSIStorageCapacityUpdate},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[CSIStorageCapacity](),
			Printer: &registry.Printer{
				Columns: []registry.Column{
					nameColumn,
					{Name: "StorageClassName", Type: "string", Description: "storageClassName represents the name of the StorageClass that the reported capacity applies to."},
					{Name: "Capacity", Type: "string", Description: "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields."},
				},
				Row: func(obj map[string]any, _ time.Time) ([]any, error) {
					c, err := registry.FromMap[CSIStorageCapacity](obj)
					if err != nil {
						return nil, fmt.Errorf("decode csistoragecapacity: %w", err)
					}
					capacity := "<unset>"
					if c.Capacity != nil {
						capacity = c.Capacity.String()
					}
					return []any{c.Name, c.StorageClassName, capacity}, nil
				},
			},
		},
		{
			GroupVersion: GroupVersion, Resource: "volumeattachments", Kind: "VolumeAttachment", ListKind: "VolumeAttachmentList", Singular: "volumeattachment",
			Strategy:          registry.Typed[VolumeAttachment]{Validate: ValidateVolumeAttachment, ValidateUpdateFunc: ValidateVolumeAttachmentUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[VolumeAttachment](),
			Printer:        volumeAttachmentPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "volumeattributesclasses", Kind: "VolumeAttributesClass", ListKind: "VolumeAttributesClassList", Singular: "volumeattributesclass",
			ShortNames:     []string{"vac"},
			Strategy:       registry.Typed[VolumeAttributesClass]{Validate: ValidateVolumeAttributesClass, ValidateUpdateFunc: ValidateVolumeAttributesClassUpdate},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[VolumeAttributesClass](),
			Printer: &registry.Printer{
				Columns: []registry.Column{
					nameColumn,
					{Name: "DriverName", Type: "string", Description: "Name of the CSI driver"},
					ageColumn,
				},
				Row: func(obj map[string]any, now time.Time) ([]any, error) {
					c, err := registry.FromMap[VolumeAttributesClass](obj)
					if err != nil {
						return nil, fmt.Errorf("decode volumeattributesclass: %w", err)
					}
					return []any{c.Name, c.DriverName, registry.Age(c.CreationTimestamp, now)}, nil
				},
			},
		},
	}
}

// AddToScheme registers the storage.k8s.io/v1 kinds and their lists in s.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&StorageClass{}, &StorageClassList{},
		&CSIDriver{}, &CSIDriverList{},
		&CSINode{}, &CSINodeList{},
		&CSIStorageCapacity{}, &CSIStorageCapacityList{},
		&VolumeAttachment{}, &VolumeAttachmentList{},
		&VolumeAttributesClass{}, &VolumeAttributesClassList{},
	)
}

func storageClassPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Provisioner", Type: "string", Description: "provisioner indicates the type of the provisioner."},
			{Name: "ReclaimPolicy", Type: "string", Description: "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class."},
			{Name: "VolumeBindingMode", Type: "string", Description: "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound."},
			{Name: "AllowVolumeExpansion", Type: "string", Description: "allowVolumeExpansion shows whether the storage class allow volume expand."},
			ageColumn,
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			c, err := registry.FromMap[StorageClass](obj)
			if err != nil {
				return nil, fmt.Errorf("decode storageclass: %w", err)
			}
			name := c.Name
			if c.Annotations[AnnIsDefaultClass] == "true" {
				name += " (default)"
			}
			reclaim, binding := "Delete", "Immediate"
			if c.ReclaimPolicy != nil {
				reclaim = string(*c.ReclaimPolicy)
			}
			if c.VolumeBindingMode != nil {
				binding = string(*c.VolumeBindingMode)
			}
			expand := c.AllowVolumeExpansion != nil && *c.AllowVolumeExpansion
			return []any{name, c.Provisioner, reclaim, binding, strconv.FormatBool(expand), registry.Age(c.CreationTimestamp, now)}, nil
		},
	}
}

func csiDriverPrinter() *registry.Printer {
	b := func(p *bool) string {
		if p == nil {
			return "<unset>"
		}
		return strconv.FormatBool(*p)
	}
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "AttachRequired", Type: "boolean", Description: "attachRequired indicates this CSI volume driver requires an attach operation."},
			{Name: "PodInfoOnMount", Type: "boolean", Description: "podInfoOnMount indicates this CSI volume driver requires additional pod information during mount operations."},
			{Name: "StorageCapacity", Type: "boolean", Description: "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity."},
			{Name: "TokenRequests", Type: "string", Description: "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication."},
			{Name: "RequiresRepublish", Type: "boolean", Description: "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called."},
			{Name: "Modes", Type: "string", Description: "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports."},
			ageColumn,
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			d, err := registry.FromMap[CSIDriver](obj)
			if err != nil {
				return nil, fmt.Errorf("decode csidriver: %w", err)
			}
			tokens := "<unset>"
			if len(d.Spec.TokenRequests) > 0 {
				auds := make([]string, len(d.Spec.TokenRequests))
				for i, t := range d.Spec.TokenRequests {
					auds[i] = t.Audience
				}
				tokens = strings.Join(auds, ",")
			}
			modes := make([]string, len(d.Spec.VolumeLifecycleModes))
			for i, m := range d.Spec.VolumeLifecycleModes {
				modes[i] = string(m)
			}
			m := strings.Join(modes, ",")
			if m == "" {
				m = "<none>"
			}
			return []any{d.Name, b(d.Spec.AttachRequired), b(d.Spec.PodInfoOnMount), b(d.Spec.StorageCapacity), tokens,
				b(d.Spec.RequiresRepublish), m, registry.Age(d.CreationTimestamp, now)}, nil
		},
	}
}

func volumeAttachmentPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Attacher", Type: "string", Description: "attacher indicates the name of the volume driver that MUST handle this request."},
			{Name: "PV", Type: "string", Description: "persistentVolumeName represents the name of the persistent volume to attach."},
			{Name: "Node", Type: "string", Description: "nodeName represents the node that the volume should be attached to."},
			{Name: "Attached", Type: "boolean", Description: "attached indicates the volume is successfully attached."},
			ageColumn,
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			va, err := registry.FromMap[VolumeAttachment](obj)
			if err != nil {
				return nil, fmt.Errorf("decode volumeattachment: %w", err)
			}
			pv := ""
			if va.Spec.Source.PersistentVolumeName != nil {
				pv = *va.Spec.Source.PersistentVolumeName
			}
			return []any{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached, registry.Age(va.CreationTimestamp, now)}, nil
		},
	}
}
