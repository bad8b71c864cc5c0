package protobuf

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
)

// testEncoder is a test-only protobuf encoder over the same struct tags the
// Decoder reads. Like gogo-generated Kubernetes code it writes non-pointer
// scalars, strings and messages even when zero, pointers when non-nil, and
// repeated scalars unpacked unless packed is set.
type testEncoder struct {
	packed bool
}

// envelope wraps an encoded message in the magic prefix and runtime.Unknown.
func envelope(apiVersion, kind string, raw []byte) []byte {
	var tm []byte
	tm = protowire.AppendTag(tm, 1, protowire.BytesType)
	tm = protowire.AppendString(tm, apiVersion)
	tm = protowire.AppendTag(tm, 2, protowire.BytesType)
	tm = protowire.AppendString(tm, kind)
	b := append([]byte(nil), Magic[:]...)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, tm)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, "")
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, "")
	return b
}

func (e testEncoder) marshal(v any) []byte {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	return e.message(nil, rv)
}

func (e testEncoder) message(b []byte, v reflect.Value) []byte {
	t := v.Type()
	switch t {
	case typeTime:
		return timestamp(b, v.Interface().(api.Time).Time)
	case typeMicroTime:
		return timestamp(b, v.Interface().(api.MicroTime).Time)
	case typeDuration:
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.Interface().(api.Duration).Duration))
	case typeIntOrString:
		x := v.Interface().(api.IntOrString)
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(x.Type))
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(x.IntVal)))
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		return protowire.AppendString(b, x.StrVal)
	case typeQuantity:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.Interface().(api.Quantity).S)
	case typeRawExtension, typeFieldsV1:
		raw := v.Field(0).Bytes()
		if raw != nil {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendBytes(b, raw)
		}
		return b
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("protobuf")
		if tag == "-" {
			continue
		}
		fv := v.Field(i)
		if !ok {
			if sf.Anonymous && sf.Type != typeTypeMeta {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue
					}
					fv = fv.Elem()
				}
				if fv.Kind() == reflect.Struct {
					b = e.message(b, fv)
				}
			}
			continue
		}
		parts := strings.Split(tag, ",")
		num, _ := strconv.Atoi(parts[1])
		b = e.field(b, protowire.Number(num), parts[0], fv, sf)
	}
	return b
}

func timestamp(b []byte, t interface {
	IsZero() bool
	Unix() int64
	Nanosecond() int
}) []byte {
	if t.IsZero() {
		return b
	}
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.Unix()))
	if t.Nanosecond() != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(t.Nanosecond()))
	}
	return b
}

func (e testEncoder) field(b []byte, num protowire.Number, wire string, v reflect.Value, sf reflect.StructField) []byte {
	switch v.Kind() {
	case reflect.Map:
		keyWire := strings.Split(sf.Tag.Get("protobuf_key"), ",")[0]
		valWire := strings.Split(sf.Tag.Get("protobuf_val"), ",")[0]
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			var entry []byte
			entry = e.value(entry, 1, keyWire, k)
			if mv := v.MapIndex(k); mv.Kind() == reflect.Slice && mv.Type().Elem().Kind() != reflect.Uint8 {
				// A slice value is the wrapper message {repeated items = 1}.
				entry = protowire.AppendTag(entry, 2, protowire.BytesType)
				entry = protowire.AppendBytes(entry, e.field(nil, 1, valWire, mv, reflect.StructField{}))
			} else {
				entry = e.value(entry, 2, valWire, mv)
			}
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, entry)
		}
		return b
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.IsNil() {
				return b
			}
			return e.value(b, num, wire, v)
		}
		if e.packed && isScalarKind(v.Type().Elem().Kind()) {
			if v.Len() == 0 {
				return b
			}
			var run []byte
			for i := range v.Len() {
				run = scalar(run, wire, v.Index(i))
			}
			b = protowire.AppendTag(b, num, protowire.BytesType)
			return protowire.AppendBytes(b, run)
		}
		for i := range v.Len() {
			b = e.value(b, num, wire, v.Index(i))
		}
		return b
	case reflect.Pointer:
		if v.IsNil() {
			return b
		}
		return e.value(b, num, wire, v.Elem())
	}
	return e.value(b, num, wire, v)
}

func isScalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// value writes one field value with its tag.
func (e testEncoder) value(b []byte, num protowire.Number, wire string, v reflect.Value) []byte {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendString(b, v.String())
	case reflect.Slice:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, v.Bytes())
	case reflect.Struct:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, e.message(nil, v))
	}
	switch wire {
	case "fixed64":
		b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	case "fixed32":
		b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	default:
		b = protowire.AppendTag(b, num, protowire.VarintType)
	}
	return scalar(b, wire, v)
}

// scalar writes a bool or number without a tag.
func scalar(b []byte, wire string, v reflect.Value) []byte {
	var x uint64
	switch v.Kind() {
	case reflect.Bool:
		x = protowire.EncodeBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x = uint64(v.Int())
		if strings.HasPrefix(wire, "zigzag") {
			x = protowire.EncodeZigZag(v.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x = v.Uint()
	case reflect.Float32:
		return protowire.AppendFixed32(b, math.Float32bits(float32(v.Float())))
	case reflect.Float64:
		return protowire.AppendFixed64(b, math.Float64bits(v.Float()))
	}
	switch wire {
	case "fixed64":
		return protowire.AppendFixed64(b, x)
	case "fixed32":
		return protowire.AppendFixed32(b, uint32(x))
	}
	return protowire.AppendVarint(b, x)
}
