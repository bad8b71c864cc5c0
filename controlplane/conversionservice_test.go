package controlplane_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/review"
	"github.com/converge-dev/converge/framework/client/rest"
)

// TestConversionWebhookThroughService: a CRD whose conversion webhook is
// named by a Service reference has its objects converted by that webhook,
// reached through the Service's endpoint (the CRD lifecycle's resources dial
// through the control plane's resolver).
func TestConversionWebhookThroughService(t *testing.T) {
	ctx := t.Context()
	c := startWithClient(t, "conversion-service-test")
	var converted atomic.Int32
	// v1 spec.size is v2 spec.count.
	port, ca := serveHook(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in review.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var out []map[string]any
		for _, o := range in.Request.Objects {
			spec, _ := o["spec"].(map[string]any)
			if in.Request.DesiredAPIVersion == "example.com/v2" {
				spec["count"] = spec["size"]
				delete(spec, "size")
			} else {
				spec["size"] = spec["count"]
				delete(spec, "count")
			}
			o["apiVersion"] = in.Request.DesiredAPIVersion
			out = append(out, o)
			converted.Add(1)
		}
		_ = json.NewEncoder(w).Encode(review.ConversionReview{APIVersion: in.APIVersion, Kind: in.Kind,
			Response: &review.ConversionResponse{UID: in.Request.UID, ConvertedObjects: out, Result: api.Status{Status: api.StatusSuccess}}})
	}))
	hookService(t, c, port)
	schema := `{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}`
	crd := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
	"versions":[{"name":"v1","served":true,"storage":true,"schema":%s},{"name":"v2","served":true,"storage":false,"schema":%s}],
	"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],
	"clientConfig":{"service":{"namespace":"default","name":"hook","path":"/convert","port":443},"caBundle":%q}}}}}`, schema, schema, ca)
	if _, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: []byte(crd)}); err != nil {
		t.Fatal(err)
	}
	// Written in v2 (converted to the storage version v1), read in v1 and v2.
	w := `{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"w"},"spec":{"count":3}}`
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/apis/example.com/v2/namespaces/default/widgets", Body: []byte(w)})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create widget in v2: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for version, want := range map[string]string{"v1": `"size":3`, "v2": `"count":3`} {
		resp, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/apis/example.com/" + version + "/namespaces/default/widgets/w"})
		if err != nil || !strings.Contains(string(resp.Body), want) {
			t.Errorf("GET widget in %s: %v %s, want %s", version, err, body(resp), want)
		}
	}
	if converted.Load() < 2 {
		t.Errorf("the webhook converted %d objects, want the create and the v2 read", converted.Load())
	}
}

func body(r *rest.Response) string {
	if r == nil {
		return ""
	}
	return string(r.Body)
}
