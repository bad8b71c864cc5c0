package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

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
		conversionReviews.wrap(webhook.NewConversion("/convert", "widgets.example.com", conv)),
	}
}

// conversionReviews records the requests of every ConversionReview the widgets'
// conversion webhook receives.
var conversionReviews reviewRecorder

type reviewRecorder struct {
	mu   sync.Mutex
	reqs []webhook.ConversionRequest
}

func (r *reviewRecorder) wrap(w operators.Webhook) operators.Webhook {
	next := w.Handler
	w.Handler = http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		var review webhook.ConversionReview
		if json.Unmarshal(body, &review) == nil && review.Request != nil {
			r.mu.Lock()
			r.reqs = append(r.reqs, *review.Request)
			r.mu.Unlock()
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(rw, req)
	})
	return w
}

// count is the number of reviews received so far.
func (r *reviewRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// since returns the reviews received after the first n that convert to desired
// an object whose name has the given prefix.
func (r *reviewRecorder) since(n int, desired, prefix string) []webhook.ConversionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []webhook.ConversionRequest
	for _, req := range r.reqs[n:] {
		if req.DesiredAPIVersion != desired {
			continue
		}
		for _, o := range req.Objects {
			if strings.HasPrefix(api.NestedString(o, "metadata", "name"), prefix) {
				out = append(out, req)
				break
			}
		}
	}
	return out
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
