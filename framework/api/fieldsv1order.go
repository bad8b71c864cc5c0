package api

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// managedFields' FieldsV1 sets are JSON objects whose keys are serialized
// path elements: "." (the element itself), "f:<field>", "k:<json object>"
// (an item of an associative list, by its keys), "v:<json scalar>" (an item
// of a set) and "i:<index>". Kubernetes writes them with structured-merge-
// diff's Set.ToJSON and serves those bytes as they are: "." first, then the
// elements in the library's PathElement order — fields, then keys, then
// values, then indexes; fields by name, keys and values by value, numbers as
// numbers (port 80 before 443), indexes as integers. encoding/json's order
// (strings.Compare of the keys) differs for k:, v: and i: keys, so a map
// that is such a set level is written in the library's order instead.

// isFieldsV1Level reports whether keys (sorted) are one level of a FieldsV1
// set whose order differs from strings.Compare's: every key is "." or a
// path element of a known kind, and some are k:, v: or i: elements that do
// not order as text. Other maps are written as encoding/json writes them.
func isFieldsV1Level(keys []string) bool {
	if len(keys) < 2 {
		return false
	}
	listItems := 0
	for _, k := range keys {
		if k == "." {
			continue
		}
		if len(k) < 2 || k[1] != ':' {
			return false
		}
		switch k[0] {
		case 'f':
		case 'k', 'v', 'i':
			listItems++
		default:
			return false
		}
	}
	if listItems == 0 {
		return false
	}
	for i := 1; i < len(keys); i++ {
		if compareFieldsV1Keys(keys[i-1], keys[i]) > 0 {
			return true
		}
	}
	return false
}

// fieldsV1Rank orders the kinds of path elements as structured-merge-diff
// does, after the element itself.
func fieldsV1Rank(k string) int {
	if k == "." {
		return 0
	}
	switch k[0] {
	case 'f':
		return 1
	case 'k':
		return 2
	case 'v':
		return 3
	}
	return 4 // 'i'
}

// compareFieldsV1Keys compares two serialized path elements in
// structured-merge-diff's PathElement order. Elements that do not parse
// compare as text.
func compareFieldsV1Keys(a, b string) int {
	if c := cmp.Compare(fieldsV1Rank(a), fieldsV1Rank(b)); c != 0 || a == "." {
		return c
	}
	switch a[0] {
	case 'k':
		ka, oka := DecodeValue([]byte(a[2:]))
		kb, okb := DecodeValue([]byte(b[2:]))
		ma, _ := ka.(map[string]any)
		mb, _ := kb.(map[string]any)
		if oka == nil && okb == nil && ma != nil && mb != nil {
			return compareKeyFields(ma, mb)
		}
	case 'v':
		va, erra := DecodeValue([]byte(a[2:]))
		vb, errb := DecodeValue([]byte(b[2:]))
		if erra == nil && errb == nil {
			return compareScalars(va, vb)
		}
	case 'i':
		ia, erra := strconv.Atoi(a[2:])
		ib, errb := strconv.Atoi(b[2:])
		if erra == nil && errb == nil {
			return cmp.Compare(ia, ib)
		}
	}
	return strings.Compare(a, b)
}

// compareKeyFields compares two associative-list keys as structured-merge-
// diff's FieldList.Compare: field by field in name order, names first, then
// values; a key that is a prefix of the other comes first.
func compareKeyFields(a, b map[string]any) int {
	na, nb := sortedNames(a), sortedNames(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if c := strings.Compare(na[i], nb[i]); c != 0 {
			return c
		}
		if c := compareScalars(a[na[i]], b[nb[i]]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(na), len(nb))
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// scalarRank orders the kinds of JSON scalars as structured-merge-diff's
// value.Compare does: numbers, strings, booleans, then anything else, null
// last.
func scalarRank(v any) int {
	switch v.(type) {
	case int64, float64:
		return 0
	case string:
		return 1
	case bool:
		return 2
	case nil:
		return 4
	}
	return 3
}

// compareScalars compares JSON scalars as structured-merge-diff's
// value.Compare: numbers numerically (integers with floats too), strings as
// text, false before true.
func compareScalars(a, b any) int {
	if c := cmp.Compare(scalarRank(a), scalarRank(b)); c != 0 {
		return c
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case float64:
			return cmp.Compare(float64(x), y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, float64(y))
		case float64:
			return cmp.Compare(x, y)
		}
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return 0
}
