package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/converge-dev/converge/framework/api"
)

// Objects are stored as JSON with "metadata" first and no resourceVersion, so the
// resourceVersion (the key's mod revision) can be spliced in when read without
// decoding the object again.

var storedPrefix = []byte(`{"metadata":{`)

// encodeStored renders obj for storage: metadata first, resourceVersion removed.
// obj is restored before it returns.
func encodeStored(obj map[string]any) ([]byte, error) {
	meta, _ := obj["metadata"].(map[string]any)
	if len(meta) == 0 {
		return nil, fmt.Errorf("encode object: metadata is empty")
	}
	rv, hasRV := meta["resourceVersion"]
	delete(meta, "resourceVersion")
	defer func() {
		if hasRV {
			meta["resourceVersion"] = rv
		}
	}()
	if _, ok := obj[""]; ok || len(meta) == 0 {
		return encodeStoredSlow(obj, meta)
	}
	// One Marshal: under a key that sorts before every other non-empty key,
	// metadata comes first; the key is then renamed in the output.
	delete(obj, "metadata")
	obj[firstKey] = meta
	b, err := json.Marshal(obj)
	delete(obj, firstKey)
	obj["metadata"] = meta
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	if !bytes.HasPrefix(b, firstKeyJSON) {
		return nil, fmt.Errorf("encode object: unexpected encoding")
	}
	start := len(firstKeyJSON) - len(storedPrefix)
	copy(b[start:], storedPrefix)
	return b[start:], nil
}

const firstKey = "\x00metadata"

// firstKeyJSON is how firstKey and the start of metadata encode; storedPrefix
// replaces it.
var firstKeyJSON = []byte(`{"\u0000metadata":{`)

// encodeStoredSlow is encodeStored for objects the fast path cannot order.
func encodeStoredSlow(obj, meta map[string]any) ([]byte, error) {
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			rest[k] = v
		}
	}
	rb, err := json.Marshal(rest)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(len(mb) + len(rb) + 16)
	buf.WriteString(`{"metadata":`)
	buf.Write(mb)
	if len(rb) > 2 {
		buf.WriteByte(',')
		buf.Write(rb[1:])
	} else {
		buf.WriteByte('}')
	}
	return buf.Bytes(), nil
}

// withResourceVersion returns stored JSON with metadata.resourceVersion set to rv.
func withResourceVersion(stored []byte, rv int64) []byte {
	if !bytes.HasPrefix(stored, storedPrefix) {
		// Not written by us (or empty metadata): decode and re-encode.
		m, err := api.DecodeMap(stored)
		if err != nil {
			return stored
		}
		meta, _ := m["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			m["metadata"] = meta
		}
		meta["resourceVersion"] = strconv.FormatInt(rv, 10)
		b, err := json.Marshal(m)
		if err != nil {
			return stored
		}
		return b
	}
	rvs := strconv.FormatInt(rv, 10)
	out := make([]byte, 0, len(stored)+len(rvs)+22)
	out = append(out, storedPrefix...)
	out = append(out, `"resourceVersion":"`...)
	out = append(out, rvs...)
	out = append(out, '"')
	if stored[len(storedPrefix)] != '}' {
		out = append(out, ',')
	}
	out = append(out, stored[len(storedPrefix):]...)
	return out
}

// decodeStored decodes stored JSON into a map with resourceVersion set.
func decodeStored(stored []byte, rv int64) (map[string]any, error) {
	m, err := api.DecodeMap(stored)
	if err != nil {
		return nil, fmt.Errorf("decode stored object: %w", err)
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		m["metadata"] = meta
	}
	meta["resourceVersion"] = strconv.FormatInt(rv, 10)
	return m, nil
}

func parseRV(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid resource version %q", s)
	}
	return v, nil
}
