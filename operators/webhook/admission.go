package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// AdmissionReviewAPIVersion is the AdmissionReview version served.
const AdmissionReviewAPIVersion = "admission.k8s.io/v1"

// AdmissionReview is admission.k8s.io/v1 AdmissionReview.
type AdmissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *AdmissionRequest  `json:"request,omitempty"`
	Response   *AdmissionResponse `json:"response,omitempty"`
}

// Operation is CREATE, UPDATE, DELETE or CONNECT.
type Operation string

// Operations.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// AdmissionRequest is the request half of an AdmissionReview. Object and
// OldObject are kept as raw JSON so typed handlers decode them once.
type AdmissionRequest struct {
	UID                string                `json:"uid"`
	Kind               GroupVersionKind      `json:"kind"`
	Resource           GroupVersionResource  `json:"resource"`
	SubResource        string                `json:"subResource,omitempty"`
	RequestKind        *GroupVersionKind     `json:"requestKind,omitempty"`
	RequestResource    *GroupVersionResource `json:"requestResource,omitempty"`
	RequestSubResource string                `json:"requestSubResource,omitempty"`
	Name               string                `json:"name,omitempty"`
	Namespace          string                `json:"namespace,omitempty"`
	Operation          Operation             `json:"operation"`
	UserInfo           UserInfo              `json:"userInfo"`
	Object             json.RawMessage       `json:"object,omitempty"`
	OldObject          json.RawMessage       `json:"oldObject,omitempty"`
	DryRun             *bool                 `json:"dryRun,omitempty"`
	Options            json.RawMessage       `json:"options,omitempty"`
}

// UserInfo is the user making the request.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// The AdmissionReview types shared with the API server's webhook client
// (framework/apiserver/admission).
type (
	GroupVersionKind     = admission.GroupVersionKind
	GroupVersionResource = admission.GroupVersionResource
	AdmissionResponse    = admission.AdmissionResponse
)

// Warnings are returned to the client (kubectl prints them as "Warning: ...").
type Warnings []string

// AdmissionHandler answers one AdmissionRequest: the raw form of a webhook,
// for handlers that need more than the typed Validator and Defaulter give.
type AdmissionHandler interface {
	Handle(ctx context.Context, req *AdmissionRequest) *AdmissionResponse
}

// AdmissionFunc adapts a function to an AdmissionHandler.
type AdmissionFunc func(ctx context.Context, req *AdmissionRequest) *AdmissionResponse

// Handle calls f.
func (f AdmissionFunc) Handle(ctx context.Context, req *AdmissionRequest) *AdmissionResponse {
	return f(ctx, req)
}

// Allowed admits the request, with warnings.
func Allowed(warnings ...string) *AdmissionResponse {
	return &AdmissionResponse{Allowed: true, Warnings: warnings}
}

// Denied refuses the request with err's message: a *errors.StatusError keeps
// its status (code, reason, details); any other error is 403 Forbidden. The
// API server reports it as `admission webhook "NAME" denied the request: MSG`.
func Denied(err error, warnings ...string) *AdmissionResponse {
	st := api.Status{Status: api.StatusFailure, Code: http.StatusForbidden, Reason: "Forbidden", Message: err.Error()}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		st = se.Status()
	}
	return &AdmissionResponse{Allowed: false, Result: &st, Warnings: warnings}
}

// Errored refuses the request because the webhook itself failed (bad input,
// a decoding error): code is an HTTP status (400, 500).
func Errored(code int32, err error) *AdmissionResponse {
	return &AdmissionResponse{Allowed: false, Result: &api.Status{Status: api.StatusFailure, Code: code, Message: err.Error()}}
}

// maxBody bounds request bodies (the API server's own limit is 3 MiB).
const maxBody = 8 << 20

// ServeAdmission serves h as an HTTP endpoint: it decodes the AdmissionReview,
// calls h and writes the response with the request's uid.
func ServeAdmission(h AdmissionHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review AdmissionReview
		if err := decodeReview(w, r, &review); err != nil {
			return
		}
		if review.Request == nil {
			http.Error(w, "AdmissionReview has no request", http.StatusBadRequest)
			return
		}
		resp := h.Handle(r.Context(), review.Request)
		if resp == nil {
			resp = Errored(http.StatusInternalServerError, errors.New("the webhook returned no response"))
		}
		resp.UID = review.Request.UID
		writeJSON(w, AdmissionReview{APIVersion: AdmissionReviewAPIVersion, Kind: "AdmissionReview", Response: resp})
	})
}

// decodeReview reads a POSTed JSON review; it answers the client itself on error.
func decodeReview(w http.ResponseWriter, r *http.Request, into any) error {
	if r.Method != http.MethodPost {
		http.Error(w, "only POST is served", http.StatusMethodNotAllowed)
		return errors.New("method")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, fmt.Sprintf("read request: %v", err), http.StatusBadRequest)
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		http.Error(w, fmt.Sprintf("decode review: %v", err), http.StatusBadRequest)
		return err
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprintf("encode response: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
