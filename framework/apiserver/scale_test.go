package apiserver

import (
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// TestDecodeScale decodes scale bodies: testdata/scale.pb is an
// autoscaling/v1 Scale as Kubernetes' generated code encodes it (written by
// bench/compat's TestProtobufFixtures) and testdata/scale.json the same
// object as Kubernetes renders it in JSON.
func TestDecodeScale(t *testing.T) {
	t.Parallel()
	pb, err := os.ReadFile("testdata/scale.pb")
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile("testdata/scale.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := api.DecodeMap(js)
	if err != nil {
		t.Fatal(err)
	}
	// The decoder renders the zero creationTimestamp as null, as api.ObjectMeta
	// does (Kubernetes' JSON leaves it out since 1.33): the same object.
	fromProto := api.DeepCopyJSON(want)
	api.SetNestedField(fromProto, nil, "metadata", "creationTimestamp")
	withoutTypeMeta := api.DeepCopyJSON(fromProto)
	withoutTypeMeta["apiVersion"], withoutTypeMeta["kind"] = "", ""
	env, err := protobuf.Unwrap(pb)
	if err != nil {
		t.Fatal(err)
	}
	noTypeMeta := protowire.AppendBytes(protowire.AppendTag([]byte("k8s\x00"), 2, protowire.BytesType), env.Raw)
	tests := []struct {
		name  string
		media string
		body  []byte
		want  map[string]any
		code  int32
	}{
		{name: "protobuf", media: mediaProtobuf, body: pb, want: fromProto},
		{name: "json", media: mediaJSON, body: js, want: want},
		{name: "yaml", media: mediaYAML, body: []byte("apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: web}\nspec: {replicas: 5}\n"),
			want: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": int64(5)}}},
		{name: "protobuf without type meta", media: mediaProtobuf, body: noTypeMeta, want: withoutTypeMeta},
		{name: "protobuf garbage", media: mediaProtobuf, body: []byte("k8s\x00\x12\x05\x0a\xff\xff"), code: http.StatusBadRequest},
		{name: "protobuf truncated", media: mediaProtobuf, body: pb[:len(pb)-3], code: http.StatusBadRequest},
		{name: "protobuf without prefix", media: mediaProtobuf, body: pb[4:], code: http.StatusBadRequest},
		{name: "protobuf empty", media: mediaProtobuf, body: nil, code: http.StatusBadRequest},
		{name: "replicas as bytes", media: mediaProtobuf, body: []byte("k8s\x00\x12\x04\x12\x02\x0a\x00"), code: http.StatusBadRequest},
		{name: "cbor", media: "application/cbor", body: []byte{0xa0}, code: http.StatusUnsupportedMediaType},
	}
	s := &Server{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.decodeScale(tc.body, tc.media)
			if tc.code != 0 {
				var se *apierrors.StatusError
				if !errors.As(err, &se) || se.Status().Code != tc.code {
					t.Fatalf("got %v (%T), want a Status with code %d", err, err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
