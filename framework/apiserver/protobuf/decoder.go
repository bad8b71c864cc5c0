package protobuf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
)

// ContentType is the media type of Kubernetes protobuf bodies.
const ContentType = "application/vnd.kubernetes.protobuf"

// Magic is the prefix of every Kubernetes protobuf body: "k8s" and a zero byte.
var Magic = [4]byte{0x6b, 0x38, 0x73, 0x00}

// MaxDepth is the deepest nesting of messages a body may have.
const MaxDepth = 256

// ErrNotProtobuf is returned (wrapped) when a body lacks the magic prefix.
var ErrNotProtobuf = errors.New("protobuf: body does not start with the k8s protobuf prefix")

// Decoder decodes Kubernetes protobuf messages into Go values whose struct tags
// carry the protobuf field numbers, and encodes such values (Marshal,
// EncodeObject) for protobuf responses. The zero value is ready to use; a
// Decoder is safe for concurrent use and must not be copied after first use.
type Decoder struct {
	// schemas maps a struct reflect.Type to its *message. Entries are never
	// removed; they are immutable once stored.
	schemas sync.Map
	// mu serialises schema construction so that a type graph is built once;
	// readers use schemas without it.
	mu sync.Mutex
	// encodable caches Encodable by struct reflect.Type.
	encodable sync.Map
}

// Envelope is the runtime.Unknown wrapper of a protobuf body.
type Envelope struct {
	// TypeMeta is the apiVersion and kind of the object in Raw.
	TypeMeta api.TypeMeta
	// Raw is the object's message.
	Raw []byte
	// ContentEncoding is how Raw is encoded; empty means not at all.
	ContentEncoding string
	// ContentType is the serialisation of Raw; clients leave it empty.
	ContentType string
}

// Unwrap checks the magic prefix of body and parses the runtime.Unknown
// envelope after it. Raw aliases body.
func Unwrap(body []byte) (Envelope, error) {
	var env Envelope
	if !bytes.HasPrefix(body, Magic[:]) {
		return env, ErrNotProtobuf
	}
	b := body[len(Magic):]
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return env, fmt.Errorf("parse envelope: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num >= 1 && num <= 4 && wt != protowire.BytesType {
			return env, fmt.Errorf("parse envelope: field %d: wire type %d, want bytes", num, wt)
		}
		if num > 4 || num < 1 {
			n = protowire.ConsumeFieldValue(num, wt, b)
			if n < 0 {
				return env, fmt.Errorf("parse envelope: field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return env, fmt.Errorf("parse envelope: field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case 1:
			tm, err := parseTypeMeta(v)
			if err != nil {
				return env, fmt.Errorf("parse envelope: typeMeta: %w", err)
			}
			env.TypeMeta = tm
		case 2:
			env.Raw = v
		case 3:
			env.ContentEncoding = string(v)
		case 4:
			env.ContentType = string(v)
		}
	}
	return env, nil
}

func parseTypeMeta(b []byte) (api.TypeMeta, error) {
	var tm api.TypeMeta
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return tm, protowire.ParseError(n)
		}
		b = b[n:]
		if (num == 1 || num == 2) && wt != protowire.BytesType {
			return tm, fmt.Errorf("field %d: wire type %d, want bytes", num, wt)
		}
		if num != 1 && num != 2 {
			n = protowire.ConsumeFieldValue(num, wt, b)
			if n < 0 {
				return tm, protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return tm, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 1 {
			tm.APIVersion = string(v)
		} else {
			tm.Kind = string(v)
		}
	}
	return tm, nil
}

// Decode parses a protobuf request body: the magic prefix, the envelope, and
// the object message described by t (a struct type or a pointer to one). It
// returns the envelope's apiVersion and kind and the object as a
// JSON-compatible map (numbers as int64 or float64, as api.DecodeMap gives),
// with "apiVersion" and "kind" set from the envelope when it carries them.
func (d *Decoder) Decode(body []byte, t reflect.Type) (api.TypeMeta, map[string]any, error) {
	env, err := Unwrap(body)
	if err != nil {
		return api.TypeMeta{}, nil, err
	}
	if env.ContentEncoding != "" {
		return env.TypeMeta, nil, fmt.Errorf("decode %s: unsupported content encoding %q", env.TypeMeta.Kind, env.ContentEncoding)
	}
	if t == nil {
		return env.TypeMeta, nil, errors.New("decode: nil type")
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	v := reflect.New(t)
	if err := d.decodeStruct(env.Raw, v.Elem()); err != nil {
		return env.TypeMeta, nil, fmt.Errorf("decode %s: %w", kindName(env.TypeMeta, t), err)
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return env.TypeMeta, nil, fmt.Errorf("decode %s: encode as json: %w", kindName(env.TypeMeta, t), err)
	}
	obj, err := api.DecodeMap(data)
	if err != nil {
		return env.TypeMeta, nil, fmt.Errorf("decode %s: read json: %w", kindName(env.TypeMeta, t), err)
	}
	if env.TypeMeta.APIVersion != "" {
		obj["apiVersion"] = env.TypeMeta.APIVersion
	}
	if env.TypeMeta.Kind != "" {
		obj["kind"] = env.TypeMeta.Kind
	}
	return env.TypeMeta, obj, nil
}

func kindName(tm api.TypeMeta, t reflect.Type) string {
	if tm.Kind != "" {
		return tm.Kind
	}
	return t.String()
}

// DecodeInto decodes a bare message (no prefix, no envelope) into v, which must
// be a non-nil pointer to a struct. Fields present in raw overwrite or, for
// repeated fields and maps, extend what v holds.
func (d *Decoder) DecodeInto(raw []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("decode into %T: want a non-nil pointer to a struct", v)
	}
	if err := d.decodeStruct(raw, rv.Elem()); err != nil {
		return fmt.Errorf("decode %s: %w", rv.Elem().Type(), err)
	}
	return nil
}

func (d *Decoder) decodeStruct(raw []byte, v reflect.Value) error {
	m, err := d.schema(v.Type())
	if err != nil {
		return err
	}
	return decodeMessage(v, m, raw, 0)
}

// schema returns the field table of struct type t, building and caching the
// tables of every type reachable from it on first use.
func (d *Decoder) schema(t reflect.Type) (*message, error) {
	if m, ok := d.schemas.Load(t); ok {
		return m.(*message), nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("type %s is not a struct", t)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.schemas.Load(t); ok {
		return m.(*message), nil
	}
	b := &builder{msgs: map[reflect.Type]*message{}, codecs: map[codecKey]*codec{}}
	m, err := b.message(t)
	if err != nil {
		return nil, fmt.Errorf("build protobuf schema: %w", err)
	}
	for mt, mm := range b.msgs {
		d.schemas.LoadOrStore(mt, mm)
	}
	return m, nil
}
