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
		if v.Name == exclude || !v.PodExists || v.Deleting || !v.Ready || v.NodeNotReady || !v.Queried || !v.InRecovery {
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
