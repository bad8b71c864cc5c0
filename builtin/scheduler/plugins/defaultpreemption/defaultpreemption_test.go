package defaultpreemption

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
)

// The fake filter: a node labelled capacity=N holds N pods; a node labelled
// bad=true rejects every pod for good.

const capacityLabel = "capacity"

func node(name string, capacity int) *corev1.Node {
	return &corev1.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{capacityLabel: strconv.Itoa(capacity)}}}
}

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// pod returns a pod with a priority, started minutes after t0 (a negative
// start means not started).
func pod(name string, prio int32, start int, lbls map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + name, Labels: lbls},
		Spec: corev1.PodSpec{Priority: api.Ptr(prio)}}
	if start >= 0 {
		p.Status.StartTime = api.NewTimePtr(t0.Add(time.Duration(start) * time.Minute))
	}
	return p
}

func nodeInfo(n *corev1.Node, pods ...*corev1.Pod) *plugin.NodeInfo {
	ni := plugin.NewNodeInfo(pods...)
	ni.SetNode(n)
	return ni
}

func fakeFilter(ni *plugin.NodeInfo) *plugin.Status {
	if ni.Node().Labels["bad"] == "true" {
		return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "node(s) were bad")
	}
	capacity, _ := strconv.Atoi(ni.Node().Labels[capacityLabel])
	if len(ni.Pods)+1 > capacity {
		return plugin.NewStatus(plugin.Unschedulable, "Too many pods")
	}
	return nil
}

type fakeLister []*plugin.NodeInfo

func (l fakeLister) List() ([]*plugin.NodeInfo, error)                     { return l, nil }
func (l fakeLister) HavePodsWithAffinityList() ([]*plugin.NodeInfo, error) { return nil, nil }
func (l fakeLister) HavePodsWithRequiredAntiAffinityList() ([]*plugin.NodeInfo, error) {
	return nil, nil
}
func (l fakeLister) Get(name string) (*plugin.NodeInfo, error) {
	for _, ni := range l {
		if ni.Node().Name == name {
			return ni, nil
		}
	}
	return nil, fmt.Errorf("node %s: %w", name, plugin.ErrNotFound)
}
func (l fakeLister) NodeInfos() plugin.NodeInfoLister { return l }

// fakeHandle runs fakeFilter and records events, waiting-pod rejections and
// API writes.
type fakeHandle struct {
	nodes     fakeLister
	nominated map[string][]*plugin.PodInfo
	waiting   map[string]*fakeWaitingPod

	mu     sync.Mutex
	events []string
	writes []string
}

func (h *fakeHandle) RunFilterPlugins(_ context.Context, _ *plugin.CycleState, _ *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	return fakeFilter(ni)
}
func (h *fakeHandle) RunFilterPluginsWithNominatedPods(_ context.Context, _ *plugin.CycleState, _ *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	return fakeFilter(ni)
}
func (h *fakeHandle) RunPreFilterExtensionAddPod(context.Context, *plugin.CycleState, *corev1.Pod, *plugin.PodInfo, *plugin.NodeInfo) *plugin.Status {
	return nil
}
func (h *fakeHandle) RunPreFilterExtensionRemovePod(context.Context, *plugin.CycleState, *corev1.Pod, *plugin.PodInfo, *plugin.NodeInfo) *plugin.Status {
	return nil
}
func (h *fakeHandle) SnapshotSharedLister() plugin.SharedLister { return h.nodes }
func (h *fakeHandle) NominatedPodsForNode(n string) []*plugin.PodInfo {
	return h.nominated[n]
}
func (h *fakeHandle) GetWaitingPod(uid string) plugin.WaitingPod {
	if wp, ok := h.waiting[uid]; ok {
		return wp
	}
	return nil
}
func (h *fakeHandle) EventRecorder() plugin.EventRecorder { return h }
func (h *fakeHandle) Eventf(_ context.Context, obj api.Object, eventType, reason, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, fmt.Sprintf("%s %s %s: %s", obj.GetName(), eventType, reason, fmt.Sprintf(format, args...)))
}
func (h *fakeHandle) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writes = append(h.writes, s)
}
func (h *fakeHandle) markDisruption(_ context.Context, v *corev1.Pod, c corev1.PodCondition) error {
	h.record(fmt.Sprintf("condition %s %s=%s %s: %s", v.Name, c.Type, c.Status, c.Reason, c.Message))
	return nil
}
func (h *fakeHandle) deletePod(_ context.Context, v *corev1.Pod) error {
	h.record("delete " + v.Name)
	return nil
}
func (h *fakeHandle) clearNomination(_ context.Context, p *corev1.Pod) error {
	h.record("clear nomination " + p.Name)
	return nil
}

type fakeWaitingPod struct {
	pod      *corev1.Pod
	rejected string
}

func (w *fakeWaitingPod) GetPod() *corev1.Pod         { return w.pod }
func (w *fakeWaitingPod) GetPendingPlugins() []string { return nil }
func (w *fakeWaitingPod) Allow(string)                {}
func (w *fakeWaitingPod) Reject(plugin, msg string)   { w.rejected = plugin + ": " + msg }

// names returns the names of pods (*corev1.Pod or *plugin.PodInfo).
func names[T any](pods []T) []string {
	var out []string
	for _, p := range pods {
		switch p := any(p).(type) {
		case *corev1.Pod:
			out = append(out, p.Name)
		case *plugin.PodInfo:
			out = append(out, p.Pod.Name)
		}
	}
	return out
}

func pdb(ns string, allowed int32, sel map[string]string, disrupted ...string) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{ObjectMeta: api.ObjectMeta{Name: "pdb", Namespace: ns},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &api.LabelSelector{MatchLabels: sel}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	if sel == nil {
		p.Spec.Selector = nil
	}
	for _, d := range disrupted {
		if p.Status.DisruptedPods == nil {
			p.Status.DisruptedPods = map[string]api.Time{}
		}
		p.Status.DisruptedPods[d] = api.NewTime(t0)
	}
	return p
}

var appX = map[string]string{"app": "x"}

func TestSelectVictimsOnNode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		capacity      int
		pods          []*corev1.Pod
		pdbs          []*policyv1.PodDisruptionBudget
		wantVictims   []string
		wantViolating int
		wantStatus    string
	}{
		{
			name: "reprieve the most important pods first", capacity: 3,
			pods:        []*corev1.Pod{pod("low", 1, 0, nil), pod("mid", 5, 0, nil), pod("low2", 1, 5, nil)},
			wantVictims: []string{"low2"},
		},
		{
			name: "same priority: the earlier started pod is reprieved", capacity: 2,
			pods:        []*corev1.Pod{pod("late", 1, 10, nil), pod("early", 1, 1, nil)},
			wantVictims: []string{"late"},
		},
		{
			name: "several victims, most important first", capacity: 2,
			pods:        []*corev1.Pod{pod("a", 1, 0, nil), pod("b", 3, 0, nil), pod("c", 2, 0, nil)},
			wantVictims: []string{"c", "a"},
		},
		{
			name: "pods of equal or higher priority are never victims", capacity: 1,
			pods:       []*corev1.Pod{pod("same", 10, 0, nil), pod("higher", 20, 0, nil)},
			wantStatus: "UnschedulableAndUnresolvable: " + MsgNoVictims,
		},
		{
			name: "no fit even without every lower-priority pod", capacity: 2,
			pods:       []*corev1.Pod{pod("low", 1, 0, nil), pod("higher", 20, 0, nil), pod("higher2", 20, 0, nil)},
			wantStatus: "Unschedulable: Too many pods",
		},
		{
			name: "budget-protected pods are reprieved before others", capacity: 2,
			pods:        []*corev1.Pod{pod("protected", 1, 0, appX), pod("plain", 5, 0, nil)},
			pdbs:        []*policyv1.PodDisruptionBudget{pdb("default", 0, appX)},
			wantVictims: []string{"plain"},
		},
		{
			name: "a budget violation when nothing else helps", capacity: 1,
			pods:          []*corev1.Pod{pod("protected", 1, 0, appX)},
			pdbs:          []*policyv1.PodDisruptionBudget{pdb("default", 0, appX)},
			wantVictims:   []string{"protected"},
			wantViolating: 1,
		},
		{
			name: "victims of both kinds sorted by importance", capacity: 1,
			pods:          []*corev1.Pod{pod("protected", 1, 0, appX), pod("plain", 5, 0, nil)},
			pdbs:          []*policyv1.PodDisruptionBudget{pdb("default", 0, appX)},
			wantVictims:   []string{"plain", "protected"},
			wantViolating: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ni := nodeInfo(node("n1", tt.capacity), tt.pods...)
			before := len(ni.Pods)
			h := &fakeHandle{}
			preemptor := pod("preemptor", 10, -1, nil)
			victims, violating, s := selectVictimsOnNode(t.Context(), h, plugin.NewCycleState(), preemptor, ni.Snapshot(), tt.pdbs)
			if got := s.String(); tt.wantStatus != "" && got != tt.wantStatus || tt.wantStatus == "" && !s.IsSuccess() {
				t.Fatalf("status %q, want %q", got, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantVictims, names(victims)); diff != "" {
				t.Errorf("victims (-want +got):\n%s", diff)
			}
			if violating != tt.wantViolating {
				t.Errorf("violating %d, want %d", violating, tt.wantViolating)
			}
			if len(ni.Pods) != before {
				t.Errorf("the snapshot's NodeInfo was modified")
			}
		})
	}
}

func TestFilterPodsWithPDBViolation(t *testing.T) {
	t.Parallel()
	other := pod("other-ns", 1, 0, appX)
	other.Namespace = "other"
	tests := []struct {
		name                    string
		pods                    []*corev1.Pod
		pdbs                    []*policyv1.PodDisruptionBudget
		violating, nonViolating []string
	}{
		{"no budgets", []*corev1.Pod{pod("a", 1, 0, appX)}, nil, nil, []string{"a"}},
		{"budget allows one", []*corev1.Pod{pod("a", 1, 0, appX), pod("b", 1, 0, appX)},
			[]*policyv1.PodDisruptionBudget{pdb("default", 1, appX)}, []string{"b"}, []string{"a"}},
		{"other namespace", []*corev1.Pod{other}, []*policyv1.PodDisruptionBudget{pdb("default", 0, appX)}, nil, []string{"other-ns"}},
		{"already disrupted pods do not count", []*corev1.Pod{pod("a", 1, 0, appX), pod("b", 1, 0, appX)},
			[]*policyv1.PodDisruptionBudget{pdb("default", 0, appX, "a")}, []string{"b"}, []string{"a"}},
		{"empty selector matches nothing", []*corev1.Pod{pod("a", 1, 0, appX)},
			[]*policyv1.PodDisruptionBudget{pdb("default", 0, map[string]string{})}, nil, []string{"a"}},
		{"nil selector matches nothing", []*corev1.Pod{pod("a", 1, 0, appX)},
			[]*policyv1.PodDisruptionBudget{pdb("default", 0, nil)}, nil, []string{"a"}},
		{"unlabelled pods match no budget", []*corev1.Pod{pod("a", 1, 0, nil)},
			[]*policyv1.PodDisruptionBudget{pdb("default", 0, map[string]string{})}, nil, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var pis []*plugin.PodInfo
			for _, p := range tt.pods {
				pi, _ := plugin.NewPodInfo(p)
				pis = append(pis, pi)
			}
			v, nv := filterPodsWithPDBViolation(pis, tt.pdbs)
			if diff := cmp.Diff(tt.violating, names(v)); diff != "" {
				t.Errorf("violating (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.nonViolating, names(nv)); diff != "" {
				t.Errorf("non-violating (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPickOneNodeForPreemption(t *testing.T) {
	t.Parallel()
	c := func(node string, violations int, victims ...*corev1.Pod) candidate {
		return candidate{node: node, victims: victims, numPDBViolations: violations}
	}
	tests := []struct {
		name string
		cs   []candidate
		want string
	}{
		{"fewest budget violations", []candidate{
			c("n1", 1, pod("a", 1, 0, nil)), c("n2", 0, pod("b", 5, 0, nil), pod("c", 5, 0, nil))}, "n2"},
		{"lowest highest priority", []candidate{
			c("n1", 0, pod("a", 5, 0, nil)), c("n2", 0, pod("b", 3, 0, nil), pod("c", 3, 0, nil))}, "n2"},
		{"smallest priority sum", []candidate{
			c("n1", 0, pod("a", 5, 0, nil), pod("b", 4, 0, nil)), c("n2", 0, pod("c", 5, 0, nil), pod("d", 1, 0, nil))}, "n2"},
		{"negative priorities sum like Kubernetes", []candidate{
			c("n1", 0, pod("a", -5, 0, nil)), c("n2", 0, pod("b", -5, 0, nil), pod("c", -10, 0, nil))}, "n1"},
		{"more victims weigh more in the sum", []candidate{
			c("n1", 0, pod("a", 5, 0, nil), pod("b", 0, 0, nil)), c("n2", 0, pod("c", 5, 0, nil))}, "n2"},
		// With the shift, equal sums and different counts need a MinInt32 victim.
		{"fewest victims", []candidate{
			c("n1", 0, pod("a", 0, 0, nil), pod("b", math.MinInt32, 0, nil)), c("n2", 0, pod("c", 0, 0, nil))}, "n2"},
		{"latest start of the highest-priority victims", []candidate{
			c("n1", 0, pod("a", 5, 1, nil), pod("b", 1, 50, nil)), c("n2", 0, pod("c", 5, 10, nil), pod("d", 1, 0, nil))}, "n2"},
		{"tie: the first", []candidate{c("n1", 0, pod("a", 5, 1, nil)), c("n2", 0, pod("b", 5, 1, nil))}, "n1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := pickOneNodeForPreemption(tt.cs).node; got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestEligibleToPreempt(t *testing.T) {
	t.Parallel()
	terminating := pod("victim", 1, 0, nil)
	terminating.DeletionTimestamp = api.NewTimePtr(t0)
	terminating.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonPreemptionByScheduler}}
	lister := fakeLister{nodeInfo(node("n1", 1), terminating), nodeInfo(node("n2", 1), pod("x", 1, 0, nil))}
	never := pod("p", 10, -1, nil)
	never.Spec.PreemptionPolicy = api.Ptr(corev1.PreemptNever)
	nominated := func(n string) *corev1.Pod {
		p := pod("p", 10, -1, nil)
		p.Status.NominatedNodeName = n
		return p
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		status  *plugin.Status
		wantOK  bool
		wantMsg string
	}{
		{"plain", pod("p", 10, -1, nil), nil, true, ""},
		{"preemptionPolicy Never", never, nil, false, MsgPolicyNever},
		{"victim still terminating on the nominated node", nominated("n1"), plugin.NewStatus(plugin.Unschedulable), false, MsgTerminatingOnNominated},
		{"nominated node now unresolvable", nominated("n1"), plugin.NewStatus(plugin.UnschedulableAndUnresolvable), true, ""},
		{"nothing terminating on the nominated node", nominated("n2"), plugin.NewStatus(plugin.Unschedulable), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ok, msg := eligibleToPreempt(tt.pod, tt.status, lister)
			if ok != tt.wantOK || msg != tt.wantMsg {
				t.Errorf("got (%v, %q), want (%v, %q)", ok, msg, tt.wantOK, tt.wantMsg)
			}
		})
	}
}

// newPlugin builds the plugin over fake nodes; every node's filter status in
// the failed cycle is what fakeFilter says for the preemptor.
func newPlugin(h *fakeHandle, pdbs ...*policyv1.PodDisruptionBudget) *DefaultPreemption {
	return &DefaultPreemption{
		args: Args{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100},
		h:    h, api: h, offset: func(int) int { return 0 },
		pdbs: func() []*policyv1.PodDisruptionBudget { return pdbs },
	}
}

func statusMap(nodes []*plugin.NodeInfo) *plugin.NodeToStatus {
	m := plugin.NewDefaultNodeToStatus()
	for _, ni := range nodes {
		m.Set(ni.Node().Name, fakeFilter(ni))
	}
	return m
}

func TestPostFilter(t *testing.T) {
	t.Parallel()
	bad := func(name string) *corev1.Node {
		n := node(name, 1)
		n.Labels["bad"] = "true"
		return n
	}
	lowNominated, _ := plugin.NewPodInfo(func() *corev1.Pod {
		p := pod("nominated-low", 2, -1, nil)
		p.Status.NominatedNodeName = "n2"
		return p
	}())
	waiting := pod("waiting", 1, 0, nil)
	tests := []struct {
		name       string
		pod        *corev1.Pod
		nodes      []*plugin.NodeInfo
		nominated  map[string][]*plugin.PodInfo
		pdbs       []*policyv1.PodDisruptionBudget
		wantStatus string
		wantNode   string
		wantWrites []string
		wantEvents []string
	}{
		{
			name: "preemption does not help",
			pod:  pod("p", 10, -1, nil),
			nodes: []*plugin.NodeInfo{
				nodeInfo(bad("n1")), nodeInfo(bad("n2")), nodeInfo(bad("n3")),
			},
			wantStatus: "Unschedulable: preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
		},
		{
			name: "preemption does not help: a stale nomination is cleared",
			pod: func() *corev1.Pod {
				p := pod("p", 10, -1, nil)
				p.Status.NominatedNodeName = "n1"
				return p
			}(),
			nodes:      []*plugin.NodeInfo{nodeInfo(bad("n1"))},
			wantStatus: "Unschedulable: preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
			wantWrites: []string{"clear nomination p"},
		},
		{
			name: "no victims",
			pod:  pod("p", 10, -1, nil),
			nodes: func() []*plugin.NodeInfo {
				var out []*plugin.NodeInfo
				for i := range 5 {
					out = append(out, nodeInfo(node(fmt.Sprintf("n%d", i), 1), pod(fmt.Sprintf("hi%d", i), 100, 0, nil)))
				}
				return out
			}(),
			wantStatus: "Unschedulable: preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
		},
		{
			name: "mixed reasons",
			pod:  pod("p", 10, -1, nil),
			nodes: []*plugin.NodeInfo{
				nodeInfo(node("n1", 1), pod("hi", 100, 0, nil)), nodeInfo(bad("n2")), nodeInfo(bad("n3")),
			},
			wantStatus: "Unschedulable: preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
		},
		{
			name: "preemptionPolicy Never",
			pod: func() *corev1.Pod {
				p := pod("p", 10, -1, nil)
				p.Spec.PreemptionPolicy = api.Ptr(corev1.PreemptNever)
				return p
			}(),
			nodes:      []*plugin.NodeInfo{nodeInfo(node("n1", 1), pod("low", 1, 0, nil))},
			wantStatus: "Unschedulable: preemption: " + MsgPolicyNever,
		},
		{
			name: "preempts on the node with the least important victims",
			pod:  pod("p", 10, -1, nil),
			nodes: []*plugin.NodeInfo{
				nodeInfo(node("n1", 1), pod("mid", 5, 0, nil)),
				nodeInfo(node("n2", 2), pod("low", 1, 0, nil), pod("hi", 100, 0, nil)),
				nodeInfo(bad("n3")),
			},
			nominated: map[string][]*plugin.PodInfo{"n2": {lowNominated}},
			wantNode:  "n2",
			wantWrites: []string{
				"condition low DisruptionTarget=True PreemptionByScheduler: default-scheduler: preempting to accommodate a higher priority pod",
				"delete low",
				"clear nomination nominated-low",
			},
			wantEvents: []string{"low Normal Preempted: Preempted by pod uid-p on node n2"},
		},
		{
			name: "budgets steer the choice",
			pod:  pod("p", 10, -1, nil),
			nodes: []*plugin.NodeInfo{
				nodeInfo(node("n1", 1), pod("protected", 1, 0, appX)),
				nodeInfo(node("n2", 1), pod("plain", 5, 0, nil)),
			},
			pdbs:     []*policyv1.PodDisruptionBudget{pdb("default", 0, appX)},
			wantNode: "n2",
			wantWrites: []string{
				"condition plain DisruptionTarget=True PreemptionByScheduler: default-scheduler: preempting to accommodate a higher priority pod",
				"delete plain",
			},
			wantEvents: []string{"plain Normal Preempted: Preempted by pod uid-p on node n2"},
		},
		{
			name:       "a victim waiting at Permit is rejected, not deleted",
			pod:        pod("p", 10, -1, nil),
			nodes:      []*plugin.NodeInfo{nodeInfo(node("n1", 1), waiting)},
			wantNode:   "n1",
			wantEvents: []string{"waiting Normal Preempted: Preempted by pod uid-p on node n1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wp := &fakeWaitingPod{pod: waiting}
			h := &fakeHandle{nodes: tt.nodes, nominated: tt.nominated, waiting: map[string]*fakeWaitingPod{waiting.UID: wp}}
			pl := newPlugin(h, tt.pdbs...)
			res, s := pl.PostFilter(t.Context(), plugin.NewCycleState(), tt.pod, statusMap(tt.nodes))
			if tt.wantNode != "" {
				if !s.IsSuccess() {
					t.Fatalf("status %v", s)
				}
				if res == nil || res.NominatedNodeName != tt.wantNode || res.Mode() != plugin.ModeOverride {
					t.Fatalf("result %+v, want nomination of %s", res, tt.wantNode)
				}
			} else if got := s.String(); got != tt.wantStatus {
				t.Fatalf("status:\n got %q\nwant %q", got, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantWrites, h.writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEvents, h.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if slices.Contains(names(tt.nodes[0].Pods), "waiting") && !strings.Contains(wp.rejected, "preempted") {
				t.Errorf("waiting pod not rejected: %q", wp.rejected)
			}
		})
	}
}

func TestNumCandidates(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n, pct, abs, want int
	}{{5, 10, 100, 5}, {1000, 10, 100, 100}, {5000, 10, 100, 500}, {50, 10, 1, 5}, {50, 0, 3, 3}} {
		if got := numCandidates(tt.n, Args{MinCandidateNodesPercentage: int32(tt.pct), MinCandidateNodesAbsolute: int32(tt.abs)}); got != tt.want {
			t.Errorf("numCandidates(%d, %d%%, %d) = %d, want %d", tt.n, tt.pct, tt.abs, got, tt.want)
		}
	}
}
