package flowcontrol

import (
	"net/http/httptest"
	"testing"
	"time"

	flowcontrolv1 "github.com/converge-dev/converge/builtin/api/flowcontrol/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/flowcontrol"
)

// TestDefaultsAreValid: every default object passes the API's validation and
// is unchanged by its defaulting (so the stored object equals the default).
func TestDefaultsAreValid(t *testing.T) {
	t.Parallel()
	for _, pl := range append(MandatoryPriorityLevels(), SuggestedPriorityLevels()...) {
		if err := flowcontrolv1.ValidatePriorityLevelConfiguration(pl).ToError(); err != nil {
			t.Errorf("priority level %s: %v", pl.Name, err)
		}
		if pl.Annotations[AnnotationAutoUpdateSpec] != "true" {
			t.Errorf("priority level %s lacks the autoupdate-spec annotation", pl.Name)
		}
	}
	levels := map[string]bool{}
	for _, pl := range append(MandatoryPriorityLevels(), SuggestedPriorityLevels()...) {
		levels[pl.Name] = true
	}
	for _, fs := range append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...) {
		if err := flowcontrolv1.ValidateFlowSchema(fs).ToError(); err != nil {
			t.Errorf("flow schema %s: %v", fs.Name, err)
		}
		if !levels[fs.Spec.PriorityLevelConfiguration.Name] {
			t.Errorf("flow schema %s references a level that is not a default", fs.Name)
		}
	}
}

// TestDefaultClassification: Kubernetes' default schemas send the usual
// clients where Kubernetes sends them.
func TestDefaultClassification(t *testing.T) {
	t.Parallel()
	c := flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: 600}, DefaultConfig())
	auth := func(name string, groups ...string) *filters.User {
		return &filters.User{Name: name, Groups: append(groups, "system:authenticated")}
	}
	for _, tc := range []struct {
		user          *filters.User
		method, url   string
		schema, level string
	}{
		{auth("admin", "system:masters"), "GET", "/api/v1/pods", "exempt", "exempt"},
		{nil, "GET", "/livez", "probes", "exempt"},
		{auth("system:node:n1", "system:nodes"), "PUT", "/api/v1/nodes/n1/status", "system-node-high", "node-high"},
		{auth("system:node:n1", "system:nodes"), "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", "system-node-high", "node-high"},
		{auth("system:node:n1", "system:nodes"), "GET", "/api/v1/namespaces/a/secrets/s", "system-nodes", "system"},
		{auth("system:kube-scheduler"), "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", "system-leader-election", "leader-election"},
		{auth("system:kube-scheduler"), "POST", "/api/v1/namespaces/a/pods/p/binding", "kube-scheduler", "workload-high"},
		{auth("system:kube-controller-manager"), "PUT", "/api/v1/namespaces/a/endpoints/e", "endpoint-controller", "workload-high"},
		{auth("system:kube-controller-manager"), "POST", "/apis/apps/v1/namespaces/a/replicasets", "kube-controller-manager", "workload-high"},
		{filters.ServiceAccountUser("kube-system", "coredns", ""), "GET", "/api/v1/services", "kube-system-service-accounts", "workload-high"},
		{filters.ServiceAccountUser("apps", "web", ""), "GET", "/api/v1/namespaces/apps/configmaps", "service-accounts", "workload-low"},
		{auth("alice", "devs"), "POST", "/api/v1/namespaces/a/configmaps", "global-default", "global-default"},
		{nil, "GET", "/version", "global-default", "global-default"},
	} {
		got := c.Classify(tc.user, filters.NewRequestInfo(httptest.NewRequest(tc.method, tc.url, nil)))
		if got.FlowSchema != tc.schema || got.PriorityLevel != tc.level {
			t.Errorf("%v %s %s: %s/%s, want %s/%s", tc.user, tc.method, tc.url, got.FlowSchema, got.PriorityLevel, tc.schema, tc.level)
		}
	}
	if got := c.Limit("global-default"); got != 49 {
		t.Errorf("global-default has %d seats of 600, want 49 (ceil(600*20/245))", got)
	}
}

func TestSetDangling(t *testing.T) {
	t.Parallel()
	t0, t1 := time.Unix(1000, 0), time.Unix(2000, 0)
	found := flowcontrolv1.FlowSchemaCondition{Type: "Dangling", Status: "False", Reason: "Found", LastTransitionTime: api.NewTime(t0),
		Message: `This FlowSchema references the PriorityLevelConfiguration object named "p" and it exists`}
	for _, tc := range []struct {
		name       string
		conditions []flowcontrolv1.FlowSchemaCondition
		dangling   bool
		changed    bool
		want       flowcontrolv1.FlowSchemaCondition
	}{
		{"new, found", nil, false, true, flowcontrolv1.FlowSchemaCondition{Type: "Dangling", Status: "False", Reason: "Found",
			LastTransitionTime: api.NewTime(t1), Message: found.Message}},
		{"unchanged", []flowcontrolv1.FlowSchemaCondition{found}, false, false, found},
		{"level deleted", []flowcontrolv1.FlowSchemaCondition{found}, true, true, flowcontrolv1.FlowSchemaCondition{Type: "Dangling",
			Status: "True", Reason: "NotFound", LastTransitionTime: api.NewTime(t1),
			Message: `This FlowSchema references the PriorityLevelConfiguration object named "p" but there is no such object`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "p"}},
				Status: flowcontrolv1.FlowSchemaStatus{Conditions: tc.conditions}}
			if got := setDangling(fs, tc.dangling, t1); got != tc.changed {
				t.Errorf("changed = %v, want %v", got, tc.changed)
			}
			if len(fs.Status.Conditions) != 1 || !fs.Status.Conditions[0].LastTransitionTime.Equal(tc.want.LastTransitionTime.Time) {
				t.Fatalf("conditions %+v, want %+v", fs.Status.Conditions, tc.want)
			}
			got := fs.Status.Conditions[0]
			got.LastTransitionTime, tc.want.LastTransitionTime = api.Time{}, api.Time{}
			if got != tc.want {
				t.Errorf("condition %+v, want %+v", got, tc.want)
			}
		})
	}
}
