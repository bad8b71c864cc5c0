package v1

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

var percentRe = regexp.MustCompile("^[0-9]+%$")

// validatePositiveIntOrPercent is Kubernetes' ValidatePositiveIntOrPercent.
func validatePositiveIntOrPercent(v api.IntOrString, fldPath *field.Path) field.ErrorList {
	switch v.Type {
	case api.String:
		if !percentRe.MatchString(v.StrVal) {
			return field.ErrorList{field.Invalid(fldPath, v,
				"a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
		}
	case api.Int:
		return validateNonnegative(int64(v.IntVal), fldPath)
	default:
		return field.ErrorList{field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%')")}
	}
	return nil
}

// intOrPercentValue is the integer or the percentage number, -1 when unparsable.
func intOrPercentValue(v api.IntOrString) int {
	if v.Type == api.Int {
		return int(v.IntVal)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil {
		return -1
	}
	return n
}

// isNotMoreThan100Percent rejects a percentage above 100%.
func isNotMoreThan100Percent(v api.IntOrString, fldPath *field.Path) field.ErrorList {
	if v.Type != api.String || !percentRe.MatchString(v.StrVal) {
		return nil
	}
	if intOrPercentValue(v) > 100 {
		return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
	}
	return nil
}
