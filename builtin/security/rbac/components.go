package rbac

import (
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/api"
)

// Component identities: the users the control plane's own parts
// authenticate as in secure mode, as in Kubernetes.
const (
	ControllerManagerUser = "system:kube-controller-manager"
	SchedulerUser         = "system:kube-scheduler"
	ProxyUser             = "system:kube-proxy"
	// NodesGroup holds every node agent (system:node:NAME).
	NodesGroup = "system:nodes"
	// BootstrappersGroup holds bootstrap tokens (system:bootstrap:TOKENID).
	BootstrappersGroup = "system:bootstrappers"
)

// NodeRules are the system:node ClusterRole: what any node agent may do
// regardless of relationships (the Node authorizer grants them, and adds
// the Secrets, ConfigMaps, PersistentVolumeClaims and ServiceAccount tokens
// its pods use; NodeRestriction limits the writes to its own objects).
func NodeRules() []rbacv1.PolicyRule {
	core := []string{""}
	return []rbacv1.PolicyRule{
		rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews"),
		rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews", "localsubjectaccessreviews"),
		rule(readVerbs, core, "services", "endpoints", "namespaces"),
		rule([]string{"create", "delete", "get", "list", "patch", "update", "watch"}, core, "nodes"),
		rule([]string{"patch", "update"}, core, "nodes/status"),
		rule([]string{"create", "patch", "update"}, core, "events"),
		rule([]string{"create", "patch", "update"}, []string{"events.k8s.io"}, "events"),
		rule(readVerbs, core, "pods"),
		rule([]string{"create", "delete"}, core, "pods"),
		rule([]string{"patch", "update"}, core, "pods/status"),
		rule([]string{"create"}, core, "pods/eviction"),
		rule([]string{"get", "update", "patch"}, core, "persistentvolumeclaims/status"),
		rule([]string{"get", "create", "update", "patch", "delete"}, []string{"coordination.k8s.io"}, "leases"),
		rule([]string{"create", "get", "list", "watch"}, []string{"certificates.k8s.io"}, "certificatesigningrequests"),
		rule(readVerbs, []string{"discovery.k8s.io"}, "endpointslices"),
		rule(readVerbs, []string{"node.k8s.io"}, "runtimeclasses"),
		rule(readVerbs, []string{"storage.k8s.io"}, "csidrivers", "csinodes", "volumeattachments"),
	}
}

// SchedulerRules are the system:kube-scheduler ClusterRole.
func SchedulerRules() []rbacv1.PolicyRule {
	core := []string{""}
	return []rbacv1.PolicyRule{
		rule([]string{"create", "patch", "update"}, core, "events"),
		rule([]string{"create", "patch", "update"}, []string{"events.k8s.io"}, "events"),
		rule([]string{"create", "get", "list", "watch", "update", "patch"}, []string{"coordination.k8s.io"}, "leases"),
		rule([]string{"create", "get", "update"}, core, "endpoints"),
		rule(readVerbs, core, "nodes", "namespaces", "services", "replicationcontrollers", "persistentvolumeclaims", "persistentvolumes"),
		rule([]string{"delete", "get", "list", "watch"}, core, "pods"),
		rule([]string{"create"}, core, "bindings", "pods/binding"),
		rule([]string{"patch", "update"}, core, "pods/status"),
		rule(readVerbs, []string{"apps"}, "replicasets", "statefulsets"),
		rule(readVerbs, []string{"policy"}, "poddisruptionbudgets"),
		rule(readVerbs, []string{"scheduling.k8s.io"}, "priorityclasses"),
		rule(readVerbs, []string{"storage.k8s.io"}, "storageclasses", "csinodes", "csidrivers", "csistoragecapacities"),
		rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews"),
		rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews"),
	}
}

// ControllerManagerRules are the system:kube-controller-manager ClusterRole.
// Kubernetes runs each controller as its own ServiceAccount; here the
// built-in controllers (the garbage collector and namespace controller among
// them, which act on every resource, CRDs included) and the operators share the
// controller manager's identity, so it may act on every resource. It holds no
// non-resource rights beyond discovery.
func ControllerManagerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rule([]string{"*"}, []string{"*"}, "*")}
}

// ProxyRules are the system:node-proxier ClusterRole (the service proxy).
func ProxyRules() []rbacv1.PolicyRule {
	core := []string{""}
	return []rbacv1.PolicyRule{
		rule(readVerbs, core, "services", "endpoints", "nodes"),
		rule(readVerbs, []string{"discovery.k8s.io"}, "endpointslices"),
		rule([]string{"create", "patch", "update"}, core, "events"),
		rule([]string{"create", "patch", "update"}, []string{"events.k8s.io"}, "events"),
	}
}

// componentRoles are the ClusterRoles of the control plane's parts.
func componentRoles(tm api.TypeMeta) []rbacv1.ClusterRole {
	role := func(name string, rules []rbacv1.PolicyRule) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{TypeMeta: tm, ObjectMeta: bootstrapMeta(name, nil), Rules: rules}
	}
	return append([]rbacv1.ClusterRole{
		role("system:node", NodeRules()),
		role("system:kube-scheduler", SchedulerRules()),
		role("system:kube-controller-manager", ControllerManagerRules()),
		role("system:node-proxier", ProxyRules()),
		// As Kubernetes: full access to the node agents' API (nodes/proxy
		// among it), bound to nobody by default.
		role("system:kubelet-api-admin", []rbacv1.PolicyRule{
			rule([]string{"get", "list", "watch", "proxy"}, []string{""}, "nodes"),
			rule([]string{"*"}, []string{""}, "nodes/log", "nodes/metrics", "nodes/proxy", "nodes/stats"),
		}),
	}, bootstrapRoles(tm)...)
}

// componentBindings bind the component roles to their users. system:node has
// no subjects: the Node authorizer grants its rules to each node.
func componentBindings(tm api.TypeMeta) []rbacv1.ClusterRoleBinding {
	bind := func(name, role, user string) rbacv1.ClusterRoleBinding {
		b := rbacv1.ClusterRoleBinding{TypeMeta: tm, ObjectMeta: bootstrapMeta(name, nil),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
		if user != "" {
			b.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
		}
		return b
	}
	return append([]rbacv1.ClusterRoleBinding{
		bind("system:node", "system:node", ""),
		bind("system:kube-scheduler", "system:kube-scheduler", SchedulerUser),
		bind("system:kube-controller-manager", "system:kube-controller-manager", ControllerManagerUser),
		bind("system:node-proxier", "system:node-proxier", ProxyUser),
	}, bootstrapBindings(tm)...)
}

// bootstrapRoles let bootstrap tokens ask for node client certificates that
// are approved automatically, and nodes renew their own.
func bootstrapRoles(tm api.TypeMeta) []rbacv1.ClusterRole {
	role := func(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{TypeMeta: tm, ObjectMeta: bootstrapMeta(name, nil), Rules: rules}
	}
	certs := []string{"certificates.k8s.io"}
	return []rbacv1.ClusterRole{
		role("system:node-bootstrapper", rule([]string{"create", "get", "list", "watch"}, certs, "certificatesigningrequests")),
		role("system:certificates.k8s.io:certificatesigningrequests:nodeclient", rule([]string{"create"}, certs, "certificatesigningrequests/nodeclient")),
		role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", rule([]string{"create"}, certs, "certificatesigningrequests/selfnodeclient")),
	}
}

func bootstrapBindings(tm api.TypeMeta) []rbacv1.ClusterRoleBinding {
	bind := func(name, group string) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{TypeMeta: tm, ObjectMeta: bootstrapMeta(name, nil),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}}}
	}
	return []rbacv1.ClusterRoleBinding{
		bind("system:node-bootstrapper", BootstrappersGroup),
		bind("system:certificates.k8s.io:certificatesigningrequests:nodeclient", BootstrappersGroup),
		bind("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", NodesGroup),
	}
}
