package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/review"
	"github.com/converge-dev/converge/operators"
)

// ConversionReviewAPIVersion is the ConversionReview version served.
const ConversionReviewAPIVersion = review.ConversionAPIVersion

// The ConversionReview wire types (framework/api/review).
type (
	ConversionReview   = review.ConversionReview
	ConversionRequest  = review.ConversionRequest
	ConversionResponse = review.ConversionResponse
)

// ConvertFunc converts obj, in place, from one version of a kind to another.
// It changes the fields that differ (renames, moves, defaults); the SDK sets
// apiVersion and keeps metadata. obj is decoded by encoding/json: numbers are
// float64 (Typed converts through Go types instead).
type ConvertFunc func(obj map[string]any) error

// VersionPair names a direct conversion (versions without the group: "v1").
type VersionPair struct{ From, To string }

// Converter converts the versions of one kind, either through a hub version
// (hub and spoke: every version converts to and from Hub, so N versions need
// 2(N-1) functions) or with one function per version pair, or both (a pair's
// function is preferred). A version without a function converts by copying
// the fields unchanged, as the None strategy does.
type Converter struct {
	// Hub is the version all others convert through ("v2").
	Hub string
	// ToHub[v] converts an object of version v to Hub; FromHub[v] converts an
	// object of Hub to version v.
	ToHub, FromHub map[string]ConvertFunc
	// Pairs are direct conversions.
	Pairs map[VersionPair]ConvertFunc
}

// Convert converts obj, in place, to apiVersion to ("example.com/v1").
func (c *Converter) Convert(obj map[string]any, to string) error {
	from, _ := obj["apiVersion"].(string)
	fg, fv := splitAPIVersion(from)
	tg, tv := splitAPIVersion(to)
	if fg != tg {
		return fmt.Errorf("cannot convert %s to %s: the groups differ", from, to)
	}
	if fv == tv {
		return nil
	}
	if f, ok := c.Pairs[VersionPair{From: fv, To: tv}]; ok {
		if err := f(obj); err != nil {
			return fmt.Errorf("convert %s to %s: %w", fv, tv, err)
		}
		obj["apiVersion"] = to
		return nil
	}
	if c.Hub != "" && fv != c.Hub {
		if f := c.ToHub[fv]; f != nil {
			if err := f(obj); err != nil {
				return fmt.Errorf("convert %s to %s: %w", fv, c.Hub, err)
			}
		}
	}
	if c.Hub != "" && tv != c.Hub {
		if f := c.FromHub[tv]; f != nil {
			if err := f(obj); err != nil {
				return fmt.Errorf("convert %s to %s: %w", c.Hub, tv, err)
			}
		}
	}
	obj["apiVersion"] = to
	return nil
}

func splitAPIVersion(av string) (group, version string) {
	if g, v, ok := strings.Cut(av, "/"); ok {
		return g, v
	}
	return "", av
}

// ConversionHandler serves c as a conversion webhook: each object of a
// ConversionReview is converted to the desired version; the first failure
// fails the review with its message (the API server then answers 500
// "conversion webhook for ... failed: MESSAGE").
func ConversionHandler(c *Converter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review ConversionReview
		if err := decodeReview(w, r, &review); err != nil {
			return
		}
		if review.Request == nil {
			http.Error(w, "ConversionReview has no request", http.StatusBadRequest)
			return
		}
		req := review.Request
		resp := &ConversionResponse{UID: req.UID, ConvertedObjects: []map[string]any{}}
		err := func() error {
			for i, obj := range req.Objects {
				out := api.DeepCopyJSON(obj)
				if err := c.Convert(out, req.DesiredAPIVersion); err != nil {
					return fmt.Errorf("object %d (%s): %w", i, api.NestedString(obj, "metadata", "name"), err)
				}
				resp.ConvertedObjects = append(resp.ConvertedObjects, out)
			}
			return nil
		}()
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = api.Status{Status: api.StatusFailure, Message: err.Error()}
		} else {
			resp.Result = api.Status{Status: api.StatusSuccess}
		}
		writeJSON(w, ConversionReview{APIVersion: ConversionReviewAPIVersion, Kind: "ConversionReview", Response: resp})
	})
}

// NewConversion declares the conversion webhook of the CRD named crd
// ("widgets.example.com"), served at path.
func NewConversion(path, crd string, c *Converter) operators.Webhook {
	return operators.Webhook{Type: operators.Conversion, Path: path, Handler: ConversionHandler(c), CRD: crd}
}

// Typed adapts a conversion between Go types (the kind's type in two
// versions) to a ConvertFunc: obj is decoded into From, f fills To, and To
// replaces obj's content.
func Typed[From, To any](f func(from *From, to *To) error) ConvertFunc {
	return func(obj map[string]any) error {
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		from, to := new(From), new(To)
		if err := json.Unmarshal(b, from); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		if err := f(from, to); err != nil {
			return err
		}
		if b, err = json.Marshal(to); err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		m, err := api.DecodeMap(b)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		if m == nil {
			return errors.New("the conversion produced no object")
		}
		clear(obj)
		maps.Copy(obj, m)
		return nil
	}
}
