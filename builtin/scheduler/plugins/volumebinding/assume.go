package volumebinding

import (
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// DefaultAssumeTTL bounds how long a claim reserved for a node by a scheduled
// pod waits for the binder to record it (selected-node) before it is
// forgotten (e.g. when the pod was deleted before the claim was bound).
const DefaultAssumeTTL = 30 * time.Second

// assumption is an unbound claim reserved for a node by a pod this plugin
// placed; the binder will bind the claim to that node.
type assumption struct {
	uid  string // the claim's uid
	node string
	pod  string // uid of the reserving pod
	at   time.Time
}

// assumeCache remembers, per claim (namespace/name), the node an unbound
// claim was reserved for until the binder's selected-node shows up in the
// informer, so that the next consumers of the claim follow the first one
// instead of racing the binder (kube-scheduler's assume cache plays this
// role). Safe for concurrent use.
type assumeCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[string]assumption // guarded by mu
}

func newAssumeCache(ttl time.Duration, now func() time.Time) *assumeCache {
	return &assumeCache{ttl: ttl, now: now, m: map[string]assumption{}}
}

func claimKey(namespace, name string) string { return namespace + "/" + name }

// node returns the node pvc (unbound) was reserved for, or "".
func (c *assumeCache) node(pvc *corev1.PersistentVolumeClaim) string {
	key := claimKey(pvc.Namespace, pvc.Name)
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[key]
	switch {
	case !ok:
		return ""
	case a.uid != pvc.UID || c.now().Sub(a.at) > c.ttl:
		delete(c.m, key)
		return ""
	}
	return a.node
}

// assume reserves pvc for node on behalf of pod; an existing live
// reservation of the same claim is kept (PreFilter made pod follow it).
func (c *assumeCache) assume(pvc *corev1.PersistentVolumeClaim, node, podUID string) {
	key := claimKey(pvc.Namespace, pvc.Name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.m[key]; ok && a.uid == pvc.UID && c.now().Sub(a.at) <= c.ttl {
		return
	}
	c.m[key] = assumption{uid: pvc.UID, node: node, pod: podUID, at: c.now()}
}

// forgetPod drops the reservation of claim namespace/name made by the pod.
func (c *assumeCache) forgetPod(namespace, name, podUID string) {
	key := claimKey(namespace, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.m[key]; ok && a.pod == podUID {
		delete(c.m, key)
	}
}

// forget drops the reservation of a claim (bound or deleted).
func (c *assumeCache) forget(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, claimKey(namespace, name))
}

// len returns the number of reservations (tests).
func (c *assumeCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
