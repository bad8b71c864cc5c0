package patch

import (
	"encoding/json"
	"errors"
	"strconv"
)

// decodeObject parses exactly one JSON object.
func decodeObject(data []byte) (map[string]any, error) {
	v, err := decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("expected a JSON object, got " + typeName(v))
	}
	return m, nil
}

// typeName names the JSON type of a decoded value, for messages.
func typeName(v any) string {
	switch v.(type) {
	case nil, patchNull:
		return "null"
	case bool:
		return "boolean"
	case string, textString:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "unknown"
	}
}

// equal reports whether two decoded JSON values are equal; numbers compare by
// value ("1.0" equals "1").
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numbersEqual(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

func numbersEqual(x, y json.Number) bool {
	if x == y {
		return true
	}
	return canonicalNumber(x) == canonicalNumber(y)
}

// canonicalNumber returns a canonical text for a JSON number: integers that fit
// in int64 in decimal, other integers as written, everything else through float64
// when that parses without overflow.
func canonicalNumber(n json.Number) string {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	isInt := true
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'E' {
			isInt = false
			break
		}
	}
	if isInt {
		if s == "-0" {
			return "0"
		}
		return s
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f == float64(int64(f)) && f < 1<<62 && f > -(1<<62) {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return s
}

// scalarKey returns a map key identifying a scalar value up to equal, and
// false for arrays and objects.
func scalarKey(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "z", true
	case bool:
		if x {
			return "t", true
		}
		return "f", true
	case string:
		return "s" + x, true
	case json.Number:
		return "n" + canonicalNumber(x), true
	}
	return "", false
}
