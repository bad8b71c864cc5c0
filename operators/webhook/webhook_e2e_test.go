package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/run"
	"github.com/converge-dev/converge/operators/webhook"
)

func object(apiVersion, kind string) *api.Unstructured {
	return &api.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
}

func widget(version, name string, spec map[string]any) *api.Unstructured {
	u := object("example.com/"+version, "Widget")
	u.Object["metadata"] = map[string]any{"name": name, "namespace": "default"}
	u.Object["spec"] = spec
	return u
}

func getWidget(ctx context.Context, version, name string) (*api.Unstructured, error) {
	u := object("example.com/"+version, "Widget")
	return u, cl.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, u)
}

func configuration(ctx context.Context, gvk api.GroupVersionKind, name string) (*api.Unstructured, error) {
	u := object(gvk.GroupVersion().String(), gvk.Kind)
	return u, cl.Get(ctx, client.ObjectKey{Name: name}, u)
}

func getCRD(ctx context.Context) *api.Unstructured {
	u := object("apiextensions.k8s.io/v1", "CustomResourceDefinition")
	Expect(cl.Get(ctx, client.ObjectKey{Name: "widgets.example.com"}, u)).To(Succeed())
	return u
}

// clientConfigs returns every clientConfig of the operator's registrations.
func clientConfigs(ctx context.Context) ([]map[string]any, error) {
	var out []map[string]any
	for _, gvk := range []api.GroupVersionKind{webhook.MutatingConfigurationKind, webhook.ValidatingConfigurationKind} {
		u, err := configuration(ctx, gvk, webhook.ConfigurationName("widgets"))
		if err != nil {
			return nil, err
		}
		for _, w := range api.NestedSlice(u.Object, "webhooks") {
			out = append(out, api.NestedMap(w.(map[string]any), "clientConfig"))
		}
	}
	crd := object("apiextensions.k8s.io/v1", "CustomResourceDefinition")
	if err := cl.Get(ctx, client.ObjectKey{Name: "widgets.example.com"}, crd); err != nil {
		return nil, err
	}
	return append(out, api.NestedMap(crd.Object, "spec", "conversion", "webhook", "clientConfig")), nil
}

func kubectl(stdin string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// servedSerial dials the webhook server like the API server does (trusting
// only caBundle) and returns the serial number of the certificate it serves.
func servedSerial(rawURL string, caBundle []byte) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		return "", errors.New("no CA in caBundle")
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: pool, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

var _ = Describe("Operator webhooks", Ordered, func() {
	It("registers the admission webhooks and the CRD conversion with the control plane's CA", func(ctx SpecContext) {
		ccs, err := clientConfigs(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(ccs).To(HaveLen(5))
		for _, cc := range ccs {
			Expect(cc["url"]).To(HavePrefix("https://127.0.0.1:"))
			Expect(cc["caBundle"]).To(Equal(base64.StdEncoding.EncodeToString(ca.CAPEM())))
		}
		u, err := configuration(ctx, webhook.ValidatingConfigurationKind, "widgets-webhooks")
		Expect(err).NotTo(HaveOccurred())
		Expect(u.GetLabels()).To(HaveKeyWithValue(webhook.OperatorLabel, "widgets"))
		crd := getCRD(ctx)
		Expect(api.NestedString(crd.Object, "spec", "conversion", "strategy")).To(Equal("Webhook"))
		for _, c := range api.NestedSlice(crd.Object, "status", "conditions") {
			Expect(c.(map[string]any)["type"]).NotTo(Equal("WebhookConversionNotServed"))
		}
	})

	It("denies a bad widget with the webhook's message, through the client and kubectl", func(ctx SpecContext) {
		want := `admission webhook "validate-widgets.widgets.operators.converge.dev" denied the request: red widgets are not allowed`
		Eventually(func(g Gomega) {
			err := cl.Create(ctx, widget("v2", "red", map[string]any{"color": "red"}))
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(Equal(want))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		out, err := kubectl(`apiVersion: example.com/v2
kind: Widget
metadata: {name: red, namespace: default}
spec: {color: red, replicas: 1}
`, "apply", "-f", "-")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring(want))
		_, err = getWidget(ctx, "v2", "red")
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing stored: %v", err)
	})

	It("defaults a field with the mutating webhook; kubectl shows the validator's warnings", func(ctx SpecContext) {
		out, err := kubectl(`apiVersion: example.com/v2
kind: Widget
metadata: {name: plain, namespace: default}
spec: {replicas: 2}
`, "apply", "-f", "-")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).NotTo(ContainSubstring("Warning"))
		out, err = kubectl(`apiVersion: example.com/v2
kind: Widget
metadata: {name: big, namespace: default}
spec: {replicas: 20, color: green}
`, "apply", "-f", "-")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("Warning: more than 10 replicas is expensive"))
		w, err := getWidget(ctx, "v2", "plain")
		Expect(err).NotTo(HaveOccurred())
		Expect(api.NestedString(w.Object, "spec", "color")).To(Equal("blue"))
		Expect(i64(w.Object, "spec", "replicas")).To(BeNumerically("==", 2))
	})

	It("validates deletes too", func(ctx SpecContext) {
		w := widget("v2", "guarded", map[string]any{"replicas": int64(1)})
		w.SetLabels(map[string]string{"protected": "true"})
		Expect(cl.Create(ctx, w)).To(Succeed())
		err := cl.Delete(ctx, w)
		Expect(err).To(MatchError(ContainSubstring("widget guarded is protected")))
		Expect(cl.Patch(ctx, w, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"labels":{"protected":null}}}`)))).To(Succeed())
		Expect(cl.Delete(ctx, w)).To(Succeed())
	})

	It("serves v1 and v2 of a widget through the conversion webhook (renamed field)", func(ctx SpecContext) {
		Expect(cl.Create(ctx, widget("v1", "old", map[string]any{"size": int64(3)}))).To(Succeed())
		kv, err := env.ControlPlane.Storage().Get(ctx, "/registry/example.com/widgets/default/old")
		Expect(err).NotTo(HaveOccurred())
		stored, err := api.DecodeMap(kv.Value)
		Expect(err).NotTo(HaveOccurred())
		Expect(stored["apiVersion"]).To(Equal("example.com/v2"))
		Expect(api.NestedMap(stored, "spec")).To(Equal(map[string]any{"replicas": int64(3), "color": "blue"}),
			"stored as v2, converted by the webhook (and defaulted by the v1 mutating webhook)")

		v1, err := getWidget(ctx, "v1", "old")
		Expect(err).NotTo(HaveOccurred())
		Expect(api.NestedMap(v1.Object, "spec")).To(Equal(map[string]any{"size": int64(3), "color": "blue"}))
		v2, err := getWidget(ctx, "v2", "plain")
		Expect(err).NotTo(HaveOccurred())
		Expect(i64(v2.Object, "spec", "replicas")).To(BeNumerically("==", 2))
		v1, err = getWidget(ctx, "v1", "plain")
		Expect(err).NotTo(HaveOccurred())
		Expect(api.NestedMap(v1.Object, "spec")).To(Equal(map[string]any{"size": int64(2), "color": "blue"}))
		Expect(v1.GetUID()).To(Equal(v2.GetUID()), "metadata is kept")

		// Updates through v1 are converted to storage and back.
		Expect(cl.Patch(ctx, v1, client.RawPatch(client.MergePatchType, []byte(`{"spec":{"size":7}}`)))).To(Succeed())
		Expect(i64(v1.Object, "spec", "size")).To(BeNumerically("==", 7))
		v2, err = getWidget(ctx, "v2", "plain")
		Expect(err).NotTo(HaveOccurred())
		Expect(i64(v2.Object, "spec", "replicas")).To(BeNumerically("==", 7))

		out, err := kubectl("", "get", "widgets.v1.example.com", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.size}{" "}{end}`)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("old=3"))
		Expect(out).To(ContainSubstring("plain=7"))
		out, err = kubectl("", "get", "widgets.v2.example.com", "old", "-o", "jsonpath={.spec.replicas}")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("3"))
	})

	It("converts a list with one ConversionReview for all its items, cached for later lists", func(ctx SpecContext) {
		const n = 5
		for i := range n {
			w := widget("v2", fmt.Sprintf("batch-%d", i), map[string]any{"replicas": int64(i + 1)})
			w.SetLabels(map[string]string{"batch": "list"})
			Expect(cl.Create(ctx, w)).To(Succeed())
		}
		checkItems := func(g Gomega, list *api.UnstructuredList) {
			g.Expect(list.Items).To(HaveLen(n))
			for i, it := range list.Items {
				g.Expect(it.GetName()).To(Equal(fmt.Sprintf("batch-%d", i)))
				g.Expect(it.Object["apiVersion"]).To(Equal("example.com/v1"))
				g.Expect(api.NestedMap(it.Object, "spec")).To(Equal(map[string]any{"size": int64(i + 1), "color": "blue"}))
			}
		}
		v1List := func() *api.UnstructuredList {
			return &api.UnstructuredList{APIVersion: "example.com/v1", Kind: "WidgetList"}
		}
		batch := client.MatchingLabels{"batch": "list"}

		// A list from storage: one review with the five objects, in order.
		from := conversionReviews.count()
		list := v1List()
		Expect(cl.List(ctx, list, client.InNamespace("default"), batch)).To(Succeed())
		checkItems(Default, list)
		reviews := conversionReviews.since(from, "example.com/v1", "batch-")
		Expect(reviews).To(HaveLen(1), "one ConversionReview for the list")
		var names []string
		for _, o := range reviews[0].Objects {
			Expect(o["apiVersion"]).To(Equal("example.com/v2"))
			names = append(names, api.NestedString(o, "metadata", "name"))
		}
		Expect(names).To(Equal([]string{"batch-0", "batch-1", "batch-2", "batch-3", "batch-4"}))

		// kubectl's list is converted the same way.
		from = conversionReviews.count()
		out, err := kubectl("", "get", "widgets.v1.example.com", "-l", "batch=list", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.size}{" "}{end}`)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(Equal("batch-0=1 batch-1=2 batch-2=3 batch-3=4 batch-4=5 "))
		reviews = conversionReviews.since(from, "example.com/v1", "batch-")
		Expect(reviews).To(HaveLen(1))
		Expect(reviews[0].Objects).To(HaveLen(n))

		// Lists from the watch cache keep each converted item: once the cache has
		// converted the five, later lists send no review at all.
		Eventually(func(g Gomega) {
			list := v1List()
			g.Expect(cl.List(ctx, list, client.InNamespace("default"), batch, client.ResourceVersion("0"))).To(Succeed())
			checkItems(g, list)
		}).WithTimeout(10 * time.Second).Should(Succeed())
		from = conversionReviews.count()
		for range 3 {
			list := v1List()
			Expect(cl.List(ctx, list, client.InNamespace("default"), batch, client.ResourceVersion("0"))).To(Succeed())
			checkItems(Default, list)
		}
		Expect(conversionReviews.since(from, "example.com/v1", "batch-")).To(BeEmpty())

		// One item that does not convert fails the whole list with the webhook's message.
		huge := widget("v2", "batch-huge", map[string]any{"replicas": int64(5000)})
		huge.SetLabels(map[string]string{"batch": "list"})
		Expect(cl.Create(ctx, huge)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(cl.Delete(ctx, huge)).To(Succeed()) })
		from = conversionReviews.count()
		err = cl.List(ctx, v1List(), client.InNamespace("default"), batch)
		var se *apierrors.StatusError
		Expect(errors.As(err, &se)).To(BeTrue(), "%v", err)
		Expect(se.ErrStatus.Code).To(BeNumerically("==", http.StatusInternalServerError))
		// A consistent list is served from the watch cache once it is current
		// (consistentlist.go), where the five are converted already: the one
		// review holds only the new object (object 0); when the cache is not
		// current in time the list comes from storage and the review holds all
		// six (object 5).
		reviews = conversionReviews.since(from, "example.com/v1", "batch-")
		Expect(reviews).To(HaveLen(1))
		Expect(reviews[0].Objects).To(Or(HaveLen(1), HaveLen(n+1)))
		Expect(se.Error()).To(Equal(fmt.Sprintf("Internal error occurred: conversion webhook for example.com/v2, Kind=Widget failed: "+
			"object %d (batch-huge): convert v2 to v1: replicas 5000 does not fit in v1 (at most 1000)", len(reviews[0].Objects)-1)))
	})

	It("validates and defaults writes made through v1 in v2 (Converted)", func(ctx SpecContext) {
		err := cl.Create(ctx, widget("v1", "red-v1", map[string]any{"size": int64(1), "color": "red"}))
		Expect(err).To(MatchError(`admission webhook "validate-widgets-v1.widgets.operators.converge.dev" denied the request: red widgets are not allowed`))
		out, err := kubectl(`apiVersion: example.com/v1
kind: Widget
metadata: {name: big-v1, namespace: default}
spec: {size: 20}
`, "apply", "-f", "-")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("Warning: more than 10 replicas is expensive"))
		w, err := getWidget(ctx, "v1", "big-v1")
		Expect(err).NotTo(HaveOccurred())
		Expect(api.NestedMap(w.Object, "spec")).To(Equal(map[string]any{"size": int64(20), "color": "blue"}))
		Expect(cl.Patch(ctx, w, client.RawPatch(client.MergePatchType, []byte(`{"spec":{"color":"red"}}`)))).
			To(MatchError(ContainSubstring("red widgets are not allowed")))
	})

	It("answers 500 with the webhook's message when a conversion fails", func(ctx SpecContext) {
		Expect(cl.Create(ctx, widget("v2", "huge", map[string]any{"replicas": int64(5000), "color": "green"}))).To(Succeed())
		_, err := getWidget(ctx, "v1", "huge")
		var se *apierrors.StatusError
		Expect(errors.As(err, &se)).To(BeTrue(), "%v", err)
		Expect(se.ErrStatus.Code).To(BeNumerically("==", http.StatusInternalServerError))
		Expect(se.ErrStatus.Reason).To(Equal("InternalError"))
		Expect(se.Error()).To(Equal("Internal error occurred: conversion webhook for example.com/v2, Kind=Widget failed: " +
			"object 0 (huge): convert v2 to v1: replicas 5000 does not fit in v1 (at most 1000)"))
		out, err := kubectl("", "get", "widgets.v1.example.com", "huge")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("conversion webhook for example.com/v2, Kind=Widget failed"))
		// The failure is not remembered: once the object fits, v1 serves it.
		w, err := getWidget(ctx, "v2", "huge")
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Patch(ctx, w, client.RawPatch(client.MergePatchType, []byte(`{"spec":{"replicas":50}}`)))).To(Succeed())
		w, err = getWidget(ctx, "v1", "huge")
		Expect(err).NotTo(HaveOccurred())
		Expect(i64(w.Object, "spec", "size")).To(BeNumerically("==", 50))
	})

	It("renews the serving certificate without a restart", func(ctx SpecContext) {
		ccs, err := clientConfigs(ctx)
		Expect(err).NotTo(HaveOccurred())
		rawURL := ccs[0]["url"].(string)
		first, err := servedSerial(rawURL, ca.CAPEM())
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			s, err := servedSerial(rawURL, ca.CAPEM())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s).NotTo(Equal(first))
		}).WithTimeout(20 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		// Same server, same URL: the webhooks keep working.
		ccs2, err := clientConfigs(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(ccs2[0]["url"]).To(Equal(rawURL))
		Expect(cl.Create(ctx, widget("v2", "after-rotation", map[string]any{"replicas": int64(1)}))).To(Succeed())
		w, err := getWidget(ctx, "v2", "after-rotation")
		Expect(err).NotTo(HaveOccurred())
		Expect(api.NestedString(w.Object, "spec", "color")).To(Equal("blue"))
	})

	It("injects the caBundle again after someone changes it", func(ctx SpecContext) {
		other, err := webhook.SelfSignedCA(GinkgoT().TempDir(), "intruder")
		Expect(err).NotTo(HaveOccurred())
		bogus := base64.StdEncoding.EncodeToString(other.CAPEM())
		good := base64.StdEncoding.EncodeToString(ca.CAPEM())

		vc, err := configuration(ctx, webhook.ValidatingConfigurationKind, "widgets-webhooks")
		Expect(err).NotTo(HaveOccurred())
		hooks := api.NestedSlice(vc.Object, "webhooks")
		hooks[0].(map[string]any)["clientConfig"].(map[string]any)["caBundle"] = bogus
		vc.Object["webhooks"] = hooks
		Expect(cl.Update(ctx, vc)).To(Succeed())
		crd := getCRD(ctx)
		api.SetNestedField(crd.Object, bogus, "spec", "conversion", "webhook", "clientConfig", "caBundle")
		Expect(cl.Update(ctx, crd)).To(Succeed())
		mc, err := configuration(ctx, webhook.MutatingConfigurationKind, "widgets-webhooks")
		Expect(err).NotTo(HaveOccurred())
		Expect(cl.Delete(ctx, mc)).To(Succeed())

		Eventually(func(g Gomega) {
			ccs, err := clientConfigs(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ccs).To(HaveLen(5))
			for _, cc := range ccs {
				g.Expect(cc["caBundle"]).To(Equal(good))
			}
		}).WithTimeout(10 * time.Second).Should(Succeed())
		// And the webhooks answer again through the API server.
		Eventually(func(g Gomega) {
			w, err := getWidget(ctx, "v1", "old")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(i64(w.Object, "spec", "size")).To(BeNumerically("==", 3))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(cl.Create(ctx, widget("v2", "red-again", map[string]any{"color": "red"}))).To(MatchError(ContainSubstring("red widgets are not allowed")))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("runs standalone with its own CA (run.Run --cert-dir)", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		log := logr.Discard()
		go func() {
			done <- run.Run(rctx, guardOperator{}, run.Options{
				Kubeconfig: env.Kubeconfig, MetricsBindAddress: "0", HealthProbeBindAddress: "0", DisableLeaderElection: true,
				WebhookBindAddress: "127.0.0.1:0", CertDir: dir, Logger: &log,
			})
		}()
		DeferCleanup(func(ctx SpecContext) {
			stop()
			Expect(<-done).To(Succeed())
			vc, err := configuration(ctx, webhook.ValidatingConfigurationKind, webhook.ConfigurationName("guard"))
			Expect(err).NotTo(HaveOccurred())
			Expect(cl.Delete(ctx, vc)).To(Succeed())
		})
		cm := func(name string) *api.Unstructured {
			u := object("v1", "ConfigMap")
			u.Object["metadata"] = map[string]any{"name": name, "namespace": "default"}
			return u
		}
		Eventually(func(g Gomega) {
			err := cl.Create(ctx, cm("forbidden-one"))
			g.Expect(err).To(MatchError(ContainSubstring(`admission webhook "guard.example.com" denied the request: configmap names may not start with forbidden-`)))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(cl.Create(ctx, cm("allowed-one"))).To(Succeed())
		caPEM, err := os.ReadFile(dir + "/" + webhook.CACertFile)
		Expect(err).NotTo(HaveOccurred())
		vc, err := configuration(ctx, webhook.ValidatingConfigurationKind, webhook.ConfigurationName("guard"))
		Expect(err).NotTo(HaveOccurred())
		cc := api.NestedMap(api.NestedSlice(vc.Object, "webhooks")[0].(map[string]any), "clientConfig")
		Expect(cc["caBundle"]).To(Equal(base64.StdEncoding.EncodeToString(caPEM)))
		Expect(bytes.Equal(caPEM, ca.CAPEM())).To(BeFalse(), "its own CA, not the control plane's")
	})
})

// guardOperator has no CRDs and one raw validating webhook on ConfigMaps.
type guardOperator struct{}

func (guardOperator) Name() string                 { return "guard" }
func (guardOperator) CRDs() [][]byte               { return nil }
func (guardOperator) Setup(*manager.Manager) error { return nil }

func (guardOperator) Webhooks() []operators.Webhook {
	h := webhook.Raw(operators.Validating, "/guard", webhook.AdmissionFunc(func(_ context.Context, req *webhook.AdmissionRequest) *webhook.AdmissionResponse {
		var obj struct{ Metadata api.ObjectMeta }
		if err := json.Unmarshal(req.Object, &obj); err != nil {
			return webhook.Errored(http.StatusBadRequest, err)
		}
		if strings.HasPrefix(obj.Metadata.Name, "forbidden-") {
			return webhook.Denied(errors.New("configmap names may not start with forbidden-"))
		}
		return webhook.Allowed()
	}), webhook.Rule("", "v1", "configmaps", webhook.Create))
	h.Name = "guard.example.com"
	return []operators.Webhook{h}
}

func i64(obj map[string]any, path ...string) int64 {
	v, _ := api.NestedInt64(obj, path...)
	return v
}

var _ = Describe("Operator webhooks on a --secure control plane", func() {
	It("serves with a certificate of the control plane's CA and denies through the secure admission chain", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: dir, NoFsync: true, Secure: true, CompactionInterval: -1, Logger: GinkgoLogr})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cp.Close)
		cfg, err := cp.ClientConfig("guard-operator")
		Expect(err).NotTo(HaveOccurred())
		sc, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		Expect(err).NotTo(HaveOccurred())
		cpCA, err := pki.EnsureCA(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New(), Logger: GinkgoLogr})
		Expect(err).NotTo(HaveOccurred())
		mctx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		Expect(webhook.Install(mctx, mgr, guardOperator{}, webhook.Options{Issuer: cpCA, Logger: GinkgoLogr})).To(Succeed())
		go func() {
			defer GinkgoRecover()
			Expect(mgr.Start(mctx)).To(Succeed())
		}()
		cm := object("v1", "ConfigMap")
		cm.Object["metadata"] = map[string]any{"name": "forbidden-two", "namespace": "default"}
		Eventually(func(g Gomega) {
			g.Expect(sc.Create(ctx, cm.DeepCopy())).To(MatchError(ContainSubstring(`admission webhook "guard.example.com" denied the request: configmap names may not start with forbidden-`)))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		vc := object("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
		Expect(sc.Get(ctx, client.ObjectKey{Name: webhook.ConfigurationName("guard")}, vc)).To(Succeed())
		cc := api.NestedMap(api.NestedSlice(vc.Object, "webhooks")[0].(map[string]any), "clientConfig")
		apiCA, err := os.ReadFile(filepath.Join(dir, "pki", pki.CACertFile))
		Expect(err).NotTo(HaveOccurred())
		Expect(cc["caBundle"]).To(Equal(base64.StdEncoding.EncodeToString(apiCA)), "the CA of the secure API server")
	})
})
