package patch_test

import (
	"fmt"
	"reflect"

	"github.com/converge-dev/converge/framework/patch"
)

func ExampleCreateMergePatch() {
	original := []byte(`{"metadata":{"name":"cm","labels":{"a":"1","b":"2"}},"data":{"k":"v"}}`)
	modified := []byte(`{"metadata":{"name":"cm","labels":{"a":"1","c":"3"}},"data":{"k":"v"}}`)
	p, err := patch.CreateMergePatch(original, modified)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(p))
	// Output: {"metadata":{"labels":{"b":null,"c":"3"}}}
}

func ExampleJSONPatch() {
	doc := []byte(`{"metadata":{"labels":{"app.kubernetes.io/name":"web"}},"spec":{"args":["-v"]}}`)
	out, err := patch.JSONPatch(doc, []byte(`[
		{"op":"remove","path":"/metadata/labels/app.kubernetes.io~1name"},
		{"op":"add","path":"/spec/args/-","value":"-x"}]`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"metadata":{"labels":{}},"spec":{"args":["-v","-x"]}}
}

type container struct {
	Name  string `json:"name"`
	Image string `json:"image,omitempty"`
}

type podSpec struct {
	Containers []container `json:"containers" patchStrategy:"merge" patchMergeKey:"name"`
}

type pod struct {
	Spec podSpec `json:"spec"`
}

func ExampleSchema_StrategicMergePatch() {
	schema, err := patch.NewSchema(reflect.TypeFor[pod]())
	if err != nil {
		panic(err)
	}
	live := []byte(`{"spec":{"containers":[{"name":"app","image":"app:1"},{"name":"proxy","image":"envoy"}]}}`)
	out, err := schema.StrategicMergePatch(live, []byte(`{"spec":{"containers":[{"name":"app","image":"app:2"}]}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"spec":{"containers":[{"image":"app:2","name":"app"},{"image":"envoy","name":"proxy"}]}}
}
