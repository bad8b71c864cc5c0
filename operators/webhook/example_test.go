package webhook_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/webhook"
)

// Gadget is the Go type of a custom resource (example.com/v1 Gadget).
type Gadget struct {
	Spec struct {
		Size  int64  `json:"size"`
		Color string `json:"color,omitempty"`
	} `json:"spec"`
}

type gadgetWebhooks struct{}

func (gadgetWebhooks) ValidateCreate(_ context.Context, g *Gadget) (webhook.Warnings, error) {
	if g.Spec.Size < 0 {
		return nil, errors.New("spec.size must not be negative")
	}
	return nil, nil
}

func (w gadgetWebhooks) ValidateUpdate(ctx context.Context, _, g *Gadget) (webhook.Warnings, error) {
	return w.ValidateCreate(ctx, g)
}

func (gadgetWebhooks) ValidateDelete(context.Context, *Gadget) (webhook.Warnings, error) {
	return nil, nil
}

func (gadgetWebhooks) Default(_ context.Context, g *Gadget) error {
	if g.Spec.Color == "" {
		g.Spec.Color = "grey"
	}
	return nil
}

// An operator's Webhooks method: a validating and a defaulting webhook for
// Gadgets, and the conversion of its CRD between v1 and v2 through the hub v2.
func Example() {
	hooks := []operators.Webhook{
		webhook.Validating[Gadget]("/validate-gadgets", gadgetWebhooks{},
			webhook.Rule("example.com", "v1", "gadgets", webhook.Create, webhook.Update)),
		webhook.Mutating[Gadget]("/default-gadgets", gadgetWebhooks{}, webhook.Rule("example.com", "v1", "gadgets")),
		webhook.NewConversion("/convert", "gadgets.example.com", &webhook.Converter{
			Hub:     "v2",
			ToHub:   map[string]webhook.ConvertFunc{"v1": rename("size", "length")}, // v2 renamed size to length
			FromHub: map[string]webhook.ConvertFunc{"v1": rename("length", "size")},
		}),
	}
	for _, h := range hooks {
		fmt.Println(h.Type, h.Path)
	}
	// Output:
	// Validating /validate-gadgets
	// Mutating /default-gadgets
	// Conversion /convert
}

func rename(from, to string) webhook.ConvertFunc {
	return func(obj map[string]any) error {
		spec, _ := obj["spec"].(map[string]any)
		if v, ok := spec[from]; ok {
			spec[to] = v
			delete(spec, from)
		}
		return nil
	}
}
