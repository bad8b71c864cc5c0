package compat

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"
	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestClientGoProtobufSubresources drives client-go with ContentType
// application/vnd.kubernetes.protobuf through what Kubernetes accepts as
// protobuf beyond plain CRUD of built-ins: a CustomResourceDefinition created,
// updated and status-updated through the apiextensions clientset, and the
// scale, status, binding and eviction subresources of built-ins (the CSR
// approval and ServiceAccount token subresources need a secure control plane,
// which testenv does not start). A custom resource
// sent as protobuf is refused with 415, as Kubernetes refuses it.
func TestClientGoProtobufSubresources(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg, log := traced(t, env)
	cfg.ContentType = protobuf
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := createNamespace(t, cs, "compat-protobuf")

	t.Run("CustomResourceDefinition", func(t *testing.T) {
		xcs, err := apiextensions.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		crds := xcs.ApiextensionsV1().CustomResourceDefinitions()
		want := fixtureCRD()
		crd, err := crds.Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		size := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"]
		if crd.UID == "" || size.Default == nil || string(size.Default.Raw) != "3" || *size.Maximum != 10.5 ||
			len(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations) != 2 {
			t.Fatalf("create returned %+v", crd)
		}
		eventually(t, 10*time.Second, "the CRD to be Established", func() (bool, error) {
			c, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range c.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					crd = c
					return true, nil
				}
			}
			return false, nil
		})

		var upd *apiextensionsv1.CustomResourceDefinition
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if crd, err = crds.Get(ctx, crd.Name, metav1.GetOptions{}); err != nil {
				return err
			}
			crd.Spec.Versions[0].AdditionalPrinterColumns = append(crd.Spec.Versions[0].AdditionalPrinterColumns,
				apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"})
			crd.Spec.Names.ShortNames = append(crd.Spec.Names.ShortNames, "wgt")
			upd, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatalf("update: %v", err)
		}
		if len(upd.Spec.Versions[0].AdditionalPrinterColumns) != 3 || upd.Generation != crd.Generation+1 {
			t.Fatalf("update returned generation %d (was %d), columns %+v", upd.Generation, crd.Generation, upd.Spec.Versions[0].AdditionalPrinterColumns)
		}
		// UpdateStatus sends the whole CRD as protobuf to /status (the CRD
		// controller writes status too: retry on conflict, as clients do).
		var st *apiextensionsv1.CustomResourceDefinition
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Status.StoredVersions = []string{"v1", "v1beta1"}
			st, err = crds.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatalf("update status: %v", err)
		}
		if len(st.Status.StoredVersions) != 2 {
			t.Fatalf("update status returned storedVersions %v", st.Status.StoredVersions)
		}

		// The CRD read as protobuf (this clientset's Accept) is the CRD read
		// as JSON.
		jsonCfg := *cfg
		jsonCfg.ContentType, jsonCfg.AcceptContentTypes = "application/json", "application/json"
		xjs, err := apiextensions.NewForConfig(&jsonCfg)
		if err != nil {
			t.Fatal(err)
		}
		// The CRD controller may still be writing status (accepted names) between
		// the two reads: compare two reads of the same resourceVersion.
		var viaProto, viaJSON *apiextensionsv1.CustomResourceDefinition
		for attempt := 0; ; attempt++ {
			if viaProto, err = crds.Get(ctx, crd.Name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if viaJSON, err = xjs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if viaProto.ResourceVersion == viaJSON.ResourceVersion || attempt == 50 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if diff := cmp.Diff(viaJSON, viaProto); diff != "" {
			t.Errorf("the CRD read as protobuf differs from the CRD read as JSON (-json +protobuf):\n%s", diff)
		}

		// kubectl patch's default, a strategic merge patch, applies to CRDs.
		pt, err := crds.Patch(ctx, crd.Name, types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("strategic merge patch: %v", err)
		}
		if pt.Labels["patched"] != "yes" || pt.Labels["app"] != "compat" || len(pt.Spec.Versions) != 2 {
			t.Fatalf("strategic merge patch returned labels %v and %d versions", pt.Labels, len(pt.Spec.Versions))
		}

		// Custom resources are JSON only: a protobuf body is refused with 415.
		gvr := schema.GroupVersionResource{Group: "pb.example.com", Version: "v1", Resource: "widgets"}
		res := cs.CoreV1().RESTClient().Post().AbsPath("/apis/pb.example.com/v1/namespaces", ns, "widgets").
			SetHeader("Content-Type", protobuf).Body([]byte("k8s\x00")).Do(ctx)
		var code int
		res.StatusCode(&code)
		if code != http.StatusUnsupportedMediaType {
			t.Errorf("protobuf custom resource: got %d (%v), want 415", code, res.Error())
		}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list widgets: %v", err)
		}

		// The scale subresource of a custom resource is an autoscaling/v1
		// Scale, which Kubernetes accepts as protobuf.
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pb.example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w1"}, "spec": map[string]any{"size": int64(2), "color": "red"}}}
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create widget: %v", err)
		}
		body := protobufBody(t, "autoscaling/v1", "Scale", &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 6}})
		res = cs.CoreV1().RESTClient().Put().AbsPath("/apis/pb.example.com/v1/namespaces", ns, "widgets", "w1", "scale").
			SetHeader("Content-Type", protobuf).Body(body).Do(ctx)
		if err := res.Error(); err != nil {
			t.Fatalf("protobuf scale of a widget: %v", err)
		}
		got, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); n != 6 {
			t.Fatalf("widget spec.size is %d after scaling to 6", n)
		}

		if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})

	t.Run("Scale", func(t *testing.T) {
		deps := cs.AppsV1().Deployments(ns)
		labels := map[string]string{"app": "scaled"}
		if _, err := deps.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "scaled"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example/app:1"}}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
		sc, err := deps.GetScale(ctx, "scaled", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		if sc.Spec.Replicas != 1 || sc.Status.Selector != "app=scaled" {
			t.Fatalf("get scale returned %+v", sc)
		}
		sc.Spec.Replicas = 4
		out, err := deps.UpdateScale(ctx, "scaled", sc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update scale: %v", err)
		}
		if out.Spec.Replicas != 4 {
			t.Fatalf("update scale returned %+v", out)
		}
		d, err := deps.Get(ctx, "scaled", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		jsonCfg := *cfg
		jsonCfg.ContentType, jsonCfg.AcceptContentTypes = "application/json", "application/json"
		jcs, err := kubernetes.NewForConfig(&jsonCfg)
		if err != nil {
			t.Fatal(err)
		}
		dj, err := jcs.AppsV1().Deployments(ns).Get(ctx, "scaled", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(dj, d); diff != "" {
			t.Errorf("the Deployment read as protobuf differs from the one read as JSON (-json +protobuf):\n%s", diff)
		}
		scj, err := jcs.AppsV1().Deployments(ns).GetScale(ctx, "scaled", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if scp, err := deps.GetScale(ctx, "scaled", metav1.GetOptions{}); err != nil || !cmp.Equal(scj, scp) {
			t.Errorf("the Scale read as protobuf (%v, %v) differs from the one read as JSON (%v)", scp, err, scj)
		}
		if *d.Spec.Replicas != 4 {
			t.Fatalf("the deployment has %d replicas after UpdateScale, want 4", *d.Spec.Replicas)
		}
		// A stale resourceVersion in the Scale is a conflict.
		sc.Spec.Replicas = 7
		if _, err := deps.UpdateScale(ctx, "scaled", sc, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("update scale with a stale resourceVersion: got %v, want a Conflict", err)
		}
		// A negative replica count is invalid.
		out.Spec.Replicas = -1
		if _, err := deps.UpdateScale(ctx, "scaled", out, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Fatalf("update scale to -1: got %v, want Invalid", err)
		}
		// Status of a built-in through /status, as protobuf.
		d.Status.ObservedGeneration = d.Generation
		d.Status.Replicas = 4
		ds, err := deps.UpdateStatus(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		if ds.Status.Replicas != 4 {
			t.Fatalf("update status returned %+v", ds.Status)
		}
	})

	t.Run("BindingAndEviction", func(t *testing.T) {
		pods := cs.CoreV1().Pods(ns)
		for _, name := range []string{"bound", "evicted"} {
			if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example/app:1"}}}}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create pod %s: %v", name, err)
			}
		}
		if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "bound"},
			Target: corev1.ObjectReference{Kind: "Node", Name: "node-a"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("bind: %v", err)
		}
		p, err := pods.Get(ctx, "bound", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "node-a" {
			t.Fatalf("bound pod has nodeName %q, want node-a", p.Spec.NodeName)
		}
		// A dry-run eviction leaves the pod; a real one deletes it.
		if err := pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evicted"},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}}); err != nil {
			t.Fatalf("dry-run evict: %v", err)
		}
		if _, err := pods.Get(ctx, "evicted", metav1.GetOptions{}); err != nil {
			t.Fatalf("get after a dry-run eviction: %v", err)
		}
		if err := pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evicted"},
			DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}}); err != nil {
			t.Fatalf("evict: %v", err)
		}
		if _, err := pods.Get(ctx, "evicted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get after eviction: got %v, want NotFound", err)
		}
	})

	// The point of the test: every write above went out as protobuf.
	for _, path := range []string{"/customresourcedefinitions", "/customresourcedefinitions/widgets.pb.example.com",
		"/customresourcedefinitions/widgets.pb.example.com/status", "/deployments/scaled/scale",
		"/deployments/scaled/status", "/widgets/w1/scale", "/pods/bound/binding", "/pods/evicted/eviction"} {
		found := false
		for _, e := range log.exchanges() {
			u := strings.SplitN(e.URL, "?", 2)[0]
			if strings.HasSuffix(u, path) && e.Method != http.MethodGet && strings.HasPrefix(e.ReqType, protobuf) && len(e.ReqBody) > 0 && e.Status < 300 {
				found = true
			}
		}
		if !found {
			t.Errorf("no successful protobuf write to ...%s", path)
		}
	}
}
