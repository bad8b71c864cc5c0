package registry

import (
	"context"
	"testing"

	"github.com/converge-dev/converge/framework/api/field"
)

type statusThing struct {
	Spec   int `json:"spec"`
	Status int `json:"status"`
}

func TestTypedValidateStatusUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	obj, old := map[string]any{"spec": int64(1), "status": int64(-1)}, map[string]any{"spec": int64(1), "status": int64(2)}
	update := func(o, _ *statusThing) field.ErrorList {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), o.Spec, "update")}
	}
	status := func(o, old *statusThing) field.ErrorList {
		if o.Status < old.Status {
			return field.ErrorList{field.Invalid(field.NewPath("status"), o.Status, "status")}
		}
		return nil
	}
	tests := []struct {
		name string
		s    Typed[statusThing]
		want string
	}{
		{"neither", Typed[statusThing]{}, ""},
		{"update only: status writes keep ValidateUpdate", Typed[statusThing]{ValidateUpdateFunc: update}, "spec: Invalid value: 1: update"},
		{"validate only", Typed[statusThing]{Validate: func(o *statusThing) field.ErrorList { return update(o, nil) }}, "spec: Invalid value: 1: update"},
		{"status replaces update", Typed[statusThing]{ValidateUpdateFunc: update, ValidateStatusUpdateFunc: status}, "status: Invalid value: -1: status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got string
			if errs := tt.s.ValidateStatusUpdate(ctx, obj, old); len(errs) > 0 {
				got = errs[0].Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	errs := Typed[statusThing]{ValidateStatusUpdateFunc: status}.ValidateStatusUpdate(ctx, map[string]any{"status": "x"}, old)
	if len(errs) != 1 || errs[0].Field != "status" {
		t.Errorf("undecodable object: got %v, want one error on status", errs)
	}
}
