package protobuf

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
)

var errTooDeep = fmt.Errorf("messages nested deeper than %d", MaxDepth)

// fieldError records the path of the field where decoding failed.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return e.path + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// inField prefixes err's path with name (a field name or an "[i]" index).
func inField(name string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) && fe == err {
		sep := "."
		if fe.path[0] == '[' {
			sep = ""
		}
		return &fieldError{path: name + sep + fe.path, err: fe.err}
	}
	return &fieldError{path: name, err: err}
}

func wireError(n int) error { return protowire.ParseError(n) }

// wrongWire reports a field whose wire type does not fit its Go type.
func wrongWire(wt protowire.Type, c *codec) error {
	return fmt.Errorf("wire type %d cannot hold %s", wt, c.typ)
}

// decodeMessage decodes the fields in b into struct v (merging into what v
// holds) according to m.
func decodeMessage(v reflect.Value, m *message, b []byte, depth int) error {
	if depth > MaxDepth {
		return errTooDeep
	}
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
		f := m.lookup(num)
		if f == nil {
			n = protowire.ConsumeFieldValue(num, wt, b)
			if n < 0 {
				return fmt.Errorf("unknown field %d: %w", num, wireError(n))
			}
			b = b[n:]
			continue
		}
		fv, err := fieldByIndex(v, f.index)
		if err != nil {
			return inField(f.name, err)
		}
		n, err = decodeValue(fv, f.codec, wt, b, depth)
		if err != nil {
			return inField(f.name, err)
		}
		b = b[n:]
	}
	return nil
}

// fieldByIndex is reflect.Value.FieldByIndex that allocates nil embedded
// pointers on the way.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, error) {
	if len(index) == 1 {
		return v.Field(index[0]), nil
	}
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, fmt.Errorf("cannot allocate embedded %s", v.Type())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// decodeValue decodes one field value of wire type wt at the start of b into
// v and returns the number of bytes consumed.
func decodeValue(v reflect.Value, c *codec, wt protowire.Type, b []byte, depth int) (int, error) {
	switch c.kind {
	case kindPtr:
		if v.IsNil() {
			v.Set(reflect.New(c.typ.Elem()))
		}
		return decodeValue(v.Elem(), c.elem, wt, b, depth)
	case kindSlice:
		return decodeRepeated(v, c, wt, b, depth)
	case kindMap:
		return decodeMapEntry(v, c, wt, b, depth)
	case kindBool, kindInt, kindUint, kindFloat:
		return decodeScalar(v, c, wt, b)
	}
	if wt != protowire.BytesType {
		return 0, wrongWire(wt, c)
	}
	data, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, wireError(n)
	}
	switch c.kind {
	case kindString:
		v.SetString(string(data))
	case kindBytes:
		v.SetBytes(append(make([]byte, 0, len(data)), data...))
	case kindMessage:
		if err := decodeMessage(v, c.msg, data, depth+1); err != nil {
			return 0, err
		}
	case kindWrapped:
		// Decode into the wrapper struct, starting from what v holds.
		w := reflect.New(c.msg.typ).Elem()
		w.Field(0).Set(v)
		if err := decodeMessage(w, c.msg, data, depth+1); err != nil {
			return 0, err
		}
		v.Set(w.Field(0))
	default:
		if err := decodeSpecial(v, c, data); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// decodeScalar decodes one bool or number.
func decodeScalar(v reflect.Value, c *codec, wt protowire.Type, b []byte) (int, error) {
	var (
		x uint64
		n int
	)
	switch wt {
	case protowire.VarintType:
		x, n = protowire.ConsumeVarint(b)
	case protowire.Fixed64Type:
		x, n = protowire.ConsumeFixed64(b)
	case protowire.Fixed32Type:
		var y uint32
		y, n = protowire.ConsumeFixed32(b)
		x = uint64(y)
	default:
		return 0, wrongWire(wt, c)
	}
	if n < 0 {
		return 0, wireError(n)
	}
	setScalar(v, c, wt, x)
	return n, nil
}

// setScalar stores a raw wire value into a bool or number, truncating to the
// Go type's width as generated protobuf code does.
func setScalar(v reflect.Value, c *codec, wt protowire.Type, x uint64) {
	switch c.kind {
	case kindBool:
		v.SetBool(x != 0)
	case kindInt:
		switch {
		case wt == protowire.Fixed32Type:
			v.SetInt(int64(int32(uint32(x))))
		case c.zigzag && wt == protowire.VarintType:
			v.SetInt(protowire.DecodeZigZag(x))
		default:
			v.SetInt(int64(x))
		}
	case kindUint:
		v.SetUint(x)
	case kindFloat:
		switch wt {
		case protowire.Fixed32Type:
			v.SetFloat(float64(math.Float32frombits(uint32(x))))
		case protowire.Fixed64Type:
			v.SetFloat(math.Float64frombits(x))
		default:
			v.SetFloat(float64(x))
		}
	}
}

// decodeRepeated appends one element, or a packed run of scalars, to slice v.
func decodeRepeated(v reflect.Value, c *codec, wt protowire.Type, b []byte, depth int) (int, error) {
	if c.elem.scalar() && wt == protowire.BytesType {
		data, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, wireError(n)
		}
		v.Grow(packedCount(data, c.elem.wire))
		for len(data) > 0 {
			v.Set(reflect.Append(v, reflect.Zero(c.elem.typ)))
			m, err := decodeScalar(v.Index(v.Len()-1), c.elem, c.elem.wire, data)
			if err != nil {
				return 0, inField(fmt.Sprintf("[%d]", v.Len()-1), err)
			}
			data = data[m:]
		}
		return n, nil
	}
	v.Set(reflect.Append(v, reflect.Zero(c.elem.typ)))
	n, err := decodeValue(v.Index(v.Len()-1), c.elem, wt, b, depth)
	if err != nil {
		return 0, inField(fmt.Sprintf("[%d]", v.Len()-1), err)
	}
	return n, nil
}

// packedCount returns how many elements a packed run of wire type wt holds
// (an upper bound if the run is malformed).
func packedCount(data []byte, wt protowire.Type) int {
	switch wt {
	case protowire.Fixed32Type:
		return (len(data) + 3) / 4
	case protowire.Fixed64Type:
		return (len(data) + 7) / 8
	}
	n := 0
	for _, c := range data {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// decodeMapEntry decodes one entry message {key = 1, value = 2} into map v.
func decodeMapEntry(v reflect.Value, c *codec, wt protowire.Type, b []byte, depth int) (int, error) {
	if wt != protowire.BytesType {
		return 0, wrongWire(wt, c)
	}
	data, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, wireError(n)
	}
	if depth+1 > MaxDepth {
		return 0, errTooDeep
	}
	key := reflect.New(c.key.typ).Elem()
	val := reflect.New(c.elem.typ).Elem()
	for len(data) > 0 {
		num, ewt, m := protowire.ConsumeTag(data)
		if m < 0 {
			return 0, wireError(m)
		}
		data = data[m:]
		var err error
		switch num {
		case 1:
			m, err = decodeValue(key, c.key, ewt, data, depth+1)
			if err != nil {
				err = fmt.Errorf("map key: %w", err)
			}
		case 2:
			m, err = decodeValue(val, c.elem, ewt, data, depth+1)
			if err != nil {
				err = fmt.Errorf("map value: %w", err)
			}
		default:
			m = protowire.ConsumeFieldValue(num, ewt, data)
			if m < 0 {
				err = fmt.Errorf("map entry field %d: %w", num, wireError(m))
			}
		}
		if err != nil {
			return 0, err
		}
		data = data[m:]
	}
	if c.elem.kind == kindBytes && val.IsNil() {
		val.SetBytes([]byte{})
	}
	if c.elem.kind == kindWrapped && val.IsNil() {
		val.Set(reflect.MakeSlice(c.elem.typ, 0, 0)) // as Kubernetes' ExtraValue{}: [] in JSON
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(c.typ))
	}
	v.SetMapIndex(key, val)
	return n, nil
}

// decodeSpecial decodes the message body b of one of the framework/api value
// types whose Go layout differs from their protobuf layout.
func decodeSpecial(v reflect.Value, c *codec, b []byte) error {
	switch c.kind {
	case kindTime, kindMicroTime:
		t, err := decodeTimestamp(b)
		if err != nil {
			return err
		}
		if c.kind == kindTime {
			v.Set(reflect.ValueOf(api.Time{Time: t}))
		} else {
			v.Set(reflect.ValueOf(api.MicroTime{Time: t}))
		}
		return nil
	}
	var (
		ints [4]uint64 // varint fields by number
		strs [4][]byte // length-delimited fields by number
		seen [4]bool
	)
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
		if num < 4 {
			switch wt {
			case protowire.VarintType:
				ints[num], n = protowire.ConsumeVarint(b)
				seen[num] = true
			case protowire.BytesType:
				strs[num], n = protowire.ConsumeBytes(b)
				seen[num] = true
			default:
				n = protowire.ConsumeFieldValue(num, wt, b)
			}
		} else {
			n = protowire.ConsumeFieldValue(num, wt, b)
		}
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
	}
	switch c.kind {
	case kindDuration:
		v.Set(reflect.ValueOf(api.Duration{Duration: time.Duration(int64(ints[1]))}))
	case kindIntOrString:
		v.Set(reflect.ValueOf(api.IntOrString{
			Type:   api.IntOrStringType(int64(ints[1])),
			IntVal: int32(int64(ints[2])),
			StrVal: string(strs[3]),
		}))
	case kindQuantity:
		v.Set(reflect.ValueOf(api.Quantity{S: string(strs[1])}))
	case kindRaw:
		var raw []byte
		if seen[1] {
			raw = append(make([]byte, 0, len(strs[1])), strs[1]...)
		}
		if c.typ == typeFieldsV1 {
			v.Set(reflect.ValueOf(api.FieldsV1{Raw: raw}))
		} else {
			v.Set(reflect.ValueOf(api.RawExtension{Raw: raw}))
		}
	}
	return nil
}

// decodeTimestamp decodes {int64 seconds = 1, int32 nanos = 2}; an empty
// message is the zero time, as Kubernetes encodes it.
func decodeTimestamp(b []byte) (time.Time, error) {
	if len(b) == 0 {
		return time.Time{}, nil
	}
	var sec, nsec int64
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return time.Time{}, wireError(n)
		}
		b = b[n:]
		if (num == 1 || num == 2) && wt == protowire.VarintType {
			x, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return time.Time{}, wireError(m)
			}
			if num == 1 {
				sec = int64(x)
			} else {
				nsec = int64(int32(x))
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, wt, b)
		if m < 0 {
			return time.Time{}, wireError(m)
		}
		b = b[m:]
	}
	return time.Unix(sec, nsec).Local(), nil
}
