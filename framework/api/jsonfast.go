package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Fast paths for the JSON-compatible maps the API server moves on every request
// (decode a body, canonicalize, store, respond). They produce exactly what
// encoding/json produces — the same values decoded, the same bytes encoded
// (but for the levels of managedFields' FieldsV1 sets, written in the order
// Kubernetes writes them: fieldsv1order.go) — and
// hand everything unusual (errors, escapes, non-ASCII text, exotic numbers and
// types) to encoding/json itself, so its results and error messages stay the
// reference.

var (
	// plainStringByte: bytes the decoder copies as they are (ASCII, not a
	// control character, quote or backslash).
	plainStringByte [256]bool
	// safeStringByte: bytes encoding/json writes as they are (plainStringByte
	// but the HTML-escaped '<', '>' and '&').
	safeStringByte [256]bool
	// skipStringByte: bytes skipString passes over as they are (not a
	// control character, quote or backslash; non-ASCII too).
	skipStringByte [256]bool
)

func init() {
	for c := 0x20; c < 0x80; c++ {
		plainStringByte[c] = c != '"' && c != '\\'
		safeStringByte[c] = plainStringByte[c] && c != '<' && c != '>' && c != '&'
	}
	for c := 0x20; c < 0x100; c++ {
		skipStringByte[c] = c != '"' && c != '\\'
	}
	for _, k := range strings.Fields(wellKnownKeys) {
		knownKeys[k] = k
	}
}

// knownKeys interns the object keys most Kubernetes objects carry: the
// decoder hands out these strings instead of allocating one per key.
var knownKeys = map[string]string{}

const wellKnownKeys = `apiVersion kind metadata name namespace uid resourceVersion generation generateName
creationTimestamp deletionTimestamp deletionGracePeriodSeconds labels annotations ownerReferences finalizers
managedFields manager operation time fieldsType fieldsV1 subresource controller blockOwnerDeletion
spec status data binaryData stringData items type value key values operator immutable
containers initContainers image imagePullPolicy command args ports containerPort protocol env valueFrom
resources limits requests cpu memory volumeMounts mountPath volumes readOnly restartPolicy
nodeName nodeSelector serviceAccountName schedulerName priority tolerations effect affinity
terminationGracePeriodSeconds dnsPolicy securityContext hostNetwork
conditions lastTransitionTime lastProbeTime lastUpdateTime reason message phase observedGeneration
replicas selector matchLabels matchExpressions template strategy
podIP podIPs hostIP hostIPs startTime containerStatuses ready restartCount started state running startedAt imageID containerID
clusterIP clusterIPs targetPort port ipFamilies ipFamilyPolicy sessionAffinity
rules verbs apiGroups resourceNames subjects roleRef`

// maxFastDepth bounds the recursion of the fast decoder; deeper documents take
// the encoding/json path (which has its own limit and error).
const maxFastDepth = 1000

// decodeMapFast decodes a JSON object as DecodeMap does. ok is false when the
// input is not one it is sure about; the caller then decodes it with
// encoding/json.
func decodeMapFast(data []byte) (map[string]any, bool) {
	return fastDecoder{data: data}.decodeMap()
}

func (d fastDecoder) decodeMap() (map[string]any, bool) {
	m, _, ok := d.decodeMapRepeats()
	return m, ok
}

// decodeMapRepeats is decodeMap also saying whether an object in the
// document had a key twice.
func (d fastDecoder) decodeMapRepeats() (m map[string]any, repeated, ok bool) {
	d.skipSpace()
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		return nil, false, false
	}
	m, ok = d.object(0)
	if !ok {
		return nil, false, false
	}
	d.skipSpace()
	if d.i != len(d.data) {
		return nil, false, false
	}
	return m, d.repeated, true
}

type fastDecoder struct {
	data []byte
	i    int
	// withoutManagedFields: metadata.managedFields are skipped, not
	// decoded; inMeta is set while the root's metadata is decoded.
	withoutManagedFields, inMeta bool
	// repeated is set when an object had a key twice (the later value
	// replaced the earlier).
	repeated bool
	// headOnly: of the root's fields only apiVersion, kind and metadata
	// are decoded, the others read as JSON and left out.
	headOnly bool
}

func (d *fastDecoder) skipSpace() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// colon reads the ':' after an object key, and the space around it.
func (d *fastDecoder) colon() bool {
	d.skipSpace()
	if d.i >= len(d.data) || d.data[d.i] != ':' {
		return false
	}
	d.i++
	d.skipSpace()
	return true
}

// next reads what follows a value in an object or array that end closes:
// a ',' and the space after it (more), or end; ok is false for anything else.
func (d *fastDecoder) next(end byte) (more, ok bool) {
	d.skipSpace()
	if d.i >= len(d.data) {
		return false, false
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		d.skipSpace()
		return true, true
	case end:
		d.i++
		return false, true
	}
	return false, false
}

// object decodes an object; d.i is at its '{'.
func (d *fastDecoder) object(depth int) (map[string]any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	d.i++ // '{'
	m := map[string]any{}
	set := 0 // keys set in m, to tell a repeated key by m's length
	d.skipSpace()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		k, ok := d.objectKey()
		if !ok {
			return nil, false
		}
		d.skipSpace()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.skipSpace()
		switch {
		case d.headOnly && depth == 0 && !isHeadField(k):
			if !d.skip(depth) {
				return nil, false
			}
		case d.withoutManagedFields && depth == 1 && d.inMeta && k == "managedFields":
			if !d.skip(depth) {
				return nil, false
			}
		case d.withoutManagedFields && depth == 0 && k == "metadata":
			d.inMeta = true
			v, ok := d.value(depth)
			d.inMeta = false
			if !ok {
				return nil, false
			}
			m[k] = v
			set++
		default:
			v, ok := d.value(depth)
			if !ok {
				return nil, false
			}
			m[k] = v
			set++
		}
		more, ok := d.next('}')
		if !ok {
			return nil, false
		}
		if !more {
			if set != len(m) {
				d.repeated = true
			}
			return m, true
		}
	}
}

// objectKey reads an object key as str does; a well-known key (knownKeys)
// without escapes is that constant, not a new string.
func (d *fastDecoder) objectKey() (string, bool) {
	if i, plain := d.plainEnd(); plain {
		if k, ok := knownKeys[string(d.data[d.i+1:i])]; ok {
			d.i = i + 1
			return k, true
		}
	}
	return d.str()
}

// plainEnd scans the string at d.i (its opening quote) for as long as its
// bytes need no unquoting: i is where that stops, plain whether it stopped
// at the closing quote.
func (d *fastDecoder) plainEnd() (i int, plain bool) {
	i = d.i + 1
	for i < len(d.data) && plainStringByte[d.data[i]] {
		i++
	}
	return i, i < len(d.data) && d.data[i] == '"'
}

// isHeadField says whether k is one of the root fields DecodeMapHead keeps.
func isHeadField(k string) bool {
	return k == "apiVersion" || k == "kind" || k == "metadata"
}

// array decodes an array; d.i is at its '['.
func (d *fastDecoder) array(depth int) ([]any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	d.i++ // '['
	s := []any{}
	d.skipSpace()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return s, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		s = append(s, v)
		more, ok := d.next(']')
		if !ok {
			return nil, false
		}
		if !more {
			return s, true
		}
	}
}

func (d *fastDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return nil, false
}

// skip reads a value as value does, building nothing; false when value
// would fail.
func (d *fastDecoder) skip(depth int) bool {
	if d.i >= len(d.data) {
		return false
	}
	switch c := d.data[d.i]; {
	case c == '{', c == '[':
		if depth+1 > maxFastDepth {
			return false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		d.i++
		d.skipSpace()
		if d.i < len(d.data) && d.data[d.i] == end {
			d.i++
			return true
		}
		for {
			if c == '{' && (d.i >= len(d.data) || d.data[d.i] != '"' || !d.skipString() || !d.colon()) {
				return false
			}
			if !d.skip(depth + 1) {
				return false
			}
			if more, ok := d.next(end); !more {
				return ok
			}
		}
	case c == '"':
		return d.skipString()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := d.number()
		return ok
	}
	return false
}

// skipString reads a string as str does, without unquoting it; d.i is at
// its opening quote.
func (d *fastDecoder) skipString() bool {
	i := d.i + 1
	for i < len(d.data) {
		// Runs of bytes that need no look (most of a string) first.
		for i < len(d.data) && skipStringByte[d.data[i]] {
			i++
		}
		if i >= len(d.data) {
			break
		}
		switch c := d.data[i]; {
		case c == '"':
			d.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(d.data) {
				return false
			}
			switch d.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d.data) {
					return false
				}
				for _, h := range d.data[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		default:
			i++
		}
	}
	return false
}

func (d *fastDecoder) literal(lit string) bool {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// str decodes a string; d.i is at its opening quote. Plain ASCII is copied;
// strings with escapes or other bytes are unquoted by encoding/json.
func (d *fastDecoder) str() (string, bool) {
	start := d.i + 1
	i, plain := d.plainEnd()
	if plain {
		d.i = i + 1
		return string(d.data[start:i]), true
	}
	// Find the closing quote, then let encoding/json validate and unquote.
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case c < 0x20:
			return "", false
		case c == '"':
			var s string
			if err := json.Unmarshal(d.data[start-1:i+1], &s); err != nil {
				return "", false
			}
			d.i = i + 1
			return s, true
		}
		i++
	}
	return "", false
}

// number decodes a number as DecodeMap does: int64 when the literal is an
// integer in range, float64 otherwise.
func (d *fastDecoder) number() (any, bool) {
	start := d.i
	i := start
	if d.data[i] == '-' {
		i++
	}
	if i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	integer := true
	if i < len(d.data) && d.data[i] == '.' {
		integer = false
		i++
		n := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		if i == n {
			return nil, false
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		integer = false
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		n := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		if i == n {
			return nil, false
		}
	}
	tok := d.data[start:i]
	d.i = i
	if integer && len(tok) <= 18 {
		// Fits in int64 whatever the digits: what json.Number.Int64 returns.
		neg := tok[0] == '-'
		digits := tok
		if neg {
			digits = tok[1:]
		}
		var n int64
		for _, c := range digits {
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		return n, true
	}
	s := string(tok)
	if integer {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f, true
}

// EncodeJSON returns what json.Marshal(v) returns, faster for JSON-compatible
// values (maps, slices, strings, bools, int64 and float64 numbers, nil).
func EncodeJSON(v any) ([]byte, error) {
	return AppendJSON(make([]byte, 0, 512), v)
}

// AppendJSON appends the json.Marshal encoding of v to dst. On error dst is
// returned unchanged.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	out, err := appendJSON(dst, v)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendJSON(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendJSONString(dst, t), nil
	case bool:
		return strconv.AppendBool(dst, t), nil
	case int64:
		return strconv.AppendInt(dst, t, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			break
		}
		abs := math.Abs(t)
		f := byte('f')
		if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			f = 'e'
		}
		dst = strconv.AppendFloat(dst, t, f, -1, 64)
		if f == 'e' {
			// Clean up e-09 to e-9, as encoding/json does.
			if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
				dst[n-2] = dst[n-1]
				dst = dst[:n-1]
			}
		}
		return dst, nil
	case map[string]any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		return appendJSONMap(dst, t)
	case RawJSON:
		return append(dst, t...), nil
	case []any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSON(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// RawJSON is a value held as its JSON encoding in a JSON-compatible map, for
// objects built to be encoded: AppendJSON and EncodeJSON write it as it is,
// and so does encoding/json (compacted). It must be valid JSON, written as
// AppendJSON would write the value it stands for, and is never changed once
// in a map. Decoding never produces it, and code that reads decoded objects
// does not expect it: whoever puts one in an object decodes it (DecodeValue)
// before such code sees the object.
type RawJSON []byte

// MarshalJSON returns r.
func (r RawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// SortObjectKeys sorts s by key (distinct for each element) in the order
// AppendJSON writes an object's keys: by text, as encoding/json does, but for
// the levels of managedFields' FieldsV1 sets (fieldsv1order.go).
func SortObjectKeys[E any](s []E, key func(E) string) {
	if len(s) < 2 {
		return
	}
	slices.SortFunc(s, func(a, b E) int { return strings.Compare(key(a), key(b)) })
	var small [16]string
	keys := small[:0]
	for _, e := range s {
		keys = append(keys, key(e))
	}
	if isFieldsV1Level(keys) {
		slices.SortStableFunc(s, func(a, b E) int { return compareFieldsV1Keys(key(a), key(b)) })
	}
}

// appendJSONMap encodes m with its keys sorted, as encoding/json does.
func appendJSONMap(dst []byte, m map[string]any) ([]byte, error) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // encoding/json orders map keys by strings.Compare
	if isFieldsV1Level(keys) {
		slices.SortStableFunc(keys, compareFieldsV1Keys)
	}
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendJSON(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendJSONString appends s quoted as encoding/json quotes it (HTML-safe);
// strings that need escaping or hold non-ASCII text are quoted by
// encoding/json itself.
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !safeStringByte[s[i]] {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// DecodeValue decodes any JSON value as DecodeMap decodes the values inside an
// object: objects as map[string]any, arrays as []any, integers as int64 when in
// range, other numbers as float64.
func DecodeValue(data []byte) (any, error) {
	d := fastDecoder{data: data}
	d.skipSpace()
	if v, ok := d.value(0); ok {
		d.skipSpace()
		if d.i == len(d.data) {
			return v, nil
		}
	}
	return decodeValueStd(data)
}

// decodeValueStd is DecodeValue by encoding/json, the reference for its fast
// path.
func decodeValueStd(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, errors.New("invalid JSON value")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return NormalizeNumbers(v), nil
}
