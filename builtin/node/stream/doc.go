// Package stream serves the node agent's streaming endpoints, the kubelet's
// /exec, /attach and /portforward, in the two protocols Kubernetes clients
// speak. It owns the wire protocols only: what runs is a function the agent
// passes (RunFunc, DialFunc).
//
// Remote commands (exec and attach):
//   - SPDY/3.1 (POST or GET with "Upgrade: SPDY/3.1", kubectl 1.27–1.29 and
//     client-go's SPDY executor): the protocol is the first of the client's
//     X-Stream-Protocol-Version values among v4.channel.k8s.io,
//     v3.channel.k8s.io, v2.channel.k8s.io and channel.k8s.io. The client
//     opens one stream per standard stream, named by its "streamType" header
//     (error, stdin, stdout, stderr, resize); they must all arrive within
//     StreamCreationTimeout.
//   - WebSocket (GET, kubectl 1.30+ and client-go's WebSocket executor):
//     subprotocols v5.channel.k8s.io, v4.channel.k8s.io and channel.k8s.io.
//     Every binary message starts with its channel: 0 stdin, 1 stdout,
//     2 stderr, 3 error, 4 resize; with v5 the message {255, 0} closes stdin.
//
// SPDY connections close after Config.IdleTimeout without a frame (4h by
// default, as the kubelet).
//
// Resize messages are JSON {"Width":W,"Height":H}. The error stream (channel)
// carries the result once: with v4 and v5 a Status (Success, or Failure with
// reason NonZeroExitCode and a cause ExitCode holding the code, or another
// failure with its message), with older versions the error text. Then every
// stream is closed and the connection torn down. When the client goes away the
// command's context ends.
//
// Port forwarding: SPDY/3.1 with protocol portforward.k8s.io, or a WebSocket
// with subprotocol SPDY/3.1+portforward.k8s.io that carries the same SPDY
// session (kubectl 1.30+). Each forwarded connection is a pair of streams, an
// error and a data stream, with the same "requestID" header and the "port"
// header. A dial failure is written as text to the error stream; data flows
// both ways until both sides finished (a half-close is passed on).
//
// Protocol negotiation failures are answered before any upgrade as HTTP
// errors carrying a Status (403 for SPDY, as the kubelet; 400 for WebSocket).
package stream
