package security

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("ServiceAccount admission and the root CA publisher", Ordered, func() {
	const saPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	var (
		cp *controlplane.ControlPlane
		p  *pki.PKI
		c  *client.Client
	)
	newPod := func(name string, mutate func(*corev1.Pod)) *corev1.Pod {
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = name, "default"
		pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
		pod.Spec.Containers = []corev1.Container{{Name: "a", Image: "busybox"}, {Name: "b", Image: "busybox"}}
		if mutate != nil {
			mutate(pod)
		}
		return pod
	}
	apiAccess := func(pod *corev1.Pod) *corev1.Volume {
		for i, v := range pod.Spec.Volumes {
			if strings.HasPrefix(v.Name, "kube-api-access-") {
				return &pod.Spec.Volumes[i]
			}
		}
		return nil
	}

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true, Controllers: []string{"serviceaccount", "namespace", "csr", "root-ca-cert-publisher"}})
		var err error
		p, err = pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		sch, err := all.NewScheme()
		Expect(err).NotTo(HaveOccurred())
		c, err = client.New(newIdentity(p, "test-admin", "system:masters").config(p, cp.URL()), client.Options{Scheme: sch})
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(time.Minute))

	It("publishes kube-root-ca.crt with the cluster CA in every namespace, and repairs it", func(ctx SpecContext) {
		caOf := func(ns string) func(Gomega) {
			return func(g Gomega) {
				cm := &corev1.ConfigMap{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kube-root-ca.crt"}, cm)).To(Succeed())
				g.Expect(cm.Data).To(Equal(map[string]string{"ca.crt": string(p.CAPEM())}))
			}
		}
		for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			Eventually(caOf(ns)).WithContext(ctx).Should(Succeed())
		}
		By("a new namespace gets one")
		ns := &corev1.Namespace{}
		ns.Name = "fresh"
		Expect(c.Create(ctx, ns)).To(Succeed())
		Eventually(caOf("fresh")).WithContext(ctx).Should(Succeed())

		By("an edited one is reset, a deleted one recreated")
		cm := &corev1.ConfigMap{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: "fresh", Name: "kube-root-ca.crt"}, cm)).To(Succeed())
		cm.Data = map[string]string{"ca.crt": "tampered"}
		Expect(c.Update(ctx, cm)).To(Succeed())
		Eventually(caOf("fresh")).WithContext(ctx).Should(Succeed())
		Expect(c.Delete(ctx, cm)).To(Succeed())
		Eventually(caOf("fresh")).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(time.Minute))

	It("runs pods as the default ServiceAccount with the API access volume in every container", func(ctx SpecContext) {
		pod := newPod("plain", nil)
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(pod.Spec.ServiceAccountName).To(Equal("default"))
		vol := apiAccess(pod)
		Expect(vol).NotTo(BeNil(), "volumes: %+v", pod.Spec.Volumes)
		Expect(vol.Name).To(MatchRegexp(`^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$`))
		Expect(vol.Projected).NotTo(BeNil())
		Expect(vol.Projected.DefaultMode).To(Equal(api.Ptr(int32(0o644))))
		Expect(vol.Projected.Sources).To(HaveLen(3))
		Expect(vol.Projected.Sources[0].ServiceAccountToken).To(Equal(&corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: api.Ptr(int64(3607))}))
		Expect(vol.Projected.Sources[1].ConfigMap.Name).To(Equal("kube-root-ca.crt"))
		Expect(vol.Projected.Sources[1].ConfigMap.Items).To(Equal([]corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}))
		Expect(vol.Projected.Sources[2].DownwardAPI.Items).To(HaveLen(1))
		Expect(vol.Projected.Sources[2].DownwardAPI.Items[0].Path).To(Equal("namespace"))
		Expect(vol.Projected.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath).To(Equal("metadata.namespace"))
		want := corev1.VolumeMount{Name: vol.Name, ReadOnly: true, MountPath: saPath}
		for _, ctr := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			Expect(ctr.VolumeMounts).To(ContainElement(want), "container %s", ctr.Name)
		}
	}, SpecTimeout(30*time.Second))

	It("honours automountServiceAccountToken on the pod, then on the ServiceAccount", func(ctx SpecContext) {
		sa := &corev1.ServiceAccount{AutomountServiceAccountToken: api.Ptr(false)}
		sa.Name, sa.Namespace = "quiet", "default"
		Expect(c.Create(ctx, sa)).To(Succeed())

		off := newPod("pod-off", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = api.Ptr(false) })
		Expect(c.Create(ctx, off)).To(Succeed())
		Expect(apiAccess(off)).To(BeNil())
		Expect(off.Spec.Containers[0].VolumeMounts).To(BeEmpty())

		saOff := newPod("sa-off", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "quiet" })
		Expect(c.Create(ctx, saOff)).To(Succeed())
		Expect(apiAccess(saOff)).To(BeNil())

		podOn := newPod("pod-on", func(p *corev1.Pod) {
			p.Spec.ServiceAccountName = "quiet"
			p.Spec.AutomountServiceAccountToken = api.Ptr(true)
		})
		Expect(c.Create(ctx, podOn)).To(Succeed())
		Expect(apiAccess(podOn)).NotTo(BeNil())
	}, SpecTimeout(30*time.Second))

	It("refuses a pod whose ServiceAccount does not exist, with Kubernetes' message", func(ctx SpecContext) {
		err := c.Create(ctx, newPod("orphan", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "ghost" }))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(`pods "orphan" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found`))
		var status *apierrors.StatusError
		Expect(errors.As(err, &status)).To(BeTrue())
		Expect(status.Status().Code).To(Equal(int32(http.StatusForbidden)))
	}, SpecTimeout(30*time.Second))

	It("admits a pod created right after its namespace (the default ServiceAccount appears meanwhile)", func(ctx SpecContext) {
		ns := &corev1.Namespace{}
		ns.Name = "just-made"
		Expect(c.Create(ctx, ns)).To(Succeed())
		pod := newPod("early", nil)
		pod.Namespace = "just-made"
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(pod.Spec.ServiceAccountName).To(Equal("default"))
	}, SpecTimeout(30*time.Second))
})

var _ = Describe("ServiceAccount issuer discovery", func() {
	It("serves the OpenID configuration and key set to ServiceAccounts, not to requests without credentials", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp := start(ctx, controlplane.Options{DataDir: dir, Secure: true, Controllers: []string{"serviceaccount"}})
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		admin := newIdentity(p, "test-admin", "system:masters")
		var token string
		Eventually(func(g Gomega) {
			r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/api/v1/namespaces/default/serviceaccounts/default/token",
				map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}})
			g.Expect(r.code).To(Equal(http.StatusCreated), "%s", r)
			status, _ := r.body["status"].(map[string]any)
			token, _ = status["token"].(string)
			g.Expect(token).NotTo(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		// No client certificate: the bearer token, or nobody.
		tlsConf := admin.http.Transport.(*http.Transport).TLSClientConfig.Clone()
		tlsConf.Certificates = nil
		tr := &http.Transport{TLSClientConfig: tlsConf}
		DeferCleanup(tr.CloseIdleConnections)
		plain := &http.Client{Transport: tr}
		auth := []string{"Authorization", "Bearer " + token}

		conf := call(ctx, plain, http.MethodGet, cp.URL()+"/.well-known/openid-configuration", nil, auth...)
		Expect(conf.code).To(Equal(http.StatusOK), "%s", conf)
		Expect(conf.body).To(HaveKeyWithValue("issuer", "https://kubernetes.default.svc.cluster.local"))
		Expect(conf.body).To(HaveKeyWithValue("jwks_uri", "https://kubernetes.default.svc.cluster.local/openid/v1/jwks"))
		jwks := call(ctx, plain, http.MethodGet, cp.URL()+"/openid/v1/jwks", nil, auth...)
		Expect(jwks.code).To(Equal(http.StatusOK), "%s", jwks)
		Expect(jwks.body["keys"]).To(HaveLen(1))

		denied := call(ctx, plain, http.MethodGet, cp.URL()+"/.well-known/openid-configuration", nil)
		Expect(denied.code).To(Equal(http.StatusUnauthorized), "no credentials: %s", denied)
	})
})
