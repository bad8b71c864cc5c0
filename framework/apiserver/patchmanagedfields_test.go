package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/patch"
)

// TestApplyPatchManagedFields: applyPatch, which leaves managedFields out of
// the document it patches when a merge patch does not name them, gives
// what patching the whole object gives, for patches that keep, replace,
// remove or name managedFields, drop metadata, or use strategic directives.
func TestApplyPatchManagedFields(t *testing.T) {
	cur := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "labels": map[string]any{"a": "1"},
			"managedFields": []any{map[string]any{"manager": "m", "operation": "Update", "apiVersion": "v1",
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:k": map[string]any{}}}}}},
		"data": map[string]any{"k": "v"}}
	res := &registry.Resource{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap",
		Type: reflect.TypeFor[benchConfigMap]()}
	for _, tc := range []struct{ media, body string }{
		{mediaMergePatch, `{"data":{"k":"w"}}`},
		{mediaMergePatch, `{"metadata":{"labels":{"b":"2"}}}`},
		{mediaMergePatch, `{"metadata":{"managedFields":null}}`},
		{mediaMergePatch, `{"metadata":{"managedFields":[]}}`},
		{mediaMergePatch, `{"metadata":{"managed\u0046ields":null}}`},
		{mediaMergePatch, `{"metadata":null}`},
		{mediaMergePatch, `{"metadata":"x"}`},
		{mediaMergePatch, `{"metadata":{"labels":null},"data":{"$k":"1"}}`},
		{mediaStrategicPatch, `{"data":{"k":"w"}}`},
		{mediaStrategicPatch, `{"metadata":{"$patch":"replace","name":"cm"}}`},
		{mediaStrategicPatch, `{"metadata":{"$retainKeys":["name"],"name":"cm"}}`},
		{mediaJSONPatch, `[{"op":"remove","path":"/metadata/managedFields"}]`},
		{mediaJSONPatch, `[{"op":"copy","from":"/metadata","path":"/data/m"}]`},
	} {
		doc, err := json.Marshal(cur)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		switch tc.media {
		case mediaMergePatch:
			want, err = patch.MergePatch(doc, []byte(tc.body))
		case mediaStrategicPatch:
			want, err = patch.StrategicMergePatch(doc, []byte(tc.body), res.Type)
		case mediaJSONPatch:
			want, err = patch.JSONPatch(doc, []byte(tc.body))
		}
		r := httptest.NewRequest(http.MethodPatch, "/api/v1/namespaces/default/configmaps/cm", nil)
		r.Header.Set("Content-Type", tc.media)
		got, gotErr := applyPatch(&request{r: r, res: res}, api.DeepCopyJSON(cur), []byte(tc.body))
		if (err == nil) != (gotErr == nil) {
			t.Errorf("%s %s: error %v, want %v", tc.media, tc.body, gotErr, err)
			continue
		}
		if err != nil {
			continue
		}
		wantObj, err := api.DecodeMap(want)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantObj) {
			t.Errorf("%s %s:\ngot  %v\nwant %v", tc.media, tc.body, got, wantObj)
		}
	}
}
