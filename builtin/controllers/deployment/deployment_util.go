package deployment

import (
	"cmp"
	"encoding/json"
	"github.com/converge-dev/converge/builtin/controllers/internal/history"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// Annotations the controller keeps on ReplicaSets (and the revision on the
// Deployment), as Kubernetes names them.
const (
	RevisionAnnotation        = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	// ChangeCauseAnnotation is what `kubectl rollout history` shows.
	ChangeCauseAnnotation = "kubernetes.io/change-cause"
)

// Condition reasons, as Kubernetes names them.
const (
	ReasonNewRSCreated          = "NewReplicaSetCreated"
	ReasonFoundNewRS            = "FoundNewReplicaSet"
	ReasonRSUpdated             = "ReplicaSetUpdated"
	ReasonNewRSAvailable        = "NewReplicaSetAvailable"
	ReasonTimedOut              = "ProgressDeadlineExceeded"
	ReasonPaused                = "DeploymentPaused"
	ReasonResumed               = "DeploymentResumed"
	ReasonFailedRSCreate        = "ReplicaSetCreateError"
	ReasonMinimumAvailable      = "MinimumReplicasAvailable"
	ReasonMinimumUnavailable    = "MinimumReplicasUnavailable"
	ReasonScalingReplicaSet     = "ScalingReplicaSet"
	ReasonSelectingAll          = "SelectingAll"
	maxRevisionHistoryInChars   = 2000
	lastAppliedConfigAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// annotationsToSkip are the Deployment annotations not copied to ReplicaSets.
var annotationsToSkip = map[string]bool{
	lastAppliedConfigAnnotation: true,
	RevisionAnnotation:          true,
	RevisionHistoryAnnotation:   true,
	DesiredReplicasAnnotation:   true,
	MaxReplicasAnnotation:       true,
	appsv1.DeprecatedRollbackTo: true,
}

// alphanums is the alphabet of template hashes.
const alphanums = history.Alphabet

// ComputeHash returns the pod-template-hash of a template (history.ComputeHash:
// FNV-32a over its JSON and the collision count, safely encoded).
func ComputeHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	return history.ComputeHash(t, collisionCount)
}

// EqualIgnoreHash reports whether two templates are equal once the
// pod-template-hash label is removed from both.
func EqualIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	return templateJSON(a) == templateJSON(b)
}

func templateJSON(t *corev1.PodTemplateSpec) string {
	cp := *t
	if _, ok := t.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
		cp.Labels = make(map[string]string, len(t.Labels))
		for k, v := range t.Labels {
			if k != appsv1.DefaultDeploymentUniqueLabelKey {
				cp.Labels[k] = v
			}
		}
	}
	b, _ := json.Marshal(&cp)
	return string(b)
}

// scaledValue resolves an int-or-percent against total, rounding a percent up
// or down.
func scaledValue(v *api.IntOrString, total int32, roundUp bool) int32 {
	if v == nil {
		return 0
	}
	if v.Type == api.Int {
		return v.IntVal
	}
	p, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil {
		return 0
	}
	x := float64(p) * float64(total) / 100
	if roundUp {
		return int32(math.Ceil(x))
	}
	return int32(math.Floor(x))
}

// ResolveFenceposts returns maxSurge (percent rounded up) and maxUnavailable
// (percent rounded down) for desired replicas; when both are 0, maxUnavailable
// is 1 so a rollout can always proceed.
func ResolveFenceposts(maxSurge, maxUnavailable *api.IntOrString, desired int32) (surge, unavailable int32) {
	surge = scaledValue(maxSurge, desired, true)
	unavailable = scaledValue(maxUnavailable, desired, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Strategy.Type == ""
}

func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func rsReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs == nil || rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

func rollingParams(d *appsv1.Deployment) (surge, unavailable *api.IntOrString) {
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		return ru.MaxSurge, ru.MaxUnavailable
	}
	return nil, nil
}

// MaxUnavailable returns the pods that may be unavailable during a rolling
// update (0 for Recreate or zero replicas), never more than replicas.
func MaxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || replicasOf(d) == 0 {
		return 0
	}
	s, u := rollingParams(d)
	_, mu := ResolveFenceposts(s, u, replicasOf(d))
	return min(mu, replicasOf(d))
}

// MaxSurge returns the pods that may exist above replicas during a rolling
// update (0 for Recreate).
func MaxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) {
		return 0
	}
	s, u := rollingParams(d)
	ms, _ := ResolveFenceposts(s, u, replicasOf(d))
	return ms
}

// NewRSNewReplicas returns the size the new ReplicaSet may have now.
func NewRSNewReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if !isRollingUpdate(d) {
		return replicasOf(d)
	}
	current := sumReplicas(all)
	maxTotal := replicasOf(d) + MaxSurge(d)
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	up := min(maxTotal-current, replicasOf(d)-rsReplicas(newRS))
	return rsReplicas(newRS) + max(up, 0)
}

func sumReplicas(l []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range l {
		n += rsReplicas(rs)
	}
	return n
}

// availableOf counts rs's available pods, never more than its spec: pods above
// the spec are about to be deleted.
func availableOf(rs *appsv1.ReplicaSet) int32 {
	if rs == nil {
		return 0
	}
	return min(rs.Status.AvailableReplicas, rsReplicas(rs))
}

func revisionOf(rs *appsv1.ReplicaSet) int64 {
	n, err := strconv.ParseInt(rs.Annotations[RevisionAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func maxRevision(l []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range l {
		m = max(m, revisionOf(rs))
	}
	return m
}

func intAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// setReplicasAnnotations records desired and max replicas on rs.
func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range map[string]int32{DesiredReplicasAnnotation: desired, MaxReplicasAnnotation: maxReplicas} {
		s := strconv.FormatInt(int64(v), 10)
		if rs.Annotations[k] != s {
			rs.Annotations[k] = s
			changed = true
		}
	}
	return changed
}

// setNewReplicaSetAnnotations copies the Deployment's annotations to the new
// ReplicaSet and raises its revision to newRevision (keeping the old one in
// revision-history). New ReplicaSets also get the replicas annotations.
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision int64, exists bool) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range d.Annotations {
		if annotationsToSkip[k] || rs.Annotations[k] == v {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	old := rs.Annotations[RevisionAnnotation]
	oldN, err := strconv.ParseInt(old, 10, 64)
	if err != nil && old != "" {
		return changed
	}
	if oldN < newRevision {
		rs.Annotations[RevisionAnnotation] = strconv.FormatInt(newRevision, 10)
		changed = true
		if old != "" {
			hist := rs.Annotations[RevisionHistoryAnnotation]
			if hist == "" {
				hist = old
			} else {
				hist += "," + old
			}
			for len(hist) > maxRevisionHistoryInChars {
				i := strings.IndexByte(hist, ',')
				if i < 0 {
					hist = ""
					break
				}
				hist = hist[i+1:]
			}
			if hist != "" {
				rs.Annotations[RevisionHistoryAnnotation] = hist
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d)+MaxSurge(d)) {
		changed = true
	}
	return changed
}

// byCreation orders oldest first (name breaks ties).
func byCreation(a, b *appsv1.ReplicaSet) int {
	if c := a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

func activeOnly(l []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range l {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// findActiveOrLatest returns the only active ReplicaSet, or the newest one
// when none is active, or nil when several are active.
func findActiveOrLatest(newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(old) == 0 {
		return nil
	}
	old = slices.Clone(old)
	slices.SortFunc(old, func(a, b *appsv1.ReplicaSet) int { return byCreation(b, a) })
	all := activeOnly(append(slices.Clone(old), newRS))
	switch len(all) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return old[0]
	case 1:
		return all[0]
	default:
		return nil
	}
}

// getCondition returns the condition of type t, or nil.
func getCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func newCondition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	at := api.NewTime(now.UTC().Truncate(time.Second))
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: at, LastTransitionTime: at}
}

// setCondition sets c, keeping the transition time when the status does not
// change and doing nothing when status and reason are unchanged.
func setCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getCondition(st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

func removeCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	st.Conditions = slices.DeleteFunc(st.Conditions, func(c appsv1.DeploymentCondition) bool { return c.Type == t })
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

// deploymentComplete: every replica is updated and available, and the
// latest generation is observed.
func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	n := replicasOf(d)
	return st.UpdatedReplicas == n && st.Replicas == n && st.AvailableReplicas == n && st.ObservedGeneration >= d.Generation
}

// deploymentProgressing: more updated, fewer old, or more ready or available
// pods than the Deployment's current status says.
func deploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

// deploymentTimedOut: the Progressing condition was last updated longer ago
// than the progress deadline.
func deploymentTimedOut(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := getCondition(st, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == ReasonNewRSAvailable {
		return false
	}
	if c.Reason == ReasonTimedOut {
		return true
	}
	return c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Before(now)
}

func isGone(err error) bool { return apierrors.IsNotFound(err) }
