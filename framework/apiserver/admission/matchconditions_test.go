package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/review"
)

func TestMatchConditionsEvaluate(t *testing.T) {
	t.Parallel()
	req := &review.AdmissionRequest{Operation: Create, Name: "w", Namespace: "default",
		Object:   json.RawMessage(`{"metadata":{"name":"w","labels":{"team":"a"}}}`),
		UserInfo: review.UserInfo{Username: "alice", Groups: []string{"devs"}}}
	tests := []struct {
		name    string
		conds   []string
		want    bool
		wantErr string
	}{
		{"none", nil, true, ""},
		{"all true", []string{`object.metadata.labels.team == "a"`, `request.userInfo.username == "alice"`}, true, ""},
		{"one false", []string{`true`, `request.operation == "DELETE"`}, false, ""},
		{"oldObject is null on create", []string{`oldObject == null`}, true, ""},
		{"false wins over an error", []string{`object.missing.field == 1`, `false`}, false, ""},
		{"error without false", []string{`object.missing.field == 1`, `true`}, false, "no such key"},
		{"does not compile", []string{`object.(`}, false, "compilation failed"},
		{"not a bool", []string{`request.name`}, false, "not a bool"},
	}
	var m matchConditions
	for _, tt := range tests {
		var conds []MatchCondition
		for i, e := range tt.conds {
			conds = append(conds, MatchCondition{Name: fmt.Sprintf("c%d", i), Expression: e})
		}
		got, err := m.evaluate(conds, req)
		if got != tt.want {
			t.Errorf("%s: matched %v, want %v (err %v)", tt.name, got, tt.want, err)
		}
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestCompileMatchCondition(t *testing.T) {
	t.Parallel()
	for expr, ok := range map[string]bool{
		`request.operation == "CREATE"`:                                             true,
		`has(object.metadata.labels) && object.metadata.labels.exists(k, k == "x")`: true,
		`1 + 1`:           false, // an int
		`object.(`:        false,
		`undeclared == 1`: false,
	} {
		if err := CompileMatchCondition(expr); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", expr, err, ok)
		}
	}
}

func TestWebhookMatchConditions(t *testing.T) {
	t.Parallel()
	ws := newWebhookServer(t, func(*review.AdmissionRequest) *review.AdmissionResponse {
		return &review.AdmissionResponse{Allowed: false, Result: &api.Status{Message: "no", Code: 403}}
	})
	tests := []struct {
		expr, failurePolicy string
		size                int64
		wantCode            int // 0: allowed
	}{
		{`object.spec.replicas > 10`, "Fail", 20, 403},           // selected: the webhook denies
		{`object.spec.replicas > 10`, "Fail", 5, 0},              // not selected: never called
		{`object.spec.nothing > 10`, "Fail", 5, 500},             // error, Fail: refused
		{`object.spec.nothing > 10`, "Ignore", 5, 0},             // error, Ignore: skipped
		{`request.userInfo.username == "bob"`, "Fail", 20, 0},    // another user
		{`request.requestKind.version == "v2"`, "Fail", 20, 403}, // the client's version
	}
	for _, tt := range tests {
		hook := ws.hook("Equivalent")
		hook.FailurePolicy = tt.failurePolicy
		hook.MatchConditions = []MatchCondition{{Name: "big", Expression: tt.expr}}
		w := &Webhooks{Hooks: func(context.Context) ([]Hook, error) { return []Hook{hook}, nil }, Equivalents: widgetEquivalents}
		before := len(ws.requests())
		err := w.Validate(context.Background(), widgetV2(tt.size))
		code := 0
		if err != nil {
			code = apierrors.CodeForError(err)
		}
		if code != tt.wantCode {
			t.Errorf("%q (%s) size %d: code %d (%v), want %d", tt.expr, tt.failurePolicy, tt.size, code, err, tt.wantCode)
		}
		if called := len(ws.requests()) > before; called != (tt.wantCode == 403) {
			t.Errorf("%q size %d: webhook called %v", tt.expr, tt.size, called)
		}
	}
}

func TestReinvocationIfNeeded(t *testing.T) {
	t.Parallel()
	jsonPatch := "JSONPatch"
	// first stamps the number of labels it saw; second adds a label once.
	first := newWebhookServer(t, func(r *review.AdmissionRequest) *review.AdmissionResponse {
		n := len(api.NestedStringMap(decoded(r.Object), "metadata", "labels"))
		return &review.AdmissionResponse{Allowed: true, PatchType: &jsonPatch,
			Patch: fmt.Appendf(nil, `[{"op":"add","path":"/metadata/annotations","value":{"labels-seen":"%d"}}]`, n)}
	})
	second := newWebhookServer(t, func(r *review.AdmissionRequest) *review.AdmissionResponse {
		if api.NestedStringMap(decoded(r.Object), "metadata", "labels")["second"] != "" {
			return &review.AdmissionResponse{Allowed: true}
		}
		return &review.AdmissionResponse{Allowed: true, PatchType: &jsonPatch,
			Patch: []byte(`[{"op":"add","path":"/metadata/labels","value":{"second":"yes"}}]`)}
	})
	for _, policy := range []string{"Never", "IfNeeded"} {
		h1, h2 := first.hook("Equivalent"), second.hook("Equivalent")
		h1.Name, h2.Name = "first", "second"
		h1.ReinvocationPolicy = policy
		w := &Webhooks{Mutating: true, Hooks: func(context.Context) ([]Hook, error) { return []Hook{h1, h2}, nil }, Equivalents: widgetEquivalents}
		before := len(first.requests())
		a := widgetV2(1)
		if err := w.Admit(context.Background(), a); err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		calls := len(first.requests()) - before
		seen := api.NestedStringMap(a.Object, "metadata", "annotations")["labels-seen"]
		wantCalls, wantSeen := 1, "0"
		if policy == "IfNeeded" {
			wantCalls, wantSeen = 2, "1" // called again after second added its label
		}
		if calls != wantCalls || seen != wantSeen {
			t.Errorf("%s: first called %d times (want %d), saw %q labels last (want %q)", policy, calls, wantCalls, seen, wantSeen)
		}
	}
}
