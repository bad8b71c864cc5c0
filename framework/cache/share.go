package cache

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
)

// maxSharedValues bounds a valueTable; a full table starts over (values
// handed out stay valid, later equal ones get a new canonical copy).
const maxSharedValues = 4096

// maxSharedSlice bounds the slices worth sharing: tolerations, owner
// references, finalizers, a projected volume's sources. Longer slices are
// rarely equal.
const maxSharedSlice = 16

// valueTable hash-conses the pointers and slices of cached typed objects: a
// pod's default tolerations, its ServiceAccount volume's projected sources,
// pointers to `true`, `30` or an empty security context are each one value
// for every pod of a cache that has them (≈700 bytes per pod of the benchmark
// pods). Values are shared bottom-up: a pointer or slice is looked up after
// what it refers to was, so its content compares by value for scalars and
// by identity for the pointers, slices and maps inside it (already
// canonical). Cached objects are read only (Store), so sharing them is safe.
// One goroutine uses a table (the Reflector's).
type valueTable struct {
	seed   maphash.Seed
	values map[sharedKey]reflect.Value
}

type sharedKey struct {
	t reflect.Type
	h uint64
}

func newValueTable() *valueTable {
	return &valueTable{seed: maphash.MakeSeed(), values: map[sharedKey]reflect.Value{}}
}

// share returns the canonical value equal to v, a non-nil pointer or a
// non-empty slice, recording v when there is none. ok is false for values
// not shared (holding interfaces or complex numbers, or long slices).
func (t *valueTable) share(v reflect.Value) (reflect.Value, bool) {
	var h maphash.Hash
	h.SetSeed(t.seed)
	switch v.Kind() {
	case reflect.Pointer:
		if !hashShallow(&h, v.Elem()) {
			return v, false
		}
	case reflect.Slice:
		if v.Len() == 0 || v.Len() > maxSharedSlice {
			return v, false
		}
		writeUint(&h, uint64(v.Len()))
		for i := range v.Len() {
			if !hashShallow(&h, v.Index(i)) {
				return v, false
			}
		}
	default:
		return v, false
	}
	key := sharedKey{v.Type(), h.Sum64()}
	if old, ok := t.values[key]; ok && equalContent(old, v) {
		return old, true
	}
	if len(t.values) >= maxSharedValues {
		clear(t.values)
	}
	if v.Kind() == reflect.Slice {
		v = v.Slice3(0, v.Len(), v.Len()) // an append copies
	}
	t.values[key] = v
	return v, true
}

// equalContent reports whether a and b, pointers or slices of one type,
// refer to shallow-equal content.
func equalContent(a, b reflect.Value) bool {
	if a.Kind() == reflect.Pointer {
		return equalShallow(a.Elem(), b.Elem())
	}
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !equalShallow(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

func writeUint(h *maphash.Hash, u uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], u)
	_, _ = h.Write(b[:])
}

// hashShallow hashes v: scalars and strings by value, structs and arrays by
// their fields, pointers, maps and slices by identity. It returns false for
// kinds not handled (interfaces, complex numbers, channels, functions).
func hashShallow(h *maphash.Hash, v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			_ = h.WriteByte(1)
		} else {
			_ = h.WriteByte(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		writeUint(h, uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		writeUint(h, v.Uint())
	case reflect.Float32, reflect.Float64:
		writeUint(h, math.Float64bits(v.Float()))
	case reflect.String:
		writeUint(h, uint64(v.Len()))
		_, _ = h.WriteString(v.String())
	case reflect.Pointer, reflect.Map, reflect.UnsafePointer:
		writeUint(h, uint64(v.Pointer()))
	case reflect.Slice:
		writeUint(h, uint64(v.Pointer()))
		writeUint(h, uint64(v.Len()))
	case reflect.Struct:
		for i := range v.NumField() {
			if !hashShallow(h, v.Field(i)) {
				return false
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if !hashShallow(h, v.Index(i)) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// equalShallow is the equality hashShallow hashes for.
func equalShallow(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.String:
		return a.String() == b.String()
	case reflect.Pointer, reflect.Map, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer()
	case reflect.Slice:
		return a.Pointer() == b.Pointer() && a.Len() == b.Len()
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalShallow(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !equalShallow(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	return false
}
