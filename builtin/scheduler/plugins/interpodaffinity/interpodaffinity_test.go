package interpodaffinity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
)

const (
	zoneKey = "topology.kubernetes.io/zone"
	hostKey = "kubernetes.io/hostname"
)

func node(name, zone string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{hostKey: name}}}
	if zone != "" {
		n.Labels[zoneKey] = zone
	}
	return n
}

func pod(ns, name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns, UID: ns + "/" + name, Labels: lbls}}
}

func app(v string) map[string]string { return map[string]string{"app": v} }

func term(key string, lbls map[string]string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &api.LabelSelector{MatchLabels: lbls}}
}

func withAffinity(p *corev1.Pod, terms ...corev1.PodAffinityTerm) *corev1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	return p
}

func withAntiAffinity(p *corev1.Pod, terms ...corev1.PodAffinityTerm) *corev1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	return p
}

func nodeInfo(n *corev1.Node, pods ...*corev1.Pod) *plugin.NodeInfo {
	ni := plugin.NewNodeInfo(pods...)
	ni.SetNode(n)
	return ni
}

// cluster: n1, n2 in zone1, n3 in zone2, n4 without zone; pods given per node.
func cluster(n1, n2, n3, n4 []*corev1.Pod) []*plugin.NodeInfo {
	return []*plugin.NodeInfo{
		nodeInfo(node("n1", "zone1"), n1...), nodeInfo(node("n2", "zone1"), n2...),
		nodeInfo(node("n3", "zone2"), n3...), nodeInfo(node("n4", ""), n4...),
	}
}

func nsLabels(ns string) map[string]string {
	return map[string]map[string]string{"default": {"team": "b"}, "other": {"team": "a"}}[ns]
}

const (
	unresolvable = "UnschedulableAndUnresolvable: "
	unsched      = "Unschedulable: "
)

func TestFilter(t *testing.T) {
	t.Parallel()
	db := pod("default", "db", app("db"))
	web := pod("default", "web-0", app("web"))
	otherDB := pod("other", "db", app("db"))
	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*plugin.NodeInfo
		want  map[string]string // node → status, "" for success
	}{
		{
			name:  "affinity to a zone holding a db pod",
			pod:   withAffinity(pod("default", "p", app("web")), term(zoneKey, app("db"))),
			nodes: cluster([]*corev1.Pod{db}, nil, nil, nil),
			want: map[string]string{"n1": "", "n2": "", "n3": unresolvable + ErrReasonAffinityRulesNotMatch,
				"n4": unresolvable + ErrReasonAffinityRulesNotMatch},
		},
		{
			name:  "affinity with no matching pod anywhere",
			pod:   withAffinity(pod("default", "p", app("web")), term(zoneKey, app("db"))),
			nodes: cluster(nil, nil, nil, nil),
			want:  map[string]string{"n1": unresolvable + ErrReasonAffinityRulesNotMatch, "n3": unresolvable + ErrReasonAffinityRulesNotMatch},
		},
		{
			name:  "first pod of a self-affine group may go to any node with the key",
			pod:   withAffinity(pod("default", "p", app("web")), term(zoneKey, app("web"))),
			nodes: cluster(nil, nil, nil, nil),
			want:  map[string]string{"n1": "", "n3": "", "n4": unresolvable + ErrReasonAffinityRulesNotMatch},
		},
		{
			name:  "a matching pod must match every affinity term",
			pod:   withAffinity(pod("default", "p", nil), term(zoneKey, app("db")), term(hostKey, map[string]string{"tier": "x"})),
			nodes: cluster([]*corev1.Pod{db}, nil, nil, nil),
			want:  map[string]string{"n1": unresolvable + ErrReasonAffinityRulesNotMatch},
		},
		{
			name:  "affinity only sees the term's namespaces",
			pod:   withAffinity(pod("default", "p", nil), term(zoneKey, app("db"))),
			nodes: cluster(nil, nil, []*corev1.Pod{otherDB}, nil),
			want:  map[string]string{"n1": unresolvable + ErrReasonAffinityRulesNotMatch, "n3": unresolvable + ErrReasonAffinityRulesNotMatch},
		},
		{
			name: "namespaces list",
			pod: withAffinity(pod("default", "p", nil), func() corev1.PodAffinityTerm {
				t := term(zoneKey, app("db"))
				t.Namespaces = []string{"other"}
				return t
			}()),
			nodes: cluster([]*corev1.Pod{db}, nil, []*corev1.Pod{otherDB}, nil),
			want:  map[string]string{"n1": unresolvable + ErrReasonAffinityRulesNotMatch, "n3": ""},
		},
		{
			name: "namespaceSelector",
			pod: withAffinity(pod("default", "p", nil), func() corev1.PodAffinityTerm {
				t := term(zoneKey, app("db"))
				t.NamespaceSelector = &api.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
				return t
			}()),
			nodes: cluster([]*corev1.Pod{db}, nil, []*corev1.Pod{otherDB}, nil),
			want:  map[string]string{"n1": unresolvable + ErrReasonAffinityRulesNotMatch, "n3": ""},
		},
		{
			name: "empty namespaceSelector selects every namespace",
			pod: withAffinity(pod("default", "p", nil), func() corev1.PodAffinityTerm {
				t := term(zoneKey, app("db"))
				t.NamespaceSelector = &api.LabelSelector{}
				return t
			}()),
			nodes: cluster([]*corev1.Pod{db}, nil, []*corev1.Pod{otherDB}, nil),
			want:  map[string]string{"n1": "", "n3": ""},
		},
		{
			name:  "anti-affinity by hostname",
			pod:   withAntiAffinity(pod("default", "p", app("web")), term(hostKey, app("web"))),
			nodes: cluster([]*corev1.Pod{web}, nil, nil, nil),
			want:  map[string]string{"n1": unsched + ErrReasonAntiAffinityRulesNotMatch, "n2": "", "n4": ""},
		},
		{
			name:  "anti-affinity by zone",
			pod:   withAntiAffinity(pod("default", "p", app("web")), term(zoneKey, app("web"))),
			nodes: cluster([]*corev1.Pod{web}, nil, nil, nil),
			want: map[string]string{"n1": unsched + ErrReasonAntiAffinityRulesNotMatch, "n2": unsched + ErrReasonAntiAffinityRulesNotMatch,
				"n3": "", "n4": ""},
		},
		{
			name:  "existing pod's anti-affinity against the incoming pod",
			pod:   pod("default", "p", app("web")),
			nodes: cluster([]*corev1.Pod{withAntiAffinity(pod("default", "db", app("db")), term(zoneKey, app("web")))}, nil, nil, nil),
			want: map[string]string{"n1": unsched + ErrReasonExistingAntiAffinityRulesNotMatch,
				"n2": unsched + ErrReasonExistingAntiAffinityRulesNotMatch, "n3": "", "n4": ""},
		},
		{
			name:  "existing pod's anti-affinity in another namespace does not see the pod",
			pod:   pod("default", "p", app("web")),
			nodes: cluster([]*corev1.Pod{withAntiAffinity(pod("other", "db", app("db")), term(zoneKey, app("web")))}, nil, nil, nil),
			want:  map[string]string{"n1": "", "n2": ""},
		},
		{
			name: "affinity is checked before anti-affinity",
			pod: withAntiAffinity(withAffinity(pod("default", "p", app("web")), term(zoneKey, app("db"))),
				term(hostKey, app("web"))),
			nodes: cluster([]*corev1.Pod{db, web}, nil, nil, nil),
			want: map[string]string{"n1": unsched + ErrReasonAntiAffinityRulesNotMatch, "n2": "",
				"n3": unresolvable + ErrReasonAffinityRulesNotMatch},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pl := &InterPodAffinity{args: Args{HardPodAffinityWeight: 1}, nsLabels: nsLabels}
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
	pl := &InterPodAffinity{nsLabels: nsLabels}
	nodes := cluster([]*corev1.Pod{withAffinity(pod("default", "db", app("db")), term(zoneKey, app("x")))}, nil, nil, nil)
	if _, s := pl.PreFilter(t.Context(), plugin.NewCycleState(), pod("default", "p", nil), nodes); !s.IsSkip() {
		t.Errorf("PreFilter: %v, want Skip", s)
	}
}

// TestAddRemovePod simulates preemption: removing the pod the anti-affinity
// objects to frees the node, on a clone of the state only.
func TestAddRemovePod(t *testing.T) {
	t.Parallel()
	pl := &InterPodAffinity{nsLabels: nsLabels}
	web := pod("default", "web-0", app("web"))
	guard := withAntiAffinity(pod("default", "guard", app("guard")), term(hostKey, app("web")))
	nodes := cluster([]*corev1.Pod{web}, []*corev1.Pod{guard}, nil, nil)
	p := withAntiAffinity(pod("default", "p", app("web")), term(hostKey, app("web")))
	state := plugin.NewCycleState()
	if _, s := pl.PreFilter(t.Context(), state, p, nodes); !s.IsSuccess() {
		t.Fatal(s)
	}
	n1, n2 := nodes[0], nodes[1]
	c := state.Clone()
	if s := pl.RemovePod(t.Context(), c, p, n1.Pods[0], n1); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.RemovePod(t.Context(), c, p, n2.Pods[0], n2); !s.IsSuccess() {
		t.Fatal(s)
	}
	for _, ni := range []*plugin.NodeInfo{n1, n2} {
		if s := pl.Filter(t.Context(), c, p, ni); !s.IsSuccess() {
			t.Errorf("%s after removing: %v", ni.Node().Name, s)
		}
		if s := pl.Filter(t.Context(), state, p, ni); s.IsSuccess() {
			t.Errorf("%s: original state changed", ni.Node().Name)
		}
	}
	if s := pl.AddPod(t.Context(), c, p, n2.Pods[0], n2); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.Filter(t.Context(), c, p, n2); s.String() != unsched+ErrReasonExistingAntiAffinityRulesNotMatch {
		t.Errorf("n2 after adding the guard back: %v", s)
	}
}

func preferred(p *corev1.Pod, anti bool, weight int32, t corev1.PodAffinityTerm) *corev1.Pod {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	w := []corev1.WeightedPodAffinityTerm{{Weight: weight, PodAffinityTerm: t}}
	if anti {
		p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: w}
	} else {
		p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: w}
	}
	return p
}

func TestScore(t *testing.T) {
	t.Parallel()
	db := pod("default", "db", app("db"))
	tests := []struct {
		name  string
		args  Args
		pod   *corev1.Pod
		nodes []*plugin.NodeInfo
		want  map[string]int64
		skip  bool
	}{
		{
			name:  "preferred affinity",
			pod:   preferred(pod("default", "p", nil), false, 5, term(zoneKey, app("db"))),
			nodes: cluster([]*corev1.Pod{db}, nil, nil, nil),
			want:  map[string]int64{"n1": 100, "n2": 100, "n3": 0, "n4": 0},
		},
		{
			name:  "preferred anti-affinity",
			pod:   preferred(pod("default", "p", nil), true, 5, term(zoneKey, app("db"))),
			nodes: cluster([]*corev1.Pod{db}, nil, nil, nil),
			want:  map[string]int64{"n1": 0, "n2": 0, "n3": 100, "n4": 100},
		},
		{
			name: "affinity and anti-affinity weights add up",
			pod: func() *corev1.Pod {
				p := preferred(pod("default", "p", nil), false, 10, term(zoneKey, app("db")))
				return preferred(p, true, 5, term(hostKey, app("db")))
			}(),
			nodes: cluster([]*corev1.Pod{db}, nil, nil, nil),
			// n1 10-5 = 5, n2 10, n3 0, n4 0.
			want: map[string]int64{"n1": 50, "n2": 100, "n3": 0, "n4": 0},
		},
		{
			name:  "existing pod's required affinity matching the incoming pod (hard weight)",
			args:  Args{HardPodAffinityWeight: 1},
			pod:   pod("default", "p", app("web")),
			nodes: cluster(nil, nil, []*corev1.Pod{withAffinity(pod("default", "cache", app("cache")), term(zoneKey, app("web")))}, nil),
			want:  map[string]int64{"n1": 0, "n3": 100, "n4": 0},
		},
		{
			name:  "hard weight 0 ignores existing required terms",
			args:  Args{HardPodAffinityWeight: 0},
			pod:   pod("default", "p", app("web")),
			nodes: cluster(nil, nil, []*corev1.Pod{withAffinity(pod("default", "cache", app("cache")), term(zoneKey, app("web")))}, nil),
			skip:  true,
		},
		{
			name:  "existing pod's preferred anti-affinity against the incoming pod",
			pod:   pod("default", "p", app("web")),
			nodes: cluster(nil, nil, []*corev1.Pod{preferred(pod("default", "x", nil), true, 7, term(zoneKey, app("web")))}, nil),
			want:  map[string]int64{"n1": 100, "n3": 0, "n4": 100},
		},
		{
			name:  "ignorePreferredTermsOfExistingPods",
			args:  Args{IgnorePreferredTermsOfExistingPods: true},
			pod:   pod("default", "p", app("web")),
			nodes: cluster(nil, nil, []*corev1.Pod{preferred(pod("default", "x", nil), true, 7, term(zoneKey, app("web")))}, nil),
			skip:  true,
		},
		{
			name:  "nothing to score",
			pod:   pod("default", "p", app("web")),
			nodes: cluster([]*corev1.Pod{db}, nil, nil, nil),
			skip:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			list := func() ([]*plugin.NodeInfo, error) { return tt.nodes, nil }
			withAff := func() ([]*plugin.NodeInfo, error) {
				var out []*plugin.NodeInfo
				for _, n := range tt.nodes {
					if len(n.PodsWithAffinity) > 0 {
						out = append(out, n)
					}
				}
				return out, nil
			}
			pl := &InterPodAffinity{args: tt.args, nsLabels: nsLabels, allNodes: list, nodesWithAffinityPods: withAff}
			state := plugin.NewCycleState()
			s := pl.PreScore(t.Context(), state, tt.pod, tt.nodes)
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
			for _, ni := range tt.nodes {
				sc, s := pl.Score(t.Context(), state, tt.pod, ni)
				if !s.IsSuccess() {
					t.Fatal(s)
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
