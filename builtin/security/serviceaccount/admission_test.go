package serviceaccount

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

func podObject(t *testing.T, spec string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":`+spec+`}`), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestAdmission(t *testing.T) {
	accounts := map[string]string{
		"default":   `{"metadata":{"name":"default"}}`,
		"no-mount":  `{"metadata":{"name":"no-mount"},"automountServiceAccountToken":false}`,
		"pull":      `{"metadata":{"name":"pull"},"imagePullSecrets":[{"name":"regcred"}]}`,
		"no-mount2": `{"metadata":{"name":"no-mount2"},"automountServiceAccountToken":false}`,
	}
	mount := map[string]any{"name": "kube-api-access-abcde", "readOnly": true, "mountPath": MountPath}
	tests := []struct {
		name    string
		spec    string
		op      admission.Operation
		wantSA  string
		mounted []bool // per container, init containers first
		volume  bool
		pulls   []any
		wantErr string
	}{
		{name: "defaults the name and mounts everywhere", spec: `{"initContainers":[{"name":"i"}],"containers":[{"name":"a"},{"name":"b"}]}`,
			wantSA: "default", mounted: []bool{true, true, true}, volume: true},
		{name: "pod opts out", spec: `{"automountServiceAccountToken":false,"containers":[{"name":"a"}]}`,
			wantSA: "default", mounted: []bool{false}},
		{name: "service account opts out", spec: `{"serviceAccountName":"no-mount","containers":[{"name":"a"}]}`,
			wantSA: "no-mount", mounted: []bool{false}},
		{name: "pod overrides the service account", spec: `{"serviceAccountName":"no-mount2","automountServiceAccountToken":true,"containers":[{"name":"a"}]}`,
			wantSA: "no-mount2", mounted: []bool{true}, volume: true},
		{name: "an existing mount at the path is kept", spec: `{"containers":[{"name":"a","volumeMounts":[{"name":"mine","mountPath":"` + MountPath + `"}]},{"name":"b"}]}`,
			wantSA: "default", mounted: []bool{false, true}, volume: true},
		{name: "image pull secrets are copied", spec: `{"serviceAccountName":"pull","containers":[{"name":"a"}]}`,
			wantSA: "pull", mounted: []bool{true}, volume: true, pulls: []any{map[string]any{"name": "regcred"}}},
		{name: "missing service account", spec: `{"serviceAccountName":"ghost","containers":[{"name":"a"}]}`,
			wantErr: `error looking up service account ns/ghost: serviceaccount "ghost" not found`},
		{name: "updates are left alone", spec: `{"containers":[{"name":"a"}]}`, op: admission.Update, mounted: []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Admission{
				Get: func(_ context.Context, ns, name string) ([]byte, error) {
					if ns != "ns" {
						return nil, errors.New("wrong namespace")
					}
					if b, ok := accounts[name]; ok {
						return []byte(b), nil
					}
					return nil, nil
				},
				Suffix: func() string { return "abcde" },
			}
			obj := podObject(t, tt.spec)
			op := tt.op
			if op == "" {
				op = admission.Create
			}
			a := &admission.Attributes{Operation: op, Resource: api.GroupVersionResource{Version: "v1", Resource: "pods"},
				Namespace: "ns", Name: "p", Object: obj, Namespaced: true}
			err := p.Admit(context.Background(), a)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			spec := obj["spec"].(map[string]any)
			if got, _ := spec["serviceAccountName"].(string); got != tt.wantSA {
				t.Errorf("serviceAccountName = %q, want %q", got, tt.wantSA)
			}
			var cs []any
			for _, f := range []string{"initContainers", "containers"} {
				l, _ := spec[f].([]any)
				cs = append(cs, l...)
			}
			for i, c := range cs {
				mounts, _ := c.(map[string]any)["volumeMounts"].([]any)
				has := false
				for _, m := range mounts {
					if reflect.DeepEqual(m, mount) {
						has = true
					}
				}
				if has != tt.mounted[i] {
					t.Errorf("container %d mounted = %v, want %v (%v)", i, has, tt.mounted[i], mounts)
				}
			}
			vols, _ := spec["volumes"].([]any)
			if got := len(vols) == 1 && reflect.DeepEqual(vols[0], Volume("kube-api-access-abcde")); got != tt.volume {
				t.Errorf("volume added = %v, want %v (%v)", got, tt.volume, vols)
			}
			if got, _ := spec["imagePullSecrets"].([]any); !reflect.DeepEqual(got, tt.pulls) {
				t.Errorf("imagePullSecrets = %v, want %v", got, tt.pulls)
			}
		})
	}
}

func TestAdmissionRetriesTheDefaultServiceAccount(t *testing.T) {
	calls := 0
	p := &Admission{DefaultRetries: 3, RetryInterval: 1, Get: func(context.Context, string, string) ([]byte, error) {
		calls++
		if calls == 3 {
			return []byte(`{}`), nil
		}
		return nil, nil
	}}
	a := &admission.Attributes{Operation: admission.Create, Resource: api.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: "ns", Object: podObject(t, `{"containers":[{"name":"a"}]}`)}
	if err := p.Admit(context.Background(), a); err != nil {
		t.Fatalf("admit: %v", err)
	}
	calls = -10
	err := p.Admit(context.Background(), &admission.Attributes{Operation: admission.Create,
		Resource: api.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "ns", Object: podObject(t, `{"containers":[]}`)})
	if err == nil || !strings.Contains(err.Error(), `serviceaccount "default" not found`) {
		t.Fatalf("error = %v, want not found after the retries", err)
	}
}

func TestVolumeNameAlphabet(t *testing.T) {
	for range 20 {
		s := randomSuffix()
		if len(s) != 5 || strings.Trim(s, nameAlphabet) != "" {
			t.Fatalf("suffix %q", s)
		}
	}
}
