package daemonset_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("DaemonSet revisions", func() {
	It("store the template as Kubernetes' replace patch, byte for byte", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, ns+"-n0", nil)
		ds := newDaemonSet(ns, "bytes", func(ds *appsv1.DaemonSet) {
			ctr := &ds.Spec.Template.Spec.Containers[0]
			ctr.Name, ctr.Image = "app", "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
			ctr.Ports = []corev1.ContainerPort{{ContainerPort: 9376}}
			ctr.SecurityContext = &corev1.SecurityContext{}
			ds.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{}
		})
		Expect(c.Create(ctx, ds)).To(Succeed())
		crs := &appsv1.ControllerRevisionList{}
		Eventually(func() []appsv1.ControllerRevision {
			Expect(c.List(ctx, crs, client.InNamespace(ns))).To(Succeed())
			return crs.Items
		}).Should(HaveLen(1))
		// What Kubernetes' controller writes for the e2e suite's daemon set
		// (its daemon.Match compares these bytes): keys sorted at every
		// level, "$patch":"replace" in the template, the defaulted fields.
		Expect(string(crs.Items[0].Data.Raw)).To(Equal(`{"spec":{"template":{"$patch":"replace",` +
			`"metadata":{"labels":{"app":"bytes"}},` +
			`"spec":{"containers":[{"image":"registry.k8s.io/e2e-test-images/httpd:2.4.38-4","imagePullPolicy":"IfNotPresent",` +
			`"name":"app","ports":[{"containerPort":9376,"protocol":"TCP"}],"resources":{},"securityContext":{},` +
			`"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],` +
			`"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler",` +
			`"securityContext":{},"terminationGracePeriodSeconds":30}}}}`))
	})

	// The e2e ControllerRevision spec: a revision someone else creates with
	// the template's data is the template's; deleting the controller's own
	// does not bring it back, and a template change adds one more.
	It("adopt a revision of the same data under another name", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, ns+"-n0", nil)
		ds := newDaemonSet(ns, "adopt", nil)
		Expect(c.Create(ctx, ds)).To(Succeed())
		revisions := func() []string {
			crs := &appsv1.ControllerRevisionList{}
			Expect(c.List(ctx, crs, client.InNamespace(ns))).To(Succeed())
			var names []string
			for _, cr := range crs.Items {
				names = append(names, cr.Name)
			}
			return names
		}
		Eventually(revisions).Should(HaveLen(1))
		initial := &appsv1.ControllerRevision{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: revisions()[0]}, initial)).To(Succeed())
		cur := getDS(ctx, ds)
		copied := &appsv1.ControllerRevision{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "adopt-copy", Labels: map[string]string{"app": "adopt"},
				OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: cur.Name, UID: cur.UID,
					Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true)}}},
			Data: initial.Data, Revision: initial.Revision + 1,
		}
		Expect(c.Create(ctx, copied)).To(Succeed())
		Expect(c.Delete(ctx, initial)).To(Succeed())
		Consistently(revisions, "1s").Should(Equal([]string{"adopt-copy"}))

		Eventually(func() error {
			cur = getDS(ctx, ds)
			cur.Spec.Template.Spec.TerminationGracePeriodSeconds = api.Ptr[int64](1)
			return c.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(revisions).Should(HaveLen(2))
		Expect(revisions()).To(ContainElement("adopt-copy"))
	})
})
