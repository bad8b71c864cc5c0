package registry

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/converge-dev/converge/framework/api"
)

// A fast path for Typed.CanonicalizeTyped: the map is decoded into the Go
// struct, and the struct encoded back into a map, by reflection over a cached
// plan per type instead of through JSON text (api.EncodeJSON, json.Unmarshal,
// json.Marshal, api.DecodeMap). Both directions give exactly what the JSON
// round trip gives, and report ok = false for anything they are not sure about
// (type mismatches, JSON nulls where encoding/json does something special,
// invalid UTF-8, float32, arrays, text marshalers, ",string" and "omitzero"
// fields, ambiguous or pointer-embedded struct fields, errors of custom
// (un)marshalers ...): the caller then takes the JSON round trip, which stays
// the reference for values and errors.

// maxPlanDepth bounds the recursion of both directions.
const maxPlanDepth = 256

type planKind uint8

const (
	pkUnsupported planKind = iota
	pkString
	pkBool
	pkInt
	pkUint
	pkFloat64
	pkPointer
	pkInterface // the empty interface
	pkStruct
	pkMap // string-keyed
	pkSlice
)

// plan is what both directions need of one Go type.
type plan struct {
	t    reflect.Type
	kind planKind
	elem *plan // pointer, map and slice element

	fields []fieldPlan
	byName map[string]*fieldPlan

	unmarshaler   bool // *t implements json.Unmarshaler: decode through it
	noDecode      bool // encoding/json decodes t in a way this path does not
	marshalAddr   bool // *t implements json.Marshaler (t not a pointer)
	marshalValue  bool // t implements json.Marshaler
	textAddr      bool // *t implements encoding.TextMarshaler (t not a pointer)
	textValue     bool // t implements encoding.TextMarshaler
	noEncode      bool // encoding/json encodes t in a way this path does not
	byteSlice     bool // a []byte encoding/json renders as base64
	stringStrings bool // exactly map[string]string
}

type fieldPlan struct {
	name      string
	index     []int
	p         *plan
	omitEmpty bool
}

var (
	plans   sync.Map // reflect.Type → *plan
	plansMu sync.Mutex

	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
	stringStringsType   = reflect.TypeFor[map[string]string]()
)

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	plansMu.Lock()
	defer plansMu.Unlock()
	building := map[reflect.Type]*plan{}
	p := buildPlan(t, building)
	for bt, bp := range building {
		plans.LoadOrStore(bt, bp)
	}
	return p
}

// buildPlan builds the plan of t and of the types it reaches; building holds
// the plans under construction (types may be recursive).
func buildPlan(t reflect.Type, building map[reflect.Type]*plan) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	p := &plan{t: t}
	building[t] = p
	pt := reflect.PointerTo(t)
	if t.Kind() != reflect.Pointer {
		p.unmarshaler = pt.Implements(jsonUnmarshaler)
		p.marshalAddr = pt.Implements(jsonMarshalerType)
		p.textAddr = pt.Implements(textMarshalerType)
		if p.unmarshaler && t.Name() == "" {
			p.noDecode = true // encoding/json takes the address of named types only
		}
		if !p.unmarshaler && pt.Implements(textUnmarshalerType) {
			p.noDecode = true
		}
	} else if t.Name() != "" {
		p.noDecode, p.noEncode = true, true
	}
	p.marshalValue = t.Implements(jsonMarshalerType)
	p.textValue = t.Implements(textMarshalerType)
	if t == jsonNumberType {
		p.noDecode, p.noEncode = true, true
	}
	switch t.Kind() {
	case reflect.String:
		p.kind = pkString
	case reflect.Bool:
		p.kind = pkBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = pkInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.kind = pkUint
	case reflect.Float64:
		p.kind = pkFloat64
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Pointer {
			break
		}
		p.kind = pkPointer
		p.elem = buildPlan(t.Elem(), building)
	case reflect.Interface:
		if t.NumMethod() == 0 {
			p.kind = pkInterface
		}
	case reflect.Map:
		kt := t.Key()
		if kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) || kt.Implements(textMarshalerType) {
			break
		}
		p.kind = pkMap
		p.stringStrings = t == stringStringsType
		p.elem = buildPlan(t.Elem(), building)
	case reflect.Slice:
		p.kind = pkSlice
		et := t.Elem()
		if et.Kind() == reflect.Uint8 {
			ept := reflect.PointerTo(et)
			p.byteSlice = !ept.Implements(jsonMarshalerType) && !ept.Implements(textMarshalerType)
			if !p.byteSlice {
				p.noEncode = true
			}
		}
		p.elem = buildPlan(et, building)
	case reflect.Struct:
		fields, ok := structFields(t, nil, nil)
		if !ok {
			break
		}
		p.kind = pkStruct
		p.byName = make(map[string]*fieldPlan, len(fields))
		p.fields = fields
		for i := range p.fields {
			f := &p.fields[i]
			if _, dup := p.byName[f.name]; dup {
				p.kind = pkUnsupported // encoding/json's dominance rules: not here
				break
			}
			f.p = buildPlan(t.FieldByIndex(f.index).Type, building)
			p.byName[f.name] = f
		}
	}
	return p
}

// structFields lists the JSON fields of struct t (embedded structs without a
// JSON name flattened), or ok = false for what this path leaves to
// encoding/json. The names are a subset of jsonFields' (which UnknownFields
// uses), so that a decodeFast that succeeds saw no unknown field.
func structFields(t reflect.Type, index []int, out []fieldPlan) ([]fieldPlan, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(append([]int(nil), index...), i)
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				if name == "" && ft.Elem().Kind() == reflect.Struct {
					return nil, false // nil embedded pointers: not here
				}
				ft = ft.Elem()
			}
			if !f.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
			if !f.IsExported() && name != "" {
				return nil, false // encoding/json and jsonFields disagree
			}
			if name == "" {
				if ft.Kind() != reflect.Struct {
					return nil, false
				}
				var ok bool
				if out, ok = structFields(ft, idx, out); !ok {
					return nil, false
				}
				continue
			}
		} else if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		} else if !plainName(name) {
			return nil, false
		}
		fp := fieldPlan{name: name, index: idx}
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			switch o {
			case "omitempty":
				fp.omitEmpty = true
			case "string", "omitzero":
				return nil, false
			}
		}
		out = append(out, fp)
	}
	return out, true
}

// plainName reports whether encoding/json takes a tag name as it is (a subset of
// its isValidTag).
func plainName(s string) bool {
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '-' || c == '.' || c == '$' || c == '@' || c == '/':
		default:
			return false
		}
	}
	return s != ""
}

// decodeFast sets v (addressable, zero) to what json.Unmarshal of
// api.EncodeJSON(val) would set it to.
func decodeFast(val any, p *plan, v reflect.Value, depth int) bool {
	if p.noDecode || depth > maxPlanDepth {
		return false
	}
	if p.unmarshaler {
		// UnmarshalJSON copies what it keeps (json.Unmarshaler's contract):
		// small values are encoded on the stack.
		var buf [128]byte
		b, err := api.AppendJSON(buf[:0], val)
		if err != nil {
			return false
		}
		u, ok := v.Addr().Interface().(json.Unmarshaler)
		return ok && u.UnmarshalJSON(b) == nil
	}
	if val == nil {
		// null sets pointers, interfaces, maps and slices to nil (they are
		// already) and leaves everything else alone.
		return p.kind != pkUnsupported
	}
	switch p.kind {
	case pkString:
		s, ok := val.(string)
		if !ok || !utf8.ValidString(s) {
			return false
		}
		v.SetString(s)
	case pkBool:
		b, ok := val.(bool)
		if !ok {
			return false
		}
		v.SetBool(b)
	case pkInt:
		n, ok := val.(int64)
		if !ok || v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
	case pkUint:
		n, ok := val.(int64)
		if !ok || n < 0 || v.OverflowUint(uint64(n)) {
			return false
		}
		v.SetUint(uint64(n))
	case pkFloat64:
		switch n := val.(type) {
		case int64:
			v.SetFloat(float64(n))
		case float64:
			if math.IsNaN(n) || math.IsInf(n, 0) {
				return false
			}
			v.SetFloat(n)
		default:
			return false
		}
	case pkPointer:
		e := reflect.New(p.t.Elem())
		if !decodeFast(val, p.elem, e.Elem(), depth+1) {
			return false
		}
		v.Set(e)
	case pkInterface:
		a, ok := toInterface(val, depth)
		if !ok {
			return false
		}
		v.Set(reflect.ValueOf(&a).Elem())
	case pkStruct:
		m, ok := val.(map[string]any)
		if !ok {
			return false
		}
		for k, e := range m {
			f := p.byName[k]
			if f == nil {
				return false
			}
			if !decodeFast(e, f.p, fieldOf(v, f), depth+1) {
				return false
			}
		}
	case pkMap:
		m, ok := val.(map[string]any)
		if !ok {
			return false
		}
		if p.stringStrings {
			out := make(map[string]string, len(m))
			for k, e := range m {
				if e == nil {
					out[k] = ""
					continue
				}
				s, ok := e.(string)
				if !ok || !utf8.ValidString(k) || !utf8.ValidString(s) {
					return false
				}
				out[k] = s
			}
			v.Set(reflect.ValueOf(out))
			return true
		}
		out := reflect.MakeMapWithSize(p.t, len(m))
		kt, et := p.t.Key(), p.t.Elem()
		for k, e := range m {
			if !utf8.ValidString(k) {
				return false
			}
			ev := reflect.New(et).Elem()
			if !decodeFast(e, p.elem, ev, depth+1) {
				return false
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(kt), ev)
		}
		v.Set(out)
	case pkSlice:
		if s, ok := val.(string); ok && p.t.Elem().Kind() == reflect.Uint8 {
			b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(b, []byte(s))
			if err != nil {
				return false
			}
			v.SetBytes(b[:n])
			return true
		}
		a, ok := val.([]any)
		if !ok {
			return false
		}
		out := reflect.MakeSlice(p.t, len(a), len(a))
		for i, e := range a {
			if !decodeFast(e, p.elem, out.Index(i), depth+1) {
				return false
			}
		}
		v.Set(out)
	default:
		return false
	}
	return true
}

// toInterface is what json.Unmarshal puts in an empty interface for the JSON
// of val: numbers as float64, objects and arrays copied.
func toInterface(val any, depth int) (any, bool) {
	if depth > maxPlanDepth {
		return nil, false
	}
	switch t := val.(type) {
	case nil, bool:
		return t, true
	case string:
		return t, utf8.ValidString(t)
	case int64:
		return float64(t), true
	case float64:
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			c, ok := toInterface(e, depth+1)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, ok := toInterface(e, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// encodeFast returns what api.DecodeMap-style decoding of json.Marshal(v)
// returns for the value v.
func encodeFast(v reflect.Value, p *plan, depth int) (any, bool) {
	if depth > maxPlanDepth {
		return nil, false
	}
	// The order of encoding/json's newTypeEncoder: a marshaler on the address
	// (when addressable), a marshaler on the value, a text marshaler on the
	// address (unless there was a marshaler on it) or on the value.
	if p.marshalAddr && v.CanAddr() {
		return marshalValue(v.Addr())
	}
	if p.marshalValue {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return nil, true
		}
		return marshalValue(v)
	}
	if p.noEncode || p.textValue || (p.textAddr && !p.marshalAddr && v.CanAddr()) {
		return nil, false
	}
	switch p.kind {
	case pkString:
		s := v.String()
		return s, utf8.ValidString(s)
	case pkBool:
		return v.Bool(), true
	case pkInt:
		return v.Int(), true
	case pkUint:
		n := v.Uint()
		if n > math.MaxInt64 {
			return nil, false
		}
		return int64(n), true
	case pkFloat64:
		return jsonFloat(v.Float())
	case pkPointer:
		if v.IsNil() {
			return nil, true
		}
		return encodeFast(v.Elem(), p.elem, depth+1)
	case pkInterface:
		if v.IsNil() {
			return nil, true
		}
		e := v.Elem()
		return encodeFast(e, planOf(e.Type()), depth+1)
	case pkStruct:
		// Size the map for the fields it gets: most are omitted when empty.
		n := 0
		for i := range p.fields {
			if f := &p.fields[i]; !f.omitEmpty || !isEmptyValue(fieldOf(v, f)) {
				n++
			}
		}
		out := make(map[string]any, n)
		for i := range p.fields {
			f := &p.fields[i]
			fv := fieldOf(v, f)
			if f.omitEmpty && isEmptyValue(fv) {
				continue
			}
			e, ok := encodeFast(fv, f.p, depth+1)
			if !ok {
				return nil, false
			}
			out[f.name] = e
		}
		return out, true
	case pkMap:
		if v.IsNil() {
			return nil, true
		}
		if p.stringStrings {
			m := v.Interface().(map[string]string)
			out := make(map[string]any, len(m))
			for k, s := range m {
				if !utf8.ValidString(k) || !utf8.ValidString(s) {
					return nil, false
				}
				out[k] = s
			}
			return out, true
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, false
			}
			e, ok := encodeFast(it.Value(), p.elem, depth+1)
			if !ok {
				return nil, false
			}
			out[k] = e
		}
		return out, true
	case pkSlice:
		if v.IsNil() {
			return nil, true
		}
		if p.byteSlice {
			return base64.StdEncoding.EncodeToString(v.Bytes()), true
		}
		out := make([]any, v.Len())
		for i := range out {
			e, ok := encodeFast(v.Index(i), p.elem, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	}
	return nil, false
}

// marshalValue decodes the output of v's MarshalJSON.
func marshalValue(v reflect.Value) (any, bool) {
	m, ok := v.Interface().(json.Marshaler)
	if !ok {
		return nil, false
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, false
	}
	out, err := api.DecodeValue(b)
	return out, err == nil
}

// jsonFloat is the value json.Marshal renders f as, decoded again: an int64
// when the text is an integer (in range), else f itself.
func jsonFloat(f float64) (any, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	if f == math.Trunc(f) {
		if math.Abs(f) <= 1<<53 {
			// Every integer up to 2^53 is a float64, so the shortest text
			// of f is its digits.
			return int64(f), true
		}
		// Beyond, the shortest text may end in zeros f does not
		// (7.00000000000011e16 renders as 70000000000001100).
		b, err := api.AppendJSON(nil, f)
		if err != nil {
			return nil, false
		}
		out, err := api.DecodeValue(b)
		return out, err == nil
	}
	return f, true
}

// fieldOf is v's field f.
func fieldOf(v reflect.Value, f *fieldPlan) reflect.Value {
	fv := v.Field(f.index[0])
	for _, i := range f.index[1:] {
		fv = fv.Field(i)
	}
	return fv
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// encodeReuse is encodeFast of v given orig, the value that was decoded into
// v (present, possibly nil): wherever the encoding has the same values as
// orig, orig's own value is returned instead of a copy (same reports that
// the whole result is orig), so a canonical object costs no new maps, slices
// or boxed scalars. Values are the same when they are of the same Go type
// and equal, maps and slices when all their entries are; encodeFast's result
// and encodeReuse's are then deeply equal.
func encodeReuse(v reflect.Value, p *plan, orig any, depth int) (out any, same, ok bool) {
	if depth > maxPlanDepth {
		return nil, false, false
	}
	if o, isStr := orig.(string); isStr && (p.marshalAddr && v.CanAddr() || p.marshalValue && !(v.Kind() == reflect.Pointer && v.IsNil())) {
		// Marshalers of strings (times, quantities): orig when its
		// marshaled text is orig quoted, without decoding it.
		mv := v
		if p.marshalAddr && v.CanAddr() {
			mv = v.Addr()
		}
		return marshalReuse(mv, o, orig)
	}
	if p.marshalAddr && v.CanAddr() || p.marshalValue || p.noEncode || p.textValue || (p.textAddr && !p.marshalAddr && v.CanAddr()) {
		e, ok := encodeFast(v, p, depth)
		return reuseScalar(e, orig, ok)
	}
	switch p.kind {
	case pkString:
		s := v.String()
		if !utf8.ValidString(s) {
			return nil, false, false
		}
		if o, isStr := orig.(string); isStr && o == s {
			return orig, true, true
		}
		return s, false, true
	case pkBool, pkInt, pkUint, pkFloat64:
		e, ok := encodeFast(v, p, depth)
		return reuseScalar(e, orig, ok)
	case pkPointer:
		if v.IsNil() {
			return nil, orig == nil, true
		}
		return encodeReuse(v.Elem(), p.elem, orig, depth+1)
	case pkInterface:
		if v.IsNil() {
			return nil, orig == nil, true
		}
		e := v.Elem()
		return encodeReuse(e, planOf(e.Type()), orig, depth+1)
	case pkStruct:
		om, isMap := orig.(map[string]any)
		if !isMap || om == nil {
			e, ok := encodeFast(v, p, depth)
			return e, false, ok
		}
		return encodeStructReuse(v, p, om, depth)
	case pkMap:
		if v.IsNil() {
			return nil, orig == nil, true
		}
		om, isMap := orig.(map[string]any)
		if !isMap || om == nil {
			e, ok := encodeFast(v, p, depth)
			return e, false, ok
		}
		return encodeMapReuse(v, p, om, depth)
	case pkSlice:
		if v.IsNil() {
			return nil, orig == nil, true
		}
		if p.byteSlice {
			e, ok := encodeFast(v, p, depth)
			return reuseScalar(e, orig, ok)
		}
		return encodeSliceReuse(v, p, orig, depth)
	}
	return nil, false, false
}

// marshalReuse is marshalValue(v) given orig, a string, of which o is the
// value: orig when v's MarshalJSON writes o quoted without escapes (which
// decode to o itself).
func marshalReuse(v reflect.Value, o string, orig any) (any, bool, bool) {
	m, ok := v.Interface().(json.Marshaler)
	if !ok {
		return nil, false, false
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, false, false
	}
	if len(b) == len(o)+2 && b[0] == '"' && b[len(b)-1] == '"' && string(b[1:len(b)-1]) == o && plainJSONString(o) {
		return orig, true, true
	}
	out, err := api.DecodeValue(b)
	if err != nil {
		return nil, false, false
	}
	return reuseScalar(out, orig, true)
}

// plainJSONString reports whether s, quoted as it is, is a JSON string
// whose value is s: valid UTF-8 without quotes, backslashes or control
// characters.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.ValidString(s)
}

// reuseScalar returns orig for an e that is a scalar of orig's type and value.
func reuseScalar(e, orig any, ok bool) (any, bool, bool) {
	if !ok {
		return nil, false, false
	}
	switch e := e.(type) {
	case nil:
		return nil, orig == nil, true
	case string:
		if o, is := orig.(string); is && o == e {
			return orig, true, true
		}
	case int64:
		if o, is := orig.(int64); is && o == e {
			return orig, true, true
		}
	case bool:
		if o, is := orig.(bool); is && o == e {
			return orig, true, true
		}
	case float64:
		// jsonFloat never gives a zero or a NaN as a float64: equal is
		// the same text.
		if o, is := orig.(float64); is && o == e {
			return orig, true, true
		}
	}
	return e, false, true
}

// encodeStructReuse is encodeReuse of a struct decoded from om: om itself
// when every field encodes to its value there and it has no other key.
func encodeStructReuse(v reflect.Value, p *plan, om map[string]any, depth int) (any, bool, bool) {
	var (
		out     map[string]any // made at the first difference
		n       int            // fields encoded so far
		emitted uint64         // which of the first 64 fields were
	)
	for i := range p.fields {
		f := &p.fields[i]
		fv := fieldOf(v, f)
		if f.omitEmpty && isEmptyValue(fv) {
			continue
		}
		var (
			e    any
			same bool
			ok   bool
		)
		if o, has := om[f.name]; has {
			e, same, ok = encodeReuse(fv, f.p, o, depth+1)
		} else {
			e, ok = encodeFast(fv, f.p, depth+1)
		}
		if !ok {
			return nil, false, false
		}
		if out == nil && !same {
			out = reusedFields(v, p, om, i, n, emitted)
		}
		if out != nil {
			out[f.name] = e
		}
		if i < 64 {
			emitted |= 1 << i
		}
		n++
	}
	if out != nil {
		return out, false, true
	}
	if n == len(om) {
		return om, true, true
	}
	// Keys the type omits or does not know: a new map of the same values.
	return reusedFields(v, p, om, len(p.fields), n, emitted), false, true
}

// reusedFields is a map sized for v's encoding holding om's values of the n
// fields before field end that the encoding has (those were the same);
// emitted marks which they are among the first 64.
func reusedFields(v reflect.Value, p *plan, om map[string]any, end, n int, emitted uint64) map[string]any {
	size := n
	for i := end; i < len(p.fields); i++ {
		if f := &p.fields[i]; !f.omitEmpty || !isEmptyValue(fieldOf(v, f)) {
			size++
		}
	}
	out := make(map[string]any, size)
	for i := range p.fields[:end] {
		f := &p.fields[i]
		if i < 64 && emitted&(1<<i) != 0 || i >= 64 && (!f.omitEmpty || !isEmptyValue(fieldOf(v, f))) {
			out[f.name] = om[f.name]
		}
	}
	return out
}

// encodeMapReuse is encodeReuse of a non-nil string-keyed map decoded from om.
func encodeMapReuse(v reflect.Value, p *plan, om map[string]any, depth int) (any, bool, bool) {
	if v.Len() == len(om) && mapSame(v, p, om, depth) {
		return om, true, true
	}
	// A difference: a new map, reusing what it can of om's values.
	if p.stringStrings {
		m := v.Interface().(map[string]string)
		out := make(map[string]any, len(m))
		for k, s := range m {
			if !utf8.ValidString(k) || !utf8.ValidString(s) {
				return nil, false, false
			}
			if o, is := om[k].(string); is && o == s {
				out[k] = om[k]
			} else {
				out[k] = s
			}
		}
		return out, false, true
	}
	out := make(map[string]any, v.Len())
	it := v.MapRange()
	for it.Next() {
		k := it.Key().String()
		if !utf8.ValidString(k) {
			return nil, false, false
		}
		var (
			e  any
			ok bool
		)
		if o, has := om[k]; has {
			e, _, ok = encodeReuse(it.Value(), p.elem, o, depth+1)
		} else {
			e, ok = encodeFast(it.Value(), p.elem, depth+1)
		}
		if !ok {
			return nil, false, false
		}
		out[k] = e
	}
	return out, false, true
}

// mapSame reports whether every entry of v (as long as om) encodes to om's
// value of its key; false also for what encoding refuses (the caller's
// encoding then refuses it again).
func mapSame(v reflect.Value, p *plan, om map[string]any, depth int) bool {
	if p.stringStrings {
		for k, s := range v.Interface().(map[string]string) {
			o, is := om[k].(string)
			if !is || o != s || !utf8.ValidString(k) || !utf8.ValidString(s) {
				return false
			}
		}
		return true
	}
	it := v.MapRange()
	for it.Next() {
		k := it.Key().String()
		o, has := om[k]
		if !has || !utf8.ValidString(k) {
			return false
		}
		if _, same, ok := encodeReuse(it.Value(), p.elem, o, depth+1); !ok || !same {
			return false
		}
	}
	return true
}

// encodeSliceReuse is encodeReuse of a non-nil slice decoded from orig.
func encodeSliceReuse(v reflect.Value, p *plan, orig any, depth int) (any, bool, bool) {
	oa, isSlice := orig.([]any)
	isSlice = isSlice && oa != nil
	n := v.Len()
	var out []any // made at the first difference
	for i := range n {
		var (
			e    any
			same bool
			ok   bool
		)
		if i < len(oa) {
			e, same, ok = encodeReuse(v.Index(i), p.elem, oa[i], depth+1)
		} else {
			e, ok = encodeFast(v.Index(i), p.elem, depth+1)
		}
		if !ok {
			return nil, false, false
		}
		if out == nil && (!same || len(oa) != n) {
			out = make([]any, n)
			copy(out, oa[:i])
		}
		if out != nil {
			out[i] = e
		}
	}
	if out != nil {
		return out, false, true
	}
	if isSlice && len(oa) == n {
		return orig, true, true
	}
	return make([]any, n), false, true
}
