package webhook_test

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/webhook"
)

// widgetCRD has two versions: v1 (spec.size) and v2, the storage version
// (spec.replicas: the same field renamed). It says nothing about conversion:
// the SDK points it at the operator's conversion webhook.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
  - name: v2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              color: {type: string}
`

// Widget is example.com/v2 Widget.
type Widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           WidgetSpec `json:"spec"`
}

// WidgetSpec is the v2 spec.
type WidgetSpec struct {
	Replicas int64  `json:"replicas,omitempty"`
	Color    string `json:"color,omitempty"`
}

// widgetOperator declares the three kinds of webhooks for Widgets.
type widgetOperator struct{}

func (widgetOperator) Name() string                 { return "widgets" }
func (widgetOperator) CRDs() [][]byte               { return [][]byte{[]byte(widgetCRD)} }
func (widgetOperator) Setup(*manager.Manager) error { return nil }

func (widgetOperator) Webhooks() []operators.Webhook {
	rename := func(from, to string, limit int64) webhook.ConvertFunc {
		return func(obj map[string]any) error {
			spec, _ := obj["spec"].(map[string]any)
			v, ok := spec[from]
			if !ok {
				return nil
			}
			if n, _ := v.(float64); limit > 0 && int64(n) > limit {
				return fmt.Errorf("%s %d does not fit in v1 (at most %d)", from, int64(n), limit)
			}
			spec[to] = v
			delete(spec, from)
			return nil
		}
	}
	conv := &webhook.Converter{
		Hub:     "v2",
		ToHub:   map[string]webhook.ConvertFunc{"v1": rename("size", "replicas", 0)},
		FromHub: map[string]webhook.ConvertFunc{"v1": rename("replicas", "size", 1000)},
	}
	return []operators.Webhook{
		// Typed webhooks for requests made through v2 ...
		webhook.Validating[Widget]("/validate-widgets", widgetValidator{}, webhook.Rule("example.com", "v2", "widgets",
			webhook.Create, webhook.Update, webhook.Delete)),
		webhook.Mutating[Widget]("/default-widgets", widgetDefaulter{}, webhook.Rule("example.com", "v2", "widgets")),
		// ... and the same ones for requests made through v1, converted to v2.
		webhook.Raw(operators.Validating, "/validate-widgets-v1",
			webhook.Converted("example.com/v2", conv, webhook.ValidatingAdmission[Widget](widgetValidator{})),
			webhook.Rule("example.com", "v1", "widgets", webhook.Create, webhook.Update, webhook.Delete)),
		webhook.Raw(operators.Mutating, "/default-widgets-v1",
			webhook.Converted("example.com/v2", conv, webhook.MutatingAdmission[Widget](widgetDefaulter{})),
			webhook.Rule("example.com", "v1", "widgets")),
		webhook.NewConversion("/convert", "widgets.example.com", conv),
	}
}

type widgetValidator struct{}

func (widgetValidator) check(w *Widget) (webhook.Warnings, error) {
	var warnings webhook.Warnings
	if w.Spec.Replicas > 10 {
		warnings = append(warnings, "more than 10 replicas is expensive")
	}
	if w.Spec.Color == "red" {
		return warnings, fmt.Errorf("red widgets are not allowed")
	}
	return warnings, nil
}

func (v widgetValidator) ValidateCreate(_ context.Context, w *Widget) (webhook.Warnings, error) {
	return v.check(w)
}

func (v widgetValidator) ValidateUpdate(_ context.Context, _, w *Widget) (webhook.Warnings, error) {
	return v.check(w)
}

func (widgetValidator) ValidateDelete(_ context.Context, w *Widget) (webhook.Warnings, error) {
	if w.Labels["protected"] == "true" {
		return nil, fmt.Errorf("widget %s is protected", w.Name)
	}
	return nil, nil
}

type widgetDefaulter struct{}

func (widgetDefaulter) Default(_ context.Context, w *Widget) error {
	if w.Spec.Color == "" {
		w.Spec.Color = "blue"
	}
	return nil
}
