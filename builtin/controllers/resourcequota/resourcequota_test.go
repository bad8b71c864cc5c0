package resourcequota_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

func newQuota(ns, name string, hard map[string]string, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}, Scopes: scopes}}
	for k, v := range hard {
		q.Spec.Hard[k] = api.MustParseQuantity(v)
	}
	return q
}

func newPod(ns, name string, requests, limits map[string]string) *corev1.Pod {
	res := corev1.ResourceRequirements{}
	for k, v := range requests {
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		res.Requests[k] = api.MustParseQuantity(v)
	}
	for k, v := range limits {
		if res.Limits == nil {
			res.Limits = corev1.ResourceList{}
		}
		res.Limits[k] = api.MustParseQuantity(v)
	}
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			// Never scheduled: no scheduler runs, and the selector matches no node.
			NodeSelector: map[string]string{"x-test.k8s.io/unsatisfiable": "not-schedulable"},
			Containers:   []corev1.Container{{Name: "pause", Image: "pause", Resources: res}},
		},
	}
}

// usedOf returns the quota's status.used as strings, once status.used is set.
func usedOf(ctx context.Context, q *corev1.ResourceQuota) func(Gomega) map[string]string {
	return func(g Gomega) map[string]string {
		got := &corev1.ResourceQuota{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(q), got)).To(Succeed())
		g.Expect(got.Status.Used).NotTo(BeNil())
		out := map[string]string{}
		for k, v := range got.Status.Used {
			out[k] = v.String()
		}
		return out
	}
}

var _ = Describe("resourcequota", func() {
	It("calculates usage, refuses pods over quota with Kubernetes' message and releases deleted pods", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "compute", map[string]string{"pods": "2", "requests.cpu": "1", "memory": "500Mi", "requests.example.com/dongle": "3"})
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(Equal(map[string]string{"pods": "0", "requests.cpu": "0", "memory": "0", "requests.example.com/dongle": "0"}))

		p := newPod(ns, "fits", map[string]string{"cpu": "500m", "memory": "252Mi", "example.com/dongle": "2"}, map[string]string{"example.com/dongle": "2"})
		Expect(c.Create(ctx, p)).To(Succeed())
		// Admission charged the pod synchronously.
		Eventually(usedOf(ctx, q)).To(Equal(map[string]string{"pods": "1", "requests.cpu": "500m", "memory": "252Mi", "requests.example.com/dongle": "2"}))

		err := c.Create(ctx, newPod(ns, "too-big", map[string]string{"cpu": "600m", "memory": "100Mi"}, nil))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal(`pods "too-big" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1`))

		err = c.Create(ctx, newPod(ns, "no-requests", nil, nil))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("failed quota: compute: must specify memory for: pause; requests.cpu for: pause"))

		Expect(c.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(Equal(map[string]string{"pods": "0", "requests.cpu": "0", "memory": "0", "requests.example.com/dongle": "0"}))
	})

	It("counts services, node ports and load balancers", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "svc", map[string]string{"services": "10", "services.nodeports": "1", "services.loadbalancers": "1"})
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(HaveKeyWithValue("services", "0"))

		svc := func(name string, t corev1.ServiceType) *corev1.Service {
			return &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{
				Type: t, Ports: []corev1.ServicePort{{Port: 80}},
			}}
		}
		Expect(c.Create(ctx, svc("plain", corev1.ServiceTypeClusterIP))).To(Succeed())
		np := svc("np", corev1.ServiceTypeNodePort)
		Expect(c.Create(ctx, np)).To(Succeed())
		err := c.Create(ctx, svc("lb", corev1.ServiceTypeLoadBalancer))
		Expect(err).To(MatchError(ContainSubstring("exceeded quota: svc, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1")))
		Eventually(usedOf(ctx, q)).To(Equal(map[string]string{"services": "2", "services.nodeports": "1", "services.loadbalancers": "0"}))

		Expect(c.Delete(ctx, np)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(Equal(map[string]string{"services": "1", "services.nodeports": "0", "services.loadbalancers": "0"}))
	})

	It("charges claims' storage in total and per storage class, and services that become NodePort", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "storage", map[string]string{"requests.storage": "10Gi",
			"gold.storageclass.storage.k8s.io/requests.storage": "3Gi", "persistentvolumeclaims": "5", "services.nodeports": "1"})
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(HaveKeyWithValue("requests.storage", "0"))

		claim := func(name, class, size string) *corev1.PersistentVolumeClaim {
			return &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
				StorageClassName: api.Ptr(class),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": api.MustParseQuantity(size)}},
			}}
		}
		Expect(c.Create(ctx, claim("a", "gold", "2Gi"))).To(Succeed())
		Expect(c.Create(ctx, claim("b", "gold", "2Gi"))).To(MatchError(ContainSubstring(
			"exceeded quota: storage, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: gold.storageclass.storage.k8s.io/requests.storage=2Gi, limited: gold.storageclass.storage.k8s.io/requests.storage=3Gi")))
		Expect(c.Create(ctx, claim("c", "silver", "5Gi"))).To(Succeed())
		Eventually(usedOf(ctx, q)).To(Equal(map[string]string{"requests.storage": "7Gi",
			"gold.storageclass.storage.k8s.io/requests.storage": "2Gi", "persistentvolumeclaims": "2", "services.nodeports": "0"}))

		svc := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"}, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}}}
		Expect(c.Create(ctx, svc)).To(Succeed())
		svc.Spec.Type = corev1.ServiceTypeNodePort
		Expect(c.Update(ctx, svc)).To(MatchError(ContainSubstring("exceeded quota: storage, requested: services.nodeports=2")))
	})

	It("selects pods by priority class with a scope selector", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "gold", map[string]string{"pods": "1"})
		q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
			ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"system-cluster-critical"}}}}
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(HaveKeyWithValue("pods", "0"))
		critical := func(name string) *corev1.Pod {
			p := newPod(ns, name, nil, nil)
			p.Spec.PriorityClassName = "system-cluster-critical"
			return p
		}
		Expect(c.Create(ctx, critical("c1"))).To(Succeed())
		Expect(c.Create(ctx, critical("c2"))).To(MatchError(ContainSubstring("exceeded quota: gold")))
		Expect(c.Create(ctx, newPod(ns, "plain", nil, nil))).To(Succeed())
		Eventually(usedOf(ctx, q)).To(HaveKeyWithValue("pods", "1"))
	})

	It("keeps terminating and best-effort scopes apart", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		term := newQuota(ns, "terminating", map[string]string{"pods": "5"}, corev1.ResourceQuotaScopeTerminating)
		notTerm := newQuota(ns, "not-terminating", map[string]string{"pods": "5"}, corev1.ResourceQuotaScopeNotTerminating)
		best := newQuota(ns, "besteffort", map[string]string{"pods": "5"}, corev1.ResourceQuotaScopeBestEffort)
		for _, q := range []*corev1.ResourceQuota{term, notTerm, best} {
			Expect(c.Create(ctx, q)).To(Succeed())
			Eventually(usedOf(ctx, q)).Should(HaveKeyWithValue("pods", "0"))
		}
		long := newPod(ns, "long", map[string]string{"cpu": "100m"}, nil)
		Expect(c.Create(ctx, long)).To(Succeed())
		short := newPod(ns, "short", nil, nil)
		short.Spec.ActiveDeadlineSeconds = api.Ptr(int64(3600))
		Expect(c.Create(ctx, short)).To(Succeed())

		Eventually(usedOf(ctx, term)).To(HaveKeyWithValue("pods", "1"))
		Eventually(usedOf(ctx, notTerm)).To(HaveKeyWithValue("pods", "1"))
		Eventually(usedOf(ctx, best)).To(HaveKeyWithValue("pods", "1"))

		Expect(c.Delete(ctx, short, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(usedOf(ctx, term)).Should(HaveKeyWithValue("pods", "0"))
		Eventually(usedOf(ctx, best)).Should(HaveKeyWithValue("pods", "0"))
		Eventually(usedOf(ctx, notTerm)).To(HaveKeyWithValue("pods", "1"))
	})

	It("counts any resource with count/<resource>.<group> and releases it on delete", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "objects", map[string]string{"count/replicasets.apps": "1", "configmaps": "3", "resourcequotas": "1"})
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(Equal(map[string]string{"count/replicasets.apps": "0", "configmaps": "0", "resourcequotas": "1"}))

		rs := func(name string) *appsv1.ReplicaSet {
			return &appsv1.ReplicaSet{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.ReplicaSetSpec{
				Replicas: api.Ptr(int32(0)),
				Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
				},
			}}
		}
		first := rs("first")
		Expect(c.Create(ctx, first)).To(Succeed())
		Expect(c.Create(ctx, rs("second"))).To(MatchError(ContainSubstring(
			"exceeded quota: objects, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1")))
		Expect(c.Create(ctx, newQuota(ns, "another", map[string]string{"pods": "1"}))).To(MatchError(ContainSubstring("exceeded quota: objects")))

		Expect(c.Delete(ctx, first)).To(Succeed())
		Eventually(usedOf(ctx, q)).WithTimeout(30 * 1e9).Should(HaveKeyWithValue("count/replicasets.apps", "0"))
		Expect(c.Create(ctx, rs("second"))).To(Succeed())

		// Deleting a quota releases the resourcequotas count of the others.
		Expect(c.Get(ctx, client.ObjectKeyFromObject(q), q)).To(Succeed())
		q.Spec.Hard["resourcequotas"] = api.MustParseQuantity("2")
		Expect(c.Update(ctx, q)).To(Succeed())
		// Admission enforces status.hard, which the controller copies from the spec.
		Eventually(func(g Gomega) string {
			got := &corev1.ResourceQuota{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(q), got)).To(Succeed())
			return got.Status.Hard["resourcequotas"].String()
		}).Should(Equal("2"))
		other := newQuota(ns, "other", map[string]string{"pods": "1"})
		Expect(c.Create(ctx, other)).To(Succeed())
		Eventually(usedOf(ctx, q)).To(HaveKeyWithValue("resourcequotas", "2"))
		Expect(c.Delete(ctx, other)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(HaveKeyWithValue("resourcequotas", "1"))
	})

	It("never charges events, as Kubernetes' quota ignores them", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "events", map[string]string{"count/events": "0", "configmaps": "1"})
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(Equal(map[string]string{"configmaps": "0"}))
		for i := range 3 {
			ev := &corev1.Event{
				ObjectMeta:     api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("ev-%d", i)},
				InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "x"},
				Reason:         "Test", Message: "not charged", Type: "Normal",
			}
			Expect(c.Create(ctx, ev)).To(Succeed())
		}
		Consistently(usedOf(ctx, q)).WithTimeout(2 * 1e9).Should(Equal(map[string]string{"configmaps": "0"}))
	})

	It("never lets concurrent creates exceed the quota", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "cm", map[string]string{"count/configmaps": "5"})
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(HaveKeyWithValue("count/configmaps", "0"))

		var wg sync.WaitGroup
		var created, refused atomic.Int32
		for i := range 20 {
			wg.Go(func() {
				defer GinkgoRecover()
				err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i)}})
				switch {
				case err == nil:
					created.Add(1)
				case apierrors.IsForbidden(err):
					refused.Add(1)
				default:
					Fail(err.Error())
				}
			})
		}
		wg.Wait()
		Expect(created.Load()).To(Equal(int32(5)))
		Expect(refused.Load()).To(Equal(int32(15)))
		Eventually(usedOf(ctx, q)).To(HaveKeyWithValue("count/configmaps", "5"))
	})

	It("resets a status written by hand to the spec", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		q := newQuota(ns, "reset", map[string]string{"cpu": "1"})
		Expect(c.Create(ctx, q)).To(Succeed())
		Eventually(usedOf(ctx, q)).Should(HaveKeyWithValue("cpu", "0"))
		Expect(c.Get(ctx, client.ObjectKeyFromObject(q), q)).To(Succeed())
		q.Status.Hard = corev1.ResourceList{"cpu": api.MustParseQuantity("2")}
		Expect(c.Status().Update(ctx, q)).To(Succeed())
		Eventually(func(g Gomega) string {
			got := &corev1.ResourceQuota{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(q), got)).To(Succeed())
			return got.Status.Hard["cpu"].String()
		}).Should(Equal("1"))
	})
})
