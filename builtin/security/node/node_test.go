package node

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

const podsJSON = `[
{"metadata":{"name":"web","namespace":"ns"},"spec":{"nodeName":"n1","serviceAccountName":"web-sa",
  "imagePullSecrets":[{"name":"pull"}],
  "containers":[{"env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"env-secret","key":"k"}}},{"name":"B","valueFrom":{"configMapKeyRef":{"name":"env-cm","key":"k"}}}],
                 "envFrom":[{"secretRef":{"name":"envfrom-secret"}}]}],
  "volumes":[{"name":"v1","secret":{"secretName":"vol-secret"}},{"name":"v2","configMap":{"name":"vol-cm"}},
             {"name":"v3","persistentVolumeClaim":{"claimName":"data"}},
             {"name":"v4","projected":{"sources":[{"secret":{"name":"proj-secret"}},{"configMap":{"name":"proj-cm"}}]}}]}},
{"metadata":{"name":"other","namespace":"ns"},"spec":{"nodeName":"n2","containers":[{"envFrom":[{"secretRef":{"name":"n2-secret"}}]}]}},
{"metadata":{"name":"pending","namespace":"ns"},"spec":{"containers":[{"envFrom":[{"secretRef":{"name":"pending-secret"}}]}]}}
]`

func authorizer(t *testing.T) *Authorizer {
	t.Helper()
	var pods []Pod
	if err := json.Unmarshal([]byte(podsJSON), &pods); err != nil {
		t.Fatal(err)
	}
	a := NewAuthorizer(func(_ context.Context, ns, _ string) ([]Pod, error) {
		var out []Pod
		for _, p := range pods {
			if ns == "" || p.Metadata.Namespace == ns {
				out = append(out, p)
			}
		}
		return out, nil
	})
	a.Claims = func(_ context.Context, ns string) (map[string]string, error) {
		if ns != "ns" {
			return nil, nil
		}
		return map[string]string{"data": "pv-data", "unused": "pv-unused"}, nil
	}
	return a
}

func TestAuthorizer(t *testing.T) {
	a := authorizer(t)
	n1 := User("n1")
	res := func(verb, group, resource, sub, ns, name string) filters.Attributes {
		return filters.Attributes{User: n1, Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource,
			Subresource: sub, Namespace: ns, Name: name}
	}
	for _, tc := range []struct {
		name  string
		attrs filters.Attributes
		want  filters.Decision
	}{
		{"secret from env", res("get", "", "secrets", "", "ns", "env-secret"), filters.DecisionAllow},
		{"secret from envFrom", res("get", "", "secrets", "", "ns", "envfrom-secret"), filters.DecisionAllow},
		{"secret volume", res("get", "", "secrets", "", "ns", "vol-secret"), filters.DecisionAllow},
		{"projected secret", res("get", "", "secrets", "", "ns", "proj-secret"), filters.DecisionAllow},
		{"image pull secret", res("get", "", "secrets", "", "ns", "pull"), filters.DecisionAllow},
		{"configmap from env", res("get", "", "configmaps", "", "ns", "env-cm"), filters.DecisionAllow},
		{"configmap volume", res("get", "", "configmaps", "", "ns", "vol-cm"), filters.DecisionAllow},
		{"projected configmap", res("get", "", "configmaps", "", "ns", "proj-cm"), filters.DecisionAllow},
		{"pvc", res("get", "", "persistentvolumeclaims", "", "ns", "data"), filters.DecisionAllow},
		{"volume of its pod's claim", res("get", "", "persistentvolumes", "", "", "pv-data"), filters.DecisionAllow},
		{"volume of a claim no pod of the node uses", res("get", "", "persistentvolumes", "", "", "pv-unused"), filters.DecisionNoOpinion},
		{"list volumes", res("list", "", "persistentvolumes", "", "", ""), filters.DecisionNoOpinion},
		{"token for its pod's service account", res("create", "", "serviceaccounts", "token", "ns", "web-sa"), filters.DecisionAllow},
		{"its pod's service account", res("get", "", "serviceaccounts", "", "ns", "web-sa"), filters.DecisionAllow},
		{"another service account", res("get", "", "serviceaccounts", "", "ns", "default"), filters.DecisionNoOpinion},
		{"token for another service account", res("create", "", "serviceaccounts", "token", "ns", "default"), filters.DecisionNoOpinion},
		{"another node's secret", res("get", "", "secrets", "", "ns", "n2-secret"), filters.DecisionNoOpinion},
		{"unscheduled pod's secret", res("get", "", "secrets", "", "ns", "pending-secret"), filters.DecisionNoOpinion},
		{"secret in another namespace", res("get", "", "secrets", "", "other", "env-secret"), filters.DecisionNoOpinion},
		{"list secrets", res("list", "", "secrets", "", "ns", ""), filters.DecisionNoOpinion},
		{"watch configmaps", res("watch", "", "configmaps", "", "", ""), filters.DecisionNoOpinion},
		{"update secret", res("update", "", "secrets", "", "ns", "env-secret"), filters.DecisionNoOpinion},
		{"list pods", res("list", "", "pods", "", "", ""), filters.DecisionAllow},
		{"patch pod status", res("patch", "", "pods", "status", "ns", "web"), filters.DecisionAllow},
		{"bind pods", res("create", "", "pods", "binding", "ns", "web"), filters.DecisionNoOpinion},
		{"own node", res("patch", "", "nodes", "", "", "n1"), filters.DecisionAllow},
		{"own node status", res("patch", "", "nodes", "status", "", "n1"), filters.DecisionAllow},
		{"another node", res("patch", "", "nodes", "", "", "n2"), filters.DecisionNoOpinion},
		{"another node's status", res("update", "", "nodes", "status", "", "n2"), filters.DecisionNoOpinion},
		{"delete another node", res("delete", "", "nodes", "", "", "n2"), filters.DecisionNoOpinion},
		{"read another node", res("get", "", "nodes", "", "", "n2"), filters.DecisionAllow},
		{"own lease", res("update", "coordination.k8s.io", "leases", "", LeaseNamespace, "n1"), filters.DecisionAllow},
		{"create lease", res("create", "coordination.k8s.io", "leases", "", LeaseNamespace, ""), filters.DecisionAllow},
		{"another lease", res("update", "coordination.k8s.io", "leases", "", LeaseNamespace, "n2"), filters.DecisionNoOpinion},
		{"lease elsewhere", res("create", "coordination.k8s.io", "leases", "", "default", ""), filters.DecisionNoOpinion},
		{"deployments", res("list", "apps", "deployments", "", "", ""), filters.DecisionNoOpinion},
		{"not a node", filters.Attributes{User: &filters.User{Name: "system:node:n1"}, Verb: "get", ResourceRequest: true, Resource: "pods"}, filters.DecisionNoOpinion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := a.Authorize(context.Background(), tc.attrs)
			if err != nil || got != tc.want {
				t.Fatalf("Authorize = %v (%s), %v; want %v", got, reason, err, tc.want)
			}
		})
	}
}

func obj(js string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		panic(err)
	}
	return m
}

func TestRestriction(t *testing.T) {
	pods := api.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodes := api.GroupVersionResource{Version: "v1", Resource: "nodes"}
	leases := api.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	mine, theirs := obj(`{"spec":{"nodeName":"n1"}}`), obj(`{"spec":{"nodeName":"n2"}}`)
	n1, n2 := obj(`{"metadata":{"name":"n1"}}`), obj(`{"metadata":{"name":"n2"}}`)
	for _, tc := range []struct {
		name  string
		attrs admission.Attributes
		ok    bool
	}{
		{"create own pod", admission.Attributes{Operation: admission.Create, Resource: pods, Name: "p", Object: mine}, true},
		{"create another node's pod", admission.Attributes{Operation: admission.Create, Resource: pods, Name: "p", Object: theirs}, false},
		{"status of own pod", admission.Attributes{Operation: admission.Update, Resource: pods, Subresource: "status", Name: "p", Object: mine, OldObject: mine}, true},
		{"status of another node's pod", admission.Attributes{Operation: admission.Update, Resource: pods, Subresource: "status", Name: "p", Object: theirs, OldObject: theirs}, false},
		{"move own pod", admission.Attributes{Operation: admission.Update, Resource: pods, Name: "p", Object: theirs, OldObject: mine}, false},
		{"delete own pod", admission.Attributes{Operation: admission.Delete, Resource: pods, Name: "p", OldObject: mine}, true},
		{"delete another node's pod", admission.Attributes{Operation: admission.Delete, Resource: pods, Name: "p", OldObject: theirs}, false},
		{"evict another node's pod", admission.Attributes{Operation: admission.Delete, Resource: pods, Subresource: "eviction", Name: "p", OldObject: theirs}, false},
		{"bind a pod", admission.Attributes{Operation: admission.Update, Resource: pods, Subresource: "binding", Name: "p", Object: mine, OldObject: mine}, false},
		{"create own node", admission.Attributes{Operation: admission.Create, Resource: nodes, Name: "n1", Object: n1}, true},
		{"create another node", admission.Attributes{Operation: admission.Create, Resource: nodes, Name: "n2", Object: n2}, false},
		{"restricted label", admission.Attributes{Operation: admission.Update, Resource: nodes, Name: "n1", OldObject: n1,
			Object: obj(`{"metadata":{"name":"n1","labels":{"node-restriction.kubernetes.io/pool":"secure"}}}`)}, false},
		{"other label", admission.Attributes{Operation: admission.Update, Resource: nodes, Name: "n1", OldObject: n1,
			Object: obj(`{"metadata":{"name":"n1","labels":{"pool":"any"}}}`)}, true},
		{"own lease", admission.Attributes{Operation: admission.Create, Resource: leases, Namespace: LeaseNamespace, Name: "n1"}, true},
		{"another lease", admission.Attributes{Operation: admission.Update, Resource: leases, Namespace: LeaseNamespace, Name: "n2"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.attrs.User = User("n1")
			err := Restriction{}.Validate(context.Background(), &tc.attrs)
			if (err == nil) != tc.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tc.ok)
			}
			// Other users are not restricted.
			tc.attrs.User = &filters.User{Name: "alice"}
			if err := (Restriction{}).Validate(context.Background(), &tc.attrs); err != nil {
				t.Fatalf("alice: %v", err)
			}
		})
	}
}
