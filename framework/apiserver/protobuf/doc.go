// Package protobuf decodes (and encodes) Kubernetes protobuf bodies
// (Content-Type application/vnd.kubernetes.protobuf) into Converge's Go types
// and into JSON-compatible maps, so that unmodified client-go typed clients and
// kubectl's generator commands can write to a Converge API server.
//
// A body is the 4-byte magic prefix "k8s\x00" followed by a runtime.Unknown
// envelope message: typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2,
// contentEncoding = 3, contentType = 4. raw holds the object's own message.
//
// The package has no generated code and no table of kinds. The message layout is
// read from the Go type the caller names, from the same struct tags Kubernetes'
// Go types carry: `protobuf:"<wire>,<number>,<opt|rep>,name=..."` on each field,
// plus `protobuf_key` and `protobuf_val` on maps (each map entry is a nested
// message with key = 1 and value = 2). The rules are:
//
//   - A field without a protobuf tag, or tagged `protobuf:"-"`, is not on the
//     wire. An embedded api.TypeMeta is skipped (the envelope carries it). Any
//     other embedded struct without a protobuf tag is flattened: its tagged
//     fields belong to the parent message. An embedded struct with a tag is an
//     ordinary nested message.
//   - Strings (including string enums) are length-delimited; []byte fields are
//     length-delimited and never nil once present; integers and bools are plain
//     varints (zigzag only when the tag says zigzag32 or zigzag64); floats are
//     fixed64 or fixed32. Numeric fields accept whichever of varint, fixed32 and
//     fixed64 appears on the wire, because some upstream tags name the wrong
//     wire type (ListMeta.remainingItemCount says bytes but is sent as varint).
//   - A map whose Go values are slices (authentication's
//     map<string, ExtraValue>) holds each value as a message
//     {repeated items = 1}; a value that is present is never nil.
//   - Repeated fields are slices; repeated scalars are accepted both packed and
//     unpacked. A pointer field is allocated when its field appears. A message
//     that appears twice is merged, as protobuf specifies.
//   - api.Time and api.MicroTime are {seconds = 1, nanos = 2} and an empty
//     message is the zero time; api.Duration is {duration = 1} in nanoseconds;
//     api.IntOrString is {type = 1, intVal = 2, strVal = 3}; api.Quantity is
//     {string = 1}; api.RawExtension and api.FieldsV1 are {raw = 1} holding JSON.
//   - Unknown field numbers are skipped.
//
// Malformed input yields an error, never a panic; nesting deeper than
// MaxDepth is rejected. Values are not validated beyond the wire format
// (quantities, for example, are checked when the JSON form is decoded).
//
// Marshal and EncodeObject encode by the same tables, for protobuf responses:
// fields in number order, zero non-pointer scalars, strings and messages left
// out (they decode to the same value), pointers written when set, repeated
// scalars unpacked, map entries in key order. Encodable reports whether a type
// puts every field its JSON form has on the wire; a type that does not must be
// answered in JSON, or the response would lose fields.
//
// A Decoder caches one field table per Go type; its zero value is ready to use
// and it is safe for concurrent use.
package protobuf
