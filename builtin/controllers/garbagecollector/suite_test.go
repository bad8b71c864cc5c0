package garbagecollector_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestGarbageCollector(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "garbagecollector")
}

var (
	env *testenv.Environment
	c   *client.Client
	nsN atomic.Int32
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(ctx, testenv.Options{Controllers: []string{"garbagecollector", "namespace"}})
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func newNamespace(ctx SpecContext) string {
	name := fmt.Sprintf("gc-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func ownerRef(owner api.Object, block bool) api.OwnerReference {
	gvk := owner.GroupVersionKind()
	ref := api.OwnerReference{APIVersion: gvk.APIVersion(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}
	if block {
		ref.BlockOwnerDeletion = api.Ptr(true)
	}
	return ref
}

func configMap(ctx SpecContext, ns, name string, finalizers []string, owners ...api.OwnerReference) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners, Finalizers: finalizers}}
	Expect(c.Create(ctx, cm)).To(Succeed())
	cm.SetGroupVersionKind(api.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	return cm
}

// gone reports whether obj no longer exists.
func gone(ctx SpecContext, obj api.Object) func() bool {
	return func() bool {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err)
	}
}

// applyCRD creates the CRD in file and waits until it is Established.
func applyCRD(ctx SpecContext, file string) {
	data, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	js, err := yaml.YAMLToJSON(data)
	Expect(err).NotTo(HaveOccurred())
	m, err := api.DecodeMap(js)
	Expect(err).NotTo(HaveOccurred())
	crd := &api.Unstructured{Object: m}
	err = c.Create(ctx, crd)
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	Eventually(func(g Gomega) {
		u := &api.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}}
		u.SetName(crd.GetName())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
		established := false
		for _, cond := range api.NestedSlice(u.Object, "status", "conditions") {
			cm, _ := cond.(map[string]any)
			if cm["type"] == "Established" && cm["status"] == "True" {
				established = true
			}
		}
		g.Expect(established).To(BeTrue())
	}).Should(Succeed())
}
