package endpointslice

import (
	"fmt"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
)

func testPods(n int) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, &corev1.Pod{
			ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p-%03d", i), UID: fmt.Sprint(i), Labels: map[string]string{"app": "a"}},
			Status: corev1.PodStatus{PodIP: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1),
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		})
	}
	return out
}

func noZone(string) (string, bool) { return "", false }

// applyPlan turns a plan into the resulting slices, naming created ones.
func applyPlan(existing []*discoveryv1.EndpointSlice, p slicePlan, seq *int) []*discoveryv1.EndpointSlice {
	gone := map[string]bool{}
	for _, s := range p.delete {
		gone[s.Name] = true
	}
	byName := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		if !gone[s.Name] {
			byName[s.Name] = s
		}
	}
	for _, s := range p.update {
		byName[s.Name] = s
	}
	for _, s := range p.create {
		*seq++
		s.Name = fmt.Sprintf("s-%d", *seq)
		byName[s.Name] = s
	}
	var out []*discoveryv1.EndpointSlice
	for _, s := range byName {
		out = append(out, s)
	}
	return out
}

func TestPlanSlicesIsStableAndBounded(t *testing.T) {
	t.Parallel()
	svc := &corev1.Service{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "svc", UID: "u"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "a"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}},
	}
	seq := 0
	pods := testPods(150)
	p, err := planSlices(svc, desiredGroups(svc, pods, noZone), nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.create) != 2 || len(p.create[0].Endpoints) != 100 || len(p.create[1].Endpoints) != 50 {
		t.Fatalf("want 100+50 endpoints in 2 new slices, got %d slices", len(p.create))
	}
	state := applyPlan(nil, p, &seq)

	// Same input: nothing to write.
	p, err = planSlices(svc, desiredGroups(svc, pods, noZone), state, 100)
	if err != nil || !p.empty() {
		t.Fatalf("second plan should be empty: %+v, %v", p, err)
	}

	// One more pod fills the slice with room instead of creating one.
	pods = testPods(151)
	p, err = planSlices(svc, desiredGroups(svc, pods, noZone), state, 100)
	if err != nil || len(p.create) != 0 || len(p.update) != 1 || len(p.delete) != 0 {
		t.Fatalf("want one update, got create=%d update=%d delete=%d err=%v", len(p.create), len(p.update), len(p.delete), err)
	}
	state = applyPlan(state, p, &seq)

	// No pods: one slice goes, the other becomes the placeholder (no ports,
	// no endpoints) instead of a new slice beside it.
	p, err = planSlices(svc, desiredGroups(svc, nil, noZone), state, 100)
	if err != nil || len(p.delete) != 1 || len(p.create) != 0 || len(p.update) != 1 ||
		len(p.update[0].Endpoints) != 0 || len(p.update[0].Ports) != 0 {
		t.Fatalf("want a delete and a placeholder made of the other slice, got create=%d update=%d delete=%d err=%v", len(p.create), len(p.update), len(p.delete), err)
	}
}

// The first endpoints of a Service replace its placeholder in one update:
// a reader never sees the placeholder (no ports) beside the slice of the
// endpoints (the conformance spec "should create Endpoints and
// EndpointSlices for Pods matching a Service" lists them in between).
func TestPlanSlicesReplacesThePlaceholderInPlace(t *testing.T) {
	t.Parallel()
	svc := &corev1.Service{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "svc", UID: "u"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "a"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}},
	}
	seq := 0
	p, err := planSlices(svc, desiredGroups(svc, nil, noZone), nil, 100)
	if err != nil || len(p.create) != 1 {
		t.Fatalf("want a placeholder created, got %+v, %v", p, err)
	}
	state := applyPlan(nil, p, &seq)
	placeholder := state[0].Name

	p, err = planSlices(svc, desiredGroups(svc, testPods(2), noZone), state, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.create) != 0 || len(p.delete) != 0 || len(p.update) != 1 {
		t.Fatalf("want one update, got create=%d update=%d delete=%d", len(p.create), len(p.update), len(p.delete))
	}
	u := p.update[0]
	if u.Name != placeholder || len(u.Endpoints) != 2 || len(u.Ports) != 1 || *u.Ports[0].Port != 8080 {
		t.Fatalf("want the placeholder %s with 2 endpoints and port 8080, got %s with %d endpoints, ports %+v", placeholder, u.Name, len(u.Endpoints), u.Ports)
	}
	if p, err = planSlices(svc, desiredGroups(svc, testPods(2), noZone), applyPlan(state, p, &seq), 100); err != nil || !p.empty() {
		t.Fatalf("the replaced placeholder is up to date: %+v, %v", p, err)
	}
}

func TestFindPort(t *testing.T) {
	t.Parallel()
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{
		{Name: "web", ContainerPort: 8080}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
	}}}}}
	tests := []struct {
		sp   corev1.ServicePort
		want int32
		ok   bool
	}{
		{corev1.ServicePort{Port: 80, TargetPort: api.FromInt(9090)}, 9090, true},
		{corev1.ServicePort{Port: 80}, 80, true},
		{corev1.ServicePort{Port: 80, TargetPort: api.FromString("web")}, 8080, true},
		{corev1.ServicePort{Port: 53, TargetPort: api.FromString("dns")}, 0, false}, // TCP vs UDP
		{corev1.ServicePort{Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: api.FromString("dns")}, 53, true},
		{corev1.ServicePort{Port: 80, TargetPort: api.FromString("missing")}, 0, false},
	}
	for i, tc := range tests {
		got, ok := findPort(pod, tc.sp)
		if got != tc.want || ok != tc.ok {
			t.Errorf("case %d: findPort = %d, %v; want %d, %v", i, got, ok, tc.want, tc.ok)
		}
	}
}
