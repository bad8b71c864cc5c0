package v2_test

import (
	"encoding/json"
	"strings"
	"testing"

	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
)

func decode(t *testing.T, s string) *autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := json.Unmarshal([]byte(s), h); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	h := decode(t, `{"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":3,
		"behavior":{"scaleDown":{"policies":[{"type":"Pods","value":1,"periodSeconds":60}]}}}}`)
	autoscalingv2.DefaultHorizontalPodAutoscaler(h)
	got, _ := json.Marshal(h.Spec)
	want := `{"scaleTargetRef":{"kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":3,` +
		`"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}],` +
		`"behavior":{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},` +
		`"scaleDown":{"selectPolicy":"Max","policies":[{"type":"Pods","value":1,"periodSeconds":60}]}}}`
	if string(got) != want {
		t.Errorf("defaulted spec\n got %s\nwant %s", got, want)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	base := `"scaleTargetRef":{"kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":3`
	for _, tc := range []struct {
		name, spec string
		want       []string // substrings of the errors, in order
	}{
		{"valid", base + `,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]`, nil},
		{"valid memory average value", base + `,"metrics":[{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"100Mi"}}}]`, nil},
		{"missing target", `"maxReplicas":1`, []string{"spec.scaleTargetRef.kind: Required value", "spec.scaleTargetRef.name: Required value"}},
		{"bad replicas", `"scaleTargetRef":{"kind":"D","name":"a/b"},"minReplicas":0,"maxReplicas":0`, []string{
			`spec.scaleTargetRef.name: Invalid value: "a/b": may not contain '/'`,
			"spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
			"spec.maxReplicas: Invalid value: 0: must be greater than 0"}},
		{"max below min", `"scaleTargetRef":{"kind":"D","name":"a"},"minReplicas":3,"maxReplicas":2`, []string{
			"spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"}},
		{"source missing", base + `,"metrics":[{"type":"Resource"}]`, []string{"spec.metrics[0].resource: Required value: must populate information for the given metric source"}},
		{"two sources", base + `,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":5}},"pods":{"metric":{"name":"x"},"target":{"type":"AverageValue","averageValue":"1"}}}]`,
			[]string{"spec.metrics[0]: Forbidden: must populate the given metric source only"}},
		{"resource Value target", base + `,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Value","value":"1"}}}]`, []string{
			"spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
			"spec.metrics[0].resource.target.type: Invalid value: \"Value\": must be either Utilization or AverageValue"}},
		{"zero utilization", base + `,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":0}}}]`,
			[]string{"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"}},
		{"behavior limits", base + `,"behavior":{"scaleUp":{"stabilizationWindowSeconds":3601,"policies":[{"type":"Pods","value":0,"periodSeconds":1801}]},"scaleDown":{"policies":[]}}`, []string{
			"spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
			"spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
			"spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
			"spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := autoscalingv2.ValidateHorizontalPodAutoscaler(decode(t, `{"spec":{`+tc.spec+`}}`))
			if len(errs) != len(tc.want) {
				t.Fatalf("errors = %v, want %d: %v", errs, len(tc.want), tc.want)
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tc.want[i]) {
					t.Errorf("error %d = %q, want %q", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	h := decode(t, `{"spec":{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}},
		{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"100Mi"}}}]},
		"status":{"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":250,"averageValue":"250m"}}}]}}`)
	if got, want := autoscalingv2.Targets(h), "cpu: 250%/50%, memory: <unknown>/100Mi"; got != want {
		t.Errorf("Targets = %q, want %q", got, want)
	}
	if got := autoscalingv2.Targets(&autoscalingv2.HorizontalPodAutoscaler{}); got != "<none>" {
		t.Errorf("Targets of none = %q", got)
	}
}
