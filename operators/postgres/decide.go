package postgres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// View is what the operator observes of one instance in a reconcile: its pod
// and, when postgres answered, its role and WAL position.
type View struct {
	Name string
	// Pod facts.
	PodExists, Deleting, Ready, Running bool
	PodIP, NodeName                     string
	RestartCount                        int32
	// NotReadySince is when the pod's Ready condition last became false.
	NotReadySince time.Time
	// NodeNotReady says the pod's node is not Ready (Unknown: its agent
	// stopped reporting; False: it reports a problem) since NodeNotReadySince.
	// The agent then neither runs probes nor stops containers, so the pod's
	// own status can no longer be trusted.
	NodeNotReady      bool
	NodeNotReadySince time.Time
	// Postgres facts, valid when Queried.
	Queried    bool
	InRecovery bool
	LSN        uint64
}

// ParseLSN parses a PostgreSQL LSN ("16/B374D848").
func ParseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("lsn %q: no slash", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("lsn %q: %w", s, err)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("lsn %q: %w", s, err)
	}
	return h<<32 | l, nil
}

// FormatLSN is the inverse of ParseLSN.
func FormatLSN(v uint64) string { return fmt.Sprintf("%X/%X", v>>32, v&0xffffffff) }

// ChooseCandidate picks the replica to promote: among ready, queried
// replicas other than exclude, the one with the highest received LSN (ties:
// lowest ordinal). It returns "" when there is none.
func ChooseCandidate(cluster string, views []View, exclude string) string {
	var best *View
	for i := range views {
		v := &views[i]
		if v.Name == exclude || !readyReplica(*v) {
			continue
		}
		if best == nil || v.LSN > best.LSN || (v.LSN == best.LSN && Ordinal(cluster, v.Name) < Ordinal(cluster, best.Name)) {
			best = v
		}
	}
	if best == nil {
		return ""
	}
	return best.Name
}

// readyReplica says whether v is a replica that can be promoted: its pod is
// ready and not being deleted, on a Ready node, and postgres answered that
// it is in recovery.
func readyReplica(v View) bool {
	return v.PodExists && !v.Deleting && v.Ready && !v.NodeNotReady && v.Queried && v.InRecovery
}

// SwitchoverStep is what a switchover does next while a pod of the old
// primary exists.
type SwitchoverStep int

const (
	// SwitchoverRecord: the stored status does not name the target yet (it
	// was chosen in this round), so the status is written first and nothing
	// is stopped. Were the old primary's pod deleted first and that write
	// lost (a conflict), the next round would see a primary being deleted
	// and no switchover, and fail over to the most advanced replica instead
	// (a second role change when that is not the target).
	SwitchoverRecord SwitchoverStep = iota
	// SwitchoverAbort: the target is no longer a ready replica and the old
	// primary still serves: it stays the primary.
	SwitchoverAbort
	// SwitchoverFence: the old primary is stopped (its pod deleted with a
	// clean shutdown, so its WAL reaches the replicas).
	SwitchoverFence
	// SwitchoverWait: the old primary's pod is being deleted.
	SwitchoverWait
	// SwitchoverStopped: the old primary was stopped already and its
	// instance is back as a replica; the write that made the target
	// current was lost (a conflict). The target becomes current.
	SwitchoverStopped
)

// NextSwitchoverStep says what the switchover to target does next, given
// recorded, the target primary of the stored status, and the views of the
// old primary and of the target. Once the stored status names the target,
// the switchover goes on whatever happens to later writes: it is abandoned
// only while the old primary still serves as a primary.
func NextSwitchoverStep(target, recorded string, old, tv View) SwitchoverStep {
	switch {
	case old.Deleting:
		return SwitchoverWait
	case recorded != target:
		return SwitchoverRecord
	case old.Queried && old.InRecovery:
		return SwitchoverStopped
	case old.Queried && !readyReplica(tv):
		return SwitchoverAbort
	}
	return SwitchoverFence
}

// PrimaryFailure says whether the primary must be replaced, and why: its pod
// is gone or being deleted, its postgres process exited (the container
// restarted since the operator last saw it; crash recovery in place could
// diverge from what replicas and clients saw acknowledged with asynchronous
// replication, and the replicas are hot), its node has not been Ready for
// longer than delay, or it has not been ready for longer than delay.
func PrimaryFailure(v View, known *InstanceStatus, delay time.Duration, now time.Time) string {
	switch {
	case !v.PodExists:
		if known == nil {
			return "" // never created yet
		}
		return "primary pod is gone"
	case v.Deleting:
		return "primary pod is being deleted"
	case known != nil && v.RestartCount > known.RestartCount:
		return "primary postgres process exited"
	case v.NodeNotReady && known != nil && !v.NodeNotReadySince.IsZero() && now.Sub(v.NodeNotReadySince) >= delay:
		return fmt.Sprintf("node %s of the primary not ready for %s", v.NodeName, now.Sub(v.NodeNotReadySince).Round(time.Second))
	case !v.Ready && known != nil && known.Ready && !v.NotReadySince.IsZero() && now.Sub(v.NotReadySince) >= delay:
		return fmt.Sprintf("primary not ready for %s", now.Sub(v.NotReadySince).Round(time.Second))
	}
	return ""
}

// findView returns the view of name.
func findView(views []View, name string) (View, bool) {
	i := slices.IndexFunc(views, func(v View) bool { return v.Name == name })
	if i < 0 {
		return View{Name: name}, false
	}
	return views[i], true
}

func findStatus(st []InstanceStatus, name string) *InstanceStatus {
	for i := range st {
		if st[i].Name == name {
			return &st[i]
		}
	}
	return nil
}
