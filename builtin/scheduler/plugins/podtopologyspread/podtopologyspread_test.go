package podtopologyspread

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
)

// node returns a node named name with labels "k=v" pairs.
func node(name string, kv ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

func zoneNode(name, zone string) *corev1.Node {
	return node(name, LabelHostname, name, LabelTopologyZone, zone)
}

// pod returns a pod in ns "default" named name with labels.
func pod(name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: name, Labels: lbls}}
}

var fooLabels = map[string]string{"app": "foo"}

// fooPods returns n pods labelled app=foo.
func fooPods(prefix string, n int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, pod(fmt.Sprintf("%s-%d", prefix, i), fooLabels))
	}
	return out
}

func nodeInfo(n *corev1.Node, pods ...*corev1.Pod) *plugin.NodeInfo {
	ni := plugin.NewNodeInfo(pods...)
	ni.SetNode(n)
	return ni
}

func hard(key string, maxSkew int32) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &api.LabelSelector{MatchLabels: fooLabels}}
}

func soft(key string, maxSkew int32) corev1.TopologySpreadConstraint {
	c := hard(key, maxSkew)
	c.WhenUnsatisfiable = corev1.ScheduleAnyway
	return c
}

func incoming(cs ...corev1.TopologySpreadConstraint) *corev1.Pod {
	p := pod("incoming", map[string]string{"app": "foo"})
	p.Spec.TopologySpreadConstraints = cs
	return p
}

// fourNodes: n1,n2 in zone1 and n3,n4 in zone2, with 1, 0, 2, 1 foo pods.
func fourNodes() []*plugin.NodeInfo {
	return []*plugin.NodeInfo{
		nodeInfo(zoneNode("n1", "zone1"), fooPods("a", 1)...),
		nodeInfo(zoneNode("n2", "zone1")),
		nodeInfo(zoneNode("n3", "zone2"), fooPods("c", 2)...),
		nodeInfo(zoneNode("n4", "zone2"), fooPods("d", 1)...),
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	tainted := zoneNode("n4", "zone2")
	tainted.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	otherNS := pod("other", fooLabels)
	otherNS.Namespace = "other"
	deleting := pod("deleting", fooLabels)
	deleting.DeletionTimestamp = api.NewTimePtr(time.Now())

	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*plugin.NodeInfo
		// want maps node name to the expected status ("" for success).
		want map[string]string
	}{
		{
			name: "zone maxSkew 1", pod: incoming(hard(LabelTopologyZone, 1)), nodes: fourNodes(),
			want: map[string]string{"n1": "", "n2": "", "n3": "Unschedulable: " + ErrReasonConstraintsNotMatch,
				"n4": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "zone maxSkew 2", pod: incoming(hard(LabelTopologyZone, 2)), nodes: fourNodes(),
			want: map[string]string{"n1": "", "n2": "", "n3": "Unschedulable: " + ErrReasonConstraintsNotMatch,
				"n4": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "zone maxSkew 3", pod: incoming(hard(LabelTopologyZone, 3)), nodes: fourNodes(),
			want: map[string]string{"n1": "", "n2": "", "n3": "", "n4": ""},
		},
		{
			name: "hostname maxSkew 1", pod: incoming(hard(LabelHostname, 1)), nodes: fourNodes(),
			// Minimum 0 (n2): only n2 takes a pod.
			want: map[string]string{"n1": "Unschedulable: " + ErrReasonConstraintsNotMatch, "n2": "",
				"n3": "Unschedulable: " + ErrReasonConstraintsNotMatch, "n4": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "hostname maxSkew 2", pod: incoming(hard(LabelHostname, 2)), nodes: fourNodes(),
			want: map[string]string{"n1": "", "n2": "", "n3": "Unschedulable: " + ErrReasonConstraintsNotMatch, "n4": ""},
		},
		{
			name: "zone and hostname", pod: incoming(hard(LabelTopologyZone, 1), hard(LabelHostname, 2)), nodes: fourNodes(),
			want: map[string]string{"n1": "", "n2": "", "n3": "Unschedulable: " + ErrReasonConstraintsNotMatch,
				"n4": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "node without the topology key", pod: incoming(hard(LabelTopologyZone, 1)),
			nodes: append(fourNodes(), nodeInfo(node("n5", LabelHostname, "n5"))),
			want:  map[string]string{"n1": "", "n5": "UnschedulableAndUnresolvable: " + ErrReasonNodeLabelNotMatch},
		},
		{
			name: "pod not matching its own selector", pod: func() *corev1.Pod {
				p := incoming(hard(LabelTopologyZone, 1))
				p.Labels = nil
				return p
			}(), nodes: fourNodes(),
			// zone1 1-1 = 0, zone2 3-1 = 2.
			want: map[string]string{"n1": "", "n3": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "minDomains above the number of domains makes the minimum 0",
			pod: func() *corev1.Pod {
				c := hard(LabelTopologyZone, 2)
				c.MinDomains = api.Ptr[int32](3)
				return incoming(c)
			}(),
			nodes: fourNodes(),
			// zone1: 1+1-0 = 2 <= 2; zone2: 3+1-0 = 4.
			want: map[string]string{"n1": "", "n3": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "minDomains met",
			pod: func() *corev1.Pod {
				c := hard(LabelTopologyZone, 1)
				c.MinDomains = api.Ptr[int32](2)
				return incoming(c)
			}(),
			nodes: fourNodes(),
			want:  map[string]string{"n1": "", "n3": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "empty domain with minDomains 1: minimum 0",
			pod:  incoming(hard(LabelTopologyZone, 1)),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1"), fooPods("a", 1)...),
				nodeInfo(zoneNode("n2", "zone2")),
			},
			want: map[string]string{"n1": "Unschedulable: " + ErrReasonConstraintsNotMatch, "n2": ""},
		},
		{
			name: "nodeAffinityPolicy Honor leaves out nodes the pod cannot use",
			pod: func() *corev1.Pod {
				p := incoming(hard(LabelTopologyZone, 1))
				p.Spec.NodeSelector = map[string]string{LabelTopologyZone: "zone2"}
				return p
			}(),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1")),
				nodeInfo(zoneNode("n3", "zone2"), fooPods("c", 2)...),
				nodeInfo(zoneNode("n4", "zone3"), fooPods("d", 2)...),
			},
			// Only zone2 and zone3 count: minimum 2.
			want: map[string]string{"n3": "", "n4": ""},
		},
		{
			name: "nodeAffinityPolicy Ignore counts every node",
			pod: func() *corev1.Pod {
				c := hard(LabelTopologyZone, 1)
				c.NodeAffinityPolicy = api.Ptr(corev1.NodeInclusionPolicyIgnore)
				p := incoming(c)
				p.Spec.NodeSelector = map[string]string{LabelTopologyZone: "zone2"}
				return p
			}(),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1")),
				nodeInfo(zoneNode("n3", "zone2"), fooPods("c", 2)...),
			},
			want: map[string]string{"n3": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "nodeTaintsPolicy Honor leaves out tainted nodes",
			pod: func() *corev1.Pod {
				c := hard(LabelTopologyZone, 1)
				c.NodeTaintsPolicy = api.Ptr(corev1.NodeInclusionPolicyHonor)
				return incoming(c)
			}(),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1"), fooPods("a", 1)...),
				nodeInfo(tainted),
			},
			// zone2 is not a domain: minimum 1, zone1 1+1-1 = 1.
			want: map[string]string{"n1": ""},
		},
		{
			name: "nodeTaintsPolicy Ignore (default) counts tainted nodes",
			pod:  incoming(hard(LabelTopologyZone, 1)),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1"), fooPods("a", 1)...),
				nodeInfo(tainted),
			},
			want: map[string]string{"n1": "Unschedulable: " + ErrReasonConstraintsNotMatch},
		},
		{
			name: "matchLabelKeys narrow the selector to the pod's value",
			pod: func() *corev1.Pod {
				c := hard(LabelHostname, 1)
				c.MatchLabelKeys = []string{"rev"}
				p := incoming(c)
				p.Labels = map[string]string{"app": "foo", "rev": "2"}
				return p
			}(),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1"), pod("old-1", map[string]string{"app": "foo", "rev": "1"}),
					pod("old-2", map[string]string{"app": "foo", "rev": "1"})),
				nodeInfo(zoneNode("n2", "zone1")),
			},
			want: map[string]string{"n1": "", "n2": ""},
		},
		{
			name: "pods of other namespaces and pods being deleted do not count",
			pod:  incoming(hard(LabelHostname, 1)),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1"), otherNS, deleting),
				nodeInfo(zoneNode("n2", "zone1")),
			},
			want: map[string]string{"n1": "", "n2": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pl := &PodTopologySpread{}
			state := plugin.NewCycleState()
			if _, s := pl.PreFilter(t.Context(), state, tt.pod, tt.nodes); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			for _, ni := range tt.nodes {
				want, ok := tt.want[ni.Node().Name]
				if !ok {
					continue
				}
				got := ""
				if s := pl.Filter(t.Context(), state, tt.pod, ni); !s.IsSuccess() {
					got = s.String()
				}
				if got != want {
					t.Errorf("node %s: got %q, want %q", ni.Node().Name, got, want)
				}
			}
		})
	}
}

func TestPreFilterSkip(t *testing.T) {
	t.Parallel()
	pl := &PodTopologySpread{defaults: SystemDefaultConstraints(), systemDefaulted: true,
		defaultSelector: func(*corev1.Pod) labels.Selector { return labels.SelectorFromSet(fooLabels) }}
	for _, p := range []*corev1.Pod{incoming(), incoming(soft(LabelHostname, 1))} {
		if _, s := pl.PreFilter(t.Context(), plugin.NewCycleState(), p, fourNodes()); !s.IsSkip() {
			t.Errorf("PreFilter(%v): %v, want Skip", p.Spec.TopologySpreadConstraints, s)
		}
	}
}

// TestAddRemovePod checks that the simulation of preemption updates the counts.
func TestAddRemovePod(t *testing.T) {
	t.Parallel()
	pl := &PodTopologySpread{}
	p := incoming(hard(LabelTopologyZone, 1))
	nodes := fourNodes()
	state := plugin.NewCycleState()
	if _, s := pl.PreFilter(t.Context(), state, p, nodes); !s.IsSuccess() {
		t.Fatal(s)
	}
	n3 := nodes[2]
	if s := pl.Filter(t.Context(), state, p, n3); s.Code() != plugin.Unschedulable {
		t.Fatalf("before: %v", s)
	}
	// Removing both foo pods of n3 on a clone makes zone2 1, zone1 1.
	c := state.Clone()
	for _, pi := range n3.Pods {
		if s := pl.RemovePod(t.Context(), c, p, pi, n3); !s.IsSuccess() {
			t.Fatal(s)
		}
	}
	if s := pl.Filter(t.Context(), c, p, n3); !s.IsSuccess() {
		t.Errorf("after removing: %v", s)
	}
	if s := pl.Filter(t.Context(), state, p, n3); s.Code() != plugin.Unschedulable {
		t.Errorf("original state changed: %v", s)
	}
	// Adding one back: zone2 2, zone1 1 → skew 2.
	if s := pl.AddPod(t.Context(), c, p, n3.Pods[0], n3); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.Filter(t.Context(), c, p, n3); s.Code() != plugin.Unschedulable {
		t.Errorf("after adding back: %v", s)
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	fooSelector := func(*corev1.Pod) labels.Selector { return labels.SelectorFromSet(fooLabels) }
	tests := []struct {
		name     string
		pod      *corev1.Pod
		nodes    []*plugin.NodeInfo
		feasible []string // nil: all
		want     map[string]int64
		skip     bool
	}{
		{
			name: "zone: fewer matching pods score higher", pod: incoming(soft(LabelTopologyZone, 1)), nodes: fourNodes(),
			// weight log(4); raw zone1 round(1.39) = 1, zone2 round(4.16) = 4; 100*(4+1-s)/4.
			want: map[string]int64{"n1": 100, "n2": 100, "n3": 25, "n4": 25},
		},
		{
			name: "hostname", pod: incoming(soft(LabelHostname, 1)), nodes: fourNodes(),
			// weight log(6)=1.79: raw n1 2, n2 0, n3 4, n4 2; 100*(4+0-s)/4.
			want: map[string]int64{"n1": 50, "n2": 100, "n3": 0, "n4": 50},
		},
		{
			name: "only feasible nodes' domains and weights", pod: incoming(soft(LabelHostname, 1)), nodes: fourNodes(),
			feasible: []string{"n2", "n3"},
			// weight log(4)=1.39: raw n2 0, n3 3; max 3 min 0.
			want: map[string]int64{"n2": 100, "n3": 0},
		},
		{
			name: "maxSkew shifts raw scores", pod: incoming(soft(LabelTopologyZone, 3)), nodes: fourNodes(),
			// raw zone1 round(1.39+2)=3, zone2 round(4.16+2)=6: 100*(6+3-s)/6.
			want: map[string]int64{"n1": 100, "n3": 50},
		},
		{
			name: "no matching pods: every node gets the maximum", pod: incoming(soft(LabelTopologyZone, 1)),
			nodes: []*plugin.NodeInfo{nodeInfo(zoneNode("n1", "zone1")), nodeInfo(zoneNode("n2", "zone2"))},
			want:  map[string]int64{"n1": 100, "n2": 100},
		},
		{
			name: "pod constraints: nodes without the key are ignored", pod: incoming(soft(LabelTopologyZone, 1)),
			nodes: append(fourNodes(), nodeInfo(node("n5", LabelHostname, "n5"))),
			want:  map[string]int64{"n1": 100, "n3": 25, "n5": 0},
		},
		{
			name: "system defaults: a node without a zone still spreads by hostname", pod: incoming(),
			nodes: []*plugin.NodeInfo{
				nodeInfo(zoneNode("n1", "zone1"), fooPods("a", 3)...),
				nodeInfo(node("n2", LabelHostname, "n2")),
			},
			// hostname weight log(4)=1.386 (maxSkew 3), zone weight log(3)=1.099 (maxSkew 5):
			// n1 3*1.386+2 + 3*1.099+4 = 13.45 → 13; n2 0+2 = 2. 100*(13+2-s)/13.
			want: map[string]int64{"n1": 15, "n2": 100},
		},
		{
			name: "hard constraints only: Skip", pod: incoming(hard(LabelTopologyZone, 1)), nodes: fourNodes(), skip: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pl := &PodTopologySpread{
				defaults: SystemDefaultConstraints(), systemDefaulted: true, defaultSelector: fooSelector,
				allNodes: func() ([]*plugin.NodeInfo, error) { return tt.nodes, nil },
			}
			feasible := tt.nodes
			if tt.feasible != nil {
				feasible = nil
				for _, ni := range tt.nodes {
					for _, n := range tt.feasible {
						if ni.Node().Name == n {
							feasible = append(feasible, ni)
						}
					}
				}
			}
			state := plugin.NewCycleState()
			s := pl.PreScore(t.Context(), state, tt.pod, feasible)
			if tt.skip {
				if !s.IsSkip() {
					t.Fatalf("PreScore: %v, want Skip", s)
				}
				return
			}
			if !s.IsSuccess() {
				t.Fatalf("PreScore: %v", s)
			}
			var scores plugin.NodeScoreList
			for _, ni := range feasible {
				sc, s := pl.Score(t.Context(), state, tt.pod, ni)
				if !s.IsSuccess() {
					t.Fatalf("Score(%s): %v", ni.Node().Name, s)
				}
				scores = append(scores, plugin.NodeScore{Name: ni.Node().Name, Score: sc})
			}
			if s := pl.NormalizeScore(t.Context(), state, tt.pod, scores); !s.IsSuccess() {
				t.Fatal(s)
			}
			got := map[string]int64{}
			for _, sc := range scores {
				if _, ok := tt.want[sc.Name]; ok {
					got[sc.Name] = sc.Score
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultSelector(t *testing.T) {
	t.Parallel()
	p := pod("p", map[string]string{"app": "web", "tier": "fe", "pod-template-hash": "abc"})
	tests := []struct {
		name     string
		services []map[string]string
		owner    *labelSelectorSource
		want     string
	}{
		{"nothing selects the pod", nil, nil, ""},
		{"services that select the pod", []map[string]string{{"app": "web"}, {"tier": "fe"}, {"app": "db"}, {}}, nil, "app=web,tier=fe"},
		{"controller", nil, &labelSelectorSource{&api.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "abc"}}}, "app=web,pod-template-hash=abc"},
		{"service and controller", []map[string]string{{"tier": "fe"}}, &labelSelectorSource{&api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}, "app=web,tier=fe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := defaultSelector(p, tt.services, tt.owner).String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
