package v1

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestValidateRuntimeClass(t *testing.T) {
	t.Parallel()
	tol := []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		name string
		rc   RuntimeClass
		want []string // field paths of the errors, in order
	}{
		{"minimal", RuntimeClass{Handler: "runc"}, nil},
		{"full", RuntimeClass{Handler: "kata", Overhead: &Overhead{PodFixed: corev1.ResourceList{"cpu": api.MustParseQuantity("250m"), "memory": api.MustParseQuantity("64Mi")}},
			Scheduling: &Scheduling{NodeSelector: map[string]string{"sandbox": "kata"}, Tolerations: tol}}, nil},
		{"empty handler", RuntimeClass{}, []string{"handler"}},
		{"handler not a DNS label", RuntimeClass{Handler: "Kata_1"}, []string{"handler"}},
		{"negative overhead", RuntimeClass{Handler: "h", Overhead: &Overhead{PodFixed: corev1.ResourceList{"cpu": api.MustParseQuantity("-1")}}}, []string{"overhead.podFixed[cpu]"}},
		{"bad selector label", RuntimeClass{Handler: "h", Scheduling: &Scheduling{NodeSelector: map[string]string{"bad key!": "v"}}}, []string{"scheduling.nodeSelector"}},
		{"bad toleration", RuntimeClass{Handler: "h", Scheduling: &Scheduling{Tolerations: []corev1.Toleration{{Operator: "Sometimes"}}}},
			[]string{"scheduling.tolerations[0].operator", "scheduling.tolerations[0].operator"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, e := range ValidateRuntimeClass(&tc.rc) {
				got = append(got, e.Field)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("error fields %v, want %v", got, tc.want)
			}
		})
	}
	old := &RuntimeClass{Handler: "runc"}
	if errs := ValidateRuntimeClassUpdate(&RuntimeClass{Handler: "kata"}, old); len(errs) != 1 || !strings.Contains(errs[0].Error(), "field is immutable") {
		t.Errorf("changing the handler: %v", errs)
	}
	if errs := ValidateRuntimeClassUpdate(&RuntimeClass{Handler: "runc", Scheduling: &Scheduling{NodeSelector: map[string]string{"a": "b"}}}, old); len(errs) != 0 {
		t.Errorf("changing scheduling: %v", errs)
	}
}

func TestAdmitPod(t *testing.T) {
	t.Parallel()
	classes := map[string]*RuntimeClass{
		"plain": {Handler: "runc"},
		"kata": {Handler: "kata", Overhead: &Overhead{PodFixed: corev1.ResourceList{"cpu": api.MustParseQuantity("250m")}},
			Scheduling: &Scheduling{NodeSelector: map[string]string{"sandbox": "kata"},
				Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}},
	}
	a := PodRuntimeClass{Get: func(_ context.Context, name string) (*RuntimeClass, error) { return classes[name], nil }}
	for _, tc := range []struct {
		name    string
		pod     string
		wantErr string
		check   func(t *testing.T, pod map[string]any)
	}{
		{name: "no class", pod: `{"metadata":{"name":"p"},"spec":{}}`},
		{name: "missing class", pod: `{"metadata":{"name":"p"},"spec":{"runtimeClassName":"nope"}}`,
			wantErr: `pods "p" is forbidden: pod rejected: RuntimeClass "nope" not found`},
		{name: "overhead without class", pod: `{"metadata":{"name":"p"},"spec":{"overhead":{"cpu":"1"}}}`,
			wantErr: `pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
		{name: "overhead with a class that has none", pod: `{"metadata":{"name":"p"},"spec":{"runtimeClassName":"plain","overhead":{"cpu":"1"}}}`,
			wantErr: `pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
		{name: "different overhead", pod: `{"metadata":{"name":"p"},"spec":{"runtimeClassName":"kata","overhead":{"cpu":"1"}}}`,
			wantErr: `pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
		{name: "same overhead in other units", pod: `{"metadata":{"name":"p"},"spec":{"runtimeClassName":"kata","overhead":{"cpu":"0.25"}}}`},
		{name: "conflicting node selector", pod: `{"metadata":{"name":"p"},"spec":{"runtimeClassName":"kata","nodeSelector":{"sandbox":"gvisor"}}}`,
			wantErr: `pod rejected: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor`},
		{name: "class applied", pod: `{"metadata":{"generateName":"p-"},"spec":{"runtimeClassName":"kata","nodeSelector":{"zone":"a"},
			"tolerations":[{"key":"sandbox","operator":"Exists"},{"key":"x","operator":"Equal","value":"1","effect":"NoExecute"}]}}`,
			check: func(t *testing.T, pod map[string]any) {
				if got := api.NestedMap(pod, "spec", "overhead"); !reflect.DeepEqual(got, map[string]any{"cpu": "250m"}) {
					t.Errorf("overhead %v", got)
				}
				if got := api.NestedMap(pod, "spec", "nodeSelector"); !reflect.DeepEqual(got, map[string]any{"zone": "a", "sandbox": "kata"}) {
					t.Errorf("nodeSelector %v", got)
				}
				// The pod's sandbox toleration (every effect) covers the class's NoSchedule one.
				if got := api.NestedSlice(pod, "spec", "tolerations"); len(got) != 2 {
					t.Errorf("tolerations %v, want the pod's two", got)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod, err := api.DecodeMap([]byte(tc.pod))
			if err != nil {
				t.Fatal(err)
			}
			err = a.AdmitPod(t.Context(), pod)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("AdmitPod: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("AdmitPod = %v, want %q", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, pod)
			}
		})
	}
}

func TestMergeTolerations(t *testing.T) {
	t.Parallel()
	sec := func(s int64) *int64 { return &s }
	exists := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}
	equalNS := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}
	ne10 := corev1.Toleration{Key: "n", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: sec(10)}
	ne60 := corev1.Toleration{Key: "n", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: sec(60)}
	for _, tc := range []struct {
		name       string
		pod, class []corev1.Toleration
		want       []corev1.Toleration
	}{
		{"disjoint", []corev1.Toleration{equalNS}, []corev1.Toleration{ne10}, []corev1.Toleration{equalNS, ne10}},
		{"pod covers class", []corev1.Toleration{exists}, []corev1.Toleration{equalNS}, []corev1.Toleration{exists}},
		{"class covers pod", []corev1.Toleration{equalNS}, []corev1.Toleration{exists}, []corev1.Toleration{exists}},
		{"longer seconds cover shorter", []corev1.Toleration{ne10}, []corev1.Toleration{ne60}, []corev1.Toleration{ne60}},
		{"duplicates", []corev1.Toleration{ne10, ne10}, []corev1.Toleration{ne10}, []corev1.Toleration{ne10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := mergeTolerations(tc.pod, tc.class); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("merge = %+v, want %+v", got, tc.want)
			}
		})
	}
}
