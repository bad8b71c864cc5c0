package podstream_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/converge-dev/converge/builtin/podstream"
)

// TestConnectOptions: the options object of each streaming subresource, as
// CONNECT admission (webhooks) receives it, read from the query.
func TestConnectOptions(t *testing.T) {
	noNode := func(context.Context, string) (string, int, error) { return "", 0, errors.New("no node") }
	for _, tt := range []struct {
		kind  podstream.Kind
		query string
		want  map[string]any
		code  int
	}{
		{podstream.Attach, "stdin=true&stdout=1&stderr=false&container=container1",
			map[string]any{"apiVersion": "v1", "kind": "PodAttachOptions", "stdin": true, "stdout": true, "container": "container1"}, 0},
		{podstream.Exec, "command=sh&command=-c&command=true&tty=1",
			map[string]any{"apiVersion": "v1", "kind": "PodExecOptions", "tty": true, "command": []any{"sh", "-c", "true"}}, 0},
		{podstream.PortForward, "ports=80,8080&ports=9090",
			map[string]any{"apiVersion": "v1", "kind": "PodPortForwardOptions", "ports": []any{int64(80), int64(8080), int64(9090)}}, 0},
		{podstream.Attach, "stdin=maybe", nil, 400},
		{podstream.PortForward, "ports=http", nil, 400},
	} {
		s, err := podstream.New(tt.kind, podstream.Options{NodeAddress: noNode})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ConnectOptions(httptest.NewRequest("POST", "/x?"+tt.query, nil))
		if tt.code != 0 {
			if err == nil {
				t.Errorf("%s %q: no error, want %d", tt.kind, tt.query, tt.code)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %q: %v, %v; want %v", tt.kind, tt.query, got, err, tt.want)
		}
	}
}
