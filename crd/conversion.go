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
	"net"
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

// Batches: a list (or a watch's initial events) in a version other than the
// storage version converts all its objects with one ConversionReview, as
// Kubernetes does. Very large batches are split so that one review carries at
// most MaxConversionReviewObjects objects and, unless a single object is larger,
// about MaxConversionReviewBytes of objects; the webhook is then called once per
// chunk, in order.
const (
	MaxConversionReviewObjects = 1000
	MaxConversionReviewBytes   = 3 << 20
)

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
	conv, _ := converters(c, nil)
	return conv
}

// converters returns the Convert and ConvertList functions of c's conversion
// strategy (registry.Resource), sharing one webhook client that connects
// with dial.
func converters(c *crdapi.CustomResourceDefinition, dial Dialer) (
	func(map[string]any, api.GroupVersion) (map[string]any, error),
	func([]map[string]any, api.GroupVersion) ([]map[string]any, error),
) {
	cv := c.Spec.Conversion
	if cv == nil || cv.Strategy != "Webhook" {
		return convertNone, convertNoneList
	}
	w := newWebhookConverter(c, dial)
	return w.convert, w.convertList
}

// Dialer connects the conversion webhooks' clients to the host:port of
// their URL; for a service reference that is NAME.NAMESPACE.svc:PORT, which
// it is to resolve to the Service's endpoints (builtin/serviceresolver). Nil
// dials the address as it is.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

func newWebhookConverter(c *crdapi.CustomResourceDefinition, dial Dialer) *webhookConverter {
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
		DialContext: dial,
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
	out, err := w.call([]map[string]any{obj}, to.String())
	if err != nil {
		return nil, fmt.Errorf("conversion webhook for %s, Kind=%s failed: %w", from, w.kind, err)
	}
	return out[0], nil
}

// convertList implements registry.Resource.ConvertList: the objects not yet in
// version to are sent in one ConversionReview (or a few, see
// MaxConversionReviewObjects), the others are returned as they are. A failure
// is reported like convert's, naming the version of the first object sent.
func (w *webhookConverter) convertList(objs []map[string]any, to api.GroupVersion) ([]map[string]any, error) {
	desired := to.String()
	out := make([]map[string]any, len(objs))
	var idx []int
	var in []map[string]any
	for i, o := range objs {
		if av, _ := o["apiVersion"].(string); av == desired {
			out[i] = o
			continue
		}
		idx = append(idx, i)
		in = append(in, o)
	}
	if len(in) == 0 {
		return out, nil
	}
	fail := func(o map[string]any, err error) error {
		from, _ := o["apiVersion"].(string)
		return fmt.Errorf("conversion webhook for %s, Kind=%s failed: %w", from, w.kind, err)
	}
	if w.err != nil {
		return nil, fail(in[0], w.err)
	}
	raw := make([]json.RawMessage, len(in))
	for i, o := range in {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, fail(o, fmt.Errorf("encode ConversionReview: %w", err))
		}
		raw[i] = b
	}
	for _, c := range chunks(raw, MaxConversionReviewObjects, MaxConversionReviewBytes) {
		conv, err := w.send(raw[c[0]:c[1]], in[c[0]:c[1]], desired)
		if err != nil {
			return nil, fail(in[c[0]], err)
		}
		for k, o := range conv {
			out[idx[c[0]+k]] = o
		}
	}
	return out, nil
}

// chunks splits raw into consecutive [from, to) ranges of at most maxObjects
// objects and, unless one object alone is larger, at most maxBytes bytes.
func chunks(raw []json.RawMessage, maxObjects, maxBytes int) [][2]int {
	var out [][2]int
	start, size := 0, 0
	for i, r := range raw {
		if i > start && (i-start >= maxObjects || size+len(r) > maxBytes) {
			out = append(out, [2]int{start, i})
			start, size = i, 0
		}
		size += len(r) + 1
	}
	return append(out, [2]int{start, len(raw)})
}

// call sends one ConversionReview with objs and returns the converted objects,
// validated by checkResponse.
func (w *webhookConverter) call(objs []map[string]any, desired string) ([]map[string]any, error) {
	if w.err != nil {
		return nil, w.err
	}
	raw := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode ConversionReview: %w", err)
		}
		raw[i] = b
	}
	return w.send(raw, objs, desired)
}

// send posts a ConversionReview whose request.objects are raw (the encoding of
// objs) and checks the answer.
func (w *webhookConverter) send(raw []json.RawMessage, objs []map[string]any, desired string) ([]map[string]any, error) {
	uid := uuid.NewString()
	body, err := reviewBody(uid, desired, raw)
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
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20+int64(2*len(body))))
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
	return checkResponse(&review, uid, objs, desired)
}

// reviewBody encodes a ConversionReview request from already encoded objects.
func reviewBody(uid, desired string, raw []json.RawMessage) ([]byte, error) {
	return json.Marshal(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Request    struct {
			UID               string            `json:"uid"`
			DesiredAPIVersion string            `json:"desiredAPIVersion"`
			Objects           []json.RawMessage `json:"objects"`
		} `json:"request"`
	}{
		APIVersion: ConversionReviewAPIVersion, Kind: "ConversionReview",
		Request: struct {
			UID               string            `json:"uid"`
			DesiredAPIVersion string            `json:"desiredAPIVersion"`
			Objects           []json.RawMessage `json:"objects"`
		}{UID: uid, DesiredAPIVersion: desired, Objects: raw},
	})
}

// checkResponse validates a webhook's answer to a review of ins like Kubernetes
// does: one converted object per object sent, in order, each in the desired
// version, of the same kind and with the same metadata.name, namespace and uid
// (when the webhook sends them back).
// It returns the converted objects with the original metadata (a webhook may
// change only labels and annotations).
func checkResponse(review *ConversionReview, uid string, ins []map[string]any, desired string) ([]map[string]any, error) {
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
	if len(r.ConvertedObjects) != len(ins) {
		return nil, fmt.Errorf("expected %d converted objects, got %d", len(ins), len(r.ConvertedObjects))
	}
	for i, out := range r.ConvertedObjects {
		if err := checkConverted(out, ins[i], desired); err != nil {
			return nil, fmt.Errorf("invalid converted object at index %d: %w", i, err)
		}
	}
	return r.ConvertedObjects, nil
}

// checkConverted validates one converted object against the object sent and
// restores its metadata except labels and annotations.
func checkConverted(out, in map[string]any, desired string) error {
	if av, _ := out["apiVersion"].(string); av != desired {
		return fmt.Errorf("invalid apiVersion %q, expected %q", av, desired)
	}
	if k, _ := out["kind"].(string); k != in["kind"] {
		return fmt.Errorf("invalid kind %q, expected %q", k, in["kind"])
	}
	om, _ := out["metadata"].(map[string]any)
	meta := api.DeepCopyJSON(metaOf(in))
	// A changed name, namespace or uid is refused (it would also catch a
	// webhook answering a batch out of order); one left out is restored below,
	// as is the rest of the metadata.
	for _, f := range []string{"name", "namespace", "uid"} {
		want, _ := meta[f].(string)
		if got, _ := om[f].(string); got != "" && got != want {
			return fmt.Errorf("invalid metadata.%s %q, expected %q: it must not change", f, got, want)
		}
	}
	if om != nil {
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := om[k]; ok {
				meta[k] = v
			} else {
				delete(meta, k)
			}
		}
	}
	out["metadata"] = meta
	return nil
}
