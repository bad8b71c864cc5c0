package stream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// WebSocket channels of the remote command protocols.
const (
	chanStdin  = 0
	chanStdout = 1
	chanStderr = 2
	chanError  = 3
	chanResize = 4
	chanClose  = 255 // v5: {255, channel} closes a channel
)

// wsReadLimit bounds one message (client-go writes up to 32 KiB of stdin per
// message; a SPDY tunnel frame can be larger).
const wsReadLimit = 32 << 20

// acceptWebSocket negotiates one of server's subprotocols (fallback when the
// client names none) and accepts the connection.
func acceptWebSocket(w http.ResponseWriter, r *http.Request, server []string, fallback string) (*websocket.Conn, string, error) {
	client := headerList(r.Header, headerWebSocketProtocol)
	protocol, ok := pick(client, server, fallback)
	if !ok {
		err := errUnsupported(client, server)
		err.ErrStatus.Code, err.ErrStatus.Reason = http.StatusBadRequest, apierrors.ReasonBadRequest
		WriteError(w, err)
		return nil, "", errAnswered
	}
	opts := &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled}
	if protocol != "" {
		opts.Subprotocols = []string{protocol}
	}
	c, err := websocket.Accept(w, r, opts)
	if err != nil {
		return nil, "", errAnswered // Accept answered the request
	}
	c.SetReadLimit(wsReadLimit)
	return c, protocol, nil
}

// wsChannel writes one channel of a WebSocket connection.
type wsChannel struct {
	ctx context.Context
	c   *websocket.Conn
	id  byte
}

func (ch *wsChannel) Write(p []byte) (int, error) {
	msg := make([]byte, len(p)+1)
	msg[0] = ch.id
	copy(msg[1:], p)
	if err := ch.c.Write(ch.ctx, websocket.MessageBinary, msg); err != nil {
		return 0, fmt.Errorf("write channel %d: %w", ch.id, err)
	}
	return len(p), nil
}

// wsSession accepts a remote command WebSocket and demultiplexes its input.
func wsSession(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, r *http.Request, o Options) (*session, error) {
	c, protocol, err := acceptWebSocket(w, r, wsExecProtocols, ProtocolV1)
	if err != nil {
		return nil, err
	}
	sess := &session{protocol: protocol}
	sess.streams.TTY = o.TTY
	var stdinR *io.PipeReader
	var stdinW *io.PipeWriter
	if o.Stdin {
		stdinR, stdinW = io.Pipe()
		sess.streams.Stdin = stdinR
	}
	if o.Stdout {
		sess.streams.Stdout = &wsChannel{ctx: ctx, c: c, id: chanStdout}
	}
	if o.Stderr {
		sess.streams.Stderr = &wsChannel{ctx: ctx, c: c, id: chanStderr}
	}
	var resizeW *io.PipeWriter
	if o.TTY {
		var resizeR *io.PipeReader
		resizeR, resizeW = io.Pipe()
		ch := make(chan cri.TermSize, 1)
		go decodeResizes(resizeR, ch)
		sess.streams.Resize = ch
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer cancel() // the client went away (or closed normally)
		defer func() {
			if stdinW != nil {
				stdinW.Close()
			}
			if resizeW != nil {
				resizeW.Close()
			}
		}()
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			if len(msg) == 0 {
				continue
			}
			switch msg[0] {
			case chanStdin:
				if stdinW != nil {
					if _, err := stdinW.Write(msg[1:]); err != nil {
						stdinW = nil // the command stopped reading
					}
				}
			case chanResize:
				if resizeW != nil {
					_, _ = resizeW.Write(msg[1:])
				}
			case chanClose:
				if protocol == ProtocolV5 && len(msg) > 1 && msg[1] == chanStdin && stdinW != nil {
					stdinW.Close()
					stdinW = nil
				}
			}
		}
	}()
	errCh := &wsChannel{ctx: ctx, c: c, id: chanError}
	sess.result = func(st api.Status) error {
		if b := encodeResult(protocol, st); len(b) > 0 {
			_, err := errCh.Write(b)
			return err
		}
		return nil
	}
	sess.close = func() {
		if stdinR != nil {
			stdinR.Close() // unblocks a pending stdin write of the reader
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
		select {
		case <-readDone:
		case <-time.After(time.Second):
			_ = c.CloseNow()
		}
	}
	return sess, nil
}
