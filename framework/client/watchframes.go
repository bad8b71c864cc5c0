package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/converge-dev/converge/framework/api"
)

// frameReader reads the events of a JSON watch stream. Servers write one
// event per line (`{"type":"ADDED","object":{…}}` and a newline, as
// kube-apiserver and Converge do): a line in that shape is split without
// scanning the object, which the decoder of the object scans anyway (a
// json.Decoder scanned every object twice, ≈5 % of a server's CPU per
// create in `converge up`, whose controllers watch everything). Other lines
// are parsed as JSON, and a stream that is not one event per line is read
// by a json.Decoder from there on.
type frameReader struct {
	br  *bufio.Reader
	dec *json.Decoder // set once the stream is not one event per line
}

// frameBuffer is the read buffer of a watch stream, held for the stream's
// lifetime: `converge up`'s controllers hold one watch per resource (≈140),
// mostly idle, and 64 KiB each was 8.5 MB live. Most events fit in 4 KiB; a
// longer line is read in pieces and joined (bufio.Reader.ReadBytes).
const frameBuffer = 4 << 10

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, frameBuffer)}
}

// frame is one event as read: split is true when the object was cut out of
// the line without parsing it, in which case line holds the line for reread
// when the object does not decode.
type frame struct {
	raw   api.WatchEvent
	split bool
	line  []byte
}

const (
	framePrefix = `{"type":"`
	frameObject = `","object":`
)

// next returns the next event; io.EOF at the end of the stream.
func (r *frameReader) next() (frame, error) {
	if r.dec != nil {
		var raw api.WatchEvent
		err := r.dec.Decode(&raw)
		return frame{raw: raw}, err
	}
	for {
		line, err := r.br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return frame{}, err
			}
			continue // a blank line
		}
		if f, ok := split(line); ok {
			return f, nil
		}
		var raw api.WatchEvent
		if jerr := json.Unmarshal(line, &raw); jerr == nil {
			return frame{raw: raw}, nil
		}
		return r.decodeFrom(line)
	}
}

// reread returns the event of a split frame whose object did not decode,
// parsed as JSON from its line on (e.g. a field after the object, or two
// events on one line).
func (r *frameReader) reread(f frame) (frame, error) { return r.decodeFrom(f.line) }

// decodeFrom switches to reading the stream with a json.Decoder, from line
// on (the stream is not one event per line: pretty-printed, or events run
// together), and returns the first event.
func (r *frameReader) decodeFrom(line []byte) (frame, error) {
	r.dec = json.NewDecoder(io.MultiReader(bytes.NewReader(line), r.br))
	var raw api.WatchEvent
	err := r.dec.Decode(&raw)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the line held part of a value
	}
	return frame{raw: raw}, err
}

// split cuts a line `{"type":"T","object":OBJ}` (with optional trailing
// whitespace) into T and OBJ without looking into OBJ.
func split(line []byte) (frame, bool) {
	l := bytes.TrimRight(line, " \t\r\n")
	rest, ok := bytes.CutPrefix(l, []byte(framePrefix))
	if !ok {
		return frame{}, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return frame{}, false
	}
	typ := rest[:i]
	obj, ok := bytes.CutPrefix(rest[i:], []byte(frameObject))
	if !ok || len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return frame{}, false
	}
	obj = obj[:len(obj)-1]
	return frame{raw: api.WatchEvent{Type: string(typ), Object: api.RawExtension{Raw: obj}}, split: true, line: l}, true
}
