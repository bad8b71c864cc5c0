package stream

import (
	"context"
	"net"

	"github.com/coder/websocket"
)

// websocketNetConn carries a byte stream in the binary messages of c (a
// SPDY session tunnelled through a WebSocket).
func websocketNetConn(ctx context.Context, c *websocket.Conn) net.Conn {
	return websocket.NetConn(ctx, c, websocket.MessageBinary)
}
