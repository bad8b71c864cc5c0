// Package h2serve is an HTTP/2 server connection handler for net/http's
// TLSNextProto hook: net/http accepts connections, does the TLS handshake and
// serves HTTP/1.1; a connection that negotiated "h2" by ALPN is handed to
// Server.ServeConn (Server.Attach installs it).
//
// It exists because Go's HTTP/2 server moves every request across several
// goroutines (frame reader → serve loop → a new handler goroutine → serve loop
// for each write → a frame-writing goroutine), and those handoffs, channel
// operations and the fresh handler stacks cost as much CPU per small request
// as the rest of the TLS path. The concurrency model here has fewer parts:
//
//   - One reader goroutine per connection (the one net/http calls ServeConn
//     on) reads and parses frames and handles control frames inline:
//     SETTINGS, PING, WINDOW_UPDATE, RST_STREAM, GOAWAY, PRIORITY. It appends
//     request body bytes to their stream's buffer and wakes a reading handler.
//   - A HEADERS frame that opens a stream hands the request to a worker
//     goroutine from the Server's pool; workers are kept between requests with
//     the stack the handler chain grew, and a new one is started when none is
//     idle. Handlers whose streams were reset count until they return: at most
//     MaxConcurrentStreams run per connection, a bounded number of further
//     streams wait, and beyond that the connection is closed with
//     ENHANCE_YOUR_CALM (rapid reset, CVE-2023-44487).
//   - There is no writer goroutine. Whoever has frames to send (a handler, or
//     the reader for control frames) encodes them under the connection's mutex
//     into its pending buffer (HPACK state is per connection, so encoding is
//     in order); if nobody is writing, it becomes the writer and writes the
//     buffer to the connection, again while more was appended meanwhile. Under
//     load that batches frames of many streams into one TLS write with no
//     timer and no added latency when idle. Handlers wait while the buffer is
//     above a high-water mark; control frames past a hard limit close the
//     connection (a peer that sends but does not read).
//
// Lock order: conn.mu is the only lock of a connection; the reader takes
// workerPool.mu while holding it (to hand a stream to a worker), never the
// reverse. Stream and connection state, flow-control windows, the HPACK
// encoder and the pending buffer are all under conn.mu.
//
// Not supported: server push, HTTP/2 upgrades from cleartext (h2c), extended
// CONNECT, response trailers, Hijack (as in Go's HTTP/2 server).
package h2serve
