package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Claim volumes: a PersistentVolumeClaim bound by the volume binder
// (builtin/controllers/volumebinder) to this node is the directory
// <root>/volumes/claims/<namespace>/<claim name>-<claim uid>. It outlives the
// pods that use it and is removed once the claim is gone (reclaim policy
// Delete). A claim bound to a PersistentVolume object is that volume's
// hostPath or local path. A pod's volume directory is a symbolic link to it.

// annSelectedNode names the node a claim's volume lives on.
const annSelectedNode = "volume.kubernetes.io/selected-node"

const (
	// claimBindWait bounds how long a pod waits, quietly, for its claim to be
	// bound before a FailedMount event.
	claimBindWait = 5 * time.Second
	// claimSweepInterval is how often directories of deleted claims are
	// looked for.
	claimSweepInterval = 5 * time.Second
)

// claimsRoot holds the claim directories of the node.
func (a *Agent) claimsRoot() string { return filepath.Join(a.opts.RootDir, "volumes", "claims") }

// claimDir is the directory of the claim namespace/name with uid.
func (a *Agent) claimDir(namespace, name, uid string) string {
	return filepath.Join(a.claimsRoot(), namespace, name+"-"+uid)
}

// claimVolume returns the directory of the claim pod's volume names, creating
// it on first use. The claim must exist and be bound to this node.
func (w *podWorker) claimVolume(ctx context.Context, pod *corev1.Pod, name string) (string, error) {
	deadline := time.Now().Add(claimBindWait)
	for {
		pvc := &corev1.PersistentVolumeClaim{}
		err := w.a.c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, pvc)
		switch {
		case apierrors.IsNotFound(err):
			return "", configError{fmt.Sprintf("persistentvolumeclaim %q not found", name)}
		case err != nil:
			return "", fmt.Errorf("get persistentvolumeclaim %s/%s: %w", pod.Namespace, name, err)
		case pvc.DeletionTimestamp != nil:
			return "", configError{fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)}
		}
		node := pvc.Annotations[annSelectedNode]
		if pvc.Status.Phase == corev1.ClaimBound && node != "" {
			if node != w.a.opts.NodeName {
				return "", configError{fmt.Sprintf("persistentvolumeclaim %q is bound to a volume on node %q (volume node affinity conflict)", name, node)}
			}
			dir := w.a.claimDir(pvc.Namespace, pvc.Name, pvc.UID)
			if _, err := os.Stat(dir); err == nil {
				return dir, nil
			}
			if err := os.MkdirAll(dir, 0o777); err != nil {
				return "", fmt.Errorf("create volume of claim %q: %w", name, err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				return "", fmt.Errorf("create volume of claim %q: %w", name, err)
			}
			return dir, nil
		}
		if pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName != "" {
			return w.a.persistentVolumePath(ctx, name, pvc.Spec.VolumeName)
		}
		if time.Now().After(deadline) {
			return "", configError{fmt.Sprintf("persistentvolumeclaim %q is not bound yet (phase %s)", name, pvc.Status.Phase)}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// persistentVolumePath returns the host path of the PersistentVolume volume
// that claim is bound to: a hostPath volume's path (checked and created as
// its type says, as for a hostPath pod volume) or a local volume's path
// (which must exist). Other sources are not supported on this node.
func (a *Agent) persistentVolumePath(ctx context.Context, claim, volume string) (string, error) {
	pv := &corev1.PersistentVolume{}
	err := a.c.Get(ctx, client.ObjectKey{Name: volume}, pv)
	switch {
	case apierrors.IsNotFound(err):
		return "", configError{fmt.Sprintf("persistentvolume %q of persistentvolumeclaim %q not found", volume, claim)}
	case err != nil:
		return "", fmt.Errorf("get persistentvolume %s of claim %s: %w", volume, claim, err)
	case pv.Spec.HostPath != nil:
		if err := prepareHostPath(pv.Spec.HostPath); err != nil {
			return "", configError{fmt.Sprintf("persistentvolume %q: %v", volume, err)}
		}
		return pv.Spec.HostPath.Path, nil
	case pv.Spec.Local != nil:
		if _, err := os.Stat(pv.Spec.Local.Path); err != nil {
			return "", configError{fmt.Sprintf("persistentvolume %q: local path %q does not exist on this node", volume, pv.Spec.Local.Path)}
		}
		return pv.Spec.Local.Path, nil
	}
	return "", configError{fmt.Sprintf("persistentvolume %q of persistentvolumeclaim %q has a source this node does not support (hostPath and local only)", volume, claim)}
}

// linkVolume makes the pod's volume directory dir a symbolic link to target.
func linkVolume(dir, target string) error {
	if cur, err := os.Readlink(dir); err == nil && cur == target {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, dir)
}

// runClaimSweeper removes the directories of deleted claims until ctx ends.
func (a *Agent) runClaimSweeper(ctx context.Context) {
	t := time.NewTicker(claimSweepInterval)
	defer t.Stop()
	for {
		a.sweepClaims(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepClaims removes every claim directory whose claim no longer exists (or
// is another object under the same name), unless a pod of this node still
// uses a claim of that name.
func (a *Agent) sweepClaims(ctx context.Context) {
	namespaces, err := os.ReadDir(a.claimsRoot())
	if err != nil {
		return // no claims yet
	}
	inUse := a.claimsInUse()
	for _, ns := range namespaces {
		nsDir := filepath.Join(a.claimsRoot(), ns.Name())
		entries, err := os.ReadDir(nsDir)
		if err != nil {
			continue
		}
		left := len(entries)
		for _, e := range entries {
			name, uid, ok := splitClaimDir(e.Name())
			if !ok || inUse[ns.Name()+"/"+name] {
				continue
			}
			// The status subresource: a node may read it for any claim, the
			// claim itself only while one of its pods uses it.
			pvc := &corev1.PersistentVolumeClaim{}
			key := &corev1.PersistentVolumeClaim{}
			key.Namespace, key.Name = ns.Name(), name
			err := a.c.SubResource("status").Get(ctx, key, pvc)
			if err == nil && pvc.UID == uid {
				continue
			}
			if err != nil && !apierrors.IsNotFound(err) {
				a.log.V(1).Info("Cannot check claim of volume", "claim", ns.Name()+"/"+name, "error", err.Error())
				continue
			}
			if err := os.RemoveAll(filepath.Join(nsDir, e.Name())); err != nil {
				a.log.Error(err, "Cannot remove volume of deleted claim", "claim", ns.Name()+"/"+name, "uid", uid)
				continue
			}
			a.log.Info("Removed volume of deleted claim", "claim", ns.Name()+"/"+name, "uid", uid)
			left--
		}
		if left == 0 {
			_ = os.Remove(nsDir)
		}
	}
}

// claimsInUse returns namespace/name of every claim a pod worker uses.
func (a *Agent) claimsInUse() map[string]bool {
	a.mu.Lock()
	ws := make([]*podWorker, 0, len(a.workers))
	for _, w := range a.workers {
		ws = append(ws, w)
	}
	a.mu.Unlock()
	out := map[string]bool{}
	for _, w := range ws {
		pod := w.current()
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				out[pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	return out
}

// splitClaimDir splits "<name>-<uid>" (uid a 36-character UUID).
func splitClaimDir(s string) (name, uid string, ok bool) {
	const uidLen = 36
	if len(s) < uidLen+2 || s[len(s)-uidLen-1] != '-' {
		return "", "", false
	}
	return s[:len(s)-uidLen-1], s[len(s)-uidLen:], true
}
