package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/record"
)

// claimName is the claim of template t for ordinal ord.
func claimName(t *corev1.PersistentVolumeClaim, s *appsv1.StatefulSet, ord int) string {
	return fmt.Sprintf("%s-%s-%d", t.Name, s.Name, ord)
}

// createOrdinal creates the claims and then the pod of ordinal ord from the
// template of revision rev.
func (r *reconciler) createOrdinal(ctx context.Context, s *appsv1.StatefulSet, ord int, rev string, tmpl corev1.PodTemplateSpec) error {
	pod, err := newPod(s, ord, rev, tmpl)
	if err != nil {
		return err
	}
	for i := range s.Spec.VolumeClaimTemplates {
		if err := r.ensureClaim(ctx, s, &s.Spec.VolumeClaimTemplates[i], ord, pod.Name); err != nil {
			return err
		}
	}
	if err := r.client.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // an old pod of that name still goes away
		}
		r.recorder.Event(ctx, s, record.Warning, "FailedCreate", fmt.Sprintf("create Pod %s in StatefulSet %s failed error: %v", pod.Name, s.Name, err))
		return fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	r.recorder.Event(ctx, s, record.Normal, "SuccessfulCreate", fmt.Sprintf("create Pod %s in StatefulSet %s successful", pod.Name, s.Name))
	return nil
}

func (r *reconciler) ensureClaim(ctx context.Context, s *appsv1.StatefulSet, t *corev1.PersistentVolumeClaim, ord int, podName string) error {
	name := claimName(t, s, ord)
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &corev1.PersistentVolumeClaim{})
	if err == nil {
		// The claim survived an earlier pod (or a scale-down): it belongs
		// to this ordinal again.
		return r.syncClaimOwners(ctx, s, ord, &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: podName}}, false)
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get claim %s: %w", name, err)
	}
	lbls := maps.Clone(t.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	if s.Spec.Selector != nil {
		maps.Copy(lbls, s.Spec.Selector.MatchLabels)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: lbls, Annotations: maps.Clone(t.Annotations)},
		Spec:       t.Spec,
	}
	pvc.OwnerReferences, _ = claimOwnerRefs(s, nil, nil, false)
	if err := r.client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
		r.recorder.Event(ctx, s, record.Warning, "FailedCreate", fmt.Sprintf("create Claim %s for Pod %s in StatefulSet %s failed error: %v", name, podName, s.Name, err))
		return fmt.Errorf("create claim %s: %w", name, err)
	}
	r.recorder.Event(ctx, s, record.Normal, "SuccessfulCreate", fmt.Sprintf("create Claim %s Pod %s in StatefulSet %s success", name, podName, s.Name))
	return nil
}

// newPod builds the pod of ordinal ord from tmpl (the template of revision
// rev).
func newPod(s *appsv1.StatefulSet, ord int, rev string, tmpl corev1.PodTemplateSpec) (*corev1.Pod, error) {
	var spec corev1.PodSpec
	b, err := json.Marshal(tmpl.Spec)
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		return nil, fmt.Errorf("copy template of statefulset %s/%s: %w", s.Namespace, s.Name, err)
	}
	name := fmt.Sprintf("%s-%d", s.Name, ord)
	lbls := maps.Clone(tmpl.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[appsv1.StatefulSetRevisionLabel] = rev
	lbls[appsv1.StatefulSetPodNameLabel] = name
	lbls[appsv1.PodIndexLabel] = strconv.Itoa(ord)
	spec.Hostname = name
	if s.Spec.ServiceName != "" {
		spec.Subdomain = s.Spec.ServiceName
	}
	for i := range s.Spec.VolumeClaimTemplates {
		t := &s.Spec.VolumeClaimTemplates[i]
		v := corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(t, s, ord)}}}
		replaced := false
		for j := range spec.Volumes {
			if spec.Volumes[j].Name == t.Name {
				spec.Volumes[j], replaced = v, true
			}
		}
		if !replaced {
			spec.Volumes = append(spec.Volumes, v)
		}
	}
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{
			Name: name, Namespace: s.Namespace, Labels: lbls, Annotations: maps.Clone(tmpl.Annotations),
			OwnerReferences: []api.OwnerReference{controllerRef(s)},
		},
		Spec: spec,
	}, nil
}
