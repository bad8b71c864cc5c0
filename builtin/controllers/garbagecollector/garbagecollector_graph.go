package garbagecollector

import (
	"slices"
	"sync"

	"github.com/converge-dev/converge/framework/api"
)

// node is what the graph knows of one object: its identity, owners and
// deletion state. Nodes are immutable once in the graph (updates replace them).
type node struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	UID        string
	// Resource is the monitored resource the object came from.
	Resource   string
	Owners     []api.OwnerReference
	Deleting   bool
	Finalizers []string
}

func (n *node) hasFinalizer(f string) bool { return slices.Contains(n.Finalizers, f) }

// waitingForDependents reports whether n is being deleted in the foreground.
func (n *node) waitingForDependents() bool {
	return n.Deleting && n.hasFinalizer(api.FinalizerDeleteDependents)
}

// orphaning reports whether n is being deleted with its dependents orphaned.
func (n *node) orphaning() bool {
	return n.Deleting && n.hasFinalizer(api.FinalizerOrphanDependents)
}

// ownerRef returns n's reference to owner uid, if any.
func (n *node) ownerRef(uid string) (api.OwnerReference, bool) {
	for _, r := range n.Owners {
		if r.UID == uid {
			return r, true
		}
	}
	return api.OwnerReference{}, false
}

// object returns an Unstructured naming n (apiVersion, kind, namespace, name),
// suitable for a live GET.
func (n *node) object() *api.Unstructured {
	u := &api.Unstructured{Object: map[string]any{"apiVersion": n.APIVersion, "kind": n.Kind, "metadata": map[string]any{}}}
	u.SetName(n.Name)
	u.SetNamespace(n.Namespace)
	api.SetNestedField(u.Object, n.UID, "metadata", "uid")
	return u
}

// nodeFor builds the node of obj, an object of kind gvk from resource res.
func nodeFor(obj api.Object, res string, gvk api.GroupVersionKind) *node {
	return &node{
		APIVersion: gvk.APIVersion(),
		Kind:       gvk.Kind,
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
		Resource:   res,
		Owners:     obj.GetOwnerReferences(),
		Deleting:   obj.GetDeletionTimestamp() != nil,
		Finalizers: obj.GetFinalizers(),
	}
}

// graph indexes nodes by uid and dependents by owner uid. Owners need not be
// in the graph (dangling references, or an owner not observed yet).
type graph struct {
	mu         sync.RWMutex
	nodes      map[string]*node               // guarded by mu
	dependents map[string]map[string]struct{} // owner uid → dependent uids; guarded by mu
}

func newGraph() *graph {
	return &graph{nodes: map[string]*node{}, dependents: map[string]map[string]struct{}{}}
}

// upsert stores n and returns the node it replaced (nil if new).
func (g *graph) upsert(n *node) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.nodes[n.UID]
	if old != nil {
		g.unlinkLocked(old)
	}
	g.nodes[n.UID] = n
	for _, r := range n.Owners {
		deps := g.dependents[r.UID]
		if deps == nil {
			deps = map[string]struct{}{}
			g.dependents[r.UID] = deps
		}
		deps[n.UID] = struct{}{}
	}
	return old
}

// remove deletes uid and returns the node it held (nil if absent).
func (g *graph) remove(uid string) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.nodes[uid]
	if old != nil {
		g.unlinkLocked(old)
		delete(g.nodes, uid)
	}
	return old
}

func (g *graph) unlinkLocked(n *node) {
	for _, r := range n.Owners {
		if deps := g.dependents[r.UID]; deps != nil {
			delete(deps, n.UID)
			if len(deps) == 0 {
				delete(g.dependents, r.UID)
			}
		}
	}
}

// get returns the node of uid.
func (g *graph) get(uid string) (*node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.nodes[uid]
	return n, ok
}

// dependentsOf returns the nodes that reference owner uid.
func (g *graph) dependentsOf(uid string) []*node {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*node, 0, len(g.dependents[uid]))
	for d := range g.dependents[uid] {
		if n := g.nodes[d]; n != nil {
			out = append(out, n)
		}
	}
	return out
}

// uidsOf returns the uids of the nodes that came from resource res.
func (g *graph) uidsOf(res string) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []string
	for uid, n := range g.nodes {
		if n.Resource == res {
			out = append(out, uid)
		}
	}
	return out
}
