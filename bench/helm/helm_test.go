package helm

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/kube"
	ri "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/converge-dev/converge/controlplane"
)

// helmManager is the field manager the helm command sets (its main sets
// kube.ManagedFieldsManager to "helm"; the SDK's default would be the test
// binary's name).
const helmManager = "helm"

// env is a secure control plane and Helm's settings for it.
type env struct {
	settings *cli.EnvSettings
	cs       *kubernetes.Clientset
	dyn      *dynamic.DynamicClient
}

// start runs a default secure control plane (HTTPS, client certificates,
// RBAC, admission; no controllers or node, which the charts here do not need)
// and points Helm's settings at its admin kubeconfig.
func start(t *testing.T) *env {
	t.Helper()
	cp, err := controlplane.Start(context.Background(), controlplane.Options{DataDir: t.TempDir(), Secure: true, NoFsync: true})
	if err != nil {
		t.Fatalf("start the control plane: %v", err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	kube.ManagedFieldsManager = helmManager
	settings := cli.New()
	settings.KubeConfig = kc
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{settings: settings, cs: cs, dyn: dyn}
}

// config is an action configuration for namespace ns, storing releases in
// Secrets as the helm command does by default.
func (e *env) config(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})).Handler()))
	e.settings.SetNamespace(ns) // helm's --namespace: where the chart's objects go
	if err := cfg.Init(e.settings.RESTClientGetter(), ns, "secret"); err != nil {
		t.Fatalf("helm configuration: %v", err)
	}
	return cfg
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// writeChart writes the files (path → content) of a chart under a new
// directory and returns it.
func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// webChart is a chart with a CRD (in crds/, installed first) and a custom
// resource of it, a Deployment, a Service and a ConfigMap.
var webChart = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\nappVersion: \"1.0\"\n",
	"values.yaml": `replicas: 1
image: example/web:1
message: hello
extra: {}
widget:
  size: 3
  color: blue
`,
	"crds/widgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
`,
	"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
{{- range $k, $v := .Values.extra }}
  {{ $k }}: {{ $v | quote }}
{{- end }}
`,
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels: {app: {{ .Release.Name }}-web}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}-web}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-web}
    spec:
      containers:
      - name: web
        image: {{ .Values.image }}
        ports:
        - {name: http, containerPort: 8080}
        env:
        - {name: MESSAGE, value: {{ .Values.message | quote }}}
`,
	"templates/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector: {app: {{ .Release.Name }}-web}
  ports:
  - {name: http, port: 80, targetPort: http, protocol: TCP}
`,
	"templates/widget.yaml": `apiVersion: example.com/v1
kind: Widget
metadata:
  name: {{ .Release.Name }}-widget
spec:
  size: {{ .Values.widget.size }}
  color: {{ .Values.widget.color }}
  tags: [a, b]
`,
}

// must returns a function that fails t on an error and returns the v1
// release.
func must(t *testing.T) func(ri.Releaser, error) *release.Release {
	return func(r ri.Releaser, err error) *release.Release {
		t.Helper()
		return rel(t, r, err)
	}
}

func rel(t *testing.T, r ri.Releaser, err error) *release.Release {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out, ok := r.(*release.Release)
	if !ok {
		t.Fatalf("release of type %T", r)
	}
	return out
}

// managers returns "manager/operation" of each managedFields entry of m for
// the main resource.
func managers(m metav1.Object) []string {
	var out []string
	for _, e := range m.GetManagedFields() {
		out = append(out, e.Manager+"/"+string(e.Operation)+"/"+e.Subresource)
	}
	return out
}

// ownedByHelm fails unless helm is the only manager of m, by an Apply on the
// main resource, and its fields name each of want.
func ownedByHelm(t *testing.T, m metav1.Object, want ...string) {
	t.Helper()
	mf := m.GetManagedFields()
	if len(mf) != 1 || mf[0].Manager != helmManager || mf[0].Operation != metav1.ManagedFieldsOperationApply || mf[0].Subresource != "" {
		t.Fatalf("%s: managedFields %v, want one Apply entry of %q", m.GetName(), managers(m), helmManager)
	}
	fields := string(mf[0].FieldsV1.Raw)
	for _, w := range want {
		if !strings.Contains(fields, w) {
			t.Fatalf("%s: helm's fields %s lack %s", m.GetName(), fields, w)
		}
	}
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// state is what the test reads back of the release's objects.
type state struct {
	replicas     int32
	image, msg   string
	cm           map[string]string
	widgetSize   int64
	widgetColor  string
	serviceIP    string
	deploymentRV string
}

func (e *env) read(t *testing.T, ctx context.Context, ns, name string) state {
	t.Helper()
	dep, err := e.cs.AppsV1().Deployments(ns).Get(ctx, name+"-web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("deployment: %v", err)
	}
	ownedByHelm(t, dep, `"f:replicas":{}`, `"k:{\"name\":\"web\"}"`, `"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}"`, `"k:{\"name\":\"MESSAGE\"}"`)
	cm, err := e.cs.CoreV1().ConfigMaps(ns).Get(ctx, name+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap: %v", err)
	}
	ownedByHelm(t, cm, `"f:message":{}`)
	svc, err := e.cs.CoreV1().Services(ns).Get(ctx, name+"-web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("service: %v", err)
	}
	ownedByHelm(t, svc, `"k:{\"port\":80,\"protocol\":\"TCP\"}"`, `"f:selector":{}`)
	if svc.Spec.ClusterIP == "" || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Fatalf("service spec %+v", svc.Spec)
	}
	w, err := e.dyn.Resource(widgets).Namespace(ns).Get(ctx, name+"-widget", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("widget: %v", err)
	}
	ownedByHelm(t, w, `"f:size":{}`, `"f:tags":{"v:\"a\"":{},"v:\"b\"":{}}`)
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	color, _, _ := unstructured.NestedString(w.Object, "spec", "color")
	c := dep.Spec.Template.Spec.Containers[0]
	return state{replicas: *dep.Spec.Replicas, image: c.Image, msg: c.Env[0].Value, cm: cm.Data,
		widgetSize: size, widgetColor: color, serviceIP: svc.Spec.ClusterIP, deploymentRV: dep.ResourceVersion}
}

// TestInstallUpgradeRollback installs a chart with Helm 4's default
// server-side apply, upgrades it with other values (changed, added and
// removed fields), rolls it back to the first revision, and checks the
// objects, their managedFields, the revisions and that the rollback restored
// the first values (fields the upgrade added are gone again).
func TestInstallUpgradeRollback(t *testing.T) {
	e := start(t)
	ctx := t.Context()
	const ns, name = "demo", "demo"
	cfg := e.config(t, ns)
	chrt, err := loader.Load(writeChart(t, webChart))
	if err != nil {
		t.Fatal(err)
	}

	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = name, ns, true
	in.WaitStrategy, in.Timeout = kube.HookOnlyStrategy, 2*time.Minute
	if !in.ServerSideApply {
		t.Fatal("Helm 4 installs with server-side apply by default")
	}
	r1 := must(t)(in.RunWithContext(ctx, chrt, nil))
	if r1.Version != 1 || r1.Info.Status != "deployed" || r1.ApplyMethod != "ssa" {
		t.Fatalf("install: revision %d, status %s, apply method %q", r1.Version, r1.Info.Status, r1.ApplyMethod)
	}
	s1 := e.read(t, ctx, ns, name)
	if s1.replicas != 1 || s1.image != "example/web:1" || s1.msg != "hello" || s1.cm["message"] != "hello" || len(s1.cm) != 1 ||
		s1.widgetSize != 3 || s1.widgetColor != "blue" {
		t.Fatalf("after install: %+v", s1)
	}

	up := action.NewUpgrade(cfg)
	up.Namespace, up.WaitStrategy, up.Timeout = ns, kube.HookOnlyStrategy, 2*time.Minute
	vals := map[string]any{"replicas": 3, "image": "example/web:2", "message": "bye",
		"extra": map[string]any{"added": "yes"}, "widget": map[string]any{"size": 5}}
	r2 := must(t)(up.RunWithContext(ctx, name, chrt, vals))
	if r2.Version != 2 || r2.Info.Status != "deployed" || r2.ApplyMethod != "ssa" {
		t.Fatalf("upgrade: revision %d, status %s, apply method %q", r2.Version, r2.Info.Status, r2.ApplyMethod)
	}
	s2 := e.read(t, ctx, ns, name)
	if s2.replicas != 3 || s2.image != "example/web:2" || s2.msg != "bye" || s2.cm["message"] != "bye" || s2.cm["added"] != "yes" ||
		s2.widgetSize != 5 || s2.widgetColor != "blue" || s2.serviceIP != s1.serviceIP {
		t.Fatalf("after upgrade: %+v (install: %+v)", s2, s1)
	}

	rb := action.NewRollback(cfg)
	rb.Version, rb.WaitStrategy, rb.Timeout = 1, kube.HookOnlyStrategy, 2*time.Minute
	if err := rb.Run(name); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	s3 := e.read(t, ctx, ns, name)
	if s3.replicas != 1 || s3.image != "example/web:1" || s3.msg != "hello" || s3.cm["message"] != "hello" || len(s3.cm) != 1 ||
		s3.widgetSize != 3 || s3.widgetColor != "blue" || s3.serviceIP != s1.serviceIP {
		t.Fatalf("after rollback: %+v, want the install's %+v", s3, s1)
	}

	hist, err := action.NewHistory(cfg).Run(name)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hist {
		r := rel(t, h, nil)
		got = append(got, fmt.Sprintf("%d:%s", r.Version, r.Info.Status))
	}
	if want := "1:superseded 2:superseded 3:deployed"; strings.Join(got, " ") != want {
		t.Fatalf("history %q, want %q", strings.Join(got, " "), want)
	}

	// Re-applying what is there changes nothing: the Deployment keeps its
	// resourceVersion through an upgrade to the same values.
	s3 = e.read(t, ctx, ns, name)
	up2 := action.NewUpgrade(cfg)
	up2.Namespace, up2.WaitStrategy, up2.Timeout, up2.ReuseValues = ns, kube.HookOnlyStrategy, 2*time.Minute, true
	must(t)(up2.RunWithContext(ctx, name, chrt, nil))
	if s4 := e.read(t, ctx, ns, name); s4.deploymentRV != s3.deploymentRV {
		t.Fatalf("an upgrade to the same values wrote the deployment (resourceVersion %s → %s)", s3.deploymentRV, s4.deploymentRV)
	}

	un := action.NewUninstall(cfg)
	un.WaitStrategy, un.Timeout = kube.HookOnlyStrategy, 2*time.Minute
	if _, err := un.Run(name); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if _, err := e.cs.AppsV1().Deployments(ns).Get(ctx, name+"-web", metav1.GetOptions{}); err == nil {
		t.Fatal("the deployment outlived the uninstall")
	}
}

// TestCreatedChartInstalls installs the chart `helm create` scaffolds (a
// Deployment, a Service and a ServiceAccount; its autoscaler and ingress are
// off by default) unchanged, and upgrades it.
func TestCreatedChartInstalls(t *testing.T) {
	e := start(t)
	ctx := t.Context()
	dir, err := chartutil.Create("mychart", t.TempDir())
	if err != nil {
		t.Fatalf("helm create: %v", err)
	}
	chrt, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	cfg := e.config(t, ns)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = "mine", ns
	in.WaitStrategy, in.Timeout = kube.HookOnlyStrategy, 2*time.Minute
	r := must(t)(in.RunWithContext(ctx, chrt, nil))
	if r.Info.Status != "deployed" {
		t.Fatalf("install: %s", r.Info.Status)
	}
	for _, get := range []func() (metav1.Object, error){
		func() (metav1.Object, error) {
			return e.cs.AppsV1().Deployments(ns).Get(ctx, "mine-mychart", metav1.GetOptions{})
		},
		func() (metav1.Object, error) {
			return e.cs.CoreV1().Services(ns).Get(ctx, "mine-mychart", metav1.GetOptions{})
		},
		func() (metav1.Object, error) {
			return e.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "mine-mychart", metav1.GetOptions{})
		},
	} {
		o, err := get()
		if err != nil {
			t.Fatal(err)
		}
		ownedByHelm(t, o)
	}
	up := action.NewUpgrade(cfg)
	up.Namespace, up.WaitStrategy, up.Timeout = ns, kube.HookOnlyStrategy, 2*time.Minute
	r = must(t)(up.RunWithContext(ctx, "mine", chrt, map[string]any{"replicaCount": 2}))
	dep, err := e.cs.AppsV1().Deployments(ns).Get(ctx, "mine-mychart", metav1.GetOptions{})
	if err != nil || r.Version != 2 || *dep.Spec.Replicas != 2 {
		t.Fatalf("upgrade: revision %d, %v, %+v", r.Version, err, dep)
	}
}
