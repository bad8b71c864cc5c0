package v1

import (
	"fmt"
	"reflect"
	"slices"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/api/internal/apivalidation"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/api/validation"
)

// validateSelectorAndTemplate checks a workload's selector (required, valid, not
// empty) and that it matches the template's labels, then the template itself,
// whose restartPolicy must be Always.
func validateSelectorAndTemplate(sel *api.LabelSelector, tmpl *corev1.PodTemplateSpec, kind string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	selPath := fldPath.Child("selector")
	if sel == nil {
		errs = append(errs, field.Required(selPath, ""))
	} else {
		errs = append(errs, apivalidation.ValidateLabelSelector(sel, selPath)...)
		if selectorEmpty(sel) {
			errs = append(errs, field.Invalid(selPath, labels.FormatLabelSelector(sel), "empty selector is invalid for "+kind))
		}
	}
	tp := fldPath.Child("template")
	if !selectorMatches(sel, tmpl.Labels) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), tmpl.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, corev1.ValidatePodTemplateSpec(tmpl, tp)...)
	if rp := tmpl.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), string(rp), []string{string(corev1.RestartPolicyAlways)}))
	}
	if tmpl.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(tp.Child("spec", "activeDeadlineSeconds"), *tmpl.Spec.ActiveDeadlineSeconds,
			"activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// selectorMatches reports whether set satisfies sel. A nil, empty or invalid
// selector counts as matching: those are reported as selector errors.
func selectorMatches(sel *api.LabelSelector, set map[string]string) bool {
	if selectorEmpty(sel) {
		return true
	}
	s, err := labels.FromLabelSelector(sel)
	return err != nil || s.Matches(set)
}

// selectorEmpty reports whether sel selects everything (or is nil).
func selectorEmpty(sel *api.LabelSelector) bool {
	return sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0
}

func validateOptionalNonnegative(v *int32, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*v), p)
}

func immutableSelector(sel, old *api.LabelSelector) field.ErrorList {
	if reflect.DeepEqual(normalizeSelector(sel), normalizeSelector(old)) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "selector"), labels.FormatLabelSelector(sel), "field is immutable")}
}

func normalizeSelector(s *api.LabelSelector) *api.LabelSelector {
	if s == nil {
		return nil
	}
	out := *s
	if len(out.MatchLabels) == 0 {
		out.MatchLabels = nil
	}
	if len(out.MatchExpressions) == 0 {
		out.MatchExpressions = nil
	}
	return &out
}

// ValidateDeployment checks a Deployment (metadata excluded).
func ValidateDeployment(d *Deployment) field.ErrorList {
	s, p := &d.Spec, field.NewPath("spec")
	errs := validateOptionalNonnegative(s.Replicas, p.Child("replicas"))
	errs = append(errs, validateSelectorAndTemplate(s.Selector, &s.Template, "deployment", p)...)
	errs = append(errs, validateDeploymentStrategy(&s.Strategy, p.Child("strategy"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateOptionalNonnegative(s.RevisionHistoryLimit, p.Child("revisionHistoryLimit"))...)
	if s.ProgressDeadlineSeconds != nil {
		pp := p.Child("progressDeadlineSeconds")
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*s.ProgressDeadlineSeconds), pp)...)
		if *s.ProgressDeadlineSeconds <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(pp, *s.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

// ValidateDeploymentUpdate checks an update: the selector is immutable in apps/v1.
func ValidateDeploymentUpdate(d, old *Deployment) field.ErrorList {
	return append(ValidateDeployment(d), immutableSelector(d.Spec.Selector, old.Spec.Selector)...)
}

func validateDeploymentStrategy(s *DeploymentStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(p.Child("rollingUpdate"),
				fmt.Sprintf("may not be specified when strategy `type` is '%s'", RecreateDeploymentStrategyType)))
		}
	case RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return append(errs, field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil"))
		}
		rp := p.Child("rollingUpdate")
		maxUnavailable, maxSurge := deref(s.RollingUpdate.MaxUnavailable), deref(s.RollingUpdate.MaxSurge)
		errs = append(errs, apivalidation.ValidatePositiveIntOrPercent(maxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, apivalidation.ValidatePositiveIntOrPercent(maxSurge, rp.Child("maxSurge"))...)
		if apivalidation.IntOrPercentValue(maxUnavailable) == 0 && apivalidation.IntOrPercentValue(maxSurge) == 0 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
		}
		errs = append(errs, apivalidation.IsNotMoreThan100Percent(maxUnavailable, rp.Child("maxUnavailable"))...)
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), string(s.Type),
			[]string{string(RecreateDeploymentStrategyType), string(RollingUpdateDeploymentStrategyType)}))
	}
	return errs
}

func deref(v *api.IntOrString) api.IntOrString {
	if v == nil {
		return api.FromInt(0)
	}
	return *v
}

// ValidateReplicaSet checks a ReplicaSet (metadata excluded).
func ValidateReplicaSet(rs *ReplicaSet) field.ErrorList {
	s, p := &rs.Spec, field.NewPath("spec")
	errs := validateOptionalNonnegative(s.Replicas, p.Child("replicas"))
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateSelectorAndTemplate(s.Selector, &s.Template, "replicaset", p)...)
	return errs
}

// ValidateReplicaSetUpdate checks an update: the selector is immutable in apps/v1.
func ValidateReplicaSetUpdate(rs, old *ReplicaSet) field.ErrorList {
	return append(ValidateReplicaSet(rs), immutableSelector(rs.Spec.Selector, old.Spec.Selector)...)
}

// ValidateStatefulSet checks a StatefulSet (metadata excluded).
func ValidateStatefulSet(ss *StatefulSet) field.ErrorList {
	s, p := &ss.Spec, field.NewPath("spec")
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case OrderedReadyPodManagement, ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), string(s.PodManagementPolicy),
			fmt.Sprintf("must be '%s' or '%s'", OrderedReadyPodManagement, ParallelPodManagement)))
	}
	up := p.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case "":
		errs = append(errs, field.Required(up, ""))
	case OnDeleteStatefulSetStrategyType:
		if s.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(up.Child("rollingUpdate"), field.OmitValue,
				fmt.Sprintf("only allowed for updateStrategy '%s'", RollingUpdateStatefulSetStrategyType)))
		}
	case RollingUpdateStatefulSetStrategyType:
		if ru := s.UpdateStrategy.RollingUpdate; ru != nil {
			rp := up.Child("rollingUpdate")
			errs = append(errs, validateOptionalNonnegative(ru.Partition, rp.Child("partition"))...)
			if ru.MaxUnavailable != nil {
				errs = append(errs, apivalidation.ValidatePositiveIntOrPercent(*ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
				if apivalidation.IntOrPercentValue(*ru.MaxUnavailable) == 0 {
					errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), *ru.MaxUnavailable, "cannot be 0"))
				}
				errs = append(errs, apivalidation.IsNotMoreThan100Percent(*ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
			}
		}
	default:
		errs = append(errs, field.Invalid(up, string(s.UpdateStrategy.Type),
			fmt.Sprintf("must be '%s' or '%s'", RollingUpdateStatefulSetStrategyType, OnDeleteStatefulSetStrategyType)))
	}
	if pol := s.PersistentVolumeClaimRetentionPolicy; pol != nil {
		pp := p.Child("persistentVolumeClaimRetentionPolicy")
		valid := []string{string(RetainPersistentVolumeClaimRetentionPolicyType), string(DeletePersistentVolumeClaimRetentionPolicyType)}
		if pol.WhenDeleted != RetainPersistentVolumeClaimRetentionPolicyType && pol.WhenDeleted != DeletePersistentVolumeClaimRetentionPolicyType {
			errs = append(errs, field.NotSupported(pp.Child("whenDeleted"), string(pol.WhenDeleted), valid))
		}
		if pol.WhenScaled != RetainPersistentVolumeClaimRetentionPolicyType && pol.WhenScaled != DeletePersistentVolumeClaimRetentionPolicyType {
			errs = append(errs, field.NotSupported(pp.Child("whenScaled"), string(pol.WhenScaled), valid))
		}
	}
	errs = append(errs, validateOptionalNonnegative(s.Replicas, p.Child("replicas"))...)
	if s.Ordinals != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.Ordinals.Start), p.Child("ordinals", "start"))...)
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateOptionalNonnegative(s.RevisionHistoryLimit, p.Child("revisionHistoryLimit"))...)
	errs = append(errs, validateSelectorAndTemplate(s.Selector, withClaimVolumes(&s.Template, s.VolumeClaimTemplates), "statefulset", p)...)
	return errs
}

// withClaimVolumes returns a copy of tmpl whose volumes include one
// persistentVolumeClaim volume per claim template, as the StatefulSet controller
// gives its pods, so that mounts of claim templates validate. A claim template
// replaces a template volume of the same name (as in the controller); one whose
// name is not a DNS-1123 label cannot be a volume and is left out, so mounts of
// it are reported as not found.
func withClaimVolumes(tmpl *corev1.PodTemplateSpec, claims []corev1.PersistentVolumeClaim) *corev1.PodTemplateSpec {
	if len(claims) == 0 {
		return tmpl
	}
	out := *tmpl
	out.Spec.Volumes = slices.Clone(tmpl.Spec.Volumes)
	for _, c := range claims {
		if c.Name == "" || len(validation.IsDNS1123Label(c.Name)) > 0 {
			continue
		}
		v := corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name},
		}}
		if i := slices.IndexFunc(out.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.Name }); i >= 0 {
			out.Spec.Volumes[i] = v
			continue
		}
		out.Spec.Volumes = append(out.Spec.Volumes, v)
	}
	return &out
}

// ValidateStatefulSetUpdate checks an update: only replicas, ordinals, template,
// updateStrategy, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and
// minReadySeconds may change.
func ValidateStatefulSetUpdate(ss, old *StatefulSet) field.ErrorList {
	errs := ValidateStatefulSet(ss)
	a, b := ss.Spec, old.Spec
	for _, s := range []*StatefulSetSpec{&a, &b} {
		s.Replicas, s.Ordinals, s.Template, s.UpdateStrategy = nil, nil, corev1.PodTemplateSpec{}, StatefulSetUpdateStrategy{}
		s.RevisionHistoryLimit, s.PersistentVolumeClaimRetentionPolicy, s.MinReadySeconds = nil, nil, 0
		s.Selector = normalizeSelector(s.Selector)
	}
	if !reflect.DeepEqual(a, b) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than "+
			"'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "+
			"'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return errs
}

// ValidateDaemonSet checks a DaemonSet (metadata excluded).
func ValidateDaemonSet(ds *DaemonSet) field.ErrorList {
	s, p := &ds.Spec, field.NewPath("spec")
	errs := validateSelectorAndTemplate(s.Selector, &s.Template, "daemonset", p)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateOptionalNonnegative(s.RevisionHistoryLimit, p.Child("revisionHistoryLimit"))...)
	up := p.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case OnDeleteDaemonSetStrategyType:
	case RollingUpdateDaemonSetStrategyType:
		ru := s.UpdateStrategy.RollingUpdate
		if ru == nil {
			errs = append(errs, field.Required(up.Child("rollingUpdate"), ""))
			break
		}
		rp := up.Child("rollingUpdate")
		maxUnavailable, maxSurge := deref(ru.MaxUnavailable), deref(ru.MaxSurge)
		errs = append(errs, apivalidation.ValidatePositiveIntOrPercent(maxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, apivalidation.ValidatePositiveIntOrPercent(maxSurge, rp.Child("maxSurge"))...)
		mu, ms := apivalidation.IntOrPercentValue(maxUnavailable), apivalidation.IntOrPercentValue(maxSurge)
		switch {
		case mu == 0 && ms == 0:
			errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		case mu != 0 && ms != 0:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), maxSurge, "may not be set when maxUnavailable is non-zero"))
		}
		errs = append(errs, apivalidation.IsNotMoreThan100Percent(maxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, apivalidation.IsNotMoreThan100Percent(maxSurge, rp.Child("maxSurge"))...)
	default:
		errs = append(errs, field.NotSupported(up.Child("type"), string(s.UpdateStrategy.Type),
			[]string{string(RollingUpdateDaemonSetStrategyType), string(OnDeleteDaemonSetStrategyType)}))
	}
	return errs
}

// ValidateDaemonSetUpdate checks an update: the selector is immutable.
func ValidateDaemonSetUpdate(ds, old *DaemonSet) field.ErrorList {
	return append(ValidateDaemonSet(ds), immutableSelector(ds.Spec.Selector, old.Spec.Selector)...)
}

// ValidateControllerRevision checks a ControllerRevision: revision ≥ 0.
func ValidateControllerRevision(cr *ControllerRevision) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(cr.Revision, field.NewPath("revision"))
}

// ValidateControllerRevisionUpdate checks an update: data is immutable.
func ValidateControllerRevisionUpdate(cr, old *ControllerRevision) field.ErrorList {
	errs := ValidateControllerRevision(cr)
	if string(cr.Data.Raw) != string(old.Data.Raw) {
		errs = append(errs, field.Invalid(field.NewPath("data"), field.OmitValue, "field is immutable"))
	}
	return errs
}
