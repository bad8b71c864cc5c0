package v1

// Label selector helpers shared by the workload kinds. They mirror
// apimachinery's LabelSelectorAsSelector, FormatLabelSelector and
// ValidateLabelSelector. TODO(lead): replace with framework/api/labels (and a
// shared validation package) once it exists; the same file lives in apps/v1,
// batch/v1 and policy/v1.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// selectorString renders sel as a string selector ("app=nginx,tier in (a,b)"),
// requirements sorted by key, like labels.Selector.String. nil and empty give "".
func selectorString(sel *api.LabelSelector) string {
	if sel == nil {
		return ""
	}
	type req struct{ key, s string }
	var reqs []req
	for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
		reqs = append(reqs, req{k, k + "=" + sel.MatchLabels[k]})
	}
	for _, e := range sel.MatchExpressions {
		vals := slices.Sorted(slices.Values(e.Values))
		var s string
		switch e.Operator {
		case api.LabelSelectorOpIn:
			s = e.Key + " in (" + strings.Join(vals, ",") + ")"
		case api.LabelSelectorOpNotIn:
			s = e.Key + " notin (" + strings.Join(vals, ",") + ")"
		case api.LabelSelectorOpExists:
			s = e.Key
		case api.LabelSelectorOpDoesNotExist:
			s = "!" + e.Key
		default:
			continue
		}
		reqs = append(reqs, req{e.Key, s})
	}
	slices.SortStableFunc(reqs, func(a, b req) int { return strings.Compare(a.key, b.key) })
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.s
	}
	return strings.Join(parts, ",")
}

// formatSelector is metav1.FormatLabelSelector: selectorString or "<none>".
func formatSelector(sel *api.LabelSelector) string {
	if s := selectorString(sel); s != "" {
		return s
	}
	return "<none>"
}

// selectorEmpty reports whether sel selects everything (or is nil).
func selectorEmpty(sel *api.LabelSelector) bool {
	return sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0
}

// selectorMatches reports whether labels satisfy sel. A nil selector matches
// nothing, an empty one everything.
func selectorMatches(sel *api.LabelSelector, labels map[string]string) bool {
	if sel == nil {
		return false
	}
	for k, v := range sel.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, e := range sel.MatchExpressions {
		v, ok := labels[e.Key]
		switch e.Operator {
		case api.LabelSelectorOpIn:
			if !ok || !slices.Contains(e.Values, v) {
				return false
			}
		case api.LabelSelectorOpNotIn:
			if ok && slices.Contains(e.Values, v) {
				return false
			}
		case api.LabelSelectorOpExists:
			if !ok {
				return false
			}
		case api.LabelSelectorOpDoesNotExist:
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// validateLabelSelector is ValidateLabelSelector with strict label values.
func validateLabelSelector(sel *api.LabelSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel == nil {
		return errs
	}
	errs = append(errs, validateLabels(sel.MatchLabels, fldPath.Child("matchLabels"))...)
	for i, e := range sel.MatchExpressions {
		p := fldPath.Child("matchExpressions").Index(i)
		switch e.Operator {
		case api.LabelSelectorOpIn, api.LabelSelectorOpNotIn:
			if len(e.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case api.LabelSelectorOpExists, api.LabelSelectorOpDoesNotExist:
			if len(e.Values) > 0 {
				errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), e.Operator, "not a valid selector operator"))
		}
		for _, msg := range isQualifiedName(e.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), e.Key, msg))
		}
		for j, v := range e.Values {
			for _, msg := range isValidLabelValue(v) {
				errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
			}
		}
	}
	return errs
}

// validateLabels checks label keys and values.
func validateLabels(labels map[string]string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range isQualifiedName(k) {
			errs = append(errs, field.Invalid(fldPath, k, msg))
		}
		for _, msg := range isValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(fldPath, labels[k], msg))
		}
	}
	return errs
}

const (
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueErrMsg    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	dns1123SubdomainFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
	dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
)

var (
	qualifiedNameRe    = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRe       = regexp.MustCompile("^(" + qualifiedNameFmt + ")?$")
	dns1123SubdomainRe = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
)

func regexError(msg, format string, examples ...string) string {
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + format + "')"
}

func maxLenError(n int) string { return fmt.Sprintf("must be no more than %d bytes", n) }

// isQualifiedName is apimachinery's IsQualifiedName.
func isQualifiedName(value string) []string {
	var errs []string
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if len(prefix) == 0 {
			errs = append(errs, "prefix part must be non-empty")
		} else {
			if len(prefix) > 253 {
				errs = append(errs, "prefix part "+maxLenError(253))
			}
			if !dns1123SubdomainRe.MatchString(prefix) {
				errs = append(errs, "prefix part "+regexError(dns1123SubdomainMsg, dns1123SubdomainFmt, "example.com"))
			}
		}
	default:
		return append(errs, "a qualified name "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if len(name) == 0 {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part "+maxLenError(63))
	}
	if !qualifiedNameRe.MatchString(name) {
		errs = append(errs, "name part "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// isValidLabelValue is apimachinery's IsValidLabelValue.
func isValidLabelValue(value string) []string {
	var errs []string
	if len(value) > 63 {
		errs = append(errs, maxLenError(63))
	}
	if !labelValueRe.MatchString(value) {
		errs = append(errs, regexError(labelValueErrMsg, "("+qualifiedNameFmt+")?", "MyValue", "my_value", "12345"))
	}
	return errs
}

// validateNonnegative is ValidateNonnegativeField.
func validateNonnegative(v int64, fldPath *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(fldPath, v, "must be greater than or equal to 0")}
	}
	return nil
}
