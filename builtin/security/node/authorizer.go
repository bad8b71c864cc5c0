package node

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Well-known names.
const (
	// Group holds every node agent.
	Group = rbac.NodesGroup
	// UserPrefix starts a node agent's user name (system:node:NAME).
	UserPrefix = "system:node:"
	// LeaseNamespace holds the node heartbeat Leases.
	LeaseNamespace = "kube-node-lease"
)

// Identity returns the node name of a node agent's user; ok is false for
// other users.
func Identity(u *filters.User) (name string, ok bool) {
	if u == nil || !u.InGroup(Group) {
		return "", false
	}
	name, ok = strings.CutPrefix(u.Name, UserPrefix)
	return name, ok && name != ""
}

// User returns the identity of node name.
func User(name string) *filters.User {
	return &filters.User{Name: UserPrefix + name, Groups: []string{Group, filters.GroupAuthenticated}}
}

// PodLister lists the pods of a namespace bound to node; it may return
// others too (they are filtered again).
type PodLister func(ctx context.Context, namespace, node string) ([]Pod, error)

// ClaimVolumes returns, for the PersistentVolumeClaims of a namespace, the
// volume each is bound to (spec.volumeName) by claim name.
type ClaimVolumes func(ctx context.Context, namespace string) (map[string]string, error)

// Authorizer is the Node authorizer.
type Authorizer struct {
	// Pods lists the pods the relationships are read from.
	Pods PodLister
	// Claims reads the claims' volumes (nil: nodes get no
	// PersistentVolume).
	Claims ClaimVolumes
	rules  []rbacv1.PolicyRule
}

// NewAuthorizer returns a Node authorizer reading pods through pods.
func NewAuthorizer(pods PodLister) *Authorizer {
	return &Authorizer{Pods: pods, rules: Rules()}
}

var _ filters.Authorizer = (*Authorizer)(nil)

// Rules are the system:node ClusterRole (rbac.NodeRules).
func Rules() []rbacv1.PolicyRule { return rbac.NodeRules() }

// Authorize implements filters.Authorizer.
func (a *Authorizer) Authorize(ctx context.Context, attrs filters.Attributes) (filters.Decision, string, error) {
	node, ok := Identity(attrs.User)
	if !ok {
		return filters.DecisionNoOpinion, "", nil
	}
	if !attrs.ResourceRequest {
		return filters.DecisionNoOpinion, "", nil
	}
	if attrs.APIGroup == "" {
		switch {
		case attrs.Resource == "secrets" && attrs.Subresource == "",
			attrs.Resource == "configmaps" && attrs.Subresource == "",
			attrs.Resource == "persistentvolumeclaims" && attrs.Subresource == "",
			attrs.Resource == "serviceaccounts" && attrs.Subresource == "":
			if attrs.Verb != "get" || attrs.Name == "" {
				return filters.DecisionNoOpinion, fmt.Sprintf("node %q can only get individual %s", node, attrs.Resource), nil
			}
			return a.related(ctx, node, attrs)
		case attrs.Resource == "persistentvolumes" && attrs.Subresource == "":
			if attrs.Verb != "get" || attrs.Name == "" {
				return filters.DecisionNoOpinion, fmt.Sprintf("node %q can only get individual %s", node, attrs.Resource), nil
			}
			return a.relatedVolume(ctx, node, attrs.Name)
		case attrs.Resource == "serviceaccounts" && attrs.Subresource == "token":
			if attrs.Verb != "create" || attrs.Name == "" {
				return filters.DecisionNoOpinion, fmt.Sprintf("node %q can only create tokens for individual service accounts", node), nil
			}
			return a.related(ctx, node, attrs)
		case attrs.Resource == "nodes" && attrs.Name != "" && attrs.Name != node && writes(attrs.Verb):
			return filters.DecisionNoOpinion, fmt.Sprintf("node %q cannot modify node %q", node, attrs.Name), nil
		}
	}
	if attrs.APIGroup == "coordination.k8s.io" && attrs.Resource == "leases" {
		if attrs.Namespace != LeaseNamespace || (attrs.Name != "" && attrs.Name != node) {
			return filters.DecisionNoOpinion, fmt.Sprintf("node %q can only access its own lease in %s", node, LeaseNamespace), nil
		}
	}
	for i := range a.rules {
		if rbac.RuleAllows(attrs, &a.rules[i]) {
			return filters.DecisionAllow, "", nil
		}
	}
	return filters.DecisionNoOpinion, "", nil
}

func writes(verb string) bool {
	return verb != "get" && verb != "list" && verb != "watch"
}

// related allows attrs when a pod bound to node references the object.
func (a *Authorizer) related(ctx context.Context, node string, attrs filters.Attributes) (filters.Decision, string, error) {
	pods, err := a.Pods(ctx, attrs.Namespace, node)
	if err != nil {
		return filters.DecisionNoOpinion, "", fmt.Errorf("node authorizer: list pods in %q: %w", attrs.Namespace, err)
	}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != node || p.Metadata.Namespace != attrs.Namespace {
			continue
		}
		if slices.Contains(p.references(attrs.Resource), attrs.Name) {
			return filters.DecisionAllow, "", nil
		}
	}
	return filters.DecisionNoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
}

// relatedVolume allows getting the PersistentVolume name when a pod bound to
// node uses a claim bound to it (Kubernetes' node authorizer graph: pod,
// claim, volume).
func (a *Authorizer) relatedVolume(ctx context.Context, node, name string) (filters.Decision, string, error) {
	deny := fmt.Sprintf("no relationship found between node '%s' and this object", node)
	if a.Claims == nil {
		return filters.DecisionNoOpinion, deny, nil
	}
	pods, err := a.Pods(ctx, "", node)
	if err != nil {
		return filters.DecisionNoOpinion, "", fmt.Errorf("node authorizer: list pods of node %q: %w", node, err)
	}
	volumes := map[string]map[string]string{} // by namespace
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != node {
			continue
		}
		for _, claim := range p.references("persistentvolumeclaims") {
			ns := p.Metadata.Namespace
			if volumes[ns] == nil {
				v, err := a.Claims(ctx, ns)
				if err != nil {
					return filters.DecisionNoOpinion, "", fmt.Errorf("node authorizer: read claims in %q: %w", ns, err)
				}
				volumes[ns] = v
			}
			if volumes[ns][claim] == name {
				return filters.DecisionAllow, "", nil
			}
		}
	}
	return filters.DecisionNoOpinion, deny, nil
}
