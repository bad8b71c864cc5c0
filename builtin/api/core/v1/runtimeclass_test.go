package v1_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	nodev1 "github.com/converge-dev/converge/builtin/api/node/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// The RuntimeClass admission step of the pod create path, through the real
// API server (node.k8s.io/v1 runtimeclasses served beside pods).
var _ = Describe("Pods and RuntimeClasses", func() {
	It("serves runtimeclasses and refuses a changed handler", func(ctx SpecContext) {
		rc := &nodev1.RuntimeClass{ObjectMeta: api.ObjectMeta{Name: "rc-api"}, Handler: "runc"}
		Expect(suite.c.Create(ctx, rc)).To(Succeed())
		got := &nodev1.RuntimeClass{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Name: "rc-api"}, got)).To(Succeed())
		Expect(got.Handler).To(Equal("runc"))
		got.Handler = "kata"
		err := suite.c.Update(ctx, got)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("handler: Invalid value: \"kata\": field is immutable"))
		code, out := send(ctx, http.MethodPost, "/apis/node.k8s.io/v1/runtimeclasses",
			`{"apiVersion":"node.k8s.io/v1","kind":"RuntimeClass","metadata":{"name":"rc-bad"},"handler":"Not_A_Label"}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
	})

	It("refuses a pod whose RuntimeClass does not exist", func(ctx SpecContext) {
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "rc-missing"},
			Spec: corev1.PodSpec{RuntimeClassName: api.Ptr("nope"), Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		err := suite.c.Create(ctx, p)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal(`pods "rc-missing" is forbidden: pod rejected: RuntimeClass "nope" not found`))
	})

	It("gives a pod its class's overhead and scheduling constraints", func(ctx SpecContext) {
		rc := &nodev1.RuntimeClass{ObjectMeta: api.ObjectMeta{Name: "rc-kata"}, Handler: "kata",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{"cpu": api.MustParseQuantity("250m"), "memory": api.MustParseQuantity("120Mi")}},
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "kata"},
				Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}
		Expect(suite.c.Create(ctx, rc)).To(Succeed())
		p := newPod(ctx, "rc-kata-pod", "", func(p *corev1.Pod) { p.Spec.RuntimeClassName = api.Ptr("rc-kata") })
		Expect(p.Spec.Overhead).To(HaveKeyWithValue("cpu", api.MustParseQuantity("250m")))
		Expect(p.Spec.Overhead).To(HaveKeyWithValue("memory", api.MustParseQuantity("120Mi")))
		Expect(p.Spec.NodeSelector).To(HaveKeyWithValue("sandbox", "kata"))
		Expect(p.Spec.Tolerations).To(ContainElement(HaveField("Key", "sandbox")))

		conflict := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "rc-conflict"},
			Spec: corev1.PodSpec{RuntimeClassName: api.Ptr("rc-kata"), NodeSelector: map[string]string{"sandbox": "gvisor"},
				Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		err := suite.c.Create(ctx, conflict)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("pod rejected: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = gvisor"))
	})
})
