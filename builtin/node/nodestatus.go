package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Well-known labels.
const (
	LabelHostname = "kubernetes.io/hostname"
	LabelOS       = "kubernetes.io/os"
	LabelArch     = "kubernetes.io/arch"
	LabelZone     = "topology.kubernetes.io/zone"
)

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// meminfo reads a /proc/meminfo field in bytes.
func meminfo(field string) int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n * 1024
		}
	}
	return 0
}

func osImage() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return goruntime.GOOS
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return goruntime.GOOS
}

// capacity is the machine's capacity with the overrides applied.
func (a *Agent) capacity() corev1.ResourceList {
	rl := corev1.ResourceList{
		"cpu":    api.Quantity{S: strconv.Itoa(goruntime.NumCPU())},
		"memory": api.Quantity{S: strconv.FormatInt(meminfo("MemTotal")/1024, 10) + "Ki"},
		"pods":   api.Quantity{S: "110"},
	}
	var st syscall.Statfs_t
	if syscall.Statfs(a.opts.RootDir, &st) == nil {
		rl["ephemeral-storage"] = api.Quantity{S: strconv.FormatUint(st.Blocks*uint64(st.Bsize)/1024, 10) + "Ki"}
	}
	for k, v := range a.opts.Capacity {
		rl[k] = v
	}
	return rl
}

func (a *Agent) labels() map[string]string {
	l := map[string]string{
		LabelHostname: a.opts.NodeName, LabelOS: goruntime.GOOS, LabelArch: goruntime.GOARCH,
		"beta.kubernetes.io/os": goruntime.GOOS, "beta.kubernetes.io/arch": goruntime.GOARCH,
	}
	if a.opts.Zone != "" {
		l[LabelZone] = a.opts.Zone
	}
	for k, v := range a.opts.Labels {
		l[k] = v
	}
	return l
}

// pressure computes the pressure conditions' statuses.
func (a *Agent) pressure() (mem, disk, pid bool) {
	if avail := meminfo("MemAvailable"); avail > 0 && avail < 100<<20 {
		mem = true
	}
	var st syscall.Statfs_t
	if syscall.Statfs(a.opts.RootDir, &st) == nil && st.Blocks > 0 && float64(st.Bavail)/float64(st.Blocks) < 0.10 {
		disk = true
	}
	if max, err := strconv.Atoi(readTrim("/proc/sys/kernel/pid_max")); err == nil && max > 0 {
		if entries, err := os.ReadDir("/proc"); err == nil {
			n := 0
			for _, e := range entries {
				if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
					n++
				}
			}
			pid = float64(n) > 0.9*float64(max)
		}
	}
	return mem, disk, pid
}

func condition(t corev1.NodeConditionType, on bool, trueReason, falseReason, trueMsg, falseMsg string) corev1.NodeCondition {
	if on {
		return corev1.NodeCondition{Type: t, Status: corev1.ConditionTrue, Reason: trueReason, Message: trueMsg}
	}
	return corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse, Reason: falseReason, Message: falseMsg}
}

// desiredStatus computes the node status (conditions without timestamps).
func (a *Agent) desiredStatus() corev1.NodeStatus {
	mem, disk, pid := a.pressure()
	cap := a.capacity()
	host, _ := os.Hostname()
	return corev1.NodeStatus{
		Capacity: cap, Allocatable: cap,
		Phase: corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			condition(corev1.NodeMemoryPressure, mem, "KubeletHasInsufficientMemory", "KubeletHasSufficientMemory", "kubelet has insufficient memory available", "kubelet has sufficient memory available"),
			condition(corev1.NodeDiskPressure, disk, "KubeletHasDiskPressure", "KubeletHasNoDiskPressure", "kubelet has disk pressure", "kubelet has no disk pressure"),
			condition(corev1.NodePIDPressure, pid, "KubeletHasInsufficientPID", "KubeletHasSufficientPID", "kubelet has insufficient PID available", "kubelet has sufficient PID available"),
			condition(corev1.NodeReady, true, "KubeletReady", "", "kubelet is posting ready status", ""),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: a.opts.InternalIP},
			{Type: corev1.NodeHostName, Address: host},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(a.logPort)}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               readTrim("/etc/machine-id"),
			SystemUUID:              readTrim("/sys/class/dmi/id/product_uuid"),
			BootID:                  readTrim("/proc/sys/kernel/random/boot_id"),
			KernelVersion:           readTrim("/proc/sys/kernel/osrelease"),
			OSImage:                 osImage(),
			ContainerRuntimeVersion: a.rt.Name() + "://" + a.opts.Version,
			KubeletVersion:          a.opts.Version,
			KubeProxyVersion:        a.opts.Version,
			OperatingSystem:         goruntime.GOOS,
			Architecture:            goruntime.GOARCH,
		},
	}
}

// mergeConditions carries transition times over from old where the status is
// unchanged, and sets heartbeat times to now.
func mergeConditions(old, cur []corev1.NodeCondition, now api.Time) []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, len(cur))
	for i, c := range cur {
		c.LastHeartbeatTime, c.LastTransitionTime = now, now
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		out[i] = c
	}
	return out
}

// statusKey is the status without timestamps, to detect changes.
func statusKey(s corev1.NodeStatus) string {
	conds := make([]corev1.NodeCondition, len(s.Conditions))
	for i, c := range s.Conditions {
		c.LastHeartbeatTime, c.LastTransitionTime = api.Time{}, api.Time{}
		conds[i] = c
	}
	s.Conditions = conds
	b, _ := json.Marshal(s)
	return string(b)
}

// register creates the Node or updates an existing one, then writes its status.
func (a *Agent) register(ctx context.Context) error {
	node := &corev1.Node{}
	node.Name = a.opts.NodeName
	node.Labels = a.labels()
	node.Spec.PodCIDR = a.opts.PodCIDR
	node.Spec.PodCIDRs = []string{a.opts.PodCIDR}
	err := a.c.Create(ctx, node)
	if apierrors.IsAlreadyExists(err) {
		if err := a.c.Get(ctx, client.ObjectKey{Name: a.opts.NodeName}, node); err != nil {
			return fmt.Errorf("get node %s: %w", a.opts.NodeName, err)
		}
		patch := map[string]any{"metadata": map[string]any{"labels": a.labels()}}
		if node.Spec.PodCIDR == "" {
			patch["spec"] = map[string]any{"podCIDR": a.opts.PodCIDR, "podCIDRs": []string{a.opts.PodCIDR}}
		}
		b, _ := json.Marshal(patch)
		if err := a.c.Patch(ctx, node, client.RawPatch(client.MergePatchType, b)); err != nil {
			return fmt.Errorf("update node %s: %w", a.opts.NodeName, err)
		}
	} else if err != nil {
		return fmt.Errorf("create node %s: %w", a.opts.NodeName, err)
	}
	a.nodeUID = node.UID
	a.podCIDR = a.podCIDRFor(node.Spec.PodCIDR)
	return a.writeNodeStatus(ctx, node.Status.Conditions)
}

func (a *Agent) writeNodeStatus(ctx context.Context, old []corev1.NodeCondition) error {
	st := a.desiredStatus()
	st.Conditions = mergeConditions(old, st.Conditions, api.Now())
	b, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return fmt.Errorf("encode node status: %w", err)
	}
	node := &corev1.Node{}
	node.Name = a.opts.NodeName
	if err := a.c.Status().Patch(ctx, node, client.RawPatch(client.MergePatchType, b)); err != nil {
		return fmt.Errorf("write node %s status: %w", a.opts.NodeName, err)
	}
	a.lastStatusKey, a.lastStatusWrite, a.lastConditions = statusKey(st), time.Now(), st.Conditions
	return nil
}

// runNodeStatus writes the node status on change or every report interval.
func (a *Agent) runNodeStatus(ctx context.Context) {
	t := time.NewTicker(a.opts.NodeStatusUpdateInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := a.desiredStatus()
		if statusKey(st) == a.lastStatusKey && time.Since(a.lastStatusWrite) < a.opts.NodeStatusReportInterval {
			continue
		}
		if err := a.writeNodeStatus(ctx, a.lastConditions); err != nil && ctx.Err() == nil {
			a.log.Error(err, "Node status update failed")
		}
	}
}
