package webhook

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/patch"
	"github.com/converge-dev/converge/operators"
)

func TestCreateJSONPatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, from, to, want string
	}{
		{"equal", `{"a":1,"b":[1,2]}`, `{"a":1,"b":[1,2]}`, `null`},
		{"add nested", `{"spec":{}}`, `{"spec":{"color":"blue"}}`, `[{"op":"add","path":"/spec/color","value":"blue"}]`},
		{"replace and remove", `{"a":1,"b":2}`, `{"a":3}`, `[{"op":"remove","path":"/b"},{"op":"replace","path":"/a","value":3}]`},
		{"array element", `{"l":[1,{"x":1}]}`, `{"l":[1,{"x":2}]}`, `[{"op":"replace","path":"/l/1/x","value":2}]`},
		{"array length", `{"l":[1]}`, `{"l":[1,2]}`, `[{"op":"replace","path":"/l","value":[1,2]}]`},
		{"escaped keys", `{"m":{}}`, `{"m":{"a/b~c":null}}`, `[{"op":"add","path":"/m/a~1b~0c","value":null}]`},
		{"type change", `{"a":{"b":1}}`, `{"a":"x"}`, `[{"op":"replace","path":"/a","value":"x"}]`},
	}
	for _, tt := range tests {
		ops, err := CreateJSONPatch([]byte(tt.from), []byte(tt.to))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, _ := json.Marshal(ops)
		if string(got) != tt.want {
			t.Errorf("%s: patch %s, want %s", tt.name, got, tt.want)
		}
		if len(ops) == 0 {
			continue
		}
		applied, err := patch.JSONPatch([]byte(tt.from), got)
		if err != nil {
			t.Fatalf("%s: apply: %v", tt.name, err)
		}
		var a, b any
		_ = json.Unmarshal(applied, &a)
		_ = json.Unmarshal([]byte(tt.to), &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: applying the patch gives %s, want %s", tt.name, applied, tt.to)
		}
	}
}

func TestConverter(t *testing.T) {
	t.Parallel()
	rename := func(from, to string) ConvertFunc {
		return func(obj map[string]any) error {
			spec, _ := obj["spec"].(map[string]any)
			if v, ok := spec[from]; ok {
				spec[to] = v
				delete(spec, from)
			}
			return nil
		}
	}
	hub := &Converter{
		Hub:     "v2",
		ToHub:   map[string]ConvertFunc{"v1": rename("size", "replicas")},
		FromHub: map[string]ConvertFunc{"v1": rename("replicas", "size")},
	}
	pairs := &Converter{Pairs: map[VersionPair]ConvertFunc{
		{From: "v1", To: "v2"}: rename("size", "replicas"),
		{From: "v2", To: "v1"}: rename("replicas", "size"),
	}}
	tests := []struct {
		name    string
		c       *Converter
		in, to  string
		want    string
		wantErr string
	}{
		{"hub up", hub, `{"apiVersion":"example.com/v1","spec":{"size":3}}`, "example.com/v2", `{"apiVersion":"example.com/v2","spec":{"replicas":3}}`, ""},
		{"hub down", hub, `{"apiVersion":"example.com/v2","spec":{"replicas":3}}`, "example.com/v1", `{"apiVersion":"example.com/v1","spec":{"size":3}}`, ""},
		{"spoke without function", hub, `{"apiVersion":"example.com/v1","spec":{"size":3}}`, "example.com/v3", `{"apiVersion":"example.com/v3","spec":{"replicas":3}}`, ""},
		{"pairs", pairs, `{"apiVersion":"example.com/v2","spec":{"replicas":1}}`, "example.com/v1", `{"apiVersion":"example.com/v1","spec":{"size":1}}`, ""},
		{"same version", pairs, `{"apiVersion":"example.com/v1","spec":{"size":1}}`, "example.com/v1", `{"apiVersion":"example.com/v1","spec":{"size":1}}`, ""},
		{"other group", pairs, `{"apiVersion":"example.com/v1"}`, "other.com/v2", "", "the groups differ"},
	}
	for _, tt := range tests {
		var obj map[string]any
		if err := json.Unmarshal([]byte(tt.in), &obj); err != nil {
			t.Fatal(err)
		}
		err := tt.c.Convert(obj, tt.to)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, _ := json.Marshal(obj)
		if string(got) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestTypedConversion(t *testing.T) {
	t.Parallel()
	type v1 struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Size int `json:"size"`
		} `json:"spec"`
	}
	type v2 struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Replicas int `json:"replicas"`
		} `json:"spec"`
	}
	f := Typed(func(from *v1, to *v2) error {
		to.APIVersion = from.APIVersion
		to.Spec.Replicas = from.Spec.Size
		return nil
	})
	obj := map[string]any{"apiVersion": "example.com/v1", "spec": map[string]any{"size": 4}}
	if err := f(obj); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(obj)
	if string(got) != `{"apiVersion":"example.com/v1","spec":{"replicas":4}}` {
		t.Errorf("got %s", got)
	}
}

func TestContains(t *testing.T) {
	t.Parallel()
	tests := []struct {
		have, want string
		ok         bool
	}{
		{`{"a":1,"b":{"c":2,"d":3}}`, `{"b":{"c":2}}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"l":[{"x":1,"y":2}]}`, `{"l":[{"x":1}]}`, true},
		{`{"l":[{"x":1},{"x":2}]}`, `{"l":[{"x":1}]}`, false},
		{`{}`, `{"a":null}`, false},
	}
	for _, tt := range tests {
		var have, want any
		_ = json.Unmarshal([]byte(tt.have), &have)
		_ = json.Unmarshal([]byte(tt.want), &want)
		if got := contains(have, want); got != tt.ok {
			t.Errorf("contains(%s, %s) = %v, want %v", tt.have, tt.want, got, tt.ok)
		}
	}
}

func TestCheckHooks(t *testing.T) {
	t.Parallel()
	h := ServeAdmission(AdmissionFunc(nil))
	rule := Rule("example.com", "v1", "widgets")
	tests := []struct {
		name    string
		hooks   []operators.Webhook
		wantErr string
	}{
		{"ok", []operators.Webhook{
			{Type: operators.Validating, Path: "/validate", Handler: h, Rules: []operators.WebhookRule{rule}},
			{Type: operators.Conversion, Path: "/convert", Handler: h, CRD: "widgets.example.com"},
		}, ""},
		{"no rules", []operators.Webhook{{Type: operators.Mutating, Path: "/m", Handler: h}}, "at least one rule"},
		{"relative path", []operators.Webhook{{Type: operators.Conversion, Path: "convert", Handler: h, CRD: "x.example.com"}}, "must start with /"},
		{"same path", []operators.Webhook{
			{Type: operators.Conversion, Path: "/c", Handler: h, CRD: "x.example.com"},
			{Type: operators.Conversion, Path: "/c", Handler: h, CRD: "y.example.com"},
		}, "used twice"},
		{"no crd", []operators.Webhook{{Type: operators.Conversion, Path: "/c", Handler: h}}, "need the CRD name"},
		{"no handler", []operators.Webhook{{Type: operators.Conversion, Path: "/c", CRD: "x.example.com"}}, "no handler"},
		{"bad name", []operators.Webhook{{Type: operators.Validating, Path: "/v", Handler: h, Rules: []operators.WebhookRule{rule}, Name: "short"}}, "three DNS labels"},
		{"unknown type", []operators.Webhook{{Type: "Other", Path: "/v", Handler: h}}, "unknown type"},
	}
	for _, tt := range tests {
		err := checkHooks("widgets", tt.hooks)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
		}
	}
	if got := hookName("widgets", operators.Webhook{Path: "/validate-widgets"}); got != "validate-widgets.widgets.operators.converge.dev" {
		t.Errorf("hookName = %q", got)
	}
}

func TestSelfSignedCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := SelfSignedCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	again, err := SelfSignedCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca.CAPEM(), again.CAPEM()) {
		t.Fatal("a second SelfSignedCA on the same directory created another CA")
	}
	if fi, err := os.Stat(filepath.Join(dir, CAKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("CA key: %v, %v", fi, err)
	}
	certPEM, keyPEM, err := again.IssueServingCert([]string{"127.0.0.1", "localhost", "op.example.com"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CAPEM())
	for _, h := range []string{"127.0.0.1", "localhost", "op.example.com"} {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: h}); err != nil {
			t.Errorf("verify %s: %v", h, err)
		}
	}
	if d := time.Until(pair.Leaf.NotAfter); d > 2*time.Minute {
		t.Errorf("certificate valid for %v, want about a minute", d)
	}
}
