package limitrange_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/limitrange"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

func rl(cpu, memory string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if cpu != "" {
		out["cpu"] = api.MustParseQuantity(cpu)
	}
	if memory != "" {
		out["memory"] = api.MustParseQuantity(memory)
	}
	return out
}

func pod(ns, name string, requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}},
	}}
}

func strs(l corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[k] = v.String()
	}
	return out
}

// waitForRange waits until admission sees lr (it reads the watch cache).
func waitForRange(ctx context.Context, ns string) {
	GinkgoHelper()
	Eventually(func() error {
		err := c.Create(ctx, pod(ns, "probe", rl("1m", "1Ki"), rl("1m", "1Ki")), client.DryRunAll)
		if err == nil {
			return errNotYet
		}
		return nil
	}).Should(Succeed())
}

var errNotYet = apierrors.NewBadRequest("limit range not seen yet")

var _ = Describe("LimitRanger", func() {
	It("defaults containers and refuses requests outside min and max", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		lr := &corev1.LimitRange{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer,
			Min:  rl("50m", "100Mi"), Max: rl("500m", "500Mi"),
			Default: rl("500m", "500Mi"), DefaultRequest: rl("100m", "200Mi"),
		}}}}
		Expect(c.Create(ctx, lr)).To(Succeed())
		waitForRange(ctx, ns)

		p := pod(ns, "no-resources", nil, nil)
		Expect(c.Create(ctx, p)).To(Succeed())
		Expect(strs(p.Spec.Containers[0].Resources.Requests)).To(Equal(map[string]string{"cpu": "100m", "memory": "200Mi"}))
		Expect(strs(p.Spec.Containers[0].Resources.Limits)).To(Equal(map[string]string{"cpu": "500m", "memory": "500Mi"}))
		Expect(p.Annotations).To(HaveKeyWithValue(limitrange.Annotation,
			"LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"))

		// A limit without a request makes the request (API defaulting runs first).
		p = pod(ns, "partial", rl("", "150Mi"), rl("300m", ""))
		Expect(c.Create(ctx, p)).To(Succeed())
		Expect(strs(p.Spec.Containers[0].Resources.Requests)).To(Equal(map[string]string{"cpu": "300m", "memory": "150Mi"}))
		Expect(strs(p.Spec.Containers[0].Resources.Limits)).To(Equal(map[string]string{"cpu": "300m", "memory": "500Mi"}))

		err := c.Create(ctx, pod(ns, "small", rl("10m", "200Mi"), nil))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal(`pods "small" is forbidden: minimum cpu usage per Container is 50m, but request is 10m`))

		err = c.Create(ctx, pod(ns, "big", rl("600m", "600Mi"), rl("600m", "600Mi")))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("maximum cpu usage per Container is 500m, but limit is 600m"))

		// The stored LimitRange carries its defaults.
		got := &corev1.LimitRange{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(lr), got)).To(Succeed())
		Expect(strs(got.Spec.Limits[0].DefaultRequest)).To(Equal(map[string]string{"cpu": "100m", "memory": "200Mi"}))
	})

	It("bounds pods, limit/request ratios and claims", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		lr := &corev1.LimitRange{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, Max: rl("1", "")},
			{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("2", "")},
			{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}},
		}}}
		Expect(c.Create(ctx, lr)).To(Succeed())
		Eventually(func() error {
			return c.Create(ctx, pod(ns, "probe", rl("100m", ""), rl("1", "")), client.DryRunAll)
		}).Should(MatchError(ContainSubstring("cpu max limit to request ratio per Container is 2, but provided ratio is 10.000000")))

		Expect(c.Create(ctx, pod(ns, "fits", rl("600m", ""), rl("1", "")))).To(Succeed())

		claim := &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "big"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": api.MustParseQuantity("2Gi")}},
		}}
		Expect(c.Create(ctx, claim)).To(MatchError(ContainSubstring("maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 2Gi")))
	})
})
