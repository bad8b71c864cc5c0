package protobuf_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// Namespace mirrors core/v1 Namespace: Kubernetes' field numbers are struct tags.
type Namespace struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec         struct {
		Finalizers []string `json:"finalizers,omitempty" protobuf:"bytes,1,rep,name=finalizers"`
	} `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

func ExampleDecoder_Decode() {
	// The body kubectl sends for `kubectl create namespace foo`.
	body, _ := hex.DecodeString("6b3873000a0f0a02763112094e616d657370616365121b0a130a03666f6f12001a0022002a003200380042001200" +
		"1a020a001a002200")

	var d protobuf.Decoder
	tm, obj, err := d.Decode(body, reflect.TypeFor[Namespace]())
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := json.Marshal(obj)
	fmt.Println(tm.APIVersion, tm.Kind)
	fmt.Println(string(out))
	// Output:
	// v1 Namespace
	// {"apiVersion":"v1","kind":"Namespace","metadata":{"creationTimestamp":null,"name":"foo"},"spec":{}}
}
