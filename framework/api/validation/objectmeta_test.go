package validation

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestValidateObjectMeta(t *testing.T) {
	t.Parallel()
	md := field.NewPath("metadata")
	cases := []struct {
		name       string
		meta       api.ObjectMeta
		namespaced bool
		nameFn     NameFunc
		want       []string
	}{
		{name: "valid namespaced", meta: api.ObjectMeta{Name: "a", Namespace: "default"}, namespaced: true},
		{name: "valid cluster", meta: api.ObjectMeta{Name: "a.b"}},
		{name: "generateName only", meta: api.ObjectMeta{GenerateName: "web-"}},
		{name: "no name", meta: api.ObjectMeta{},
			want: []string{"metadata.name: Required value: name or generateName is required"}},
		{name: "bad name", meta: api.ObjectMeta{Name: "A_b"},
			want: []string{`metadata.name: Invalid value: "A_b": ` + subdomainMsg}},
		{name: "bad generateName", meta: api.ObjectMeta{Name: "x", GenerateName: "Web-"},
			want: []string{`metadata.generateName: Invalid value: "Web-": ` + subdomainMsg}},
		{name: "label name fn", meta: api.ObjectMeta{Name: "a.b"}, nameFn: NameIsDNSLabel,
			want: []string{`metadata.name: Invalid value: "a.b": must not contain dots`}},
		{name: "namespace required", meta: api.ObjectMeta{Name: "a"}, namespaced: true,
			want: []string{"metadata.namespace: Required value"}},
		{name: "namespace invalid", meta: api.ObjectMeta{Name: "a", Namespace: "a.b"}, namespaced: true,
			want: []string{`metadata.namespace: Invalid value: "a.b": must not contain dots`}},
		{name: "namespace forbidden", meta: api.ObjectMeta{Name: "a", Namespace: "default"},
			want: []string{"metadata.namespace: Forbidden: not allowed on this type"}},
		{name: "negative generation", meta: api.ObjectMeta{Name: "a", Generation: -1},
			want: []string{"metadata.generation: Invalid value: -1: must be greater than or equal to 0"}},
		{name: "labels", meta: api.ObjectMeta{Name: "a", Labels: map[string]string{"ok": "x", "b c": "d", "e": "x y"}},
			want: []string{
				`metadata.labels: Invalid value: "b c": ` + qnameMsg,
				`metadata.labels: Invalid value: "x y": ` + valueMsg,
			}},
		{name: "annotations", meta: api.ObjectMeta{Name: "a", Annotations: map[string]string{"Example.COM/Key": "any value", "bad key": ""}},
			want: []string{`metadata.annotations: Invalid value: "bad key": ` + qnameMsg}},
		{name: "annotations too big", meta: api.ObjectMeta{Name: "a", Annotations: map[string]string{"k": strings.Repeat("x", 256*1024)}},
			want: []string{"metadata.annotations: Too long: may not be more than 262144 bytes"}},
		{name: "owner refs missing fields", meta: api.ObjectMeta{Name: "a", OwnerReferences: []api.OwnerReference{{APIVersion: "apps/"}}},
			want: []string{
				`metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty`,
				`metadata.ownerReferences.kind: Invalid value: "": must not be empty`,
				`metadata.ownerReferences.name: Invalid value: "": must not be empty`,
				`metadata.ownerReferences.uid: Invalid value: "": must not be empty`,
			}},
		{name: "owner refs two controllers", meta: api.ObjectMeta{Name: "a", OwnerReferences: []api.OwnerReference{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "r1", UID: "1", Controller: ptr(true)},
			{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "3", Controller: ptr(false)},
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "r2", UID: "2", Controller: ptr(true)},
		}}, want: []string{`Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/r1 and ReplicaSet/r2`}},
		{name: "event owner", meta: api.ObjectMeta{Name: "a", OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "Event", Name: "e", UID: "1"}}},
			want: []string{"/v1, Kind=Event is disallowed from being an owner"}},
		{name: "finalizers", meta: api.ObjectMeta{Name: "a", Finalizers: []string{"example.com/f", "kubernetes", "bad finalizer"}},
			want: []string{`metadata.finalizers: Invalid value: "bad finalizer": ` + qnameMsg}},
		{name: "orphan and foreground", meta: api.ObjectMeta{Name: "a", Finalizers: []string{"orphan", "foregroundDeletion"}},
			want: []string{`metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set`}},
		{name: "managed fields", meta: api.ObjectMeta{Name: "a", ManagedFields: []api.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: "Update", FieldsType: "FieldsV1"},
			{Manager: "x\x01", Operation: "Patch", FieldsType: "FieldsV2"},
		}}, want: []string{
			"metadata.managedFields[1].operation: Invalid value: \"Patch\": must be `Apply` or `Update`",
			"metadata.managedFields[1].fieldsType: Invalid value: \"FieldsV2\": must be `FieldsV1`",
			`metadata.managedFields[1].manager: Invalid value: "x\x01": invalid character U+0001 (at position 1)`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := messages(ValidateObjectMeta(&c.meta, c.namespaced, c.nameFn, md))
			if len(got) != len(c.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestValidateObjectMetaUpdate(t *testing.T) {
	t.Parallel()
	md := field.NewPath("metadata")
	created := api.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	deleted := api.NewTime(time.Date(2024, 2, 2, 3, 4, 5, 0, time.UTC))
	old := api.ObjectMeta{Name: "a", Namespace: "ns", UID: "u1", Generation: 2, CreationTimestamp: created,
		ResourceVersion: "5", Finalizers: []string{"example.com/f"}}
	deleting := old
	deleting.DeletionTimestamp = &deleted
	deleting.DeletionGracePeriodSeconds = ptr(int64(0))

	cases := []struct {
		name   string
		old    api.ObjectMeta
		mutate func(m *api.ObjectMeta)
		want   []string
	}{
		{name: "unchanged", old: old, mutate: func(*api.ObjectMeta) {}},
		{name: "labels and finalizers may change", old: old, mutate: func(m *api.ObjectMeta) {
			m.Labels = map[string]string{"a": "b"}
			m.Finalizers = append(m.Finalizers, "example.com/g")
			m.Generation = 3
		}},
		{name: "same time in another zone", old: old, mutate: func(m *api.ObjectMeta) {
			m.CreationTimestamp = api.NewTime(created.In(time.FixedZone("x", 3600)))
		}},
		{name: "name", old: old, mutate: func(m *api.ObjectMeta) { m.Name = "b" },
			want: []string{`metadata.name: Invalid value: "b": field is immutable`}},
		{name: "namespace", old: old, mutate: func(m *api.ObjectMeta) { m.Namespace = "other" },
			want: []string{`metadata.namespace: Invalid value: "other": field is immutable`}},
		{name: "uid", old: old, mutate: func(m *api.ObjectMeta) { m.UID = "u2" },
			want: []string{`metadata.uid: Invalid value: "u2": field is immutable`}},
		{name: "creationTimestamp", old: old, mutate: func(m *api.ObjectMeta) { m.CreationTimestamp = deleted },
			want: []string{`metadata.creationTimestamp: Invalid value: 2024-02-02 03:04:05 +0000 UTC: field is immutable`}},
		{name: "generation decremented", old: old, mutate: func(m *api.ObjectMeta) { m.Generation = 1 },
			want: []string{`metadata.generation: Invalid value: 1: must not be decremented`}},
		{name: "set deletionTimestamp", old: old, mutate: func(m *api.ObjectMeta) { m.DeletionTimestamp = &deleted },
			want: []string{`metadata.deletionTimestamp: Invalid value: 2024-02-02 03:04:05 +0000 UTC: field is immutable`}},
		{name: "unset deletionTimestamp", old: deleting, mutate: func(m *api.ObjectMeta) { m.DeletionTimestamp = nil },
			want: []string{`metadata.deletionTimestamp: Invalid value: null: field is immutable`}},
		{name: "change grace period", old: deleting, mutate: func(m *api.ObjectMeta) { m.DeletionGracePeriodSeconds = ptr(int64(30)) },
			want: []string{`metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable`}},
		{name: "remove finalizer while deleting", old: deleting, mutate: func(m *api.ObjectMeta) { m.Finalizers = nil }},
		{name: "add finalizer while deleting", old: deleting, mutate: func(m *api.ObjectMeta) {
			m.Finalizers = []string{"example.com/f", "x", "x", "b"}
		}, want: []string{`metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "x"}`}},
		{name: "invalid label on update", old: old, mutate: func(m *api.ObjectMeta) { m.Labels = map[string]string{"a": "-"} },
			want: []string{`metadata.labels: Invalid value: "-": ` + valueMsg}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			oldMeta := c.old
			newMeta := c.old
			newMeta.Finalizers = append([]string(nil), c.old.Finalizers...)
			c.mutate(&newMeta)
			got := messages(ValidateObjectMetaUpdate(&newMeta, &oldMeta, md))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateLabelSelector(t *testing.T) {
	t.Parallel()
	p := field.NewPath("spec", "selector")
	cases := []struct {
		name string
		sel  *api.LabelSelector
		want []string
	}{
		{"nil", nil, nil},
		{"valid", &api.LabelSelector{MatchLabels: map[string]string{"app": "x"}, MatchExpressions: []api.LabelSelectorRequirement{
			{Key: "a", Operator: "In", Values: []string{"1"}}, {Key: "b", Operator: "DoesNotExist"}}}, nil},
		{"in without values", &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "a", Operator: "NotIn"}}},
			[]string{"spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"}},
		{"exists with values", &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "a", Operator: "Exists", Values: []string{"x"}}}},
			[]string{"spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"}},
		{"bad operator and key", &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "-", Operator: "Gt"}}},
			[]string{
				`spec.selector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator`,
				`spec.selector.matchExpressions[0].key: Invalid value: "-": ` + qnameMsg,
			}},
		{"bad match label", &api.LabelSelector{MatchLabels: map[string]string{"a": "-"}},
			[]string{`spec.selector.matchLabels: Invalid value: "-": ` + valueMsg}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.want, messages(ValidateLabelSelector(c.sel, p))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
