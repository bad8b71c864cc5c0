package crd

import (
	"strings"
	"testing"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
)

func TestCheckConversionResponse(t *testing.T) {
	t.Parallel()
	in := func() map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "uid": "u1", "labels": map[string]any{"a": "1"}}, "spec": map[string]any{"size": 1}}
	}
	ok := func(out map[string]any) *ConversionReview {
		return &ConversionReview{APIVersion: ConversionReviewAPIVersion, Kind: "ConversionReview",
			Response: &ConversionResponse{UID: "x", ConvertedObjects: []map[string]any{out}, Result: api.Status{Status: api.StatusSuccess}}}
	}
	converted := func() map[string]any {
		return map[string]any{"apiVersion": "example.com/v2", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "generation": 9, "labels": map[string]any{"b": "2"}}, "spec": map[string]any{"replicas": 1}}
	}
	withMeta := func(field, value string) *ConversionReview {
		o := converted()
		api.SetNestedField(o, value, "metadata", field)
		return ok(o)
	}
	tests := []struct {
		name    string
		review  *ConversionReview
		wantErr string
	}{
		{"ok", ok(converted()), ""},
		{"wrong kind of review", &ConversionReview{APIVersion: "v1", Kind: "Status"}, "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview"},
		{"no response", &ConversionReview{APIVersion: ConversionReviewAPIVersion, Kind: "ConversionReview"}, "no response provided"},
		{"uid", func() *ConversionReview { r := ok(converted()); r.Response.UID = "y"; return r }(), `expected response.uid="x", got "y"`},
		{"failure", func() *ConversionReview {
			r := ok(converted())
			r.Response.Result = api.Status{Status: api.StatusFailure, Message: "size too large"}
			return r
		}(), "size too large"},
		{"count", func() *ConversionReview { r := ok(converted()); r.Response.ConvertedObjects = nil; return r }(), "expected 1 converted objects, got 0"},
		{"apiVersion", func() *ConversionReview { o := converted(); o["apiVersion"] = "example.com/v1"; return ok(o) }(), `invalid apiVersion "example.com/v1"`},
		{"kind", func() *ConversionReview { o := converted(); o["kind"] = "Gadget"; return ok(o) }(), `invalid kind "Gadget"`},
		{"name", withMeta("name", "other"),
			`invalid converted object at index 0: invalid metadata.name "other", expected "w": it must not change`},
		{"metadata.uid", withMeta("uid", "u2"),
			`invalid metadata.uid "u2", expected "u1"`},
		{"namespace", withMeta("namespace", "ns"),
			`invalid metadata.namespace "ns", expected ""`},
		{"metadata left out is restored", func() *ConversionReview { o := converted(); delete(o, "metadata"); return ok(o) }(), ""},
	}
	for _, tt := range tests {
		outs, err := checkResponse(tt.review, "x", []map[string]any{in()}, "example.com/v2")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		out := outs[0]
		// Metadata is the original except labels and annotations.
		if n, u := api.NestedString(out, "metadata", "name"), api.NestedString(out, "metadata", "uid"); n != "w" || u != "u1" {
			t.Errorf("%s: name %q, uid %q, want the original", tt.name, n, u)
		}
		if _, ok := api.NestedMap(out, "metadata")["generation"]; ok {
			t.Errorf("%s: metadata %v, want the original", tt.name, out["metadata"])
		}
		if tt.name == "ok" {
			if l := api.NestedStringMap(out, "metadata", "labels"); l["b"] != "2" || l["a"] != "" {
				t.Errorf("%s: labels %v, want the webhook's", tt.name, l)
			}
		} else if l := api.NestedStringMap(out, "metadata", "labels"); l["a"] != "1" {
			t.Errorf("%s: labels %v, want the original", tt.name, l)
		}
	}
}

func TestConversionClientURL(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	port := int32(8443)
	tests := []struct {
		name    string
		cc      crdapi.WebhookClientConfig
		want    string
		wantErr string
	}{
		{"url", crdapi.WebhookClientConfig{URL: str("https://127.0.0.1:9443/convert")}, "https://127.0.0.1:9443/convert", ""},
		{"http refused", crdapi.WebhookClientConfig{URL: str("http://127.0.0.1/convert")}, "", "only https"},
		{"service", crdapi.WebhookClientConfig{Service: &crdapi.ServiceReference{Namespace: "ns", Name: "svc", Path: str("/c"), Port: &port}}, "https://svc.ns.svc:8443/c", ""},
		{"service default port", crdapi.WebhookClientConfig{Service: &crdapi.ServiceReference{Namespace: "ns", Name: "svc"}}, "https://svc.ns.svc:443", ""},
		{"nothing", crdapi.WebhookClientConfig{}, "", "needs a url or a service"},
	}
	for _, tt := range tests {
		got, err := clientURL(&tt.cc)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestWebhookConverterConfigErrors(t *testing.T) {
	t.Parallel()
	c := &crdapi.CustomResourceDefinition{}
	c.Spec.Group, c.Spec.Names.Kind = "example.com", "Widget"
	c.Spec.Conversion = &crdapi.CustomResourceConversion{Strategy: "Webhook", Webhook: &crdapi.WebhookConversion{
		ClientConfig: &crdapi.WebhookClientConfig{CABundle: []byte("not pem")}, ConversionReviewVersions: []string{"v1"},
	}}
	u := "https://127.0.0.1:1/convert"
	c.Spec.Conversion.Webhook.ClientConfig.URL = &u
	_, err := converter(c)(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}, api.GroupVersion{Group: "example.com", Version: "v2"})
	want := "conversion webhook for example.com/v1, Kind=Widget failed: caBundle holds no PEM certificate"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	c.Spec.Conversion.Webhook.ConversionReviewVersions = []string{"v1beta1"}
	if _, err := converter(c)(map[string]any{"apiVersion": "example.com/v1"}, api.GroupVersion{Group: "example.com", Version: "v2"}); err == nil ||
		!strings.Contains(err.Error(), "Converge speaks v1") {
		t.Errorf("v1beta1 only: error %v", err)
	}
}
