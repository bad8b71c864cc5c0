package apiserver

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/converge-dev/converge/framework/api"
)

// Objects are stored as JSON with "metadata" first and no resourceVersion, so the
// resourceVersion (the key's mod revision) can be spliced in when read without
// decoding the object again.

var storedPrefix = []byte(`{"metadata":{`)

// encodeStored renders obj for storage: metadata first, resourceVersion removed,
// everything else as json.Marshal renders it (keys sorted). obj is restored
// before it returns.
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
	var small [16]string
	keys := small[:0]
	for k := range obj {
		if k != "metadata" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	// The object is encoded into a reused buffer and copied out at its exact
	// size: growing a fresh one by appending allocated and copied it two or
	// three times over for a 1–2 KiB object.
	scratch := encodePool.Get().(*[]byte)
	b, err := appendStored((*scratch)[:0], obj, meta, keys)
	var out []byte
	if err == nil {
		out = bytes.Clone(b) // before the buffer goes back to the pool
	}
	if cap(b) <= maxPooledEncode {
		*scratch = b[:0]
		encodePool.Put(scratch)
	}
	return out, err
}

// appendStored appends encodeStored's rendering of obj, whose metadata is
// meta and other keys keys, sorted, to b.
func appendStored(b []byte, obj, meta map[string]any, keys []string) ([]byte, error) {
	b = append(b, `{"metadata":`...)
	b, err := api.AppendJSON(b, meta)
	if err != nil {
		return b, fmt.Errorf("encode metadata: %w", err)
	}
	for _, k := range keys {
		b = append(api.AppendJSONString(append(b, ','), k), ':')
		if b, err = api.AppendJSON(b, obj[k]); err != nil {
			return b, fmt.Errorf("encode object: %w", err)
		}
	}
	return append(b, '}'), nil
}

// encodePool holds encodeStored's scratch buffers; ones grown beyond
// maxPooledEncode (a large object) are left to the collector.
var encodePool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledEncode = 64 << 10

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
		b, err := api.EncodeJSON(m)
		if err != nil {
			return stored
		}
		return b
	}
	out := make([]byte, 0, len(stored)+42)
	out = appendRVHead(out, stored, rv)
	return append(out, stored[len(storedPrefix):]...)
}

// appendRVHead appends what replaces storedPrefix in stored JSON written by
// encodeStored to set its resourceVersion to rv.
func appendRVHead(dst, stored []byte, rv int64) []byte {
	dst = append(dst, storedPrefix...)
	dst = append(dst, `"resourceVersion":"`...)
	dst = strconv.AppendInt(dst, rv, 10)
	dst = append(dst, '"')
	if stored[len(storedPrefix)] != '}' {
		dst = append(dst, ',')
	}
	return dst
}

// jsonBody is a JSON response body in two parts, head then tail, so that
// stored JSON can be sent with its resourceVersion without copying it.
type jsonBody struct{ head, tail []byte }

// storedBody is withResourceVersion(stored, rv) as a jsonBody.
func storedBody(stored []byte, rv int64) jsonBody {
	if !bytes.HasPrefix(stored, storedPrefix) {
		return jsonBody{head: withResourceVersion(stored, rv)}
	}
	return jsonBody{head: appendRVHead(make([]byte, 0, 64), stored, rv), tail: stored[len(storedPrefix):]}
}

// decodeStored decodes stored JSON into a map with resourceVersion set.
func decodeStored(stored []byte, rv int64) (map[string]any, error) {
	return decodeStoredWith(api.DecodeMap, stored, rv)
}

// decodeStoredFields is decodeStored without metadata.managedFields, for
// readers of the object's other fields (the watch cache's index of it).
func decodeStoredFields(stored []byte, rv int64) (map[string]any, error) {
	return decodeStoredWith(api.DecodeMapWithoutManagedFields, stored, rv)
}

// decodeStoredHead is decodeStoredFields of apiVersion, kind and metadata
// alone, for the watch cache's index of an object whose other fields it does
// not read.
func decodeStoredHead(stored []byte, rv int64) (map[string]any, error) {
	return decodeStoredWith(api.DecodeMapHead, stored, rv)
}

func decodeStoredWith(decode func([]byte) (map[string]any, error), stored []byte, rv int64) (map[string]any, error) {
	m, err := decode(stored)
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
