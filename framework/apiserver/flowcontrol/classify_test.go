package flowcontrol

import (
	"net/http/httptest"
	"testing"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

func everything(subjects ...Subject) Rule {
	return Rule{Subjects: subjects,
		ResourceRules: []ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
			Namespaces: []string{"*"}, ClusterScope: true}},
		NonResourceRules: []NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}
}

// testConfig mirrors the shape of Kubernetes' defaults with a few custom
// schemas.
func testConfig() Config {
	return Config{
		PriorityLevels: []PriorityLevel{
			{Name: "exempt", UID: "pl-exempt", Exempt: true},
			{Name: "catch-all", UID: "pl-catch-all", NominalConcurrencyShares: 5, Reject: true},
			{Name: "global-default", UID: "pl-gd", NominalConcurrencyShares: 20, Queues: 128, HandSize: 6, QueueLengthLimit: 50},
			{Name: "workload-high", UID: "pl-wh", NominalConcurrencyShares: 40, Queues: 128, HandSize: 6, QueueLengthLimit: 50},
			{Name: "leader-election", UID: "pl-le", NominalConcurrencyShares: 10, Queues: 16, HandSize: 4, QueueLengthLimit: 50},
		},
		FlowSchemas: []FlowSchema{
			{Name: "exempt", UID: "fs-exempt", MatchingPrecedence: 1, PriorityLevel: "exempt", Rules: []Rule{everything(Subject{Group: "system:masters"})}},
			{Name: "probes", UID: "fs-probes", MatchingPrecedence: 2, PriorityLevel: "exempt", Rules: []Rule{{
				Subjects:         []Subject{{Group: "system:unauthenticated"}, {Group: "system:authenticated"}},
				NonResourceRules: []NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"}}},
			}}},
			{Name: "leader", UID: "fs-le", MatchingPrecedence: 100, PriorityLevel: "leader-election", Distinguisher: ByUser, Rules: []Rule{{
				Subjects: []Subject{{User: "system:kube-scheduler"}, {ServiceAccount: &ServiceAccount{Namespace: "kube-system", Name: "*"}}},
				ResourceRules: []ResourceRule{{Verbs: []string{"get", "update"}, APIGroups: []string{"coordination.k8s.io"},
					Resources: []string{"leases"}, Namespaces: []string{"kube-system"}}},
			}}},
			{Name: "status-writers", UID: "fs-sw", MatchingPrecedence: 300, PriorityLevel: "workload-high", Distinguisher: ByNamespace, Rules: []Rule{{
				Subjects:      []Subject{{ServiceAccount: &ServiceAccount{Namespace: "apps", Name: "writer"}}},
				ResourceRules: []ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods/status"}, Namespaces: []string{"*"}}},
			}}},
			{Name: "nodes-cluster", UID: "fs-nc", MatchingPrecedence: 400, PriorityLevel: "workload-high", Distinguisher: ByUser, Rules: []Rule{{
				Subjects:      []Subject{{Group: "system:nodes"}},
				ResourceRules: []ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"nodes"}, ClusterScope: true}},
			}}},
			{Name: "metrics", UID: "fs-metrics", MatchingPrecedence: 500, PriorityLevel: "workload-high", Rules: []Rule{{
				Subjects:         []Subject{{User: "*"}},
				NonResourceRules: []NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics/*"}}},
			}}},
			{Name: "dangling", UID: "fs-dangling", MatchingPrecedence: 600, PriorityLevel: "gone", Rules: []Rule{everything(Subject{User: "carol"})}},
			// Same precedence as global-default: the name decides ("b" < "global-default").
			{Name: "b-dave", UID: "fs-dave", MatchingPrecedence: 9900, PriorityLevel: "catch-all", Distinguisher: ByUser, Rules: []Rule{everything(Subject{User: "dave"})}},
			{Name: "global-default", UID: "fs-gd", MatchingPrecedence: 9900, PriorityLevel: "global-default", Distinguisher: ByUser,
				Rules: []Rule{everything(Subject{Group: "system:authenticated"}, Subject{Group: "system:unauthenticated"})}},
			{Name: "catch-all", UID: "fs-catch-all", MatchingPrecedence: 10000, PriorityLevel: "catch-all", Distinguisher: ByUser,
				Rules: []Rule{everything(Subject{Group: "system:authenticated"}, Subject{Group: "system:unauthenticated"})}},
		},
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 75}, testConfig())
	auth := func(name string, groups ...string) *filters.User {
		return &filters.User{Name: name, Groups: append(groups, "system:authenticated")}
	}
	sa := func(ns, name string) *filters.User { return filters.ServiceAccountUser(ns, name, "") }
	for _, tc := range []struct {
		name, method, url string
		user              *filters.User
		schema, level     string
		distinguisher     string
		exempt            bool
	}{
		{"masters are exempt", "DELETE", "/api/v1/namespaces/a/pods/p", auth("admin", "system:masters"), "exempt", "exempt", "", true},
		{"anonymous probe", "GET", "/readyz", nil, "probes", "exempt", "", true},
		{"probe sub-path is not a probe", "GET", "/readyz/etcd", auth("alice"), "global-default", "global-default", "alice", false},
		{"anonymous list", "GET", "/api/v1/pods", nil, "global-default", "global-default", "system:anonymous", false},
		{"scheduler lease in kube-system", "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", auth("system:kube-scheduler"), "leader", "leader-election", "system:kube-scheduler", false},
		{"lease in another namespace", "PUT", "/apis/coordination.k8s.io/v1/namespaces/other/leases/l", auth("system:kube-scheduler"), "global-default", "global-default", "system:kube-scheduler", false},
		{"lease create is not a listed verb", "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", auth("system:kube-scheduler"), "global-default", "global-default", "system:kube-scheduler", false},
		{"any kube-system ServiceAccount", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", sa("kube-system", "x"), "leader", "leader-election", "system:serviceaccount:kube-system:x", false},
		{"ServiceAccount of another namespace", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", sa("kube-systemx", "x"), "global-default", "global-default", "system:serviceaccount:kube-systemx:x", false},
		{"subresource by name, by namespace", "PUT", "/api/v1/namespaces/web/pods/p/status", sa("apps", "writer"), "status-writers", "workload-high", "web", false},
		{"subresource rule does not match the resource", "PUT", "/api/v1/namespaces/web/pods/p", sa("apps", "writer"), "global-default", "global-default", "system:serviceaccount:apps:writer", false},
		{"cluster-scoped rule", "GET", "/api/v1/nodes/n1", auth("system:node:n1", "system:nodes"), "nodes-cluster", "workload-high", "system:node:n1", false},
		{"cluster-scoped rule does not match a namespaced request", "GET", "/api/v1/namespaces/x/nodes", auth("system:node:n1", "system:nodes"), "global-default", "global-default", "system:node:n1", false},
		{"non-resource prefix", "GET", "/metrics/cadvisor", auth("bob"), "metrics", "workload-high", "", false},
		{"non-resource prefix is not the bare path", "GET", "/metric", auth("bob"), "global-default", "global-default", "bob", false},
		{"dangling schema matches nothing", "GET", "/api/v1/pods", auth("carol"), "global-default", "global-default", "carol", false},
		{"precedence tie: name order", "GET", "/api/v1/pods", auth("dave"), "b-dave", "catch-all", "dave", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.url, nil)
			ri := filters.NewRequestInfo(r)
			got := c.Classify(tc.user, ri)
			scan := *c.cur.Load()
			scan.index = nil
			if indexed, _ := c.cur.Load().classify(tc.user, ri); indexed.fs.Name != func() string {
				cs, _ := scan.classify(tc.user, ri)
				return cs.fs.Name
			}() {
				t.Errorf("the subject index and a scan disagree")
			}
			if got.FlowSchema != tc.schema || got.PriorityLevel != tc.level || got.Distinguisher != tc.distinguisher || got.Exempt != tc.exempt {
				t.Errorf("got %+v, want schema %s level %s distinguisher %q exempt %v", got, tc.schema, tc.level, tc.distinguisher, tc.exempt)
			}
		})
	}
}

// TestClassifyWithoutCatchAll: a configuration without a matching schema
// falls back to a catch-all level that rejects beyond one seat.
func TestClassifyWithoutCatchAll(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 10}, Config{})
	got := c.Classify(&filters.User{Name: "x"}, filters.NewRequestInfo(httptest.NewRequest("GET", "/api/v1/pods", nil)))
	if got.FlowSchema != "catch-all" || got.Exempt {
		t.Errorf("got %+v", got)
	}
}

func TestNominalLimits(t *testing.T) {
	t.Parallel()
	levels := []PriorityLevel{
		{Name: "exempt", Exempt: true}, {Name: "catch-all", NominalConcurrencyShares: 5},
		{Name: "system", NominalConcurrencyShares: 30}, {Name: "node-high", NominalConcurrencyShares: 40},
		{Name: "leader-election", NominalConcurrencyShares: 10}, {Name: "workload-high", NominalConcurrencyShares: 40},
		{Name: "workload-low", NominalConcurrencyShares: 100}, {Name: "global-default", NominalConcurrencyShares: 20},
		{Name: "zero", NominalConcurrencyShares: 0},
	}
	// Kubernetes' defaults with a server limit of 600 (400 + 200).
	want := []int{0, 13, 74, 98, 25, 98, 245, 49, 1}
	got := nominalLimits(levels, 600)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: %d seats, want %d", levels[i].Name, got[i], want[i])
		}
	}
}
