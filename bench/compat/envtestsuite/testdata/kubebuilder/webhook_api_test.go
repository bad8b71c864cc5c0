package v1alpha1

// Added by bench/compat/envtestsuite's TestKubebuilderProject next to the
// webhook suite kubebuilder scaffolded (internal/webhook/v1alpha1), which it
// leaves as it is: these specs send objects through the API server, so that the
// scaffolded BeforeSuite's envtest installs config/webhook/manifests.yaml and
// the CRD's conversion webhook, pointing at the suite's webhook server.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	cachev1 "example.com/memcached/api/v1"
	cachev1alpha1 "example.com/memcached/api/v1alpha1"
)

// With both versions in the scheme (before BeforeSuite), Memcached is
// convertible: envtest points the CRD's conversion at the suite's webhook
// server and the manager serves /convert.
func init() {
	if err := cachev1.AddToScheme(scheme.Scheme); err != nil {
		panic(err)
	}
}

var _ = Describe("Memcached webhooks through the API server", func() {
	It("defaults spec.foo", func() {
		obj := &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "defaulted", Namespace: "default"}}
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Expect(obj.Spec.Foo).To(HaveValue(Equal("defaulted")))
	})

	It("refuses spec.foo=bad", func() {
		bad := "bad"
		err := k8sClient.Create(ctx, &cachev1alpha1.Memcached{
			ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"},
			Spec:       cachev1alpha1.MemcachedSpec{Foo: &bad},
		})
		Expect(err).To(MatchError(ContainSubstring(`admission webhook "vmemcached-v1alpha1.kb.io" denied the request: spec.foo must not be "bad"`)))
	})

	It("serves v1 through the conversion webhook", func() {
		foo := "converted"
		obj := &cachev1alpha1.Memcached{
			ObjectMeta: metav1.ObjectMeta{Name: "converted", Namespace: "default"},
			Spec:       cachev1alpha1.MemcachedSpec{Foo: &foo},
		}
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		v1 := &cachev1.Memcached{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), v1)).To(Succeed())
		Expect(v1.Annotations).To(HaveKeyWithValue("converted-by", "webhook"))
		Expect(v1.Spec.Foo).To(HaveValue(Equal("converted")))
	})
})
