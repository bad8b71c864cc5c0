package protobuf

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
)

// Encodable reports whether every field of t (a struct type) that JSON
// renders is on the protobuf wire, so that encoding a value of t loses
// nothing its JSON form carries. A type with a JSON field that has no
// protobuf tag must be sent as JSON.
func (d *Decoder) Encodable(t reflect.Type) bool {
	if v, ok := d.encodable.Load(t); ok {
		return v.(bool)
	}
	ok := taggedFields(t, map[reflect.Type]bool{})
	d.encodable.Store(t, ok)
	return ok
}

// taggedFields walks the struct types reachable from t; seen holds the types
// already walked (recursion).
func taggedFields(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return true
	}
	seen[t] = true
	switch t {
	case typeTime, typeMicroTime, typeDuration, typeIntOrString, typeQuantity, typeRawExtension, typeFieldsV1:
		return true
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		ptag, tagged := sf.Tag.Lookup("protobuf")
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case sf.Anonymous && !tagged:
			if sf.Type != typeTypeMeta && !taggedFields(sf.Type, seen) {
				return false
			}
		case !sf.IsExported() || name == "-":
		case !tagged || ptag == "-":
			return false
		case !taggedFields(sf.Type, seen):
			return false
		}
	}
	return true
}

// EncodeObject renders v (a struct or a pointer to one) as a Kubernetes
// protobuf body: the magic prefix and a runtime.Unknown envelope carrying tm
// and v's message.
func (d *Decoder) EncodeObject(tm api.TypeMeta, v any) ([]byte, error) {
	raw, err := d.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Wrap(tm, raw), nil
}

// Wrap puts an encoded message in the magic prefix and a runtime.Unknown
// envelope with tm.
func Wrap(tm api.TypeMeta, raw []byte) []byte {
	var meta []byte
	meta = protowire.AppendTag(meta, 1, protowire.BytesType)
	meta = protowire.AppendString(meta, tm.APIVersion)
	meta = protowire.AppendTag(meta, 2, protowire.BytesType)
	meta = protowire.AppendString(meta, tm.Kind)
	b := make([]byte, 0, len(Magic)+len(meta)+len(raw)+16)
	b = append(b, Magic[:]...)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, meta)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, raw)
}

// Marshal encodes v (a struct or a pointer to one) as its bare message, by
// the same struct tags Decode reads. Fields are written in field-number
// order; zero scalars, strings and empty messages of non-pointer fields are
// left out (they decode to the same value), pointers are written when set,
// repeated scalars unpacked and map entries in key order.
func (d *Decoder) Marshal(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, fmt.Errorf("marshal %T: nil pointer", v)
		}
		rv = rv.Elem()
	}
	m, err := d.schema(rv.Type())
	if err != nil {
		return nil, err
	}
	return appendMessage(nil, m, rv), nil
}

func appendMessage(b []byte, m *message, v reflect.Value) []byte {
	for _, f := range m.sorted {
		fv, err := v.FieldByIndexErr(f.index)
		if err != nil {
			continue // a nil embedded pointer: none of its fields are set
		}
		b = appendField(b, f.num, f.codec, fv)
	}
	return b
}

func appendField(b []byte, num protowire.Number, c *codec, v reflect.Value) []byte {
	switch c.kind {
	case kindPtr:
		if v.IsNil() {
			return b
		}
		return appendValue(b, num, c.elem, v.Elem(), true)
	case kindSlice:
		for i := range v.Len() {
			b = appendValue(b, num, c.elem, v.Index(i), true)
		}
		return b
	case kindMap:
		keys := v.MapKeys()
		slices.SortFunc(keys, compareKeys)
		for _, k := range keys {
			entry := appendValue(nil, 1, c.key, k, true)
			entry = appendValue(entry, 2, c.elem, v.MapIndex(k), true)
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, entry)
		}
		return b
	}
	return appendValue(b, num, c, v, false)
}

func compareKeys(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.String:
		return strings.Compare(a.String(), b.String())
	case reflect.Bool:
		switch {
		case a.Bool() == b.Bool():
			return 0
		case b.Bool():
			return -1
		}
		return 1
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(max(min(a.Int()-b.Int(), 1), -1))
	}
	switch {
	case a.Uint() < b.Uint():
		return -1
	case a.Uint() > b.Uint():
		return 1
	}
	return 0
}

// appendValue writes one value with its tag; unless force is set, a zero
// value is left out.
func appendValue(b []byte, num protowire.Number, c *codec, v reflect.Value, force bool) []byte {
	switch c.kind {
	case kindPtr:
		if v.IsNil() {
			return b
		}
		return appendValue(b, num, c.elem, v.Elem(), true)
	case kindBool, kindInt, kindUint, kindFloat:
		if !force && v.IsZero() {
			return b
		}
		return appendScalar(b, num, c, v)
	case kindString:
		if !force && v.Len() == 0 {
			return b
		}
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendString(b, v.String())
	case kindBytes:
		if !force && v.IsNil() {
			return b
		}
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, v.Bytes())
	}
	var msg []byte
	switch c.kind {
	case kindMessage:
		msg = appendMessage(nil, c.msg, v)
	case kindWrapped:
		w := reflect.New(c.msg.typ).Elem()
		w.Field(0).Set(v)
		msg = appendMessage(nil, c.msg, w)
	default:
		msg = appendSpecial(c, v)
	}
	if !force && len(msg) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendScalar(b []byte, num protowire.Number, c *codec, v reflect.Value) []byte {
	var x uint64
	switch c.kind {
	case kindBool:
		x = protowire.EncodeBool(v.Bool())
	case kindInt:
		x = uint64(v.Int())
		if c.zigzag {
			x = protowire.EncodeZigZag(v.Int())
		}
	case kindUint:
		x = v.Uint()
	case kindFloat:
		if c.wire == protowire.Fixed32Type {
			b = protowire.AppendTag(b, num, protowire.Fixed32Type)
			return protowire.AppendFixed32(b, math.Float32bits(float32(v.Float())))
		}
		b = protowire.AppendTag(b, num, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.Float()))
	}
	switch c.wire {
	case protowire.Fixed32Type:
		b = protowire.AppendTag(b, num, protowire.Fixed32Type)
		return protowire.AppendFixed32(b, uint32(x))
	case protowire.Fixed64Type:
		b = protowire.AppendTag(b, num, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, x)
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, x)
}

// appendSpecial encodes the message of one of the framework/api value types
// (the inverse of decodeSpecial).
func appendSpecial(c *codec, v reflect.Value) []byte {
	var b []byte
	switch c.kind {
	case kindTime, kindMicroTime:
		var t interface {
			IsZero() bool
			Unix() int64
			Nanosecond() int
		}
		if c.kind == kindTime {
			t = v.Interface().(api.Time).Time
		} else {
			t = v.Interface().(api.MicroTime).Time
		}
		if t.IsZero() {
			return nil
		}
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(t.Unix()))
		if ns := t.Nanosecond(); ns != 0 {
			b = protowire.AppendTag(b, 2, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(ns))
		}
	case kindDuration:
		if d := v.Interface().(api.Duration).Duration; d != 0 {
			b = protowire.AppendTag(b, 1, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(d))
		}
	case kindIntOrString:
		x := v.Interface().(api.IntOrString)
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(x.Type))
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(x.IntVal)))
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, x.StrVal)
	case kindQuantity:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, v.Interface().(api.Quantity).S)
	case kindRaw:
		if raw := v.Field(0).Bytes(); raw != nil {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendBytes(b, raw)
		}
	}
	return b
}
