package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// webSlice is an EndpointSlice as the endpointslice controller writes it; its
// second port has neither name nor protocol, which defaulting fills in.
const webSlice = `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"web-7xk2p","namespace":"default","generateName":"web-",
	"labels":{"kubernetes.io/service-name":"web","endpointslice.kubernetes.io/managed-by":"endpointslice-controller.k8s.io"},
	"ownerReferences":[{"apiVersion":"v1","kind":"Service","name":"web","uid":"8d2e","controller":true,"blockOwnerDeletion":true}]},
	"addressType":"IPv4",
	"endpoints":[{"addresses":["10.244.0.5"],"conditions":{"ready":true,"serving":true,"terminating":false},"nodeName":"n1","zone":"a",
	    "targetRef":{"kind":"Pod","namespace":"default","name":"web-0","uid":"11aa"},"hints":{"forZones":[{"name":"a"}]}},
	  {"addresses":["10.244.1.7"],"conditions":{"ready":false,"serving":true,"terminating":true},"nodeName":"n2","hostname":"web-1"}],
	"ports":[{"name":"http","protocol":"TCP","port":80,"appProtocol":"http"},{"port":9090}]}`

func sliceResource(t *testing.T) *registry.Resource {
	t.Helper()
	rs := Resources()
	if len(rs) != 1 || rs[0].Resource != "endpointslices" {
		t.Fatalf("resources %v", rs)
	}
	return rs[0]
}

func TestEndpointSliceRoundTrip(t *testing.T) {
	t.Parallel()
	in, err := api.DecodeMap([]byte(webSlice))
	if err != nil {
		t.Fatal(err)
	}
	r := sliceResource(t)
	out, unknown, errs := r.Strategy.Canonicalize(api.DeepCopyJSON(in))
	if len(unknown) > 0 || len(errs) > 0 {
		t.Fatalf("unknown %v, errs %v", unknown, errs)
	}
	// The changes are the defaulted second port and, as in Kubernetes, a null
	// creationTimestamp until the server sets it.
	want := api.DeepCopyJSON(in)
	want["ports"].([]any)[1] = map[string]any{"name": "", "protocol": "TCP", "port": int64(9090)}
	want["metadata"].(map[string]any)["creationTimestamp"] = nil
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("canonical form (-want +got):\n%s", diff)
	}
	if errs := r.Strategy.ValidateCreate(t.Context(), out); len(errs) > 0 {
		t.Errorf("ValidateCreate: %v", errs.ToError())
	}
}

func TestValidateEndpointSlice(t *testing.T) {
	t.Parallel()
	s := &EndpointSlice{AddressType: AddressTypeIPv4,
		Endpoints: []Endpoint{{Addresses: []string{"10.0.0.1", "fd00::1"}, Hostname: api.Ptr("web.0")}}}
	want := "[endpoints[0].addresses[1]: Invalid value: \"fd00::1\": must be a valid IPv4 address, " +
		"endpoints[0].hostname: Invalid value: \"web.0\": must not contain dots]"
	if got := ValidateEndpointSlice(s).ToError(); got == nil || got.Error() != want {
		t.Errorf("got %v\nwant %s", got, want)
	}
}

func TestEndpointSlicePrinter(t *testing.T) {
	t.Parallel()
	r := sliceResource(t)
	in, err := api.DecodeMap([]byte(webSlice))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	api.SetNestedField(in, "2023-12-31T23:50:00Z", "metadata", "creationTimestamp")
	row, err := r.Printer.Row(in, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"web-7xk2p", "IPv4", "80,9090", "10.244.0.5,10.244.1.7", "10m"}, row); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	many := &EndpointSlice{ObjectMeta: api.ObjectMeta{Name: "m"}, AddressType: AddressTypeIPv4,
		Endpoints: []Endpoint{{Addresses: []string{"1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4", "1.1.1.5"}}}}
	obj, err := registry.ToMap(many)
	if err != nil {
		t.Fatal(err)
	}
	row, err = r.Printer.Row(obj, now)
	if err != nil {
		t.Fatal(err)
	}
	if row[2] != "<unset>" || row[3] != "1.1.1.1,1.1.1.2,1.1.1.3 + 2 more..." {
		t.Errorf("ports %q, endpoints %q", row[2], row[3])
	}
}
