package patch

import "fmt"

// MergePatch applies an RFC 7386 JSON merge patch to doc and returns the result.
// Objects merge recursively and a null member deletes the key; every other
// value, arrays included, replaces what was there. A patch that is not a JSON
// object replaces the whole document; an object patch applied to a document
// that is not an object starts from an empty object.
func MergePatch(doc, patch []byte) ([]byte, error) {
	p, err := decode(patch)
	if err != nil {
		return nil, badPatch("", "decode merge patch: %v", err)
	}
	d, err := decode(doc)
	if err != nil {
		return nil, invalidDocument("document", err)
	}
	out, err := encode(mergeValue(d, p))
	if err != nil {
		return nil, fmt.Errorf("encode patched document: %w", err)
	}
	return out, nil
}

// mergeValue is RFC 7386 MergePatch(target, patch); it may modify target.
func mergeValue(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = make(map[string]any, len(pm))
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
			continue
		}
		tm[k] = mergeValue(tm[k], v)
	}
	return tm
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
