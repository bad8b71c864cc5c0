package plugin

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestNodeInfoHotFields(t *testing.T) {
	t.Parallel()
	taints := []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	node := &corev1.Node{
		ObjectMeta: api.ObjectMeta{Name: "n1"},
		Spec:       corev1.NodeSpec{Unschedulable: true, Taints: taints},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			"cpu": api.MustParseQuantity("2"), "memory": api.MustParseQuantity("1Gi"), "pods": api.MustParseQuantity("10"),
		}},
	}
	pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": api.MustParseQuantity("500m")}},
			Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}}},
	}}
	ni := NewNodeInfo(pod)
	if ni.NodeName() != "" || ni.Node() != nil {
		t.Fatalf("NodeInfo without node has name %q", ni.NodeName())
	}
	ni.SetNode(node)
	if ni.NodeName() != "n1" || !ni.Unschedulable() || len(ni.Taints()) != 1 {
		t.Fatalf("after SetNode: name %q unschedulable %v taints %v", ni.NodeName(), ni.Unschedulable(), ni.Taints())
	}
	if ni.Allocatable.MilliCPU != 2000 || ni.Allocatable.AllowedPodNumber != 10 || ni.Requested.MilliCPU != 500 {
		t.Fatalf("resources: allocatable %+v requested %+v", ni.Allocatable, ni.Requested)
	}
	if !ni.UsedPorts.CheckConflict("", "TCP", 8080) {
		t.Fatal("host port 8080 not recorded")
	}
	c := ni.Snapshot()
	if c.NodeName() != "n1" || !c.Unschedulable() || c.Requested.MilliCPU != 500 {
		t.Fatalf("snapshot lost fields: %v", c)
	}
	if err := c.RemovePod(pod); err != nil {
		t.Fatal(err)
	}
	if c.Requested.MilliCPU != 0 || c.UsedPorts.CheckConflict("", "TCP", 8080) {
		t.Fatalf("after RemovePod on the copy: requested %+v ports %v", c.Requested, c.UsedPorts)
	}
	if ni.Requested.MilliCPU != 500 || !ni.UsedPorts.CheckConflict("", "TCP", 8080) {
		t.Fatal("RemovePod on the snapshot changed the original")
	}
	ni.RemoveNode()
	if ni.Node() != nil || ni.NodeName() != "" || ni.Unschedulable() || ni.Taints() != nil {
		t.Fatal("RemoveNode kept node fields")
	}
}
