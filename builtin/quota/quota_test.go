package quota

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = api.MustParseQuantity(kv[i+1])
	}
	return out
}

func strs(l corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[k] = v.String()
	}
	return out
}

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func TestPodUsage(t *testing.T) {
	t.Parallel()
	now := time.Now()
	always := corev1.ContainerRestartPolicyAlways
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want map[string]string
	}{{
		name: "containers add up, extended resources get requests.",
		pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			container("a", list("cpu", "500m", "memory", "252Mi", "example.com/dongle", "2"), list("cpu", "1")),
			container("b", list("cpu", "250m", "memory", "100Mi", "hugepages-2Mi", "4Mi"), nil),
		}}},
		want: map[string]string{"count/pods": "1", "pods": "1", "cpu": "750m", "requests.cpu": "750m", "limits.cpu": "1",
			"memory": "352Mi", "requests.memory": "352Mi", "requests.example.com/dongle": "2",
			"hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi"},
	}, {
		name: "the largest init step wins; sidecars run alongside; overhead is added",
		pod: corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				container("init", list("cpu", "2"), nil),
				{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: list("cpu", "100m")}},
			},
			Containers: []corev1.Container{container("main", list("cpu", "1"), nil)},
			Overhead:   list("cpu", "10m"),
		}},
		want: map[string]string{"count/pods": "1", "pods": "1", "cpu": "2010m", "requests.cpu": "2010m"},
	}, {
		name: "a terminal pod is only an object",
		pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", list("cpu", "1"), nil)}},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		want: map[string]string{"count/pods": "1"},
	}, {
		name: "a pod stuck terminating past its grace period is only an object",
		pod: corev1.Pod{ObjectMeta: api.ObjectMeta{
			DeletionTimestamp: &api.Time{Time: now.Add(-time.Minute)}, DeletionGracePeriodSeconds: api.Ptr(int64(30)),
		}, Spec: corev1.PodSpec{Containers: []corev1.Container{container("a", list("cpu", "1"), nil)}}},
		want: map[string]string{"count/pods": "1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, strs(PodUsage(&tc.pod, now))); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServiceAndClaimUsage(t *testing.T) {
	t.Parallel()
	lb := corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}}
	got, err := serviceEvaluator{}.Usage(toMap(t, lb), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"count/services": "1", "services": "1", "services.loadbalancers": "1", "services.nodeports": "2"}
	if diff := cmp.Diff(want, strs(got)); diff != "" {
		t.Errorf("load balancer (-want +got):\n%s", diff)
	}
	lb.Spec.AllocateLoadBalancerNodePorts = api.Ptr(false)
	lb.Spec.Ports[0].NodePort = 30000
	got, _ = serviceEvaluator{}.Usage(toMap(t, lb), time.Now())
	if got["services.nodeports"].String() != "1" {
		t.Errorf("without allocation: nodeports = %s, want 1", got["services.nodeports"].String())
	}

	claim := corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: api.Ptr("gold"),
		Resources:        corev1.VolumeResourceRequirements{Requests: list("storage", "1Gi")},
	}, Status: corev1.PersistentVolumeClaimStatus{AllocatedResources: list("storage", "2Gi")}}
	got, err = pvcEvaluator{}.Usage(toMap(t, claim), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"count/persistentvolumeclaims": "1", "persistentvolumeclaims": "1", "requests.storage": "2Gi",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims": "1", "gold.storageclass.storage.k8s.io/requests.storage": "2Gi"}
	if diff := cmp.Diff(want, strs(got)); diff != "" {
		t.Errorf("claim (-want +got):\n%s", diff)
	}
}

func TestMatchingResources(t *testing.T) {
	t.Parallel()
	names := []string{"pods", "requests.cpu", "limits.memory", "requests.example.com/dongle", "requests.hugepages-1Gi",
		"services", "services.nodeports", "configmaps", "count/configmaps", "count/replicasets.apps", "requests.storage",
		"gold.storageclass.storage.k8s.io/requests.storage", "resourcequotas"}
	for _, tc := range []struct {
		gr   api.GroupResource
		want []string
	}{
		{api.GroupResource{Resource: "pods"}, []string{"pods", "requests.cpu", "limits.memory", "requests.example.com/dongle", "requests.hugepages-1Gi"}},
		{api.GroupResource{Resource: "services"}, []string{"services", "services.nodeports"}},
		{api.GroupResource{Resource: "configmaps"}, []string{"configmaps", "count/configmaps"}},
		{api.GroupResource{Group: "apps", Resource: "replicasets"}, []string{"count/replicasets.apps"}},
		{api.GroupResource{Resource: "persistentvolumeclaims"}, []string{"requests.storage", "gold.storageclass.storage.k8s.io/requests.storage"}},
		{api.GroupResource{Resource: "resourcequotas"}, []string{"resourcequotas"}},
	} {
		if diff := cmp.Diff(tc.want, For(tc.gr).MatchingResources(names)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.gr, diff)
		}
	}
	wantGR := []api.GroupResource{{Resource: "pods"}, {Resource: "services"}, {Resource: "configmaps"},
		{Group: "apps", Resource: "replicasets"}, {Resource: "persistentvolumeclaims"}, {Resource: "resourcequotas"}}
	if diff := cmp.Diff(wantGR, GroupResourcesFor(names)); diff != "" {
		t.Errorf("GroupResourcesFor (-want +got):\n%s", diff)
	}
}

func TestPodScopes(t *testing.T) {
	t.Parallel()
	burstable := corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "high", ActiveDeadlineSeconds: api.Ptr(int64(10)),
		Containers: []corev1.Container{container("a", list("cpu", "1"), nil)}}}
	best := corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}},
		Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			Namespaces: []string{"other"}, TopologyKey: "zone"}}}}}}
	req := func(scope corev1.ResourceQuotaScope, op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: op, Values: values}
	}
	for _, tc := range []struct {
		req             corev1.ScopedResourceSelectorRequirement
		burstable, best bool
	}{
		{req(corev1.ResourceQuotaScopeTerminating, corev1.ScopeSelectorOpExists), true, false},
		{req(corev1.ResourceQuotaScopeNotTerminating, corev1.ScopeSelectorOpExists), false, true},
		{req(corev1.ResourceQuotaScopeBestEffort, corev1.ScopeSelectorOpExists), false, true},
		{req(corev1.ResourceQuotaScopeNotBestEffort, corev1.ScopeSelectorOpExists), true, false},
		{req(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "high", "low"), true, false},
		{req(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpNotIn, "high"), false, true},
		{req(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpExists), true, false},
		{req(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpDoesNotExist), false, true},
		{req(corev1.ResourceQuotaScopeCrossNamespacePodAffinity, corev1.ScopeSelectorOpExists), false, true},
	} {
		for _, p := range []struct {
			pod  corev1.Pod
			want bool
		}{{burstable, tc.burstable}, {best, tc.best}} {
			got, err := podEvaluator{}.MatchesScope(tc.req, toMap(t, p.pod))
			if err != nil || got != p.want {
				t.Errorf("%s %s %v on %v: got %v, %v, want %v", tc.req.ScopeName, tc.req.Operator, tc.req.Values, p.pod.Spec.PriorityClassName, got, err, p.want)
			}
		}
	}
	// Scopes select pods only.
	if ok, _ := For(api.GroupResource{Resource: "configmaps"}).MatchesScope(req(corev1.ResourceQuotaScopeBestEffort, corev1.ScopeSelectorOpExists), map[string]any{}); ok {
		t.Error("a scope selected a configmap")
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	quota := func(name string, hard, used corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{ObjectMeta: api.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard, Scopes: scopes},
			Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
	}
	pod := func(requests corev1.ResourceList) map[string]any {
		return toMap(t, corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container("c", requests, nil)}}})
	}
	create := func(obj map[string]any) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Resource: api.GroupVersionResource{Version: "v1", Resource: "pods"}, Object: obj}
	}
	e := For(api.GroupResource{Resource: "pods"})
	for _, tc := range []struct {
		name    string
		quotas  []*corev1.ResourceQuota
		attr    *admission.Attributes
		wantErr string
		want    map[string]map[string]string
	}{{
		name:   "fits: charges every matching quota",
		quotas: []*corev1.ResourceQuota{quota("a", list("pods", "2", "cpu", "1"), list("pods", "1", "cpu", "200m")), quota("b", list("pods", "5"), list("pods", "0"))},
		attr:   create(pod(list("cpu", "300m"))),
		want:   map[string]map[string]string{"a": {"pods": "2", "cpu": "500m"}, "b": {"pods": "1"}},
	}, {
		name:    "exceeds: Kubernetes' message names only the exceeded resources",
		quotas:  []*corev1.ResourceQuota{quota("q", list("pods", "1", "cpu", "1"), list("pods", "1", "cpu", "0"))},
		attr:    create(pod(list("cpu", "300m"))),
		wantErr: "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1",
	}, {
		name:    "a quota without usage for a resource it limits refuses",
		quotas:  []*corev1.ResourceQuota{quota("q", list("pods", "1", "cpu", "1"), list("pods", "0"))},
		attr:    create(pod(list("cpu", "300m"))),
		wantErr: "status unknown for quota: q, resources: cpu,pods",
	}, {
		name:    "cpu quota needs a cpu request",
		quotas:  []*corev1.ResourceQuota{quota("q", list("limits.cpu", "1"), list("limits.cpu", "0"))},
		attr:    create(pod(nil)),
		wantErr: "failed quota: q: must specify limits.cpu for: c",
	}, {
		name:   "a scope that does not select the pod leaves its quota alone",
		quotas: []*corev1.ResourceQuota{quota("q", list("pods", "0"), list("pods", "0"), corev1.ResourceQuotaScopeTerminating)},
		attr:   create(pod(nil)),
	}, {
		name:   "a quota not computed yet is not enforced",
		quotas: []*corev1.ResourceQuota{{ObjectMeta: api.ObjectMeta{Name: "new"}, Spec: corev1.ResourceQuotaSpec{Hard: list("pods", "0")}}},
		attr:   create(pod(nil)),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := check(e, tc.attr, tc.quotas, map[string]bool{}, time.Now())
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]map[string]string{}
			for _, q := range got {
				out[q.Name] = strs(q.Status.Used)
			}
			if len(tc.want) == 0 && len(out) == 0 {
				return
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("charged (-want +got):\n%s", diff)
			}
		})
	}
}
