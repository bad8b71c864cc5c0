package v1

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

func resource(t *testing.T) *registry.Resource {
	t.Helper()
	rs := Resources()
	if len(rs) != 1 || rs[0].Resource != "priorityclasses" || rs[0].Namespaced {
		t.Fatalf("resources %+v", rs)
	}
	return rs[0]
}

func TestPriorityClassCanonicalForm(t *testing.T) {
	t.Parallel()
	in, err := api.DecodeMap([]byte(`{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
		"metadata":{"name":"high"},"value":1000000,"description":"important"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := resource(t)
	out, unknown, errs := r.Strategy.Canonicalize(in)
	if len(unknown) > 0 || len(errs) > 0 {
		t.Fatalf("unknown %v, errs %v", unknown, errs)
	}
	if got := api.NestedString(out, "preemptionPolicy"); got != "PreemptLowerPriority" {
		t.Errorf("preemptionPolicy defaulted to %q", got)
	}
	if v, _ := api.NestedInt64(out, "value"); v != 1000000 {
		t.Errorf("value %v", v)
	}
	if errs := r.Strategy.ValidateCreate(t.Context(), out); len(errs) > 0 {
		t.Errorf("ValidateCreate: %v", errs.ToError())
	}
}

func TestValidatePriorityClass(t *testing.T) {
	t.Parallel()
	pc := func(name string, value int32, globalDefault bool) *PriorityClass {
		return &PriorityClass{ObjectMeta: api.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault,
			PreemptionPolicy: api.Ptr(corev1.PreemptLowerPriority)}
	}
	tests := []struct {
		name string
		pc   *PriorityClass
		want string
	}{
		{"user class", pc("high", 1000000000, false), ""},
		{"negative value", pc("low", -10, true), ""},
		{"user value too high", pc("too-high", 1000000001, false),
			"value: Forbidden: maximum allowed value of a user defined priority is 1000000000"},
		{"system class", pc(SystemNodeCritical, 2000001000, false), ""},
		{"reserved prefix", pc("system-mine", 10, false),
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"},
		{"system class with another value", pc(SystemClusterCritical, 10, false),
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000"},
		{"system class as global default", pc(SystemClusterCritical, 2000000000, true),
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false"},
		{"bad preemption policy", func() *PriorityClass {
			p := pc("x", 1, false)
			p.PreemptionPolicy = api.Ptr(corev1.PreemptionPolicy("Sometimes"))
			return p
		}(), `preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if err := ValidatePriorityClass(tt.pc).ToError(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidatePriorityClassUpdate(t *testing.T) {
	t.Parallel()
	old := &PriorityClass{ObjectMeta: api.ObjectMeta{Name: "high"}, Value: 100, PreemptionPolicy: api.Ptr(corev1.PreemptLowerPriority)}
	tests := []struct {
		name   string
		mutate func(*PriorityClass)
		want   string
	}{
		{"description and globalDefault may change", func(p *PriorityClass) { p.Description, p.GlobalDefault = "x", true }, ""},
		{"value is immutable", func(p *PriorityClass) { p.Value = 200 }, "value: Forbidden: may not be changed in an update."},
		{"preemptionPolicy is immutable", func(p *PriorityClass) { p.PreemptionPolicy = api.Ptr(corev1.PreemptNever) },
			"preemptionPolicy: Invalid value: \"Never\": field is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pc := *old
			tt.mutate(&pc)
			got := ""
			if err := ValidatePriorityClassUpdate(&pc, old).ToError(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSystemPriorityClassesAreValid(t *testing.T) {
	t.Parallel()
	got := map[string]int32{}
	for _, pc := range SystemPriorityClasses() {
		if errs := ValidatePriorityClass(pc); len(errs) > 0 {
			t.Errorf("%s: %v", pc.Name, errs.ToError())
		}
		got[pc.Name] = pc.Value
	}
	want := map[string]int32{SystemClusterCritical: 2000000000, SystemNodeCritical: 2000001000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("system classes (-want +got):\n%s", diff)
	}
}

func TestPrinter(t *testing.T) {
	t.Parallel()
	p := resource(t).Printer
	var names []string
	for _, c := range p.Columns {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	now := time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC)
	pc := &PriorityClass{ObjectMeta: api.ObjectMeta{Name: "high", CreationTimestamp: api.NewTime(now.Add(-90 * time.Second))},
		Value: 1000, GlobalDefault: true, PreemptionPolicy: api.Ptr(corev1.PreemptNever)}
	obj, err := registry.ToMap(pc)
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.Row(obj, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"high", int64(1000), true, "90s", "Never"}, row); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
}

func TestAddToScheme(t *testing.T) {
	t.Parallel()
	s := scheme.New()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
}

// classes is a PodPriority over a fixed set of classes.
func classes(pcs ...*PriorityClass) PodPriority {
	return PodPriority{
		Get: func(_ context.Context, name string) (*PriorityClass, error) {
			if name == "broken" {
				return nil, errors.New("storage down")
			}
			for _, pc := range pcs {
				if pc.Name == name {
					return pc, nil
				}
			}
			return nil, nil
		},
		List: func(context.Context) ([]*PriorityClass, error) { return pcs, nil },
	}
}

func TestAdmitPod(t *testing.T) {
	t.Parallel()
	high := &PriorityClass{ObjectMeta: api.ObjectMeta{Name: "high"}, Value: 1000, PreemptionPolicy: api.Ptr(corev1.PreemptLowerPriority)}
	never := &PriorityClass{ObjectMeta: api.ObjectMeta{Name: "never"}, Value: 500, PreemptionPolicy: api.Ptr(corev1.PreemptNever)}
	def := &PriorityClass{ObjectMeta: api.ObjectMeta{Name: "default-low"}, Value: 10, GlobalDefault: true, PreemptionPolicy: api.Ptr(corev1.PreemptLowerPriority)}
	def2 := &PriorityClass{ObjectMeta: api.ObjectMeta{Name: "default-lower"}, Value: 5, GlobalDefault: true}
	tests := []struct {
		name    string
		classes PodPriority
		spec    string
		want    string // spec JSON after admission
		wantErr string
	}{
		{"no class, no default", classes(high), `{}`, `{"preemptionPolicy":"PreemptLowerPriority","priority":0}`, ""},
		{"no class, global default", classes(high, def), `{}`,
			`{"preemptionPolicy":"PreemptLowerPriority","priority":10,"priorityClassName":"default-low"}`, ""},
		{"racing defaults: the lowest wins", classes(def, def2), `{}`, `{"priority":5,"priorityClassName":"default-lower"}`, ""},
		{"named class", classes(high, def), `{"priorityClassName":"high"}`,
			`{"preemptionPolicy":"PreemptLowerPriority","priority":1000,"priorityClassName":"high"}`, ""},
		{"system class", classes(SystemPriorityClasses()...), `{"priorityClassName":"system-node-critical"}`,
			`{"preemptionPolicy":"PreemptLowerPriority","priority":2000001000,"priorityClassName":"system-node-critical"}`, ""},
		{"class with policy Never", classes(never), `{"priorityClassName":"never"}`,
			`{"preemptionPolicy":"Never","priority":500,"priorityClassName":"never"}`, ""},
		{"matching priority given", classes(high), `{"priorityClassName":"high","priority":1000}`,
			`{"preemptionPolicy":"PreemptLowerPriority","priority":1000,"priorityClassName":"high"}`, ""},
		{"missing class", classes(high), `{"priorityClassName":"nope"}`, "",
			`pods "p" is forbidden: no PriorityClass with name nope was found`},
		{"other priority given", classes(high), `{"priorityClassName":"high","priority":7}`, "",
			`pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`},
		{"other policy given", classes(never), `{"priorityClassName":"never","preemptionPolicy":"PreemptLowerPriority"}`, "",
			`pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name`},
		{"lookup failure", classes(), `{"priorityClassName":"broken"}`, "", "failed to get PriorityClass with name broken: storage down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec, err := api.DecodeMap([]byte(tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			pod := map[string]any{"metadata": map[string]any{"name": "p", "namespace": "default"}, "spec": spec}
			err = tt.classes.AdmitPod(t.Context(), pod)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := api.DecodeMap([]byte(tt.want))
			if diff := cmp.Diff(want, pod["spec"]); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
	// A missing class is 403 Forbidden.
	err := classes().AdmitPod(t.Context(), map[string]any{"spec": map[string]any{"priorityClassName": "x"}})
	if !apierrors.IsForbidden(err) {
		t.Errorf("missing class: %v, want Forbidden", err)
	}
}

func TestAdmitPriorityClass(t *testing.T) {
	t.Parallel()
	def := &PriorityClass{ObjectMeta: api.ObjectMeta{Name: "default"}, Value: 10, GlobalDefault: true}
	tests := []struct {
		name    string
		classes PodPriority
		obj     string
		wantErr string
	}{
		{"not default", classes(def), `{"metadata":{"name":"x"},"value":1}`, ""},
		{"first default", classes(), `{"metadata":{"name":"x"},"value":1,"globalDefault":true}`, ""},
		{"the default itself", classes(def), `{"metadata":{"name":"default"},"value":10,"globalDefault":true}`, ""},
		{"second default", classes(def), `{"metadata":{"name":"x"},"value":1,"globalDefault":true}`,
			`priorityclasses.scheduling.k8s.io "x" is forbidden: PriorityClass default is already marked as default. Only one default can exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj, err := api.DecodeMap([]byte(tt.obj))
			if err != nil {
				t.Fatal(err)
			}
			err = tt.classes.AdmitPriorityClass(t.Context(), obj)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("got  %q\nwant %q", got, tt.wantErr)
			}
		})
	}
}
