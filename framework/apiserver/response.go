package apiserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := api.EncodeJSON(v)
	if err != nil {
		writeError(w, internalError("encode response: %v", err))
		return
	}
	writeRawJSON(w, code, b)
}

func writeRawJSON(w http.ResponseWriter, code int, b []byte) {
	writeJSONBody(w, code, jsonBody{head: b})
}

// writeJSONBody writes b.head then b.tail as one JSON response.
func writeJSONBody(w http.ResponseWriter, code int, b jsonBody) {
	w.Header().Set("Content-Type", mediaJSON)
	w.Header().Set("Content-Length", strconv.Itoa(len(b.head)+len(b.tail)))
	w.WriteHeader(code)
	_, _ = w.Write(b.head)
	if len(b.tail) > 0 {
		_, _ = w.Write(b.tail)
	}
}

// writeError writes err as a Status; errors that carry none become 500s.
func writeError(w http.ResponseWriter, err error) {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	st := se.Status()
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	writeJSON(w, code, st)
}

func internalError(format string, args ...any) error {
	return apierrors.NewInternalError(fmt.Errorf(format, args...))
}

func notFoundPath(_ string) error {
	return &apierrors.StatusError{ErrStatus: api.Status{
		Status: api.StatusFailure, Code: http.StatusNotFound, Reason: apierrors.ReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &api.StatusDetails{Causes: []api.StatusCause{{Type: "UnexpectedServerResponse", Message: "404 page not found"}}},
	}}
}

// readBody reads a request body within the size limit.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if n := r.ContentLength; n > 0 && n <= s.opts.MaxRequestBytes {
		// The common case: read exactly the announced length into one buffer.
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("read request body: %v", err))
		}
		return b, nil
	}
	limited := io.LimitReader(r.Body, s.opts.MaxRequestBytes+1)
	b, err := io.ReadAll(limited)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("read request body: %v", err))
	}
	if int64(len(b)) > s.opts.MaxRequestBytes {
		return nil, apierrors.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", s.opts.MaxRequestBytes))
	}
	return b, nil
}

// contentType returns the request's media type without parameters.
func contentType(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	switch ct {
	case "", mediaJSON:
		return mediaJSON
	case mediaProtobuf, mediaYAML, mediaMergePatch, mediaStrategicPatch, mediaJSONPatch, mediaApplyPatch:
		return ct // what clients send, already a bare lower-case media type
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.TrimSpace(strings.SplitN(ct, ";", 2)[0])
	}
	return mt
}

// decodeJSONOrYAML decodes a JSON or YAML body into a map.
func decodeJSONOrYAML(body []byte, media string) (map[string]any, error) {
	m, _, err := decodeJSONOrYAMLUnique(body, media)
	return m, err
}

// decodeJSONOrYAMLUnique is decodeJSONOrYAML also saying, for a JSON body,
// whether each object in it has each of its keys once (false when it cannot
// tell): then strict decoding finds no duplicate fields in it.
func decodeJSONOrYAMLUnique(body []byte, media string) (map[string]any, bool, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, false, apierrors.NewBadRequest("the request body is empty; expected an object")
	}
	data := body
	if media == "application/apply-patch+yaml" && isJSONObject(body) {
		// Most appliers (client-go, controller-runtime, Helm, kubectl)
		// send JSON, which YAML's parser would take the long way; what
		// it does not decode as JSON goes on to the YAML parser.
		if m, err := api.DecodeMap(body); err == nil {
			return m, false, nil
		}
	}
	if media == mediaYAML || media == "application/apply-patch+yaml" {
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, false, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
		}
		data = j
	}
	m, unique, err := api.DecodeMapUnique(data)
	if err != nil {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: couldn't decode JSON: %v", err))
	}
	// YAML's keys were repeated, if at all, before it became JSON.
	return m, unique && media != mediaYAML && media != "application/apply-patch+yaml", nil
}

// isJSONObject reports whether body, past leading white space, starts a
// JSON object.
func isJSONObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// acceptsTable reports whether the client asked for a meta.k8s.io Table.
func acceptsTable(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		p := strings.ReplaceAll(part, " ", "")
		if strings.Contains(p, "as=Table") && strings.Contains(p, "g=meta.k8s.io") &&
			(strings.Contains(p, "v=v1;") || strings.HasSuffix(p, "v=v1") || strings.Contains(p, "v=v1beta1")) {
			return true
		}
	}
	return false
}
