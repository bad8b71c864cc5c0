package apiserver

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// Protobuf watch streams. A watch whose Accept header prefers Kubernetes
// protobuf (client-go's typed clients send
// "application/vnd.kubernetes.protobuf,application/json") on a resource with a
// protobuf-encodable Go type is answered as Kubernetes answers it:
// Content-Type application/vnd.kubernetes.protobuf;stream=watch, each event a
// meta/v1 WatchEvent message (type, object as a RawExtension holding the
// object's protobuf body with magic prefix and envelope) after its length as
// 4 bytes big-endian. Each event's frame is encoded once per version and event
// type and shared by every such watcher, as the JSON frames are. An object the
// Go type cannot hold (a field it does not know) ends the stream with an ERROR
// event, a 410 Expired Status: the client lists again (lists fall back to JSON
// per response) and watches on from there.

// mediaProtobufWatch is the Content-Type of a protobuf watch stream.
const mediaProtobufWatch = mediaProtobuf + ";stream=watch"

// errNotProtobuf reports an object that has no protobuf encoding.
var errNotProtobuf = errors.New("object cannot be encoded as protobuf")

// protoWatch sets st up to render q's watch in protobuf, when q prefers it
// and its resource can be encoded; it reports whether it did.
func (s *Server) protoWatch(q *request, st *watchStream) bool {
	if acceptsTable(q.r) || !prefersProtobuf(q.r.Header.Get("Accept")) || q.res.Type == nil || !s.proto.Encodable(q.res.Type) {
		return false
	}
	enc := &protoWriter{s: s, typ: q.res.Type, kind: q.res.Kind}
	v := viewOf(q.res)
	st.frame = func(ev *cacheEvent, typ string, _ *[]byte) ([]byte, error) {
		return ev.protoFrame(typ, v, enc.transcode)
	}
	st.errorFrame = func(err error) []byte {
		s.log.V(1).Info("Ending a protobuf watch with 410: an event cannot be encoded", "resource", q.res.Resource, "error", err.Error())
		return protoExpiredFrame(err.Error())
	}
	kind, av := q.res.Kind, q.res.GroupVersion.String()
	bookmark := func(rv int64, annotations string) []byte {
		obj := enc.transcode(fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"%d"%s}}`, kind, av, rv, annotations))
		if obj == nil {
			return nil
		}
		return protoWatchFrame("BOOKMARK", obj)
	}
	if st.bookmark != nil {
		st.bookmark = func(rv int64) []byte { return bookmark(rv, "") }
	}
	st.protoInitialEnd = func(rv int64) []byte {
		return bookmark(rv, `,"annotations":{"k8s.io/initial-events-end":"true"}`)
	}
	return true
}

// protoFrame returns the protobuf watch frame of ev as type typ in v's
// version, encoding the object's JSON with encode (nil when it cannot be): for
// a recent ring event in the stored version, encoded once per event type and shared
// by every watcher, as the JSON frames are (cacheEvent.frame); otherwise for
// this watcher alone.
func (ev *cacheEvent) protoFrame(typ string, v view, encode func(js []byte) []byte) ([]byte, error) {
	render := func() ([]byte, error) {
		data, err := ev.obj.dataFor(v)
		if err != nil {
			return nil, err
		}
		obj := encode(data)
		if obj == nil {
			return nil, errNotProtobuf
		}
		return protoWatchFrame(typ, obj), nil
	}
	k := ev.kept.Load()
	if k == nil || !v.identity(ev.obj) {
		return render()
	}
	i := frameIndex(typ)
	k.protoOnce[i].Do(func() { k.protoFrames[i], k.protoErrs[i] = render() })
	return k.protoFrames[i], k.protoErrs[i]
}

// protoWatchFrame renders a meta/v1 WatchEvent of type typ carrying obj (a
// protobuf body) after its length.
func protoWatchFrame(typ string, obj []byte) []byte {
	var raw []byte
	raw = protowire.AppendTag(raw, 1, protowire.BytesType)
	raw = protowire.AppendBytes(raw, obj)
	b := make([]byte, 4, 4+len(typ)+len(raw)+8)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, typ)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, raw)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// protoExpiredFrame renders an ERROR WatchEvent carrying a meta/v1 Status
// Failure, reason Expired, code 410, with message.
func protoExpiredFrame(message string) []byte {
	var st []byte
	st = protowire.AppendTag(st, 2, protowire.BytesType)
	st = protowire.AppendString(st, "Failure")
	st = protowire.AppendTag(st, 3, protowire.BytesType)
	st = protowire.AppendString(st, message)
	st = protowire.AppendTag(st, 4, protowire.BytesType)
	st = protowire.AppendString(st, "Expired")
	st = protowire.AppendTag(st, 6, protowire.VarintType)
	st = protowire.AppendVarint(st, 410)
	return protoWatchFrame("ERROR", protobuf.Wrap(api.TypeMeta{APIVersion: "v1", Kind: "Status"}, st))
}
