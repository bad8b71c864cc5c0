package validation

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// Messages and limits shared with other validators.
const (
	// FieldImmutableErrorMsg is the detail of an update that changes an
	// immutable field.
	FieldImmutableErrorMsg = "field is immutable"
	// IsNegativeErrorMsg is the detail of a negative value that must not be.
	IsNegativeErrorMsg = "must be greater than or equal to 0"
	// TotalAnnotationSizeLimitB is the maximum total size in bytes of an
	// object's annotation keys and values.
	TotalAnnotationSizeLimitB = 256 * (1 << 10)
	// FieldManagerMaxLength is the maximum length of a managedFields manager.
	FieldManagerMaxLength = 128
	// MaxSubresourceNameLength is the maximum length of a managedFields
	// subresource.
	MaxSubresourceNameLength = 256
)

// The finalizers the garbage collector understands; they may not both be set.
const (
	FinalizerOrphanDependents = "orphan"
	FinalizerDeleteDependents = "foregroundDeletion"
)

// ValidateObjectMeta validates the metadata of an object being created.
// namespaced says whether the resource is namespaced (namespace required) or
// cluster-scoped (namespace forbidden). nameFn validates name and generateName;
// nil means NameIsDNSSubdomain. path is the path of the metadata, usually
// field.NewPath("metadata").
//
// It is meant to run after the name was generated from generateName; a metadata
// with only a generateName is accepted too (its generateName is validated), so
// calling it before generation is harmless.
func ValidateObjectMeta(meta *api.ObjectMeta, namespaced bool, nameFn NameFunc, path *field.Path) field.ErrorList {
	if nameFn == nil {
		nameFn = NameIsDNSSubdomain
	}
	var errs field.ErrorList
	if meta.GenerateName != "" {
		for _, msg := range nameFn(meta.GenerateName, true) {
			errs = append(errs, field.Invalid(path.Child("generateName"), meta.GenerateName, msg))
		}
	}
	switch {
	case meta.Name != "":
		for _, msg := range nameFn(meta.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), meta.Name, msg))
		}
	case meta.GenerateName == "":
		errs = append(errs, field.Required(path.Child("name"), "name or generateName is required"))
	}
	if namespaced {
		if meta.Namespace == "" {
			errs = append(errs, field.Required(path.Child("namespace"), ""))
		} else {
			for _, msg := range ValidateNamespaceName(meta.Namespace, false) {
				errs = append(errs, field.Invalid(path.Child("namespace"), meta.Namespace, msg))
			}
		}
	} else if meta.Namespace != "" {
		errs = append(errs, field.Forbidden(path.Child("namespace"), "not allowed on this type"))
	}
	if meta.Generation < 0 {
		errs = append(errs, field.Invalid(path.Child("generation"), meta.Generation, IsNegativeErrorMsg))
	}
	return append(errs, validateCommon(meta, path)...)
}

// validateCommon validates what create and update check alike.
func validateCommon(meta *api.ObjectMeta, path *field.Path) field.ErrorList {
	// Each check finds nothing in an empty list: skip it, and its path.
	var errs field.ErrorList
	if len(meta.Labels) > 0 {
		errs = append(errs, ValidateLabels(meta.Labels, path.Child("labels"))...)
	}
	if len(meta.Annotations) > 0 {
		errs = append(errs, ValidateAnnotations(meta.Annotations, path.Child("annotations"))...)
	}
	if len(meta.OwnerReferences) > 0 {
		errs = append(errs, ValidateOwnerReferences(meta.OwnerReferences, path.Child("ownerReferences"))...)
	}
	if len(meta.Finalizers) > 0 {
		errs = append(errs, ValidateFinalizers(meta.Finalizers, path.Child("finalizers"))...)
	}
	if len(meta.ManagedFields) > 0 {
		errs = append(errs, ValidateManagedFields(meta.ManagedFields, path.Child("managedFields"))...)
	}
	return errs
}

// ValidateObjectMetaUpdate validates the metadata of an object being updated
// from oldMeta to newMeta: name, namespace, uid, creationTimestamp,
// deletionTimestamp and deletionGracePeriodSeconds are immutable, generation may
// not decrease, no finalizer may be added once deletionTimestamp is set, and
// labels, annotations, owner references, finalizers and managed fields must be
// valid as on create.
//
// Like Kubernetes' rest.BeforeUpdate, the caller should first copy the system
// fields a client may omit from oldMeta into newMeta (uid when empty,
// creationTimestamp, deletionTimestamp when set, deletionGracePeriodSeconds when
// newMeta has none, generation); otherwise such an omission is reported as a
// change of an immutable field. Graceful deletion itself sets deletionTimestamp
// without this validation. resourceVersion is not checked here: preconditions
// are the storage layer's business.
func ValidateObjectMetaUpdate(newMeta, oldMeta *api.ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if oldMeta.DeletionTimestamp != nil {
		errs = append(errs, ValidateNoNewFinalizers(newMeta.Finalizers, oldMeta.Finalizers, path.Child("finalizers"))...)
	}
	if newMeta.Generation < oldMeta.Generation {
		errs = append(errs, field.Invalid(path.Child("generation"), newMeta.Generation, "must not be decremented"))
	}
	errs = append(errs, ValidateImmutableField(newMeta.Name, oldMeta.Name, path.Child("name"))...)
	errs = append(errs, ValidateImmutableField(newMeta.Namespace, oldMeta.Namespace, path.Child("namespace"))...)
	errs = append(errs, ValidateImmutableField(newMeta.UID, oldMeta.UID, path.Child("uid"))...)
	if !newMeta.CreationTimestamp.Equal(oldMeta.CreationTimestamp.Time) {
		errs = append(errs, field.Invalid(path.Child("creationTimestamp"), newMeta.CreationTimestamp, FieldImmutableErrorMsg))
	}
	if !timePtrEqual(newMeta.DeletionTimestamp, oldMeta.DeletionTimestamp) {
		errs = append(errs, field.Invalid(path.Child("deletionTimestamp"), newMeta.DeletionTimestamp, FieldImmutableErrorMsg))
	}
	if !int64PtrEqual(newMeta.DeletionGracePeriodSeconds, oldMeta.DeletionGracePeriodSeconds) {
		errs = append(errs, field.Invalid(path.Child("deletionGracePeriodSeconds"), newMeta.DeletionGracePeriodSeconds, FieldImmutableErrorMsg))
	}
	return append(errs, validateCommon(newMeta, path)...)
}

func timePtrEqual(a, b *api.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b.Time)
}

func int64PtrEqual(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ValidateImmutableField reports newVal as "field is immutable" when it differs
// from oldVal (compared with reflect.DeepEqual; use it for plain values, not
// times).
func ValidateImmutableField(newVal, oldVal any, path *field.Path) field.ErrorList {
	if reflect.DeepEqual(newVal, oldVal) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, newVal, FieldImmutableErrorMsg)}
}

// ValidateLabelName validates a label key (a qualified name).
func ValidateLabelName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// ValidateLabels validates label keys (qualified names) and values, in key
// order. Errors are reported at path itself, as Kubernetes does.
func ValidateLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		errs = append(errs, ValidateLabelName(k, path)...)
		for _, msg := range IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path, v, msg))
		}
	}
	return errs
}

// ValidateAnnotations validates annotation keys (qualified names, case
// insensitive) and the total size of keys and values (at most 256 KiB).
func ValidateAnnotations(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		size += len(k) + len(annotations[k])
		for _, msg := range IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
	}
	if size > TotalAnnotationSizeLimitB {
		errs = append(errs, field.TooLong(path, "", TotalAnnotationSizeLimitB))
	}
	return errs
}

// ValidateOwnerReferences validates owner references: apiVersion (with a
// version), kind, name and uid are required, Events may not be owners, and at
// most one reference may be the controller.
func ValidateOwnerReferences(refs []api.OwnerReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	firstController := ""
	for _, ref := range refs {
		errs = append(errs, validateOwnerReference(ref, path)...)
		if ref.Controller != nil && *ref.Controller {
			cur := ref.Kind + "/" + ref.Name
			if firstController != "" {
				errs = append(errs, field.Invalid(path, refs, fmt.Sprintf(
					"Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", firstController, cur)))
			} else {
				firstController = cur
			}
		}
	}
	return errs
}

func validateOwnerReference(ref api.OwnerReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	group, version := splitAPIVersion(ref.APIVersion)
	if version == "" {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, "version must not be empty"))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Invalid(path.Child("kind"), ref.Kind, "must not be empty"))
	}
	if ref.Name == "" {
		errs = append(errs, field.Invalid(path.Child("name"), ref.Name, "must not be empty"))
	}
	if ref.UID == "" {
		errs = append(errs, field.Invalid(path.Child("uid"), ref.UID, "must not be empty"))
	}
	if group == "" && version == "v1" && ref.Kind == "Event" {
		errs = append(errs, field.Invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"))
	}
	return errs
}

// splitAPIVersion splits "group/version" or "version"; a malformed apiVersion
// yields an empty version.
func splitAPIVersion(apiVersion string) (group, version string) {
	switch parts := strings.Split(apiVersion, "/"); len(parts) {
	case 1:
		return "", parts[0]
	case 2:
		return parts[0], parts[1]
	default:
		return "", ""
	}
}

// ValidateFinalizers validates finalizer names (qualified names) and rejects
// "orphan" together with "foregroundDeletion".
func ValidateFinalizers(finalizers []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	orphan, foreground := false, false
	for _, f := range finalizers {
		for _, msg := range IsQualifiedName(f) {
			errs = append(errs, field.Invalid(path, f, msg))
		}
		orphan = orphan || f == FinalizerOrphanDependents
		foreground = foreground || f == FinalizerDeleteDependents
	}
	if orphan && foreground {
		errs = append(errs, field.Invalid(path, finalizers, fmt.Sprintf("finalizer %s and %s cannot be both set",
			FinalizerOrphanDependents, FinalizerDeleteDependents)))
	}
	return errs
}

// ValidateNoNewFinalizers forbids finalizers in newFinalizers that are not in
// oldFinalizers; it applies once the object is being deleted.
func ValidateNoNewFinalizers(newFinalizers, oldFinalizers []string, path *field.Path) field.ErrorList {
	var extra []string
	for _, f := range newFinalizers {
		if !slices.Contains(oldFinalizers, f) && !slices.Contains(extra, f) {
			extra = append(extra, f)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
		"no new finalizers can be added if the object is being deleted, found new finalizers %#v", extra))}
}

// ValidateManagedFields validates managedFields entries: operation Apply or
// Update, fieldsType FieldsV1 when set, a printable manager of at most 128
// characters and a subresource of at most 256.
func ValidateManagedFields(entries []api.ManagedFieldsEntry, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range entries {
		p := path.Index(i)
		switch e.Operation {
		case "Apply", "Update":
		default:
			errs = append(errs, field.Invalid(p.Child("operation"), e.Operation, "must be `Apply` or `Update`"))
		}
		if e.FieldsType != "" && e.FieldsType != "FieldsV1" {
			errs = append(errs, field.Invalid(p.Child("fieldsType"), e.FieldsType, "must be `FieldsV1`"))
		}
		errs = append(errs, ValidateFieldManager(e.Manager, p.Child("manager"))...)
		if len(e.Subresource) > MaxSubresourceNameLength {
			errs = append(errs, field.TooLong(p.Child("subresource"), e.Subresource, MaxSubresourceNameLength))
		}
	}
	return errs
}

// ValidateFieldManager validates a field manager name: at most 128 bytes, all
// characters printable.
func ValidateFieldManager(manager string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(manager) > FieldManagerMaxLength {
		errs = append(errs, field.TooLong(path, manager, FieldManagerMaxLength))
	}
	for i, r := range manager {
		if !unicode.IsPrint(r) {
			errs = append(errs, field.Invalid(path, manager, fmt.Sprintf("invalid character %#U (at position %d)", r, i)))
		}
	}
	return errs
}

// ValidateLabelSelector validates a LabelSelector as an API field: matchLabels
// as labels, and each matchExpressions entry's operator, values and key. A nil
// selector is valid.
func ValidateLabelSelector(sel *api.LabelSelector, path *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	errs := ValidateLabels(sel.MatchLabels, path.Child("matchLabels"))
	for i, expr := range sel.MatchExpressions {
		errs = append(errs, ValidateLabelSelectorRequirement(expr, path.Child("matchExpressions").Index(i))...)
	}
	return errs
}

// ValidateLabelSelectorRequirement validates one matchExpressions entry.
func ValidateLabelSelectorRequirement(req api.LabelSelectorRequirement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch req.Operator {
	case api.LabelSelectorOpIn, api.LabelSelectorOpNotIn:
		if len(req.Values) == 0 {
			errs = append(errs, field.Required(path.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case api.LabelSelectorOpExists, api.LabelSelectorOpDoesNotExist:
		if len(req.Values) > 0 {
			errs = append(errs, field.Forbidden(path.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	return append(errs, ValidateLabelName(req.Key, path.Child("key"))...)
}
