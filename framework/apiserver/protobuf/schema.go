package protobuf

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
)

// kind says how a Go type is read from the wire.
type kind uint8

const (
	kindBool kind = iota + 1
	kindInt
	kindUint
	kindFloat
	kindString
	kindBytes
	kindMessage
	kindPtr
	kindSlice
	kindMap
	kindTime
	kindMicroTime
	kindDuration
	kindIntOrString
	kindQuantity
	kindRaw // api.RawExtension and api.FieldsV1: {bytes raw = 1}
	// kindWrapped is a slice held in a wrapper message {repeated items = 1}:
	// the value of a map whose Go values are slices (Kubernetes' ExtraValue);
	// msg is the field table of a struct with that one field.
	kindWrapped
)

// codec describes how to decode one Go type.
type codec struct {
	kind   kind
	typ    reflect.Type
	wire   protowire.Type // scalars: the wire type of packed elements
	zigzag bool           // scalars: the tag says zigzag32 or zigzag64
	elem   *codec         // pointer, slice element, map value
	key    *codec         // map key
	msg    *message       // structs
}

// scalar reports whether values of the codec may appear in a packed run.
func (c *codec) scalar() bool {
	switch c.kind {
	case kindBool, kindInt, kindUint, kindFloat:
		return true
	}
	return false
}

// field is one numbered field of a message.
type field struct {
	name  string
	num   protowire.Number
	index []int // path from the message struct, through flattened embedded structs
	codec *codec
}

// message is the field table of a struct type.
type message struct {
	typ    reflect.Type
	dense  []*field // indexed by field number when the numbers are small
	byNum  map[protowire.Number]*field
	sorted []*field // by field number, for encoding
}

// maxDense bounds the field numbers kept in the dense lookup slice.
const maxDense = 256

func (m *message) lookup(n protowire.Number) *field {
	if m.byNum != nil {
		return m.byNum[n]
	}
	if int(n) < len(m.dense) {
		return m.dense[n]
	}
	return nil
}

var (
	typeTypeMeta     = reflect.TypeFor[api.TypeMeta]()
	typeTime         = reflect.TypeFor[api.Time]()
	typeMicroTime    = reflect.TypeFor[api.MicroTime]()
	typeDuration     = reflect.TypeFor[api.Duration]()
	typeIntOrString  = reflect.TypeFor[api.IntOrString]()
	typeQuantity     = reflect.TypeFor[api.Quantity]()
	typeRawExtension = reflect.TypeFor[api.RawExtension]()
	typeFieldsV1     = reflect.TypeFor[api.FieldsV1]()
)

// tag is a parsed `protobuf:"..."` struct tag.
type tag struct {
	wire   string
	num    protowire.Number
	zigzag bool
}

func parseTag(s string) (tag, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return tag{}, fmt.Errorf("malformed protobuf tag %q", s)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < int(protowire.MinValidNumber) || n > int(protowire.MaxValidNumber) {
		return tag{}, fmt.Errorf("malformed field number in protobuf tag %q", s)
	}
	t := tag{wire: parts[0], num: protowire.Number(n)}
	switch t.wire {
	case "varint", "bytes", "fixed32", "fixed64", "group":
	case "zigzag32", "zigzag64":
		t.zigzag = true
	default:
		return tag{}, fmt.Errorf("unknown wire type in protobuf tag %q", s)
	}
	return t, nil
}

// builder constructs the codecs of a type graph; recursive types share codecs
// through the maps.
type builder struct {
	msgs   map[reflect.Type]*message
	codecs map[codecKey]*codec
}

type codecKey struct {
	typ    reflect.Type
	wire   string
	zigzag bool
}

// codecFor returns the codec for t as described by a field's tag (wire is the
// tag's wire type; it matters only for scalars).
func (b *builder) codecFor(t reflect.Type, tg tag) (*codec, error) {
	key := codecKey{t, tg.wire, tg.zigzag}
	if c, ok := b.codecs[key]; ok {
		return c, nil
	}
	c := &codec{typ: t, zigzag: tg.zigzag}
	b.codecs[key] = c
	switch t {
	case typeTime:
		c.kind = kindTime
		return c, nil
	case typeMicroTime:
		c.kind = kindMicroTime
		return c, nil
	case typeDuration:
		c.kind = kindDuration
		return c, nil
	case typeIntOrString:
		c.kind = kindIntOrString
		return c, nil
	case typeQuantity:
		c.kind = kindQuantity
		return c, nil
	case typeRawExtension, typeFieldsV1:
		c.kind = kindRaw
		return c, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		c.kind, c.wire = kindBool, protowire.VarintType
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.kind, c.wire = kindInt, scalarWire(tg.wire, protowire.VarintType)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		c.kind, c.wire = kindUint, scalarWire(tg.wire, protowire.VarintType)
	case reflect.Float32:
		c.kind, c.wire = kindFloat, scalarWire(tg.wire, protowire.Fixed32Type)
	case reflect.Float64:
		c.kind, c.wire = kindFloat, scalarWire(tg.wire, protowire.Fixed64Type)
	case reflect.String:
		c.kind = kindString
	case reflect.Struct:
		c.kind = kindMessage
		m, err := b.message(t)
		if err != nil {
			return nil, err
		}
		c.msg = m
	case reflect.Pointer:
		c.kind = kindPtr
		e, err := b.codecFor(t.Elem(), tg)
		if err != nil {
			return nil, err
		}
		if e.kind == kindPtr || e.kind == kindSlice || e.kind == kindMap {
			return nil, fmt.Errorf("unsupported pointer type %s", t)
		}
		c.elem = e
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			c.kind = kindBytes
			break
		}
		c.kind = kindSlice
		e, err := b.codecFor(t.Elem(), tg)
		if err != nil {
			return nil, err
		}
		if e.kind == kindSlice || e.kind == kindMap {
			return nil, fmt.Errorf("unsupported nested repeated type %s", t)
		}
		c.elem = e
	default:
		return nil, fmt.Errorf("unsupported type %s", t)
	}
	return c, nil
}

// scalarWire maps a tag's wire name to the wire type used for packed runs.
func scalarWire(w string, def protowire.Type) protowire.Type {
	switch w {
	case "varint", "zigzag32", "zigzag64":
		return protowire.VarintType
	case "fixed32":
		return protowire.Fixed32Type
	case "fixed64":
		return protowire.Fixed64Type
	}
	return def
}

// mapCodec builds the codec of a map field from its protobuf_key and
// protobuf_val tags.
func (b *builder) mapCodec(t reflect.Type, sf reflect.StructField) (*codec, error) {
	kt, err := entryTag(sf.Tag.Get("protobuf_key"), 1)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	vt, err := entryTag(sf.Tag.Get("protobuf_val"), 2)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	kc, err := b.codecFor(t.Key(), kt)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	switch kc.kind {
	case kindBool, kindInt, kindUint, kindString:
	default:
		return nil, fmt.Errorf("unsupported map key type %s", t.Key())
	}
	vc, err := b.codecFor(t.Elem(), vt)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	if vc.kind == kindSlice {
		// The value is a wrapper message {repeated items = 1}: decoded as a
		// struct with that one field.
		wire := vt.wire
		if wire == "" {
			wire = "bytes"
		}
		w := reflect.StructOf([]reflect.StructField{{Name: "Items", Type: t.Elem(),
			Tag: reflect.StructTag(`protobuf:"` + wire + `,1,rep,name=items"`)}})
		m, err := b.message(w)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		vc = &codec{kind: kindWrapped, typ: t.Elem(), msg: m}
	}
	if vc.kind == kindSlice || vc.kind == kindMap {
		return nil, fmt.Errorf("unsupported map value type %s", t.Elem())
	}
	return &codec{kind: kindMap, typ: t, key: kc, elem: vc}, nil
}

// entryTag parses a map entry's key or value tag; an absent tag defaults to
// the usual number and a wire type chosen from the Go type.
func entryTag(s string, num protowire.Number) (tag, error) {
	if s == "" {
		return tag{num: num}, nil
	}
	t, err := parseTag(s)
	if err != nil {
		return tag{}, err
	}
	if t.num != num {
		return tag{}, fmt.Errorf("map entry field number %d, want %d", t.num, num)
	}
	return t, nil
}

// message returns the field table of struct type t.
func (b *builder) message(t reflect.Type) (*message, error) {
	if m, ok := b.msgs[t]; ok {
		return m, nil
	}
	m := &message{typ: t}
	b.msgs[t] = m
	var fields []*field
	if err := b.collect(t, nil, &fields); err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	maxNum := protowire.Number(0)
	seen := make(map[protowire.Number]string, len(fields))
	for _, f := range fields {
		if prev, dup := seen[f.num]; dup {
			return nil, fmt.Errorf("%s: fields %s and %s share protobuf number %d", t, prev, f.name, f.num)
		}
		seen[f.num] = f.name
		maxNum = max(maxNum, f.num)
	}
	m.sorted = slices.SortedFunc(slices.Values(fields), func(a, b *field) int { return cmp.Compare(a.num, b.num) })
	if maxNum < maxDense {
		m.dense = make([]*field, maxNum+1)
		for _, f := range fields {
			m.dense[f.num] = f
		}
	} else {
		m.byNum = make(map[protowire.Number]*field, len(fields))
		for _, f := range fields {
			m.byNum[f.num] = f
		}
	}
	return m, nil
}

// collect appends the numbered fields of struct t, flattening untagged
// embedded structs.
func (b *builder) collect(t reflect.Type, prefix []int, out *[]*field) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		ptag, tagged := sf.Tag.Lookup("protobuf")
		if ptag == "-" {
			continue
		}
		if !tagged {
			if !sf.Anonymous {
				continue
			}
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et == typeTypeMeta || et.Kind() != reflect.Struct {
				continue
			}
			if err := b.collect(et, index, out); err != nil {
				return fmt.Errorf("embedded %s: %w", sf.Name, err)
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		tg, err := parseTag(ptag)
		if err != nil {
			return fmt.Errorf("field %s: %w", sf.Name, err)
		}
		var c *codec
		if sf.Type.Kind() == reflect.Map {
			c, err = b.mapCodec(sf.Type, sf)
		} else {
			c, err = b.codecFor(sf.Type, tg)
		}
		if err != nil {
			return fmt.Errorf("field %s: %w", sf.Name, err)
		}
		*out = append(*out, &field{name: protoName(ptag, sf.Name), num: tg.num, index: index, codec: c})
	}
	return nil
}

// protoName returns the name= part of a protobuf tag, or fallback.
func protoName(tag, fallback string) string {
	for p := range strings.SplitSeq(tag, ",") {
		if n, ok := strings.CutPrefix(p, "name="); ok {
			return n
		}
	}
	return fallback
}
