package api

import "unsafe"

// Head is what an index of objects reads of an object's JSON: its apiVersion,
// metadata.name, metadata.namespace and metadata.labels, and whether
// metadata.deletionTimestamp is set.
type Head struct {
	APIVersion, Name, Namespace string
	// Labels holds the labels whose values are strings; nil when
	// metadata.labels is absent or not an object.
	Labels map[string]string
	// Deleting: metadata.deletionTimestamp is there and not null.
	Deleting bool
}

// DecodeHead reads the Head of the JSON object data without building the
// object: it is what DecodeMapHead's map says (apiVersion and the metadata
// fields read as strings with a type assertion, labels as NestedStringMap
// reads them, deletionTimestamp set when not nil), with far fewer
// allocations. ok is false when data is not an object DecodeMapHead's fast
// path decodes, or apiVersion, metadata, name or namespace is there with
// another JSON type: the caller then reads the decoded map.
func DecodeHead(data []byte) (h Head, ok bool) {
	d := fastDecoder{data: data}
	d.skipSpace()
	if !d.objectKeys(0, false, func(k string) bool {
		switch k {
		case "apiVersion":
			var ok bool
			h.APIVersion, ok = d.headString()
			return ok
		case "metadata":
			// A repeated metadata key replaces the whole map in DecodeMap.
			h.Name, h.Namespace, h.Labels, h.Deleting = "", "", nil, false
			return d.headMeta(&h)
		}
		return d.skip(0)
	}) {
		return Head{}, false
	}
	d.skipSpace()
	return h, d.i == len(d.data)
}

// headMeta reads the metadata object into h; d.i is at its value.
func (d *fastDecoder) headMeta(h *Head) bool {
	return d.objectKeys(1, false, func(k string) bool {
		var ok bool
		switch k {
		case "name":
			h.Name, ok = d.headString()
		case "namespace":
			h.Namespace, ok = d.headString()
		case "labels":
			ok = d.headLabels(h)
		case "deletionTimestamp":
			h.Deleting = !d.literal("null")
			ok = !h.Deleting || d.skip(1)
		default:
			ok = d.skip(1)
		}
		return ok
	})
}

// headLabels reads metadata.labels into h.Labels as NestedStringMap would.
func (d *fastDecoder) headLabels(h *Head) bool {
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		h.Labels = nil
		return d.skip(1)
	}
	h.Labels = map[string]string{}
	return d.objectKeys(2, true, func(k string) bool {
		if d.i < len(d.data) && d.data[d.i] == '"' {
			v, ok := d.str()
			h.Labels[k] = v
			return ok
		}
		delete(h.Labels, k) // a later value replaces an earlier one
		return d.skip(2)
	})
}

// headString reads a string value; false for any other JSON type.
func (d *fastDecoder) headString() (string, bool) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return "", false
	}
	return d.str()
}

// objectKeys reads the object at d.i, at depth as object reads it, calling
// field for each key with d.i at its value; field reads the value. Unless
// keep is set, a key without escapes is a view of d.data, valid only during
// the call.
func (d *fastDecoder) objectKeys(depth int, keep bool, field func(k string) bool) bool {
	if depth > maxFastDepth || d.i >= len(d.data) || d.data[d.i] != '{' {
		return false
	}
	d.i++
	d.skipSpace()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return true
	}
	for {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return false
		}
		k, ok := d.key(keep)
		if !ok || !d.colon() || !field(k) {
			return false
		}
		if more, ok := d.next('}'); !more {
			return ok
		}
	}
}

// key reads an object key as str does; unless keep is set, a key without
// escapes is not copied but viewed in d.data.
func (d *fastDecoder) key(keep bool) (string, bool) {
	if keep {
		return d.str()
	}
	start := d.i + 1
	if i, plain := d.plainEnd(); plain {
		d.i = i + 1
		return unsafe.String(unsafe.SliceData(d.data[start:]), i-start), true
	}
	return d.str()
}
