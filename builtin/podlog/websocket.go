package podlog

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// Log streams over WebSocket, as kube-apiserver serves every streaming
// response to a WebSocket upgrade: each chunk read from the node agent is one
// message, binary under "binary.k8s.io" (and when the client names no
// protocol), base64 text under "base64.binary.k8s.io"; the server closes
// normally when the log ends.
const (
	protocolBinary = "binary.k8s.io"
	protocolBase64 = "base64.binary.k8s.io"
)

// wsProtocol picks the first protocol the client offers that the log stream
// speaks; "" when it offers none of them (binary, as Kubernetes' default).
func wsProtocol(r *http.Request) string {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			switch p = strings.TrimSpace(p); p {
			case protocolBinary, protocolBase64:
				return p
			}
		}
	}
	return ""
}

// streamWebSocket upgrades the request and copies body to it as messages
// until the log ends, the client leaves, or ctx ends.
func streamWebSocket(ctx context.Context, w http.ResponseWriter, r *http.Request, body io.ReadCloser) {
	protocol := wsProtocol(r)
	opts := &websocket.AcceptOptions{
		// Non-browser clients (client-go, the e2e suite) send an Origin that
		// is not the API server's host; authentication is not by cookie.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	}
	if protocol != "" {
		opts.Subprotocols = []string{protocol}
	}
	c, err := websocket.Accept(w, r, opts)
	if err != nil {
		return // Accept answered the request
	}
	// Nothing is read from the client; reading its close frames lets the
	// stream end when it leaves.
	ctx = c.CloseRead(ctx)
	// A hijacked connection no longer cancels the request's context when the
	// client leaves: end a following read of the agent's body instead.
	stop := context.AfterFunc(ctx, func() { _ = body.Close() })
	defer stop()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			typ, msg := websocket.MessageBinary, buf[:n]
			if protocol == protocolBase64 {
				typ, msg = websocket.MessageText, []byte(base64.StdEncoding.EncodeToString(buf[:n]))
			}
			if err := c.Write(ctx, typ, msg); err != nil {
				c.CloseNow()
				return
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				_ = c.Close(websocket.StatusNormalClosure, "")
			} else {
				_ = c.Close(websocket.StatusInternalError, "reading the log from the node failed")
			}
			return
		}
	}
}
