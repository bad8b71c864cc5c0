package apivalidation

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// ValidateNonnegativeField rejects a negative value.
func ValidateNonnegativeField(v int64, fldPath *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(fldPath, v, "must be greater than or equal to 0")}
	}
	return nil
}

// ValidateLabelSelector checks matchLabels as labels and each matchExpressions
// entry's operator, key and values, the values as label values (Kubernetes'
// ValidateLabelSelector with AllowInvalidLabelValueInSelector false, used on
// create). A nil selector is valid.
func ValidateLabelSelector(sel *api.LabelSelector, fldPath *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	errs := validation.ValidateLabels(sel.MatchLabels, fldPath.Child("matchLabels"))
	for i, e := range sel.MatchExpressions {
		p := fldPath.Child("matchExpressions").Index(i)
		errs = append(errs, validation.ValidateLabelSelectorRequirement(e, p)...)
		for j, v := range e.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
			}
		}
	}
	return errs
}

var percentRe = regexp.MustCompile("^[0-9]+%$")

// ValidatePositiveIntOrPercent accepts a non-negative integer or a percent
// string such as "25%".
func ValidatePositiveIntOrPercent(v api.IntOrString, fldPath *field.Path) field.ErrorList {
	switch v.Type {
	case api.String:
		if !percentRe.MatchString(v.StrVal) {
			return field.ErrorList{field.Invalid(fldPath, v,
				"a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
		}
	case api.Int:
		return ValidateNonnegativeField(int64(v.IntVal), fldPath)
	default:
		return field.ErrorList{field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%')")}
	}
	return nil
}

// IntOrPercentValue is the integer, or the number of a percent string; -1 when
// the string does not parse.
func IntOrPercentValue(v api.IntOrString) int {
	if v.Type == api.Int {
		return int(v.IntVal)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil {
		return -1
	}
	return n
}

// IsNotMoreThan100Percent rejects a percent string above 100%; integers and
// malformed strings pass (ValidatePositiveIntOrPercent reports the latter).
func IsNotMoreThan100Percent(v api.IntOrString, fldPath *field.Path) field.ErrorList {
	if v.Type != api.String || !percentRe.MatchString(v.StrVal) {
		return nil
	}
	if IntOrPercentValue(v) > 100 {
		return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
	}
	return nil
}
