package patch

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Strategic merge patch directives.
const (
	directiveMarker        = "$patch"
	retainKeysDirective    = "$retainKeys"
	setElementOrderPrefix  = "$setElementOrder/"
	deleteFromPrimitivePfx = "$deleteFromPrimitiveList/"

	directiveReplace = "replace"
	directiveDelete  = "delete"
	directiveMerge   = "merge"
)

// StrategicMergePatch applies a Kubernetes strategic merge patch to doc, with the
// patch schema taken from the struct tags of t (see Schema). It is
// NewSchema(t) followed by Schema.StrategicMergePatch; servers should build the
// Schema once per kind instead. When t is nil there is no schema: objects merge
// as in MergePatch, lists are replaced, and directives are still interpreted on
// objects and stripped everywhere.
func StrategicMergePatch(doc, patch []byte, t reflect.Type) ([]byte, error) {
	var s *Schema
	if t != nil {
		var err error
		if s, err = NewSchema(t); err != nil {
			return nil, err
		}
	}
	return strategicMergePatch(s, doc, patch)
}

// StrategicMergePatch applies a Kubernetes strategic merge patch to doc, a JSON
// object of the schema's type, and returns the patched object.
//
// Semantics: objects merge recursively and null deletes a key. Lists without a
// merge strategy are replaced. Lists with patchStrategy "merge" and a
// patchMergeKey match elements by that key: a patch element merges into the
// live element with the same key (recursively, with the element type's tags),
// unmatched patch elements are added. Lists of scalars with patchStrategy
// "merge" become the union of live and patch values (no duplicates).
// patchStrategy "replace" replaces the value. A merged list is ordered as
// Kubernetes orders it: the elements the patch names in the patch's order, the
// live-only elements in live order, interleaved so that a live-only element
// stays in front of a patched element that follows it in the live list, and an
// element new to the list in front of the live-only elements not yet placed
// (a new container is listed first).
//
// Directives: {"$patch":"delete","<key>":v} in a keyed list removes that
// element; {"$patch":"replace"} as a list element replaces the whole list with
// the other patch elements; "$patch":"replace" in an object replaces the object
// with the rest of the patch object; "$patch":"delete" in an object deletes it;
// "$deleteFromPrimitiveList/<field>":[v…] removes values from a scalar merge
// list; "$setElementOrder/<field>":[…] orders the merged list (listed elements
// first, in that order, then the rest in their existing order);
// "$retainKeys":[k…] drops the keys of the live object not listed (every
// non-null key of that patch object must be listed). Directives never appear in
// the result.
//
// Members the schema does not know are merged without a schema, like
// MergePatch, rather than rejected; strict field validation is the caller's
// job. Malformed directives, keyed-list elements without their merge key and
// patches that are not objects yield ErrBadPatch.
func (s *Schema) StrategicMergePatch(doc, patch []byte) ([]byte, error) {
	return strategicMergePatch(s, doc, patch)
}

func strategicMergePatch(s *Schema, doc, patch []byte) ([]byte, error) {
	p, err := decode(patch)
	if err != nil {
		return nil, badPatch("", "decode strategic merge patch: %v", err)
	}
	pm, ok := p.(map[string]any)
	if !ok {
		return nil, badPatch("", "strategic merge patch must be a JSON object, got %s", typeName(p))
	}
	d, err := decodeObject(doc)
	if err != nil {
		return nil, invalidDocument("document", err)
	}
	sp := strategicPatcher{s: s}
	var root *typeInfo
	if s != nil {
		root = s.info(s.root)
	}
	out, deleted, err := sp.mergeMap(d, pm, root, "")
	if err != nil {
		return nil, err
	}
	if deleted {
		out = map[string]any{}
	}
	b, err := encode(out)
	if err != nil {
		return nil, fmt.Errorf("encode patched document: %w", err)
	}
	return b, nil
}

type strategicPatcher struct {
	s *Schema
}

// objectInfo returns ti when it describes an object (struct or map), else nil.
func objectInfo(ti *typeInfo) *typeInfo {
	if ti != nil && (ti.kind == kindStruct || ti.kind == kindMap) {
		return ti
	}
	return nil
}

// field returns the schema of member k of an object described by ti.
func field(ti *typeInfo, k string) *fieldInfo {
	if ti == nil {
		return nil
	}
	switch ti.kind {
	case kindStruct:
		return ti.fields[k]
	case kindMap:
		return ti.elem
	}
	return nil
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func isDirectiveKey(k string) bool {
	return k == directiveMarker || k == retainKeysDirective ||
		strings.HasPrefix(k, setElementOrderPrefix) || strings.HasPrefix(k, deleteFromPrimitivePfx)
}

// mergeMap merges patch into orig (modifying orig) with schema ti (nil when
// unknown). deleted reports a "$patch":"delete" directive.
func (sp *strategicPatcher) mergeMap(orig, patch map[string]any, ti *typeInfo, path string) (out map[string]any, deleted bool, err error) {
	if d, ok := patch[directiveMarker]; ok {
		switch d {
		case directiveDelete:
			return nil, true, nil
		case directiveReplace:
			rest := make(map[string]any, len(patch))
			for k, v := range patch {
				if k != directiveMarker {
					rest[k] = v
				}
			}
			m, del, err := sp.mergeMap(map[string]any{}, rest, ti, path)
			return m, del, err
		case directiveMerge:
		default:
			return nil, false, badPatch(joinPath(path, directiveMarker), "unknown directive %v", d)
		}
	}
	if rk, ok := patch[retainKeysDirective]; ok {
		if err := retainKeys(orig, patch, rk, path); err != nil {
			return nil, false, err
		}
	}
	var orders map[string][]any
	for k, v := range patch {
		switch {
		case strings.HasPrefix(k, deleteFromPrimitivePfx):
			name := k[len(deleteFromPrimitivePfx):]
			del, ok := v.([]any)
			if !ok {
				return nil, false, badPatch(joinPath(path, k), "expected a list, got %s", typeName(v))
			}
			if list, ok := orig[name].([]any); ok {
				orig[name] = removeValues(list, del)
			}
		case strings.HasPrefix(k, setElementOrderPrefix):
			order, ok := v.([]any)
			if !ok {
				return nil, false, badPatch(joinPath(path, k), "expected a list, got %s", typeName(v))
			}
			if orders == nil {
				orders = map[string][]any{}
			}
			orders[k[len(setElementOrderPrefix):]] = order
		}
	}
	for k, pv := range patch {
		if isDirectiveKey(k) && (ti == nil || ti.kind != kindStruct || ti.fields[k] == nil) {
			continue
		}
		if pv == nil {
			delete(orig, k)
			continue
		}
		ov, exists := orig[k]
		order, hasOrder := orders[k]
		nv, del, err := sp.mergeValue(ov, exists, pv, field(ti, k), joinPath(path, k), order, hasOrder)
		if err != nil {
			return nil, false, err
		}
		if del {
			delete(orig, k)
		} else {
			orig[k] = nv
		}
	}
	// Orders for lists the patch does not otherwise touch.
	for k, order := range orders {
		if _, inPatch := patch[k]; inPatch {
			continue
		}
		fi := field(ti, k)
		if list, ok := orig[k].([]any); ok && fi != nil && fi.merge {
			sorted, err := applyOrder(list, order, fi.mergeKey, joinPath(path, setElementOrderPrefix+k))
			if err != nil {
				return nil, false, err
			}
			orig[k] = sorted
		}
	}
	return orig, false, nil
}

// retainKeys applies a "$retainKeys" directive: keys of orig not listed are
// dropped. Every non-null key of the patch must be listed.
func retainKeys(orig, patch map[string]any, directive any, path string) error {
	where := joinPath(path, retainKeysDirective)
	list, ok := directive.([]any)
	if !ok {
		return badPatch(where, "expected a list of strings, got %s", typeName(directive))
	}
	keep := make(map[string]bool, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return badPatch(where, "expected a list of strings, got a %s element", typeName(e))
		}
		keep[s] = true
	}
	for k, v := range patch {
		if v == nil || strings.HasPrefix(k, "$") {
			continue
		}
		if !keep[k] {
			return badPatch(where, "key %q is in the patch but not in the $retainKeys list", k)
		}
	}
	for k := range orig {
		if !keep[k] {
			delete(orig, k)
		}
	}
	return nil
}

// mergeValue merges one patch value pv into the live value ov of a field
// described by fi (nil when unknown). deleted reports that the field must go.
func (sp *strategicPatcher) mergeValue(ov any, exists bool, pv any, fi *fieldInfo, path string, order []any, hasOrder bool) (any, bool, error) {
	var ti *typeInfo
	if fi != nil {
		ti = sp.s.info(fi.typ)
	}
	if ti != nil && ti.kind == kindLeaf {
		return pv, false, nil
	}
	switch p := pv.(type) {
	case map[string]any:
		om, ok := ov.(map[string]any)
		if !ok || !exists || (fi != nil && fi.replace) {
			om = map[string]any{}
		}
		return sp.mergeMap(om, p, objectInfo(ti), path)
	case []any:
		if ti == nil || ti.kind != kindList {
			return sp.cleanList(p, nil, path)
		}
		ol, _ := ov.([]any)
		if fi.replace {
			ol = nil
		}
		l, err := sp.mergeList(ol, p, fi, ti, path, order, hasOrder)
		return l, false, err
	default:
		return pv, false, nil
	}
}

// cleanList returns a replacement list: directive elements dropped, object
// elements stripped of directives (with schema elem when known, so nested
// directives are interpreted against an empty live value).
func (sp *strategicPatcher) cleanList(list []any, elem *fieldInfo, path string) (any, bool, error) {
	out := make([]any, 0, len(list))
	for i, e := range list {
		switch x := e.(type) {
		case map[string]any:
			if _, ok := x[directiveMarker]; ok && elem == nil {
				continue
			}
			if elem == nil {
				out = append(out, stripDirectives(x))
				continue
			}
			v, del, err := sp.mergeValue(nil, false, x, elem, fmt.Sprintf("%s[%d]", path, i), nil, false)
			if err != nil {
				return nil, false, err
			}
			if !del {
				out = append(out, v)
			}
		case []any:
			if elem == nil {
				out = append(out, stripDirectives(x))
				continue
			}
			v, _, err := sp.mergeValue(nil, false, x, elem, fmt.Sprintf("%s[%d]", path, i), nil, false)
			if err != nil {
				return nil, false, err
			}
			out = append(out, v)
		default:
			out = append(out, e)
		}
	}
	return out, false, nil
}

// stripDirectives removes directive keys and directive list elements from a
// value whose schema is unknown, keeping everything else verbatim.
func stripDirectives(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if isDirectiveKey(k) {
				delete(x, k)
				continue
			}
			x[k] = stripDirectives(e)
		}
		return x
	case []any:
		out := x[:0]
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				if _, ok := m[directiveMarker]; ok {
					continue
				}
			}
			out = append(out, stripDirectives(e))
		}
		return out
	}
	return v
}

// mergeList merges patch into the live list orig of a field fi whose type ti is
// a list.
func (sp *strategicPatcher) mergeList(orig, patch []any, fi *fieldInfo, ti *typeInfo, path string, order []any, hasOrder bool) ([]any, error) {
	var rest []any
	var deletes []map[string]any
	replace := false
	for i, e := range patch {
		m, ok := e.(map[string]any)
		if !ok {
			rest = append(rest, e)
			continue
		}
		d, ok := m[directiveMarker]
		if !ok {
			rest = append(rest, e)
			continue
		}
		switch d {
		case directiveReplace:
			replace = true
		case directiveDelete:
			deletes = append(deletes, m)
		default:
			return nil, badPatch(fmt.Sprintf("%s[%d]", path, i), "unsupported list directive %v", d)
		}
	}
	var merged []any
	switch {
	case !fi.merge || replace:
		l, _, err := sp.cleanList(rest, ti.elem, path)
		if err != nil {
			return nil, err
		}
		merged = l.([]any)
	case fi.mergeKey == "":
		if len(deletes) > 0 {
			return nil, badPatch(path, `"$patch": "delete" needs a merge key, and this list has none; use $deleteFromPrimitiveList`)
		}
		merged = union(orig, rest)
	default:
		var err error
		if merged, err = sp.mergeKeyed(orig, rest, deletes, fi.mergeKey, ti.elem, path); err != nil {
			return nil, err
		}
	}
	if hasOrder && fi.merge {
		return applyOrder(merged, order, fi.mergeKey, path+" ($setElementOrder)")
	}
	if fi.merge && !replace {
		return patchOrder(merged, rest, orig, fi.mergeKey), nil
	}
	return merged, nil
}

// patchOrder orders a merged list as Kubernetes does when the patch has no
// $setElementOrder directive for it: the elements the patch names come in the
// patch's order, the others keep the live order, and the two are interleaved
// so that a live-only element stays in front of a patched element that follows
// it in the live list; an element new to the list goes in front of the live-only
// elements not yet placed. So a new container is listed first.
func patchOrder(merged, patch, live []any, key string) []any {
	id := func(v any) any { return v }
	if key != "" {
		id = func(v any) any {
			if m, ok := v.(map[string]any); ok {
				return m[key]
			}
			return nil
		}
	}
	inPatch, inLive := positions(patch, id), positions(live, id)
	var patched, liveOnly []any
	for _, e := range merged {
		if inPatch.of(id(e)) >= 0 {
			patched = append(patched, e)
		} else {
			liveOnly = append(liveOnly, e)
		}
	}
	slices.SortStableFunc(patched, func(a, b any) int {
		return inPatch.of(id(a)) - inPatch.of(id(b))
	})
	out := make([]any, 0, len(merged))
	i, j := 0, 0
	for i < len(liveOnly) || j < len(patched) {
		if j == len(patched) {
			out = append(out, liveOnly[i])
			i++
			continue
		}
		if i < len(liveOnly) {
			li, ri := inLive.of(id(liveOnly[i])), inLive.of(id(patched[j]))
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, liveOnly[i])
				i++
				continue
			}
		}
		out = append(out, patched[j])
		j++
	}
	return out
}

// listPositions finds the first position of an identity in a list.
type listPositions struct {
	scalars map[string]int
	others  []any // identities that are not scalars, by position (nil for scalars)
}

func positions(list []any, id func(any) any) listPositions {
	p := listPositions{scalars: make(map[string]int, len(list))}
	for i, e := range list {
		v := id(e)
		if sk, ok := scalarKey(v); ok {
			if _, dup := p.scalars[sk]; !dup {
				p.scalars[sk] = i
			}
			continue
		}
		if p.others == nil {
			p.others = make([]any, len(list))
		}
		p.others[i] = v
	}
	return p
}

// of returns the first position of v, or -1.
func (p listPositions) of(v any) int {
	if sk, ok := scalarKey(v); ok {
		if i, found := p.scalars[sk]; found {
			return i
		}
		return -1
	}
	for i, o := range p.others {
		if o != nil && equal(o, v) {
			return i
		}
	}
	return -1
}

// mergeKeyed merges a list of objects keyed by key.
func (sp *strategicPatcher) mergeKeyed(orig, patch []any, deletes []map[string]any, key string, elem *fieldInfo, path string) ([]any, error) {
	for _, d := range deletes {
		kv, ok := d[key]
		if !ok {
			return nil, badPatch(path, `"$patch": "delete" element has no merge key %q`, key)
		}
		kept := orig[:0:0]
		for _, e := range orig {
			if m, ok := e.(map[string]any); ok && equal(m[key], kv) {
				continue
			}
			kept = append(kept, e)
		}
		orig = kept
	}
	merged := append([]any(nil), orig...)
	index := make(map[string]int, len(merged))
	for i, e := range merged {
		if m, ok := e.(map[string]any); ok {
			if sk, ok := scalarKey(m[key]); ok {
				if _, dup := index[sk]; !dup {
					index[sk] = i
				}
			}
		}
	}
	var drop map[int]bool
	for _, e := range patch {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, badPatch(path, "list element must be an object with merge key %q, got %s", key, typeName(e))
		}
		kv, ok := m[key]
		if !ok {
			return nil, badPatch(path, "list element has no merge key %q", key)
		}
		where := fmt.Sprintf("%s[%s=%v]", path, key, kv)
		idx := -1
		if sk, ok := scalarKey(kv); ok {
			if i, found := index[sk]; found {
				idx = i
			}
		} else {
			for i, oe := range merged {
				if om, ok := oe.(map[string]any); ok && equal(om[key], kv) {
					idx = i
					break
				}
			}
		}
		var live map[string]any
		if idx >= 0 {
			live, _ = merged[idx].(map[string]any)
		}
		if live == nil {
			live = map[string]any{}
		}
		v, del, err := sp.mergeValue(live, true, m, elem, where, nil, false)
		if err != nil {
			return nil, err
		}
		switch {
		case idx >= 0 && del:
			if drop == nil {
				drop = map[int]bool{}
			}
			drop[idx] = true
		case idx >= 0:
			merged[idx] = v
		case !del:
			if sk, ok := scalarKey(kv); ok {
				index[sk] = len(merged)
			}
			merged = append(merged, v)
		}
	}
	if drop != nil {
		kept := merged[:0]
		for i, e := range merged {
			if !drop[i] {
				kept = append(kept, e)
			}
		}
		merged = kept
	}
	return merged, nil
}

// union returns orig followed by the values of patch not already present,
// without duplicates.
func union(orig, patch []any) []any {
	out := make([]any, 0, len(orig)+len(patch))
	seen := make(map[string]bool, len(orig)+len(patch))
	for _, list := range [2][]any{orig, patch} {
		for _, v := range list {
			if sk, ok := scalarKey(v); ok {
				if seen[sk] {
					continue
				}
				seen[sk] = true
			} else if containsEqual(out, v) {
				continue
			}
			out = append(out, v)
		}
	}
	return out
}

func containsEqual(list []any, v any) bool {
	for _, e := range list {
		if equal(e, v) {
			return true
		}
	}
	return false
}

// removeValues returns list without the values in del.
func removeValues(list, del []any) []any {
	out := make([]any, 0, len(list))
	for _, v := range list {
		if !containsEqual(del, v) {
			out = append(out, v)
		}
	}
	return out
}

// applyOrder returns list with the elements named by order first, in that
// order, then the remaining elements in their existing order. With a merge key,
// order entries are objects naming the key; without, they are the values.
func applyOrder(list, order []any, key, path string) ([]any, error) {
	identity := func(v any) any { return v }
	if key != "" {
		identity = func(v any) any {
			if m, ok := v.(map[string]any); ok {
				return m[key]
			}
			return nil
		}
	}
	positions := map[string][]int{}
	for i, e := range list {
		if sk, ok := scalarKey(identity(e)); ok {
			positions[sk] = append(positions[sk], i)
		}
	}
	used := make([]bool, len(list))
	out := make([]any, 0, len(list))
	for _, o := range order {
		want := o
		if key != "" {
			m, ok := o.(map[string]any)
			if !ok {
				return nil, badPatch(path, "order entries must be objects with merge key %q, got %s", key, typeName(o))
			}
			if want, ok = m[key]; !ok {
				return nil, badPatch(path, "order entry has no merge key %q", key)
			}
		}
		if sk, ok := scalarKey(want); ok {
			for len(positions[sk]) > 0 {
				i := positions[sk][0]
				positions[sk] = positions[sk][1:]
				if !used[i] {
					used[i] = true
					out = append(out, list[i])
					break
				}
			}
			continue
		}
		for i, e := range list {
			if !used[i] && equal(identity(e), want) {
				used[i] = true
				out = append(out, e)
				break
			}
		}
	}
	for i, e := range list {
		if !used[i] {
			out = append(out, e)
		}
	}
	return out, nil
}
