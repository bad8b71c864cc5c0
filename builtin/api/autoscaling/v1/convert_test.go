package v1_test

import (
	"encoding/json"
	"reflect"
	"testing"

	autoscalingv1 "github.com/converge-dev/converge/builtin/api/autoscaling/v1"
	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
)

func TestConvertRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, v2, v1 string }{
		{"cpu only",
			`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"minReplicas":1,"maxReplicas":4,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]},"status":{"currentReplicas":2,"desiredReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":75}}}]}}`,
			`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"minReplicas":1,"maxReplicas":4,"targetCPUUtilizationPercentage":50},"status":{"currentReplicas":2,"desiredReplicas":3,"currentCPUUtilizationPercentage":75}}`},
		{"memory and behavior in annotations",
			`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":4,"metrics":[{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"1Gi"}}}],"behavior":{"scaleDown":{"selectPolicy":"Disabled"}}},"status":{"desiredReplicas":0,"currentMetrics":null,"conditions":[{"type":"AbleToScale","status":"True","reason":"SucceededGetScale"}]}}`,
			`{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"h","annotations":{"autoscaling.alpha.kubernetes.io/behavior":"{\"scaleDown\":{\"selectPolicy\":\"Disabled\"}}","autoscaling.alpha.kubernetes.io/conditions":"[{\"type\":\"AbleToScale\",\"status\":\"True\",\"reason\":\"SucceededGetScale\"}]","autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"Resource\",\"resource\":{\"name\":\"memory\",\"target\":{\"type\":\"AverageValue\",\"averageValue\":\"1Gi\"}}}]"}},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":4},"status":{"currentReplicas":0,"desiredReplicas":0}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var in map[string]any
			if err := json.Unmarshal([]byte(tc.v2), &in); err != nil {
				t.Fatal(err)
			}
			v1, err := autoscalingv1.Convert(in, autoscalingv1.GroupVersion)
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			_ = json.Unmarshal([]byte(tc.v1), &want)
			if !reflect.DeepEqual(normalize(t, v1), normalize(t, want)) {
				got, _ := json.Marshal(v1)
				t.Errorf("v2 → v1\n got %s\nwant %s", got, tc.v1)
			}
			back, err := autoscalingv1.Convert(v1, autoscalingv2.GroupVersion)
			if err != nil {
				t.Fatal(err)
			}
			var orig map[string]any
			_ = json.Unmarshal([]byte(tc.v2), &orig)
			if !reflect.DeepEqual(normalize(t, back), normalize(t, orig)) {
				got, _ := json.Marshal(back)
				t.Errorf("v1 → v2\n got %s\nwant %s", got, tc.v2)
			}
		})
	}
}

// normalize re-encodes through JSON so numbers and empty values compare.
func normalize(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if md, ok := out["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
		delete(md, "creationTimestamp") // the zero time of an object never stored
	}
	return out
}

func TestV1DefaultCPUTarget(t *testing.T) {
	t.Parallel()
	v2, err := autoscalingv1.ToV2(&autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v2.Spec.Metrics) != 1 || v2.Spec.Metrics[0].Resource == nil || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("metrics = %+v, want the 80%% CPU default", v2.Spec.Metrics)
	}
}
