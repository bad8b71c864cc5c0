package client

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
)

// readEvents decodes a watch stream as streamWatcher.run does (a stream
// error ends it), into
// "TYPE name" or "ERROR message".
func readEvents(t *testing.T, stream string) []string {
	t.Helper()
	newObj := func() (api.Object, error) { return &api.Unstructured{}, nil }
	fr := newFrameReader(strings.NewReader(stream))
	var out []string
	for {
		f, err := fr.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			return append(out, "STREAM "+err.Error())
		}
		ev := decodeEvent(f, newObj)
		if f.split && ev.Type == Error {
			if f, err = fr.reread(f); err != nil {
				return append(out, "STREAM "+err.Error())
			}
			ev = decodeEvent(f, newObj)
		}
		if ev.Type == Error {
			out = append(out, "ERROR "+ev.Err.Error())
			continue
		}
		out = append(out, string(ev.Type)+" "+ev.Object.GetName()+" "+ev.Object.GetResourceVersion())
	}
}

func TestWatchFrames(t *testing.T) {
	cm := func(name, rv string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","resourceVersion":"` + rv + `"},"data":{"k":"a}b\n{"}}`
	}
	long := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"long","resourceVersion":"9"},"data":{"k":"` +
		strings.Repeat("x", 200<<10) + `"}}`
	for _, tc := range []struct {
		name, stream string
		want         []string
	}{
		{"one event per line", `{"type":"ADDED","object":` + cm("a", "1") + "}\n" + `{"type":"MODIFIED","object":` + cm("a", "2") + "}\n",
			[]string{"ADDED a 1", "MODIFIED a 2"}},
		{"CRLF, blank lines, no final newline", "\r\n" + `{"type":"ADDED","object":` + cm("a", "1") + "}\r\n\n" + `{"type":"DELETED","object":` + cm("a", "3") + "}",
			[]string{"ADDED a 1", "DELETED a 3"}},
		{"object before type", `{"object":` + cm("b", "4") + `,"type":"ADDED"}` + "\n", []string{"ADDED b 4"}},
		{"a field after the object", `{"type":"ADDED","object":` + cm("c", "5") + `,"extra":true}` + "\n", []string{"ADDED c 5"}},
		{"pretty-printed", "{\n  \"type\": \"ADDED\",\n  \"object\": " + cm("d", "6") + "\n}\n{\"type\":\"MODIFIED\",\n\"object\":" + cm("d", "7") + "}\n",
			[]string{"ADDED d 6", "MODIFIED d 7"}},
		{"events run together", `{"type":"ADDED","object":` + cm("e", "8") + `}{"type":"ADDED","object":` + cm("f", "9") + "}\n",
			[]string{"ADDED e 8", "ADDED f 9"}},
		{"a line longer than the buffer", `{"type":"ADDED","object":` + long + "}\n", []string{"ADDED long 9"}},
		{"bookmark", `{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"12"}}}` + "\n", []string{"BOOKMARK  12"}},
		{"error event", `{"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old","reason":"Expired","code":410}}` + "\n",
			[]string{"ERROR too old"}},
		{"cut in the middle", `{"type":"ADDED","object":` + cm("a", "1")[:40], []string{"STREAM unexpected EOF"}},
		{"not an object", `{"type":"ADDED","object":{"metadata":}}` + "\n", []string{"STREAM invalid character '}' looking for beginning of value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, readEvents(t, tc.stream)); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}
