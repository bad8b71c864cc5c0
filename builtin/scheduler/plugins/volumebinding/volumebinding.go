package volumebinding

import (
	"context"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/builtin/scheduler/nodeselector"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/volumematch"
	"github.com/converge-dev/converge/framework/cache"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "VolumeBinding"

// AnnSelectedNode is the claim annotation naming the node its volume lives
// on (set by the volumebinder controller, as Kubernetes' scheduler sets it).
const AnnSelectedNode = "volume.kubernetes.io/selected-node"

// ErrReasonNodeConflict is the Filter rejection, worded like kube-scheduler's.
const ErrReasonNodeConflict = "node(s) had volume node affinity conflict"

const stateKey plugin.StateKey = "PreFilter" + Name

// ClaimGetter returns the claim namespace/name from the scheduler's cache;
// false when there is none. The claim must not be modified.
type ClaimGetter func(namespace, name string) (*corev1.PersistentVolumeClaim, bool)

// VolumeGetter returns the PersistentVolume name from the scheduler's
// cache; false when there is none. The volume must not be modified.
type VolumeGetter func(name string) (*corev1.PersistentVolume, bool)

// stateData is what PreFilter found: the node the pod's bound claims are on,
// and the node affinity of the PersistentVolumes its claims are bound to.
type stateData struct {
	// node is the node of every claim that has one ("": none has).
	node string
	// affinity holds the required node affinity of the claims' volumes.
	affinity []*corev1.NodeSelector
	// conflict: the claims are on different nodes, so no node fits.
	conflict bool
	// waiting are the unbound claims of WaitForFirstConsumer classes of
	// pre-created volumes only (kubernetes.io/no-provisioner), with their
	// class; volumes is the volumes they may be bound to.
	waiting []waitingClaim
	volumes []*corev1.PersistentVolume
}

// waitingClaim is an unbound claim that needs a pre-created volume on the
// pod's node.
type waitingClaim struct {
	pvc   *corev1.PersistentVolumeClaim
	class string
}

// ErrReasonBindConflict rejects a node where no volume would match a claim
// that waits for its first consumer, worded like kube-scheduler's.
const ErrReasonBindConflict = "node(s) didn't find available persistent volumes to bind"

// ClassGetter returns the StorageClass name from the scheduler's cache.
type ClassGetter func(name string) (*storagev1.StorageClass, bool)

// VolumeLister lists the PersistentVolumes of the scheduler's cache.
type VolumeLister func() []*corev1.PersistentVolume

// Clone implements plugin.StateData; the value is never modified.
func (s *stateData) Clone() plugin.StateData { return s }

// VolumeBinding is the plugin.
type VolumeBinding struct {
	getClaim    ClaimGetter
	getVolume   VolumeGetter
	listVolumes VolumeLister
	getClass    ClassGetter
	assumed     *assumeCache
	// skip is the Skip status PreFilter returns for pods without bound
	// claims, shared so that those pods allocate nothing; never modified.
	skip *plugin.Status
}

var (
	_ plugin.PreFilterPlugin   = (*VolumeBinding)(nil)
	_ plugin.FilterPlugin      = (*VolumeBinding)(nil)
	_ plugin.ReservePlugin     = (*VolumeBinding)(nil)
	_ plugin.EnqueueExtensions = (*VolumeBinding)(nil)
)

// New is the plugin factory. It reads claims from h's PersistentVolumeClaim
// informer (requested here; the scheduler starts it and, since this plugin
// registers PersistentVolumeClaim events, feeds its events to the queue).
// Without informers (unit tests) no claim exists.
func New(_ context.Context, _ any, h plugin.Handle) (plugin.Plugin, error) {
	get := func(string, string) (*corev1.PersistentVolumeClaim, bool) { return nil, false }
	if inf := h.Informers(); inf != nil {
		pvcs, err := cache.InformerFor(inf, cache.InformerOptions[*corev1.PersistentVolumeClaim]{})
		if err != nil {
			return nil, fmt.Errorf("%s: persistentvolumeclaim informer: %w", Name, err)
		}
		store := pvcs.Store()
		get = func(namespace, name string) (*corev1.PersistentVolumeClaim, bool) {
			return store.Get(claimKey(namespace, name))
		}
		pvs, err := cache.InformerFor(inf, cache.InformerOptions[*corev1.PersistentVolume]{})
		if err != nil {
			return nil, fmt.Errorf("%s: persistentvolume informer: %w", Name, err)
		}
		classes, err := cache.InformerFor(inf, cache.InformerOptions[*storagev1.StorageClass]{})
		if err != nil {
			return nil, fmt.Errorf("%s: storageclass informer: %w", Name, err)
		}
		pl := NewWithGetter(get, DefaultAssumeTTL, time.Now).WithVolumes(pvs.Store().Get, pvs.Store().List, classes.Store().Get)
		pvcs.AddHandler(pl.onClaimEvent)
		return pl, nil
	}
	return NewWithGetter(get, DefaultAssumeTTL, time.Now), nil
}

// NewWithGetter returns the plugin reading claims through get; reservations
// of unbound claims last at most assumeTTL by the clock now.
func NewWithGetter(get ClaimGetter, assumeTTL time.Duration, now func() time.Time) *VolumeBinding {
	return &VolumeBinding{getClaim: get, assumed: newAssumeCache(assumeTTL, now), skip: plugin.NewStatus(plugin.Skip)}
}

// WithVolumes makes the plugin read PersistentVolumes through get and list
// (the node affinity of the volumes claims are bound to, the volumes an
// unbound claim may get) and StorageClasses through class; without, no
// volume or class exists.
func (pl *VolumeBinding) WithVolumes(get VolumeGetter, list VolumeLister, class ClassGetter) *VolumeBinding {
	pl.getVolume, pl.listVolumes, pl.getClass = get, list, class
	return pl
}

// onClaimEvent forgets reservations that the binder has recorded
// (selected-node) or whose claim is gone.
func (pl *VolumeBinding) onClaimEvent(e cache.Event[*corev1.PersistentVolumeClaim]) {
	if e.Type == cache.Deleted || e.Object.Annotations[AnnSelectedNode] != "" {
		pl.assumed.forget(e.Object.Namespace, e.Object.Name)
	}
}

// Name implements plugin.Plugin.
func (pl *VolumeBinding) Name() string { return Name }

// EventsToRegister implements plugin.EnqueueExtensions: a claim of the pod
// created or changed (bound, its deletion cancelled...) may let it schedule,
// and so may a node added (the claims' node re-registering) or changed.
func (pl *VolumeBinding) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.PersistentVolumeClaim, ActionType: plugin.Add | plugin.Update}, QueueingHintFn: isSchedulableAfterClaimChange},
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add | plugin.UpdateNodeLabel | plugin.UpdateNodeTaint}},
	}
}

// isSchedulableAfterClaimChange queues the pod only for one of its claims.
func isSchedulableAfterClaimChange(pod *corev1.Pod, _, newObj any) (plugin.QueueingHint, error) {
	pvc, ok := newObj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return plugin.Queue, fmt.Errorf("%s: unexpected object %T in a persistentvolumeclaim event", Name, newObj)
	}
	if pvc.Namespace != pod.Namespace {
		return plugin.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		if name, _ := claimName(pod, &pod.Spec.Volumes[i]); name == pvc.Name {
			return plugin.Queue, nil
		}
	}
	return plugin.QueueSkip, nil
}

// claimName returns the name of the claim a volume uses ("" for none) and
// whether it is an ephemeral volume's claim ("<pod>-<volume>").
func claimName(pod *corev1.Pod, v *corev1.Volume) (string, bool) {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName, false
	case v.Ephemeral != nil:
		return pod.Name + "-" + v.Name, true
	}
	return "", false
}

// Reserve implements plugin.ReservePlugin: the pod's unbound claims are
// reserved for nodeName until the binder binds them there, so that other
// consumers scheduled meanwhile follow.
func (pl *VolumeBinding) Reserve(_ context.Context, _ *plugin.CycleState, pod *corev1.Pod, nodeName string) *plugin.Status {
	for i := range pod.Spec.Volumes {
		name, _ := claimName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		if pvc, ok := pl.getClaim(pod.Namespace, name); ok && pvc.Annotations[AnnSelectedNode] == "" {
			pl.assumed.assume(pvc, nodeName, pod.UID)
		}
	}
	return nil
}

// Unreserve implements plugin.ReservePlugin: it drops the pod's
// reservations (its binding failed).
func (pl *VolumeBinding) Unreserve(_ context.Context, _ *plugin.CycleState, pod *corev1.Pod, _ string) {
	for i := range pod.Spec.Volumes {
		if name, _ := claimName(pod, &pod.Spec.Volumes[i]); name != "" {
			pl.assumed.forgetPod(pod.Namespace, name, pod.UID)
		}
	}
}

// PreFilter implements plugin.PreFilterPlugin: it checks the pod's claims
// and records their node; Skip when no claim constrains the node.
func (pl *VolumeBinding) PreFilter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) (*plugin.PreFilterResult, *plugin.Status) {
	s, st := pl.claimsNode(pod)
	if st != nil {
		return nil, st
	}
	if s == nil {
		return nil, pl.skip
	}
	state.Write(stateKey, s)
	return nil, nil
}

// claimsNode evaluates the pod's claims: a rejection status, or the node
// they are on (nil: no claim has a node).
func (pl *VolumeBinding) claimsNode(pod *corev1.Pod) (*stateData, *plugin.Status) {
	var s *stateData
	for i := range pod.Spec.Volumes {
		name, ephemeral := claimName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		pvc, ok := pl.getClaim(pod.Namespace, name)
		if !ok {
			if ephemeral {
				return nil, unresolvable("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return nil, unresolvable("persistentvolumeclaim %q not found", name)
		}
		if pvc.Status.Phase == corev1.ClaimLost {
			return nil, unresolvable("persistentvolumeclaim %q bound to non-existent persistentvolume %q", name, pvc.Spec.VolumeName)
		}
		if pvc.DeletionTimestamp != nil {
			return nil, unresolvable("persistentvolumeclaim %q is being deleted", name)
		}
		if ephemeral && !controlledBy(pvc, pod) {
			return nil, unresolvable("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
		}
		if sel := pl.volumeAffinity(pvc); sel != nil {
			if s == nil {
				s = &stateData{}
			}
			s.affinity = append(s.affinity, sel)
		}
		node := pvc.Annotations[AnnSelectedNode]
		if node == "" {
			// Reserved by an earlier consumer and not bound yet.
			node = pl.assumed.node(pvc)
		}
		if class, ok := pl.needsStaticVolume(pvc); ok && node == "" {
			if s == nil {
				s = &stateData{}
			}
			if s.volumes == nil {
				s.volumes = pl.listVolumes()
			}
			s.waiting = append(s.waiting, waitingClaim{pvc: pvc, class: class})
		}
		switch {
		case node == "":
		case s == nil:
			s = &stateData{node: node}
		case s.node == "":
			s.node = node
		case s.node != node:
			s.conflict = true
		}
	}
	return s, nil
}

// volumeAffinity returns the required node affinity of the PersistentVolume
// pvc is bound to (nil: none, or not a PersistentVolume object).
func (pl *VolumeBinding) volumeAffinity(pvc *corev1.PersistentVolumeClaim) *corev1.NodeSelector {
	if pl.getVolume == nil || pvc.Spec.VolumeName == "" || pvc.Spec.VolumeName == "pvc-"+pvc.UID {
		return nil
	}
	pv, ok := pl.getVolume(pvc.Spec.VolumeName)
	if !ok || pv.Spec.NodeAffinity == nil {
		return nil
	}
	return pv.Spec.NodeAffinity.Required
}

// needsStaticVolume reports whether pvc is an unbound claim of a
// WaitForFirstConsumer class of pre-created volumes only, and its class.
func (pl *VolumeBinding) needsStaticVolume(pvc *corev1.PersistentVolumeClaim) (string, bool) {
	if pl.getClass == nil || pvc.Spec.VolumeName != "" || pvc.Spec.StorageClassName == nil {
		return "", false
	}
	sc, ok := pl.getClass(*pvc.Spec.StorageClassName)
	if !ok || sc.Provisioner != volumematch.NoProvisioner || sc.VolumeBindingMode == nil ||
		*sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return "", false
	}
	return sc.Name, true
}

func unresolvable(format string, args ...any) *plugin.Status {
	return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, fmt.Sprintf(format, args...))
}

// controlledBy reports whether pod is the claim's controller owner.
func controlledBy(pvc *corev1.PersistentVolumeClaim, pod *corev1.Pod) bool {
	for _, ref := range pvc.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID == pod.UID
		}
	}
	return false
}

// PreFilterExtensions implements plugin.PreFilterPlugin: the result does
// not depend on other pods.
func (pl *VolumeBinding) PreFilterExtensions() plugin.PreFilterExtensions { return nil }

// Filter implements plugin.FilterPlugin: only the claims' node fits, and
// only a node the node affinity of the claims' PersistentVolumes admits.
func (pl *VolumeBinding) Filter(_ context.Context, state *plugin.CycleState, _ *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	s, err := plugin.ReadState[*stateData](state, stateKey)
	if err != nil {
		return plugin.AsStatus(fmt.Errorf("%s: %w", Name, err))
	}
	if s.conflict || s.node != "" && ni.NodeName() != s.node {
		return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonNodeConflict)
	}
	for _, sel := range s.affinity {
		if !nodeselector.SelectorMatches(sel, ni.Node()) {
			return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonNodeConflict)
		}
	}
	for _, w := range s.waiting {
		if volumematch.Best(w.pvc, s.volumes, w.class, ni.Node()) == nil {
			return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonBindConflict)
		}
	}
	return nil
}
