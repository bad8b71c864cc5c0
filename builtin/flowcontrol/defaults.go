package flowcontrol

import (
	flowcontrolv1 "github.com/converge-dev/converge/builtin/api/flowcontrol/v1"
	"github.com/converge-dev/converge/framework/api"
)

// AnnotationAutoUpdateSpec marks a default object the server keeps up to date
// ("true") or leaves to its users ("false").
const AnnotationAutoUpdateSpec = "apf.kubernetes.io/autoupdate-spec"

// Names of the mandatory objects.
const (
	NameExempt   = "exempt"
	NameCatchAll = "catch-all"
)

// The users and groups the default schemas name.
const (
	groupMasters         = "system:masters"
	groupNodes           = "system:nodes"
	groupAuthenticated   = "system:authenticated"
	groupUnauthenticated = "system:unauthenticated"
	groupServiceAccounts = "system:serviceaccounts"
	userControllerMgr    = "system:kube-controller-manager"
	userScheduler        = "system:kube-scheduler"
	namespaceSystem      = "kube-system"
)

// MandatoryPriorityLevels are exempt and catch-all: they always exist with
// this spec.
func MandatoryPriorityLevels() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		newLevel(NameExempt, flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: api.Ptr[int32](0), LendablePercent: api.Ptr[int32](0)}}),
		limited(NameCatchAll, 5, 0, nil),
	}
}

// SuggestedPriorityLevels are the other levels Kubernetes creates.
func SuggestedPriorityLevels() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		limited("system", 30, 33, queuing(64, 6, 50)),
		limited("node-high", 40, 25, queuing(64, 6, 50)),
		limited("leader-election", 10, 0, queuing(16, 4, 50)),
		limited("workload-high", 40, 50, queuing(128, 6, 50)),
		limited("workload-low", 100, 90, queuing(128, 6, 50)),
		limited("global-default", 20, 50, queuing(128, 6, 50)),
	}
}

// MandatoryFlowSchemas are exempt (system:masters) and catch-all (everyone,
// by user).
func MandatoryFlowSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		newSchema(NameExempt, NameExempt, 1, "", everything(groups(groupMasters)...)),
		newSchema(NameCatchAll, NameCatchAll, 10000, flowcontrolv1.FlowDistinguisherMethodByUserType,
			everything(groups(groupUnauthenticated, groupAuthenticated)...)),
	}
}

// SuggestedFlowSchemas are the other schemas Kubernetes creates.
func SuggestedFlowSchemas() []*flowcontrolv1.FlowSchema {
	byUser, byNamespace := flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.FlowDistinguisherMethodByNamespaceType
	leaderElection := func(namespaces ...string) []flowcontrolv1.ResourcePolicyRule {
		verbs := []string{"get", "create", "update"}
		return []flowcontrolv1.ResourcePolicyRule{
			{Verbs: verbs, APIGroups: []string{""}, Resources: []string{"endpoints", "configmaps"}, Namespaces: namespaces},
			{Verbs: verbs, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: []string{flowcontrolv1.NamespaceEvery}},
		}
	}
	all := []string{flowcontrolv1.VerbAll}
	return []*flowcontrolv1.FlowSchema{
		newSchema("probes", NameExempt, 2, "", flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: groups(groupUnauthenticated, groupAuthenticated),
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{
				{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"}}},
		}),
		newSchema("system-leader-election", "leader-election", 100, byUser, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects:      append(users(userControllerMgr, userScheduler), systemServiceAccounts(flowcontrolv1.NameAll)...),
			ResourceRules: leaderElection(namespaceSystem),
		}),
		newSchema("endpoint-controller", "workload-high", 150, byUser, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: append(users(userControllerMgr), systemServiceAccounts("endpoint-controller", "endpointslicemirroring-controller")...),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get", "create", "update"}, APIGroups: []string{""},
				Resources: []string{"endpoints"}, Namespaces: []string{flowcontrolv1.NamespaceEvery}}},
		}),
		newSchema("workload-leader-election", "leader-election", 200, byUser, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects:      systemServiceAccounts(flowcontrolv1.NameAll),
			ResourceRules: leaderElection(flowcontrolv1.NamespaceEvery),
		}),
		newSchema("system-node-high", "node-high", 400, byUser, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: groups(groupNodes),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				{Verbs: all, APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, ClusterScope: true,
					Namespaces: []string{flowcontrolv1.NamespaceEvery}},
				{Verbs: all, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
					Namespaces: []string{flowcontrolv1.NamespaceEvery}},
			},
		}),
		newSchema("system-nodes", "system", 500, byUser, everything(groups(groupNodes)...)),
		newSchema("kube-controller-manager", "workload-high", 800, byNamespace, everything(users(userControllerMgr)...)),
		newSchema("kube-scheduler", "workload-high", 800, byNamespace, everything(users(userScheduler)...)),
		newSchema("kube-system-service-accounts", "workload-high", 900, byNamespace, everything(systemServiceAccounts(flowcontrolv1.NameAll)...)),
		newSchema("service-accounts", "workload-low", 9000, byUser, everything(groups(groupServiceAccounts)...)),
		newSchema("global-default", "global-default", 9900, byUser, everything(groups(groupUnauthenticated, groupAuthenticated)...)),
	}
}

func newLevel(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) *flowcontrolv1.PriorityLevelConfiguration {
	pl := &flowcontrolv1.PriorityLevelConfiguration{
		TypeMeta:   api.TypeMeta{APIVersion: flowcontrolv1.GroupVersion.String(), Kind: "PriorityLevelConfiguration"},
		ObjectMeta: api.ObjectMeta{Name: name, Annotations: map[string]string{AnnotationAutoUpdateSpec: "true"}},
		Spec:       spec,
	}
	flowcontrolv1.DefaultPriorityLevelConfiguration(pl)
	return pl
}

func limited(name string, shares, lendable int32, q *flowcontrolv1.QueuingConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	resp := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
	if q != nil {
		resp = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: q}
	}
	return newLevel(name, flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: &shares, LendablePercent: &lendable, LimitResponse: resp,
		}})
}

func queuing(queues, hand, length int32) *flowcontrolv1.QueuingConfiguration {
	return &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: hand, QueueLengthLimit: length}
}

func newSchema(name, level string, precedence int32, method flowcontrolv1.FlowDistinguisherMethodType,
	rules ...flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	fs := &flowcontrolv1.FlowSchema{
		TypeMeta:   api.TypeMeta{APIVersion: flowcontrolv1.GroupVersion.String(), Kind: "FlowSchema"},
		ObjectMeta: api.ObjectMeta{Name: name, Annotations: map[string]string{AnnotationAutoUpdateSpec: "true"}},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         precedence, Rules: rules,
		},
	}
	if method != "" {
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: method}
	}
	return fs
}

// everything is a rule matching every request of subjects.
func everything(subjects ...flowcontrolv1.Subject) flowcontrolv1.PolicyRulesWithSubjects {
	all := []string{flowcontrolv1.VerbAll}
	return flowcontrolv1.PolicyRulesWithSubjects{
		Subjects: subjects,
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: all, APIGroups: []string{flowcontrolv1.APIGroupAll},
			Resources: []string{flowcontrolv1.ResourceAll}, ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery}}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: all, NonResourceURLs: []string{flowcontrolv1.NonResourceAll}}},
	}
}

func groups(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: n}}
	}
	return out
}

func users(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: n}}
	}
	return out
}

func systemServiceAccounts(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: namespaceSystem, Name: n}}
	}
	return out
}
