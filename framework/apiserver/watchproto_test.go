package apiserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// TestProtoWatchFrame checks a protobuf watch frame: its length prefix, the
// WatchEvent's type and object (a RawExtension holding the object's protobuf
// body, which decodes to the stored JSON object), that a ring event's frame is
// encoded once and shared, and that an object the Go type cannot hold is refused.
func TestProtoWatchFrame(t *testing.T) {
	t.Parallel()
	const obj = `{"metadata":{"name":"g1","namespace":"ns","uid":"u-1","creationTimestamp":"2026-12-04T19:00:00Z"},"apiVersion":"example.com/v1","kind":"Gadget","spec":{"size":3,"tags":["t1"]}}`
	s := &Server{}
	enc := &protoWriter{s: s, typ: reflect.TypeFor[gadget](), kind: "Gadget"}
	o, err := buildCachedObject("/registry/example.com/gadgets/ns/g1", []byte(obj), 7, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := newRingEvent(api.EventModified, o, nil, 0)
	f, err := ev.protoFrame(api.EventModified, view{}, enc.transcode)
	if err != nil {
		t.Fatal(err)
	}
	typ, raw := parseWatchEvent(t, f)
	if typ != api.EventModified {
		t.Errorf("type %q, want MODIFIED", typ)
	}
	tm, got, err := s.proto.Decode(raw, reflect.TypeFor[gadget]())
	if err != nil {
		t.Fatalf("decode the object: %v", err)
	}
	if tm.Kind != "Gadget" || tm.APIVersion != "example.com/v1" {
		t.Errorf("envelope %+v", tm)
	}
	want, err := api.DecodeMap(o.data)
	if err != nil {
		t.Fatal(err)
	}
	delete(want, "apiVersion")
	delete(want, "kind")
	delete(got, "apiVersion")
	delete(got, "kind")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the frame's object (-stored +frame):\n%s", diff)
	}
	again, err := ev.protoFrame(api.EventModified, view{}, func([]byte) []byte { t.Fatal("encoded twice"); return nil })
	if err != nil || &again[0] != &f[0] {
		t.Errorf("the second watcher did not get the same frame (%v)", err)
	}

	unknown, err := buildCachedObject("/registry/example.com/gadgets/ns/g2", []byte(strings.Replace(obj, `"tags"`, `"color":"red","tags"`, 1)), 8, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newRingEvent(api.EventAdded, unknown, nil, 0).protoFrame(api.EventAdded, view{}, enc.transcode); !errors.Is(err, errNotProtobuf) {
		t.Errorf("an object with a field the type lacks: %v, want errNotProtobuf", err)
	}
	if !bytes.Equal(protoWatchFrame("BOOKMARK", nil)[4:6], []byte{0x0a, 8}) {
		t.Errorf("BOOKMARK frame % x", protoWatchFrame("BOOKMARK", nil))
	}
	// What a watcher gets instead: an ERROR event with a Status (410 Expired, so
	// that client-go relists).
	typ, raw = parseWatchEvent(t, protoExpiredFrame(errNotProtobuf.Error()))
	env, err := protobuf.Unwrap(raw)
	if typ != "ERROR" || err != nil || env.TypeMeta.Kind != "Status" {
		t.Errorf("the ERROR event: %q, %+v, %v", typ, env.TypeMeta, err)
	}
}

// parseWatchEvent returns the type and the object's bytes of a protobuf watch
// frame, after checking its length prefix.
func parseWatchEvent(t *testing.T, f []byte) (typ string, raw []byte) {
	t.Helper()
	if n := binary.BigEndian.Uint32(f); int(n) != len(f)-4 {
		t.Fatalf("length prefix %d for a %d-byte message", n, len(f)-4)
	}
	for b := f[4:]; len(b) > 0; {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 || wt != protowire.BytesType {
			t.Fatalf("malformed WatchEvent % x", f[4:])
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			t.Fatalf("malformed WatchEvent % x", f[4:])
		}
		b = b[n:]
		switch num {
		case 1:
			typ = string(v)
		case 2: // RawExtension: raw = 1
			num, _, n := protowire.ConsumeTag(v)
			if num != 1 || n < 0 {
				t.Fatalf("malformed RawExtension % x", v)
			}
			raw, _ = protowire.ConsumeBytes(v[n:])
		}
	}
	return typ, raw
}
