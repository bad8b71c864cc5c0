package patch

import "fmt"

// MergePatch applies a JSON merge patch (RFC 7386) to doc and returns the
// result, exactly as the Kubernetes API server does (gopkg.in/evanphx/json-patch.v4):
// objects merge recursively and a null member deletes the key; every other
// value, arrays included, replaces what was there. Where the RFC and
// Kubernetes differ, this follows Kubernetes:
//
//   - A value that lands where the document has no object (a new member, or
//     one replacing a scalar, an array or null) has its nulls removed at every
//     depth, inside arrays too: {"a":[{"b":null}]} sets a to [{}]. An array
//     that replaces an object is kept as it is.
//   - A patch that is an array replaces the document, with the nulls removed
//     from objects inside it; an object patch on a document that is not an
//     object replaces it with the patch, nulls removed.
//   - A patch that is null, a string, a number or a boolean is refused with
//     ErrBadPatch (the API server answers 400), and so is a document that is
//     JSON null (ErrInvalidDocument).
func MergePatch(doc, patch []byte) ([]byte, error) {
	d, err := decode(doc)
	if err != nil {
		return nil, invalidDocument("document", err)
	}
	p, err := decode(patch)
	if err != nil {
		return nil, badPatch("", "decode merge patch: %v", err)
	}
	if d == nil {
		return nil, invalidDocument("document", fmt.Errorf("the document is null"))
	}
	var out any
	switch pv := p.(type) {
	case map[string]any:
		if dm, ok := d.(map[string]any); ok {
			out = mergeObjects(dm, pv)
		} else {
			out = pruneNulls(pv)
		}
	case []any:
		out = pruneNulls(pv)
	default:
		return nil, badPatch("", "merge patch must be an object or an array, got %s", typeName(p))
	}
	b, err := encode(out)
	if err != nil {
		return nil, fmt.Errorf("encode patched document: %w", err)
	}
	return b, nil
}

// mergeObjects merges patch into target, modifying both, and returns target.
func mergeObjects(target, patch map[string]any) map[string]any {
	for k, v := range patch {
		if v == nil {
			delete(target, k)
			continue
		}
		tm, ok := target[k].(map[string]any)
		if !ok {
			target[k] = pruneNulls(v)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			target[k] = mergeObjects(tm, pm)
		} else {
			target[k] = v
		}
	}
	return target
}

// pruneNulls removes, in place, the null members of every object inside v,
// at any depth and inside arrays; null array elements stay. It returns v.
func pruneNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				pruneNulls(e)
			}
		}
	case []any:
		for _, e := range x {
			pruneNulls(e)
		}
	}
	return v
}

// CreateMergePatch returns the RFC 7386 merge patch that turns original into
// modified: changed and added members with their new values, removed members as
// null, unchanged members omitted. When either input is not a JSON object the
// patch is modified itself. Equal objects give "{}". Because merge patch cannot
// express it, a null value inside an added or replaced object is not preserved.
func CreateMergePatch(original, modified []byte) ([]byte, error) {
	o, err := decode(original)
	if err != nil {
		return nil, invalidDocument("original", err)
	}
	m, err := decode(modified)
	if err != nil {
		return nil, invalidDocument("modified", err)
	}
	om, ok1 := o.(map[string]any)
	mm, ok2 := m.(map[string]any)
	var p any = m
	if ok1 && ok2 {
		p = diffMaps(om, mm)
	}
	out, err := encode(p)
	if err != nil {
		return nil, fmt.Errorf("encode merge patch: %w", err)
	}
	return out, nil
}

// diffMaps returns the merge patch from o to m.
func diffMaps(o, m map[string]any) map[string]any {
	p := map[string]any{}
	for k := range o {
		if _, ok := m[k]; !ok {
			p[k] = nil
		}
	}
	for k, mv := range m {
		ov, ok := o[k]
		switch {
		case !ok:
			p[k] = mv
		case equal(ov, mv):
		default:
			osub, ok1 := ov.(map[string]any)
			msub, ok2 := mv.(map[string]any)
			if ok1 && ok2 {
				p[k] = diffMaps(osub, msub)
			} else {
				p[k] = mv
			}
		}
	}
	return p
}
