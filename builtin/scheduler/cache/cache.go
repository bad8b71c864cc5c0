package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// ErrNotAssumed is returned by FinishBinding/ForgetPod for a pod that is not assumed.
var ErrNotAssumed = errors.New("schedulercache: pod is not assumed")

// Options configure a Cache; the zero value gives the defaults.
type Options struct {
	// AssumedPodTTL is how long an assumed pod whose binding finished waits
	// for the informer to confirm it; default 30s.
	AssumedPodTTL time.Duration
	// CleanupPeriod is the period of the expiry check; default 1s.
	CleanupPeriod time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// nodeItem is a NodeInfo in the recency list (head = most recently changed).
type nodeItem struct {
	info       *plugin.NodeInfo
	next, prev *nodeItem
}

type podState struct {
	pod             *corev1.Pod
	deadline        time.Time
	bindingFinished bool
	assumed         bool
}

type imageState struct {
	size  int64
	nodes map[string]struct{}
}

// Cache holds the nodes and pods the scheduler knows about.
type Cache struct {
	opts Options

	// mu guards every field below.
	mu         sync.RWMutex
	nodes      map[string]*nodeItem
	head       *nodeItem
	pods       map[string]*podState // by UID
	images     map[string]*imageState
	generation int64
	// zones lists node names per zone in order of appearance; zoneOrder the zones.
	zones     map[string][]string
	zoneOrder []string
	// nodeSetChanged is set when nodes are added/removed (snapshot list rebuild).
	nodeSetChanged bool
}

// New returns an empty cache.
func New(opts Options) *Cache {
	if opts.AssumedPodTTL <= 0 {
		opts.AssumedPodTTL = 30 * time.Second
	}
	if opts.CleanupPeriod <= 0 {
		opts.CleanupPeriod = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Cache{
		opts:   opts,
		nodes:  map[string]*nodeItem{},
		pods:   map[string]*podState{},
		images: map[string]*imageState{},
		zones:  map[string][]string{},
	}
}

// Start expires assumed pods periodically until ctx ends.
func (c *Cache) Start(ctx context.Context) error {
	t := time.NewTicker(c.opts.CleanupPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.CleanupExpiredAssumedPods(ctx)
		}
	}
}

func podKey(p *corev1.Pod) string {
	if p.UID != "" {
		return p.UID
	}
	return p.Namespace + "/" + p.Name
}

// moveToHead bumps the node's generation and makes it the most recent; c.mu held.
func (c *Cache) touch(name string) *nodeItem {
	it, ok := c.nodes[name]
	if !ok {
		it = &nodeItem{info: plugin.NewNodeInfo()}
		c.nodes[name] = it
	} else if c.head != it {
		if it.prev != nil {
			it.prev.next = it.next
		}
		if it.next != nil {
			it.next.prev = it.prev
		}
		it.prev = nil
		it.next = nil
	}
	if c.head != it {
		it.next = c.head
		if c.head != nil {
			c.head.prev = it
		}
		c.head = it
	}
	c.generation++
	it.info.Generation = c.generation
	return it
}

func (c *Cache) unlink(name string) {
	it := c.nodes[name]
	if it == nil {
		return
	}
	if it.prev != nil {
		it.prev.next = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	}
	if c.head == it {
		c.head = it.next
	}
	delete(c.nodes, name)
}

func (c *Cache) addPodLocked(pod *corev1.Pod) {
	it := c.touch(pod.Spec.NodeName)
	it.info.AddPod(pod)
}

func (c *Cache) removePodLocked(pod *corev1.Pod) error {
	it, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return fmt.Errorf("node %q of pod %s/%s not in cache", pod.Spec.NodeName, pod.Namespace, pod.Name)
	}
	if err := it.info.RemovePod(pod); err != nil {
		return err
	}
	c.touch(pod.Spec.NodeName)
	if len(it.info.Pods) == 0 && it.info.Node() == nil {
		c.unlink(pod.Spec.NodeName)
	}
	return nil
}

// AssumePod records pod (with spec.nodeName set to the chosen node) as placed
// before its binding is confirmed.
func (c *Cache) AssumePod(pod *corev1.Pod) error {
	key := podKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[key]; ok {
		return fmt.Errorf("pod %s/%s is in the cache, so can't be assumed", pod.Namespace, pod.Name)
	}
	c.addPodLocked(pod)
	c.pods[key] = &podState{pod: pod, assumed: true}
	return nil
}

// FinishBinding starts the assumed pod's expiry clock.
func (c *Cache) FinishBinding(pod *corev1.Pod) error {
	key := podKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[key]
	if !ok || !ps.assumed {
		return ErrNotAssumed
	}
	ps.bindingFinished = true
	ps.deadline = c.opts.Now().Add(c.opts.AssumedPodTTL)
	return nil
}

// ForgetPod removes an assumed pod.
func (c *Cache) ForgetPod(pod *corev1.Pod) error {
	key := podKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[key]
	if !ok || !ps.assumed {
		return ErrNotAssumed
	}
	delete(c.pods, key)
	return c.removePodLocked(ps.pod)
}

// IsAssumedPod reports whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *corev1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ps, ok := c.pods[podKey(pod)]
	return ok && ps.assumed
}

// AddPod records a bound pod seen by the informer; it confirms an assumption.
func (c *Cache) AddPod(pod *corev1.Pod) {
	key := podKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[key]; ok {
		// Confirmed (or re-delivered): replace the old version, possibly on
		// another node if the bind raced.
		_ = c.removePodLocked(ps.pod)
	}
	c.addPodLocked(pod)
	c.pods[key] = &podState{pod: pod}
}

// UpdatePod replaces a bound pod.
func (c *Cache) UpdatePod(oldPod, newPod *corev1.Pod) {
	c.AddPod(newPod)
}

// RemovePod forgets a bound pod (deleted or terminated).
func (c *Cache) RemovePod(pod *corev1.Pod) {
	key := podKey(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[key]
	if !ok {
		return
	}
	delete(c.pods, key)
	_ = c.removePodLocked(ps.pod)
}

// CleanupExpiredAssumedPods removes assumed pods whose TTL passed.
func (c *Cache) CleanupExpiredAssumedPods(ctx context.Context) {
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, ps := range c.pods {
		if ps.assumed && ps.bindingFinished && now.After(ps.deadline) {
			logr.FromContextOrDiscard(ctx).V(1).Info("assumed pod expired", "pod", ps.pod.Namespace+"/"+ps.pod.Name, "node", ps.pod.Spec.NodeName)
			delete(c.pods, key)
			_ = c.removePodLocked(ps.pod)
		}
	}
}

func zoneOf(n *corev1.Node) string {
	if z, ok := n.Labels["topology.kubernetes.io/zone"]; ok {
		return n.Labels["topology.kubernetes.io/region"] + ":\x00:" + z
	}
	return ""
}

// AddNode adds or replaces a node.
func (c *Cache) AddNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, existed := c.nodes[node.Name]
	var old *corev1.Node
	if existed {
		old = it.info.Node()
	}
	it = c.touch(node.Name)
	if old != nil {
		c.removeImagesLocked(old)
		if zoneOf(old) != zoneOf(node) {
			c.removeFromZoneLocked(old)
			old = nil
		}
	}
	if old == nil {
		z := zoneOf(node)
		if _, ok := c.zones[z]; !ok {
			c.zoneOrder = append(c.zoneOrder, z)
		}
		c.zones[z] = append(c.zones[z], node.Name)
		c.nodeSetChanged = true
	}
	c.addImagesLocked(node)
	it.info.SetNode(node)
	c.setImageStatesLocked(it.info)
}

// UpdateNode replaces a node.
func (c *Cache) UpdateNode(_, newNode *corev1.Node) { c.AddNode(newNode) }

// RemoveNode removes a node; its pods stay until they are deleted.
func (c *Cache) RemoveNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.nodes[node.Name]
	if !ok || it.info.Node() == nil {
		return
	}
	c.removeImagesLocked(it.info.Node())
	c.removeFromZoneLocked(it.info.Node())
	c.nodeSetChanged = true
	if len(it.info.Pods) == 0 {
		c.unlink(node.Name)
		c.generation++
		return
	}
	c.touch(node.Name)
	it.info.RemoveNode()
}

func (c *Cache) removeFromZoneLocked(n *corev1.Node) {
	z := zoneOf(n)
	names := c.zones[z]
	if i := slices.Index(names, n.Name); i >= 0 {
		names = slices.Delete(names, i, i+1)
	}
	if len(names) == 0 {
		delete(c.zones, z)
		if i := slices.Index(c.zoneOrder, z); i >= 0 {
			c.zoneOrder = slices.Delete(c.zoneOrder, i, i+1)
		}
		return
	}
	c.zones[z] = names
}

func (c *Cache) addImagesLocked(n *corev1.Node) {
	for _, img := range n.Status.Images {
		for _, name := range img.Names {
			name = NormalizeImageName(name)
			s := c.images[name]
			if s == nil {
				s = &imageState{size: img.SizeBytes, nodes: map[string]struct{}{}}
				c.images[name] = s
			}
			s.nodes[n.Name] = struct{}{}
		}
	}
}

func (c *Cache) removeImagesLocked(n *corev1.Node) {
	for _, img := range n.Status.Images {
		for _, name := range img.Names {
			name = NormalizeImageName(name)
			if s := c.images[name]; s != nil {
				delete(s.nodes, n.Name)
				if len(s.nodes) == 0 {
					delete(c.images, name)
				}
			}
		}
	}
}

func (c *Cache) setImageStatesLocked(ni *plugin.NodeInfo) {
	n := ni.Node()
	if n == nil || len(n.Status.Images) == 0 {
		ni.ImageStates = nil
		return
	}
	m := make(map[string]*plugin.ImageStateSummary, len(n.Status.Images))
	for _, img := range n.Status.Images {
		for _, name := range img.Names {
			name = NormalizeImageName(name)
			if s := c.images[name]; s != nil {
				m[name] = &plugin.ImageStateSummary{Size: s.size, NumNodes: len(s.nodes)}
			}
		}
	}
	ni.ImageStates = m
}

// NodeCount returns the number of nodes with a Node object.
func (c *Cache) NodeCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for _, names := range c.zones {
		n += len(names)
	}
	return n
}

// PodCount returns the number of pods (bound and assumed).
func (c *Cache) PodCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pods)
}

// UpdateSnapshot brings s up to date, copying only the nodes changed since
// its last update.
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	affinityChanged := false
	for it := c.head; it != nil; it = it.next {
		if it.info.Generation <= s.generation {
			break
		}
		if n := it.info.Node(); n != nil {
			clone := it.info.Snapshot()
			old, ok := s.nodeInfoMap[n.Name]
			if !ok || (len(old.PodsWithAffinity) > 0) != (len(clone.PodsWithAffinity) > 0) ||
				(len(old.PodsWithRequiredAntiAffinity) > 0) != (len(clone.PodsWithRequiredAntiAffinity) > 0) {
				affinityChanged = true
			}
			if ok && !c.nodeSetChanged {
				// Keep list entries valid: update in place.
				*old = *clone
			} else {
				s.nodeInfoMap[n.Name] = clone
			}
		}
	}
	s.generation = c.generation
	if c.nodeSetChanged || len(s.nodeInfoMap) != c.nodeCountLocked() {
		for name := range s.nodeInfoMap {
			if it, ok := c.nodes[name]; !ok || it.info.Node() == nil {
				delete(s.nodeInfoMap, name)
			}
		}
		s.nodeInfoList = s.nodeInfoList[:0]
		c.forEachNodeInZoneOrder(func(name string) {
			if ni, ok := s.nodeInfoMap[name]; ok {
				s.nodeInfoList = append(s.nodeInfoList, ni)
			}
		})
		c.nodeSetChanged = false
		affinityChanged = true
	}
	if affinityChanged {
		s.rebuildAffinityLists()
	}
}

func (c *Cache) nodeCountLocked() int {
	n := 0
	for _, names := range c.zones {
		n += len(names)
	}
	return n
}

// forEachNodeInZoneOrder visits nodes round-robin over zones, like
// kube-scheduler's node tree, so that consecutive nodes are in different zones.
func (c *Cache) forEachNodeInZoneOrder(fn func(name string)) {
	for i := 0; ; i++ {
		any := false
		for _, z := range c.zoneOrder {
			if names := c.zones[z]; i < len(names) {
				fn(names[i])
				any = true
			}
		}
		if !any {
			return
		}
	}
}

// GetNode returns the cached Node object.
func (c *Cache) GetNode(name string) (*corev1.Node, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	it, ok := c.nodes[name]
	if !ok || it.info.Node() == nil {
		return nil, false
	}
	return it.info.Node(), true
}
