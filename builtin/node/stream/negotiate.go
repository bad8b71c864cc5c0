package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// Remote command protocol versions.
const (
	ProtocolV5 = "v5.channel.k8s.io"
	ProtocolV4 = "v4.channel.k8s.io"
	ProtocolV3 = "v3.channel.k8s.io"
	ProtocolV2 = "v2.channel.k8s.io"
	ProtocolV1 = "channel.k8s.io"
	// ProtocolPortForward is the port forwarding protocol over SPDY.
	ProtocolPortForward = "portforward.k8s.io"
	// TunnelPrefix prefixes a SPDY protocol carried over a WebSocket.
	TunnelPrefix = "SPDY/3.1+"
)

// Headers of the SPDY handshake and streams.
const (
	headerProtocolVersion   = "X-Stream-Protocol-Version"
	headerAcceptedProtocols = "X-Accepted-Stream-Protocol-Versions"
	headerWebSocketProtocol = "Sec-WebSocket-Protocol"
	headerStreamType        = "streamType"
	headerPort              = "port"
	headerRequestID         = "requestID"
	spdyUpgrade             = "SPDY/3.1"
)

// Stream types (the streamType header of SPDY streams).
const (
	streamError  = "error"
	streamStdin  = "stdin"
	streamStdout = "stdout"
	streamStderr = "stderr"
	streamResize = "resize"
	streamData   = "data"
)

var (
	spdyExecProtocols = []string{ProtocolV4, ProtocolV3, ProtocolV2, ProtocolV1}
	wsExecProtocols   = []string{ProtocolV5, ProtocolV4, ProtocolV1}
	wsTunnelProtocols = []string{TunnelPrefix + ProtocolPortForward}
)

// transport says how a request asks to be upgraded.
type transport int

const (
	transportNone transport = iota
	transportSPDY
	transportWebSocket
)

// IsWebSocket reports whether r asks to be upgraded to a WebSocket.
func IsWebSocket(r *http.Request) bool { return upgradeOf(r) == transportWebSocket }

func upgradeOf(r *http.Request) transport {
	if !headerHasToken(r.Header, "Connection", "upgrade") {
		return transportNone
	}
	switch up := r.Header.Get("Upgrade"); {
	case strings.EqualFold(up, "websocket"):
		return transportWebSocket
	case strings.EqualFold(up, spdyUpgrade):
		return transportSPDY
	}
	return transportNone
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// headerList returns the comma-separated values of a header, in order.
func headerList(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// pick returns the first client protocol the server supports. A client that
// names none gets fallback.
func pick(client, server []string, fallback string) (string, bool) {
	if len(client) == 0 {
		return fallback, fallback != ""
	}
	for _, p := range client {
		if slices.Contains(server, p) {
			return p, true
		}
	}
	return "", false
}

// errUnsupported is a protocol negotiation failure.
func errUnsupported(client, server []string) *apierrors.StatusError {
	return apierrors.FromStatus(api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusFailure, Code: http.StatusForbidden, Reason: apierrors.ReasonForbidden,
		Message: fmt.Sprintf("unable to upgrade: unable to negotiate protocol: client supports %v, server accepts %v", client, server),
	})
}

// WriteError answers a request with err as a Status (a StatusError keeps its
// code; anything else is a 500).
func WriteError(w http.ResponseWriter, err error) {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	st := se.Status()
	if st.Kind == "" {
		st.TypeMeta = api.TypeMeta{Kind: "Status", APIVersion: "v1"}
	}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(b)
}
