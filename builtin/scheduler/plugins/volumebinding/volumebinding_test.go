package volumebinding

import (
	"context"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
)

func claim(name string, mods ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name}}
	c.Status.Phase = corev1.ClaimPending
	for _, m := range mods {
		m(c)
	}
	return c
}

func boundTo(node string) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{AnnSelectedNode: node}
		c.Spec.VolumeName = "pvc-" + c.UID
		c.Status.Phase = corev1.ClaimBound
	}
}

func deleting(c *corev1.PersistentVolumeClaim) {
	now := api.Now()
	c.DeletionTimestamp = &now
}

func lost(c *corev1.PersistentVolumeClaim) {
	c.Spec.VolumeName = "pvc-gone"
	c.Status.Phase = corev1.ClaimLost
}

// toVolume binds a claim to the PersistentVolume name (see volumes).
func toVolume(name string) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		c.Spec.VolumeName = name
		c.Status.Phase = corev1.ClaimBound
	}
}

// volumes has pv-a, whose node affinity admits node a only, and pv-any,
// without node affinity.
func volumes(name string) (*corev1.PersistentVolume, bool) {
	switch name {
	case "pv-a":
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{
			Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}}, true
	case "pv-any":
		return &corev1.PersistentVolume{}, true
	}
	return nil, false
}

func ownedBy(uid string) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		yes := true
		c.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: uid, Controller: &yes}}
	}
}

func claimVolume(name, claim string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func ephemeralVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}}
}

func pod(vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"}, Spec: corev1.PodSpec{Volumes: vols}}
}

func getter(claims ...*corev1.PersistentVolumeClaim) ClaimGetter {
	m := map[string]*corev1.PersistentVolumeClaim{}
	for _, c := range claims {
		m[c.Namespace+"/"+c.Name] = c
	}
	return func(ns, name string) (*corev1.PersistentVolumeClaim, bool) {
		c, ok := m[ns+"/"+name]
		return c, ok
	}
}

func nodeInfo(name string) *plugin.NodeInfo {
	ni := plugin.NewNodeInfo()
	ni.SetNode(&corev1.Node{ObjectMeta: api.ObjectMeta{Name: name}})
	return ni
}

func TestPreFilterAndFilter(t *testing.T) {
	t.Parallel()
	conflict := plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonNodeConflict)
	unresolvable := func(msg string) *plugin.Status {
		return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, msg)
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		claims []*corev1.PersistentVolumeClaim
		// preFilter is the PreFilter status; when it is Success, filter holds
		// the Filter status of nodes a and b.
		preFilter *plugin.Status
		filter    map[string]*plugin.Status
	}{
		{name: "no volumes", pod: pod(), preFilter: plugin.NewStatus(plugin.Skip)},
		{name: "no claim volumes", pod: pod(corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}),
			preFilter: plugin.NewStatus(plugin.Skip)},
		{name: "missing claim", pod: pod(claimVolume("data", "data")),
			preFilter: unresolvable(`persistentvolumeclaim "data" not found`)},
		{name: "claim in another namespace", pod: pod(claimVolume("data", "data")),
			claims:    []*corev1.PersistentVolumeClaim{func() *corev1.PersistentVolumeClaim { c := claim("data"); c.Namespace = "other"; return c }()},
			preFilter: unresolvable(`persistentvolumeclaim "data" not found`)},
		{name: "claim being deleted", pod: pod(claimVolume("data", "data")), claims: []*corev1.PersistentVolumeClaim{claim("data", boundTo("a"), deleting)},
			preFilter: unresolvable(`persistentvolumeclaim "data" is being deleted`)},
		{name: "claim lost", pod: pod(claimVolume("data", "data")), claims: []*corev1.PersistentVolumeClaim{claim("data", lost)},
			preFilter: unresolvable(`persistentvolumeclaim "data" bound to non-existent persistentvolume "pvc-gone"`)},
		{name: "unbound claim: no constraint", pod: pod(claimVolume("data", "data")), claims: []*corev1.PersistentVolumeClaim{claim("data")},
			preFilter: plugin.NewStatus(plugin.Skip)},
		{name: "bound claim: only its node", pod: pod(claimVolume("data", "data")), claims: []*corev1.PersistentVolumeClaim{claim("data", boundTo("b"))},
			filter: map[string]*plugin.Status{"a": conflict, "b": nil}},
		{name: "selected node without binding yet", pod: pod(claimVolume("data", "data")),
			claims: []*corev1.PersistentVolumeClaim{claim("data", func(c *corev1.PersistentVolumeClaim) { c.Annotations = map[string]string{AnnSelectedNode: "a"} })},
			filter: map[string]*plugin.Status{"a": nil, "b": conflict}},
		{name: "bound and unbound claims", pod: pod(claimVolume("x", "x"), claimVolume("y", "y")),
			claims: []*corev1.PersistentVolumeClaim{claim("x"), claim("y", boundTo("a"))},
			filter: map[string]*plugin.Status{"a": nil, "b": conflict}},
		{name: "two claims on the same node", pod: pod(claimVolume("x", "x"), claimVolume("y", "y")),
			claims: []*corev1.PersistentVolumeClaim{claim("x", boundTo("b")), claim("y", boundTo("b"))},
			filter: map[string]*plugin.Status{"a": conflict, "b": nil}},
		{name: "claims on different nodes: no node fits", pod: pod(claimVolume("x", "x"), claimVolume("y", "y")),
			claims: []*corev1.PersistentVolumeClaim{claim("x", boundTo("a")), claim("y", boundTo("b"))},
			filter: map[string]*plugin.Status{"a": conflict, "b": conflict}},
		{name: "first failing claim is reported", pod: pod(claimVolume("x", "x"), claimVolume("y", "y")),
			claims:    []*corev1.PersistentVolumeClaim{claim("x", boundTo("a"))},
			preFilter: unresolvable(`persistentvolumeclaim "y" not found`)},
		{name: "ephemeral claim not created yet", pod: pod(ephemeralVolume("scratch")),
			preFilter: unresolvable(`waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"`)},
		{name: "ephemeral claim of another owner", pod: pod(ephemeralVolume("scratch")), claims: []*corev1.PersistentVolumeClaim{claim("p-scratch", ownedBy("other-uid"))},
			preFilter: unresolvable(`PVC ns/p-scratch was not created for pod ns/p (pod is not owner)`)},
		{name: "ephemeral claim bound", pod: pod(ephemeralVolume("scratch")), claims: []*corev1.PersistentVolumeClaim{claim("p-scratch", ownedBy("pod-uid"), boundTo("a"))},
			filter: map[string]*plugin.Status{"a": nil, "b": conflict}},
		{name: "claim bound to a PersistentVolume with node affinity", pod: pod(claimVolume("x", "x")),
			claims: []*corev1.PersistentVolumeClaim{claim("x", toVolume("pv-a"))},
			filter: map[string]*plugin.Status{"a": nil, "b": conflict}},
		{name: "claim bound to a PersistentVolume without node affinity", pod: pod(claimVolume("x", "x")),
			claims: []*corev1.PersistentVolumeClaim{claim("x", toVolume("pv-any"))}, preFilter: plugin.NewStatus(plugin.Skip)},
		{name: "volume affinity and a claim on another node", pod: pod(claimVolume("x", "x"), claimVolume("y", "y")),
			claims: []*corev1.PersistentVolumeClaim{claim("x", toVolume("pv-a")), claim("y", boundTo("b"))},
			filter: map[string]*plugin.Status{"a": conflict, "b": conflict}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pl := NewWithGetter(getter(tt.claims...), DefaultAssumeTTL, time.Now).WithVolumes(volumes, nil, nil)
			state := plugin.NewCycleState()
			_, st := pl.PreFilter(ctx, state, tt.pod, nil)
			if !st.Equal(tt.preFilter) {
				t.Fatalf("PreFilter = %v, want %v", st, tt.preFilter)
			}
			if !st.IsSuccess() {
				return
			}
			for node, want := range tt.filter {
				if got := pl.Filter(ctx, state, tt.pod, nodeInfo(node)); !got.Equal(want) {
					t.Errorf("Filter(%s) = %v, want %v", node, got, want)
				}
			}
		})
	}
}

func TestFilterWithoutPreFilter(t *testing.T) {
	t.Parallel()
	pl := NewWithGetter(getter(), DefaultAssumeTTL, time.Now)
	if st := pl.Filter(context.Background(), plugin.NewCycleState(), pod(), nodeInfo("a")); st.Code() != plugin.Error {
		t.Errorf("Filter without PreFilter state = %v, want an Error", st)
	}
}

func TestQueueingHint(t *testing.T) {
	t.Parallel()
	p := pod(claimVolume("data", "data-claim"), ephemeralVolume("scratch"),
		corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	tests := []struct {
		name  string
		claim *corev1.PersistentVolumeClaim
		want  plugin.QueueingHint
	}{
		{name: "the pod's claim", claim: claim("data-claim"), want: plugin.Queue},
		{name: "the pod's ephemeral claim", claim: claim("p-scratch"), want: plugin.Queue},
		{name: "another claim", claim: claim("other"), want: plugin.QueueSkip},
		{name: "a volume name is not a claim name", claim: claim("data"), want: plugin.QueueSkip},
		{name: "same name in another namespace", claim: func() *corev1.PersistentVolumeClaim { c := claim("data-claim"); c.Namespace = "other"; return c }(), want: plugin.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := isSchedulableAfterClaimChange(p, nil, tt.claim)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if h, err := isSchedulableAfterClaimChange(p, nil, &corev1.Node{}); err == nil || h != plugin.Queue {
		t.Errorf("hint for a non-claim = %v, %v; want Queue and an error", h, err)
	}
}

func TestEventsToRegister(t *testing.T) {
	t.Parallel()
	pl := NewWithGetter(getter(), DefaultAssumeTTL, time.Now)
	want := []plugin.ClusterEvent{
		{Resource: plugin.PersistentVolumeClaim, ActionType: plugin.Add},
		{Resource: plugin.PersistentVolumeClaim, ActionType: plugin.UpdateNodeLabel},
		{Resource: plugin.Node, ActionType: plugin.Add},
	}
	for _, w := range want {
		matched := false
		for _, e := range pl.EventsToRegister() {
			matched = matched || e.Event.Match(w)
		}
		if !matched {
			t.Errorf("no registered event matches %+v", w)
		}
	}
	if (plugin.ClusterEvent{Resource: plugin.PersistentVolumeClaim, ActionType: plugin.Add}).Match(plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Add}) {
		t.Error("a claim event matches a pod event")
	}
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestReserveMakesLaterConsumersFollow(t *testing.T) {
	t.Parallel()
	conflict := plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonNodeConflict)
	other := func(p *corev1.Pod) *corev1.Pod {
		q := *p
		q.Name, q.UID = "q", "other-pod-uid"
		return &q
	}
	tests := []struct {
		name string
		// after runs between the first pod's Reserve on node a and the
		// second consumer's PreFilter; it may replace the claim.
		after func(pl *VolumeBinding, clock *fakeClock, first *corev1.Pod, claims map[string]*corev1.PersistentVolumeClaim)
		// follows: the second consumer must go to a; else no constraint.
		follows bool
	}{
		{name: "reserved claim", follows: true},
		{name: "unreserved by its pod", after: func(pl *VolumeBinding, _ *fakeClock, first *corev1.Pod, _ map[string]*corev1.PersistentVolumeClaim) {
			pl.Unreserve(context.Background(), nil, first, "a")
		}},
		{name: "unreserve of another pod keeps it", follows: true, after: func(pl *VolumeBinding, _ *fakeClock, first *corev1.Pod, _ map[string]*corev1.PersistentVolumeClaim) {
			pl.Unreserve(context.Background(), nil, other(first), "a")
		}},
		{name: "expired", after: func(_ *VolumeBinding, clock *fakeClock, _ *corev1.Pod, _ map[string]*corev1.PersistentVolumeClaim) {
			clock.t = clock.t.Add(DefaultAssumeTTL + time.Second)
		}},
		{name: "not yet expired", follows: true, after: func(_ *VolumeBinding, clock *fakeClock, _ *corev1.Pod, _ map[string]*corev1.PersistentVolumeClaim) {
			clock.t = clock.t.Add(DefaultAssumeTTL - time.Second)
		}},
		{name: "claim recreated", after: func(_ *VolumeBinding, _ *fakeClock, _ *corev1.Pod, claims map[string]*corev1.PersistentVolumeClaim) {
			c := claim("data")
			c.UID = "new-uid"
			claims["ns/data"] = c
		}},
		{name: "claim deleted event", after: func(pl *VolumeBinding, _ *fakeClock, _ *corev1.Pod, claims map[string]*corev1.PersistentVolumeClaim) {
			pl.onClaimEvent(cache.Event[*corev1.PersistentVolumeClaim]{Type: cache.Deleted, Object: claims["ns/data"]})
		}},
		{name: "a later reservation by another pod does not move it", follows: true, after: func(pl *VolumeBinding, _ *fakeClock, first *corev1.Pod, _ map[string]*corev1.PersistentVolumeClaim) {
			pl.Reserve(context.Background(), nil, other(first), "b")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			claims := map[string]*corev1.PersistentVolumeClaim{"ns/data": claim("data")}
			clock := &fakeClock{t: time.Unix(1000, 0)}
			pl := NewWithGetter(func(ns, name string) (*corev1.PersistentVolumeClaim, bool) {
				c, ok := claims[ns+"/"+name]
				return c, ok
			}, DefaultAssumeTTL, clock.now)
			first := pod(claimVolume("data", "data"))
			if _, st := pl.PreFilter(ctx, plugin.NewCycleState(), first, nil); !st.IsSkip() {
				t.Fatalf("first consumer PreFilter = %v, want Skip", st)
			}
			if st := pl.Reserve(ctx, nil, first, "a"); !st.IsSuccess() {
				t.Fatalf("Reserve = %v", st)
			}
			if tt.after != nil {
				tt.after(pl, clock, first, claims)
			}
			second := pod(claimVolume("data", "data"))
			second.Name, second.UID = "second", "second-uid"
			state := plugin.NewCycleState()
			_, st := pl.PreFilter(ctx, state, second, nil)
			if !tt.follows {
				if !st.IsSkip() {
					t.Fatalf("second consumer PreFilter = %v, want Skip", st)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("second consumer PreFilter = %v, want Success", st)
			}
			if got := pl.Filter(ctx, state, second, nodeInfo("a")); !got.IsSuccess() {
				t.Errorf("Filter(a) = %v, want Success", got)
			}
			if got := pl.Filter(ctx, state, second, nodeInfo("b")); !got.Equal(conflict) {
				t.Errorf("Filter(b) = %v, want %v", got, conflict)
			}
		})
	}
}

func TestReservationsEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bound := claim("bound", boundTo("b"))
	pending := claim("pending")
	pl := NewWithGetter(getter(bound, pending), DefaultAssumeTTL, time.Now)
	p := pod(claimVolume("x", "bound"), claimVolume("y", "pending"), claimVolume("z", "missing"))
	pl.Reserve(ctx, nil, p, "a")
	if n := pl.assumed.len(); n != 1 {
		t.Fatalf("%d reservations, want 1 (only the unbound claim)", n)
	}
	// The binder records the node: the reservation is no longer needed.
	pl.onClaimEvent(cache.Event[*corev1.PersistentVolumeClaim]{Type: cache.Updated, Old: pending, Object: claim("pending", boundTo("a"))})
	if n := pl.assumed.len(); n != 0 {
		t.Errorf("%d reservations after the claim was bound, want 0", n)
	}
	// An update without selected-node keeps it.
	pl.Reserve(ctx, nil, p, "a")
	pl.onClaimEvent(cache.Event[*corev1.PersistentVolumeClaim]{Type: cache.Updated, Old: pending, Object: pending})
	if n := pl.assumed.len(); n != 1 {
		t.Errorf("%d reservations after an unrelated update, want 1", n)
	}
}

// TestWaitForFirstConsumerStatic: an unbound claim of a WaitForFirstConsumer
// class of pre-created volumes only fits the nodes where a volume matches.
func TestWaitForFirstConsumerStatic(t *testing.T) {
	t.Parallel()
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	classes := func(name string) (*storagev1.StorageClass, bool) {
		switch name {
		case "local":
			return &storagev1.StorageClass{ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc}, true
		case "dynamic":
			return &storagev1.StorageClass{ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: "example.com/csi", VolumeBindingMode: &wffc}, true
		}
		return nil, false
	}
	pvA, _ := volumes("pv-a") // a fresh object
	pvA.Name, pvA.Spec.StorageClassName = "pv-a", "local"
	pvA.Spec.Capacity = corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}
	pvA.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	list := func() []*corev1.PersistentVolume { return []*corev1.PersistentVolume{pvA} }
	withClass := func(class string) func(*corev1.PersistentVolumeClaim) {
		return func(c *corev1.PersistentVolumeClaim) {
			c.Spec.StorageClassName = &class
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
			c.Spec.Resources.Requests = corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}
		}
	}
	noVolume := plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonBindConflict)
	for _, tc := range []struct {
		name   string
		claim  *corev1.PersistentVolumeClaim
		filter map[string]*plugin.Status
	}{
		{"local class: only where a volume matches", claim("x", withClass("local")), map[string]*plugin.Status{"a": nil, "b": noVolume}},
		{"provisioned class: no constraint", claim("x", withClass("dynamic")), nil},
		{"too big for the volume", claim("x", withClass("local"), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests = corev1.ResourceList{"storage": api.MustParseQuantity("2Gi")}
		}), map[string]*plugin.Status{"a": noVolume, "b": noVolume}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl := NewWithGetter(getter(tc.claim), DefaultAssumeTTL, time.Now).WithVolumes(volumes, list, classes)
			state := plugin.NewCycleState()
			p := pod(claimVolume("x", "x"))
			_, st := pl.PreFilter(context.Background(), state, p, nil)
			if tc.filter == nil {
				if st.Code() != plugin.Skip {
					t.Fatalf("PreFilter = %v, want Skip", st)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("PreFilter = %v", st)
			}
			for node, want := range tc.filter {
				if got := pl.Filter(context.Background(), state, p, nodeInfo(node)); !got.Equal(want) {
					t.Errorf("Filter(%s) = %v, want %v", node, got, want)
				}
			}
		})
	}
}
