package v1

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

func resource(t *testing.T, name string) *registry.Resource {
	t.Helper()
	for _, r := range Resources() {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %s", name)
	return nil
}

// manifest returns the document of the given kind in testdata/file as a map.
func manifest(t *testing.T, file, kind string) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		m, err := api.DecodeMap(j)
		if err != nil {
			t.Fatal(err)
		}
		if m["kind"] == kind {
			return m
		}
	}
	t.Fatalf("no %s in %s", kind, file)
	return nil
}

func TestCanonicalizeManifests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, kind, resource string
		wantUnknown          []string
		want                 map[string]any // path (dotted) -> value after defaulting
	}{
		{"nginx-deployment.yaml", "Deployment", "deployments", nil, map[string]any{
			"spec.replicas":                              int64(3),
			"spec.strategy.type":                         "RollingUpdate",
			"spec.strategy.rollingUpdate.maxSurge":       "25%",
			"spec.strategy.rollingUpdate.maxUnavailable": "25%",
			"spec.revisionHistoryLimit":                  int64(10),
			"spec.progressDeadlineSeconds":               int64(600),
			"spec.template.spec.restartPolicy":           "Always",
		}},
		{"daemonset.yaml", "DaemonSet", "daemonsets", nil, map[string]any{
			"spec.updateStrategy.type":                         "RollingUpdate",
			"spec.updateStrategy.rollingUpdate.maxUnavailable": int64(1),
			"spec.updateStrategy.rollingUpdate.maxSurge":       int64(0),
			"spec.revisionHistoryLimit":                        int64(10),
			"spec.template.spec.restartPolicy":                 "Always",
		}},
		{"web.yaml", "StatefulSet", "statefulsets", nil, map[string]any{
			"spec.replicas":                                                int64(2),
			"spec.podManagementPolicy":                                     "OrderedReady",
			"spec.updateStrategy.type":                                     "RollingUpdate",
			"spec.updateStrategy.rollingUpdate.partition":                  int64(0),
			"spec.revisionHistoryLimit":                                    int64(10),
			"spec.persistentVolumeClaimRetentionPolicy.whenDeleted":        "Retain",
			"spec.persistentVolumeClaimRetentionPolicy.whenScaled":         "Retain",
			"spec.serviceName":                                             "nginx",
			"spec.template.spec.restartPolicy":                             "Always",
			"spec.volumeClaimTemplates[0].metadata.name":                   "www",
			"spec.volumeClaimTemplates[0].spec.volumeMode":                 "Filesystem",
			"spec.volumeClaimTemplates[0].spec.resources.requests.storage": "1Gi",
			"spec.volumeClaimTemplates[0].status.phase":                    "Pending",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := resource(t, tt.resource)
			out, unknown, errs := r.Strategy.Canonicalize(manifest(t, tt.file, tt.kind))
			if len(errs) > 0 {
				t.Fatalf("Canonicalize errors: %v", errs.ToError())
			}
			if diff := cmp.Diff(tt.wantUnknown, unknown); diff != "" {
				t.Errorf("unknown fields (-want +got):\n%s", diff)
			}
			for path, want := range tt.want {
				if want == nil {
					continue
				}
				if got := fieldAt(out, path); got != want {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
			if errs := r.Strategy.ValidateCreate(context.Background(), out); len(errs) > 0 {
				t.Errorf("ValidateCreate: %v", errs.ToError())
			}
			// Canonical form is a fixed point.
			again, _, _ := r.Strategy.Canonicalize(api.DeepCopyJSON(out))
			if diff := cmp.Diff(out, again); diff != "" {
				t.Errorf("second Canonicalize changed the object (-first +second):\n%s", diff)
			}
		})
	}
}

// fieldAt returns the value at a dotted path whose segments may index a slice
// ("spec.volumeClaimTemplates[0].metadata.name"), or nil.
func fieldAt(obj map[string]any, path string) any {
	var cur any = obj
	for _, seg := range strings.Split(path, ".") {
		name, idx, indexed := strings.Cut(strings.TrimSuffix(seg, "]"), "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[name]
		if indexed {
			s, _ := cur.([]any)
			i, err := strconv.Atoi(idx)
			if err != nil || i >= len(s) {
				return nil
			}
			cur = s[i]
		}
	}
	return cur
}

func validDeployment() *Deployment {
	d := &Deployment{}
	d.Name = "d"
	d.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	d.Spec.Template.Labels = map[string]string{"app": "x"}
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, containerNamed("c", "img"))
	DefaultDeployment(d)
	return d
}

func TestValidateDeployment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(d *Deployment)
		want   []string
	}{
		{"valid", func(*Deployment) {}, nil},
		{"no selector", func(d *Deployment) { d.Spec.Selector = nil }, []string{"spec.selector: Required value"}},
		{"mismatch", func(d *Deployment) { d.Spec.Template.Labels = map[string]string{"app": "y"} },
			[]string{"spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"y\"}: `selector` does not match template `labels`"}},
		{"negative replicas", func(d *Deployment) { d.Spec.Replicas = api.Ptr[int32](-1) },
			[]string{"spec.replicas: Invalid value: -1: must be greater than or equal to 0"}},
		{"bad strategy", func(d *Deployment) { d.Spec.Strategy.Type = "Blue" },
			[]string{`spec.strategy.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"`}},
		{"both zero", func(d *Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = api.Ptr(api.FromInt(0))
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = api.Ptr(api.FromString("0%"))
		}, []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0%: may not be 0 when `maxSurge` is 0"}},
		{"recreate with rollingUpdate", func(d *Deployment) { d.Spec.Strategy.Type = RecreateDeploymentStrategyType },
			[]string{"spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"}},
		{"restartPolicy", func(d *Deployment) { d.Spec.Template.Spec.RestartPolicy = "Never" },
			[]string{`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := validDeployment()
			tt.modify(d)
			if diff := cmp.Diff(tt.want, messages(ValidateDeployment(d))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdatesImmutableSelector(t *testing.T) {
	t.Parallel()
	old := validDeployment()
	d := validDeployment()
	d.Spec.Selector.MatchLabels["tier"] = "web"
	d.Spec.Template.Labels["tier"] = "web"
	want := []string{`spec.selector: Invalid value: "app=x,tier=web": field is immutable`}
	if diff := cmp.Diff(want, messages(ValidateDeploymentUpdate(d, old))); diff != "" {
		t.Errorf("deployment (-want +got):\n%s", diff)
	}
	ss := &StatefulSet{}
	ss.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	ss.Spec.Template = old.Spec.Template
	DefaultStatefulSet(ss)
	ss2 := *ss
	ss2.Spec.ServiceName = "other"
	ss2.Spec.Replicas = api.Ptr[int32](5)
	want = []string{"spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', " +
		"'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"}
	if diff := cmp.Diff(want, messages(ValidateStatefulSetUpdate(&ss2, ss))); diff != "" {
		t.Errorf("statefulset (-want +got):\n%s", diff)
	}
}

func TestValidateDaemonSetStrategy(t *testing.T) {
	t.Parallel()
	ds := &DaemonSet{}
	ds.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	ds.Spec.Template = validDeployment().Spec.Template
	DefaultDaemonSet(ds)
	if errs := ValidateDaemonSet(ds); len(errs) > 0 {
		t.Fatalf("valid daemonset: %v", errs.ToError())
	}
	ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = api.Ptr(api.FromInt(1))
	want := []string{"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"}
	if diff := cmp.Diff(want, messages(ValidateDaemonSet(ds))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func containerNamed(name, image string) corev1.Container {
	return corev1.Container{Name: name, Image: image}
}

func TestDeploymentPrinter(t *testing.T) {
	t.Parallel()
	r := resource(t, "deployments")
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d := validDeployment()
	d.Name = "nginx"
	d.CreationTimestamp = api.NewTime(now.Add(-5 * time.Minute))
	d.Spec.Replicas = api.Ptr[int32](3)
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, containerNamed("side", "busybox"))
	d.Status = DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2}
	obj, err := registry.ToMap(d)
	if err != nil {
		t.Fatal(err)
	}
	row, err := r.Printer.Row(obj, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"nginx", "2/3", int64(3), int64(2), "5m", "c,side", "img,busybox", "app=x"}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	var names []string
	for _, c := range r.Printer.Columns {
		if c.Priority == 0 {
			names = append(names, strings.ToUpper(c.Name))
		}
	}
	if diff := cmp.Diff([]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(row) != len(r.Printer.Columns) {
		t.Errorf("%d cells for %d columns", len(row), len(r.Printer.Columns))
	}
	if got := r.Scale.SelectorFromObject(obj); got != "app=x" {
		t.Errorf("scale selector = %q", got)
	}
}

func TestPrintersMatchColumns(t *testing.T) {
	t.Parallel()
	for _, r := range Resources() {
		obj := map[string]any{"metadata": map[string]any{"name": "x"}}
		row, err := r.Printer.Row(obj, time.Now())
		if err != nil {
			t.Fatalf("%s: %v", r.Resource, err)
		}
		if len(row) != len(r.Printer.Columns) {
			t.Errorf("%s: %d cells for %d columns", r.Resource, len(row), len(r.Printer.Columns))
		}
	}
}

func TestSelectorStrings(t *testing.T) {
	t.Parallel()
	d := validDeployment()
	d.Spec.Selector = &api.LabelSelector{
		MatchLabels: map[string]string{"b": "2", "a": "1"},
		MatchExpressions: []api.LabelSelectorRequirement{
			{Key: "c", Operator: api.LabelSelectorOpIn, Values: []string{"y", "x"}},
			{Key: "aa", Operator: api.LabelSelectorOpDoesNotExist},
		},
	}
	obj, err := registry.ToMap(d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := SelectorFromObject(obj), "a=1,!aa,b=2,c in (x,y)"; got != want {
		t.Errorf("scale selector %q, want %q", got, want)
	}
	row, err := resource(t, "deployments").Printer.Row(obj, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := row[len(row)-1], "a=1,!aa,b=2,c in (x,y)"; got != want {
		t.Errorf("selector cell %q, want %q", got, want)
	}
}

// TestValidateSelectorValues: selector values must be label values; an invalid
// selector is not also reported as not matching the template.
func TestValidateSelectorValues(t *testing.T) {
	t.Parallel()
	d := validDeployment()
	d.Spec.Selector.MatchExpressions = []api.LabelSelectorRequirement{
		{Key: "tier", Operator: api.LabelSelectorOpIn, Values: []string{"-bad-"}},
	}
	want := []string{"spec.selector.matchExpressions[0].values[0]: Invalid value: \"-bad-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}
	if diff := cmp.Diff(want, messages(ValidateDeployment(d))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func validStatefulSet() *StatefulSet {
	ss := &StatefulSet{}
	ss.Name = "web"
	ss.Spec.ServiceName = "nginx"
	ss.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}
	ss.Spec.Template.Labels = map[string]string{"app": "nginx"}
	c := containerNamed("nginx", "nginx")
	c.VolumeMounts = []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}}
	ss.Spec.Template.Spec.Containers = []corev1.Container{c}
	claim := corev1.PersistentVolumeClaim{}
	claim.Name = "www"
	claim.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	claim.Spec.Resources.Requests = corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}
	ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claim}
	DefaultStatefulSet(ss)
	return ss
}

func TestValidateStatefulSetClaimTemplates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(ss *StatefulSet)
		want   []string
	}{
		{"mount of a claim template", func(*StatefulSet) {}, nil},
		{"claim template replaces a volume", func(ss *StatefulSet) {
			ss.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, nil},
		{"mount of nothing", func(ss *StatefulSet) { ss.Spec.VolumeClaimTemplates[0].Name = "data" },
			[]string{`spec.template.spec.containers[0].volumeMounts[0].name: Not found: "www"`}},
		{"no claim templates", func(ss *StatefulSet) { ss.Spec.VolumeClaimTemplates = nil },
			[]string{`spec.template.spec.containers[0].volumeMounts[0].name: Not found: "www"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ss := validStatefulSet()
			tt.modify(ss)
			if diff := cmp.Diff(tt.want, messages(ValidateStatefulSet(ss))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(ss.Spec.Template.Spec.Volumes) > 1 {
				t.Errorf("validation changed the template's volumes: %v", ss.Spec.Template.Spec.Volumes)
			}
		})
	}
	if got := *validStatefulSet().Spec.VolumeClaimTemplates[0].Spec.VolumeMode; got != corev1.PersistentVolumeFilesystem {
		t.Errorf("claim template volumeMode = %q", got)
	}
	// Claim templates are immutable.
	old := validStatefulSet()
	ss := validStatefulSet()
	ss.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"] = api.MustParseQuantity("2Gi")
	if errs := ValidateStatefulSetUpdate(ss, old); len(errs) != 1 || errs[0].Type != field.ErrorTypeForbidden {
		t.Errorf("update of volumeClaimTemplates: %v", errs.ToError())
	}
}
