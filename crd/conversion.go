package crd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/review"
)

// The ConversionReview wire types (framework/api/review).
type (
	ConversionReview   = review.ConversionReview
	ConversionRequest  = review.ConversionRequest
	ConversionResponse = review.ConversionResponse
)

// ConversionReviewAPIVersion is the only ConversionReview version Converge
// speaks (Kubernetes also knows v1beta1).
const ConversionReviewAPIVersion = review.ConversionAPIVersion

// DefaultConversionTimeout bounds one call of a conversion webhook (as in
// Kubernetes).
const DefaultConversionTimeout = 30 * time.Second

// webhookConverter converts custom resources between versions by calling the
// CRD's conversion webhook.
type webhookConverter struct {
	group, kind string
	url         string
	client      *http.Client
	timeout     time.Duration
	err         error // a configuration error, reported by every conversion
}

// converter returns the Convert function of c's conversion strategy: None
// rewrites apiVersion, Webhook calls the webhook.
func converter(c *crdapi.CustomResourceDefinition) func(map[string]any, api.GroupVersion) (map[string]any, error) {
	cv := c.Spec.Conversion
	if cv == nil || cv.Strategy != "Webhook" {
		return convertNone
	}
	return newWebhookConverter(c).convert
}

func newWebhookConverter(c *crdapi.CustomResourceDefinition) *webhookConverter {
	w := &webhookConverter{group: c.Spec.Group, kind: c.Spec.Names.Kind, timeout: DefaultConversionTimeout}
	wc := c.Spec.Conversion.Webhook
	if wc == nil || wc.ClientConfig == nil {
		w.err = errors.New("spec.conversion.webhook.clientConfig is not set")
		return w
	}
	if vs := wc.ConversionReviewVersions; len(vs) > 0 && !slices.Contains(vs, "v1") {
		w.err = fmt.Errorf("none of the conversionReviewVersions %v is supported (Converge speaks v1)", vs)
		return w
	}
	w.url, w.err = clientURL(wc.ClientConfig)
	if w.err != nil {
		return w
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := wc.ClientConfig.CABundle; len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			w.err = errors.New("caBundle holds no PEM certificate")
			return w
		}
		tc.RootCAs = pool
	}
	w.client = &http.Client{Transport: &http.Transport{
		TLSClientConfig: tc, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
	}}
	return w
}

// clientURL is the webhook's URL: clientConfig.url, or
// https://NAME.NAMESPACE.svc:PORT/PATH for a service reference.
func clientURL(cc *crdapi.WebhookClientConfig) (string, error) {
	if cc.URL != nil && *cc.URL != "" {
		if !strings.HasPrefix(*cc.URL, "https://") {
			return "", fmt.Errorf("clientConfig.url %q: only https is supported", *cc.URL)
		}
		return *cc.URL, nil
	}
	s := cc.Service
	if s == nil || s.Name == "" || s.Namespace == "" {
		return "", errors.New("clientConfig needs a url or a service with a name and a namespace")
	}
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	path := ""
	if s.Path != nil {
		path = *s.Path
	}
	return fmt.Sprintf("https://%s.%s.svc:%d%s", s.Name, s.Namespace, port, path), nil
}

// convert implements registry.Resource.Convert.
func (w *webhookConverter) convert(obj map[string]any, to api.GroupVersion) (map[string]any, error) {
	from, _ := obj["apiVersion"].(string)
	if from == to.String() {
		return obj, nil
	}
	out, err := w.call(obj, to.String())
	if err != nil {
		return nil, fmt.Errorf("conversion webhook for %s, Kind=%s failed: %w", from, w.kind, err)
	}
	return out, nil
}

func (w *webhookConverter) call(obj map[string]any, desired string) (map[string]any, error) {
	if w.err != nil {
		return nil, w.err
	}
	uid := uuid.NewString()
	body, err := json.Marshal(ConversionReview{
		APIVersion: ConversionReviewAPIVersion, Kind: "ConversionReview",
		Request: &ConversionRequest{UID: uid, DesiredAPIVersion: desired, Objects: []map[string]any{obj}},
	})
	if err != nil {
		return nil, fmt.Errorf("encode ConversionReview: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("webhook returned HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(rb)))
	}
	var review ConversionReview
	if err := json.Unmarshal(rb, &review); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	return checkResponse(&review, uid, obj, desired)
}

// checkResponse validates a webhook's answer like Kubernetes does and returns
// the converted object with the original metadata (a webhook may change only
// labels and annotations).
func checkResponse(review *ConversionReview, uid string, in map[string]any, desired string) (map[string]any, error) {
	if review.APIVersion != ConversionReviewAPIVersion || review.Kind != "ConversionReview" {
		return nil, fmt.Errorf("expected webhook response of %s, Kind=ConversionReview, got %s, Kind=%s", ConversionReviewAPIVersion, review.APIVersion, review.Kind)
	}
	r := review.Response
	if r == nil {
		return nil, errors.New("no response provided")
	}
	if r.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.UID)
	}
	if r.Result.Status != api.StatusSuccess {
		msg := r.Result.Message
		if msg == "" {
			msg = "the webhook reported a failure without a message"
		}
		return nil, errors.New(msg)
	}
	if len(r.ConvertedObjects) != 1 {
		return nil, fmt.Errorf("expected 1 converted objects, got %d", len(r.ConvertedObjects))
	}
	out := r.ConvertedObjects[0]
	if av, _ := out["apiVersion"].(string); av != desired {
		return nil, fmt.Errorf("invalid converted object at index 0: invalid apiVersion %q, expected %q", av, desired)
	}
	if k, _ := out["kind"].(string); k != in["kind"] {
		return nil, fmt.Errorf("invalid converted object at index 0: invalid kind %q, expected %q", k, in["kind"])
	}
	meta := api.DeepCopyJSON(metaOf(in))
	if om, ok := out["metadata"].(map[string]any); ok {
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := om[k]; ok {
				meta[k] = v
			} else {
				delete(meta, k)
			}
		}
	}
	out["metadata"] = meta
	return out, nil
}
