package apiserver

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// Protobuf responses. A client whose Accept header prefers
// application/vnd.kubernetes.protobuf (client-go and controller-runtime send
// "application/vnd.kubernetes.protobuf, */*" for built-in kinds) gets objects
// and lists of a resource with a protobuf-encodable Go type in protobuf, as
// Kubernetes answers them. The handlers still render JSON: protoWriter holds a
// successful JSON response back and re-encodes it through the Go type. Anything
// else (Status, Table, other kinds, custom resources, objects with fields the
// Go type does not know) stays JSON, which the Content-Type names and every
// client reads. Watch streams are watchproto.go's.

// protoResponse returns a writer that re-encodes q's JSON response as
// protobuf, or nil when q is not answered in protobuf.
func (s *Server) protoResponse(q *request) *protoWriter {
	if q.ri.verb == "watch" || !prefersProtobuf(q.r.Header.Get("Accept")) {
		return nil
	}
	w := &protoWriter{ResponseWriter: q.w, s: s, typ: q.res.Type, kind: q.res.Kind, listKind: q.res.ListKind}
	switch q.ri.subresource {
	case "", "status":
	case "scale":
		// An autoscaling/v1 Scale, custom resources' included.
		w.typ, w.kind, w.listKind = reflect.TypeFor[scaleMessage](), "Scale", ""
	default:
		return nil
	}
	if w.typ == nil || !s.proto.Encodable(w.typ) {
		return nil
	}
	return w
}

// prefersProtobuf reports whether the Accept header's most preferred media
// type this server can answer with is Kubernetes protobuf. A Table or other
// "as=" request is never answered in protobuf.
func prefersProtobuf(accept string) bool {
	if !strings.Contains(accept, mediaProtobuf) {
		return false
	}
	best, proto := -1.0, false
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if params["as"] != "" {
			return false
		}
		switch mt {
		case mediaProtobuf, mediaJSON, mediaYAML, "application/*", "*/*":
		default:
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		if q > best {
			best, proto = q, mt == mediaProtobuf
		}
	}
	return proto && best > 0
}

// protoWriter holds back a successful JSON response and, in finish, writes
// it as protobuf when it is an object or a list of the request's resource.
type protoWriter struct {
	http.ResponseWriter
	s *Server
	// typ is the Go type of the objects answered, kind and listKind their
	// kinds (listKind empty when there are no lists).
	typ            reflect.Type
	kind, listKind string
	code           int
	buf            bytes.Buffer
	// held is set once a 200, 201 or 202 JSON response is being held back.
	held, wroteHeader bool
}

func (w *protoWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	switch code {
	case http.StatusOK, http.StatusCreated, http.StatusAccepted:
	default:
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if w.Header().Get("Content-Type") == mediaJSON {
		w.held, w.code = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *protoWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.held {
		return w.buf.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// finish writes the held response, in protobuf when it can be.
func (w *protoWriter) finish() {
	if !w.held {
		return
	}
	body := w.buf.Bytes()
	h := w.ResponseWriter.Header()
	if out := w.transcode(body); out != nil {
		h.Set("Content-Type", mediaProtobuf)
		body = out
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(w.code)
	_, _ = w.ResponseWriter.Write(body)
}

// transcode returns body (JSON) as a protobuf body, or nil when it is not an
// object or list of the resource or holds a field its Go type does not know.
func (w *protoWriter) transcode(body []byte) []byte {
	head, ok := peekTypeMeta(body)
	if !ok {
		return nil
	}
	tm := api.TypeMeta{APIVersion: head.APIVersion, Kind: head.Kind}
	switch {
	case head.Kind == w.kind:
		raw := w.object(body)
		if raw == nil {
			return nil
		}
		return protobuf.Wrap(tm, raw)
	case head.Kind == w.listKind && w.listKind != "":
		var list struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Metadata   api.ListMeta      `json:"metadata"`
			Items      []json.RawMessage `json:"items"`
		}
		if strictJSON(body, &list) != nil {
			return nil
		}
		meta, err := w.s.proto.Marshal(&list.Metadata)
		if err != nil {
			return nil
		}
		var raw []byte
		raw = protowire.AppendTag(raw, 1, protowire.BytesType)
		raw = protowire.AppendBytes(raw, meta)
		for _, item := range list.Items {
			m := w.object(item)
			if m == nil {
				return nil
			}
			raw = protowire.AppendTag(raw, 2, protowire.BytesType)
			raw = protowire.AppendBytes(raw, m)
		}
		return protobuf.Wrap(tm, raw)
	}
	return nil
}

// object encodes one JSON object of the resource as its message, or returns
// nil when its Go type cannot hold it all.
func (w *protoWriter) object(js []byte) []byte {
	v := reflect.New(w.typ)
	if strictJSON(js, v.Interface()) != nil {
		return nil
	}
	raw, err := w.s.proto.Marshal(v.Interface())
	if err != nil {
		return nil
	}
	if raw == nil {
		raw = []byte{}
	}
	return raw
}

// strictJSON decodes js into v, failing on fields v has no place for.
func strictJSON(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// peekTypeMeta reads the top-level apiVersion and kind of the JSON object
// body without decoding the rest, which it only skips over (a response's
// body is decoded in full afterwards, strictly, when its kind is one to
// transcode; that decoding is what rejects malformed JSON). ok is false for
// anything but an object whose keys are plain (ASCII, unescaped) strings and
// whose apiVersion and kind, when present, are plain strings.
func peekTypeMeta(body []byte) (tm api.TypeMeta, ok bool) {
	i := skipJSONSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return tm, false
	}
	i++
	for {
		i = skipJSONSpace(body, i)
		if i < len(body) && body[i] == '}' {
			return tm, true
		}
		key, next, ok := plainJSONString(body, i)
		if !ok {
			return tm, false
		}
		i = skipJSONSpace(body, next)
		if i >= len(body) || body[i] != ':' {
			return tm, false
		}
		i = skipJSONSpace(body, i+1)
		switch {
		case key == "apiVersion" || key == "kind":
			v, next, ok := plainJSONString(body, i)
			if !ok {
				return tm, false
			}
			if key == "kind" {
				tm.Kind = v
			} else {
				tm.APIVersion = v
			}
			i = next
		case strings.EqualFold(key, "apiVersion") || strings.EqualFold(key, "kind"):
			return tm, false // encoding/json would take it for the field: leave it to it
		default:
			if i = skipJSONValue(body, i); i < 0 {
				return tm, false
			}
		}
		i = skipJSONSpace(body, i)
		switch {
		case i < len(body) && body[i] == ',':
			i++
		case i < len(body) && body[i] == '}':
			return tm, true
		default:
			return tm, false
		}
	}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainJSONString returns the string starting at b[i] and the index after
// it; ok is false when there is none or it has escapes.
func plainJSONString(b []byte, i int) (s string, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	end := bytes.IndexByte(b[i+1:], '"')
	if end < 0 {
		return "", 0, false
	}
	raw := b[i+1 : i+1+end]
	for _, c := range raw {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return "", 0, false // escapes, control characters, non-ASCII
		}
	}
	return string(raw), i + end + 2, true
}

// skipJSONValue returns the index after the value starting at b[i], or -1
// when the input ends first. It checks no more than it needs to find the end.
func skipJSONValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(b) {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
		if depth == 0 && i <= len(b) && (b[i-1] == '"' || b[i-1] == '}' || b[i-1] == ']') {
			return i
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}
