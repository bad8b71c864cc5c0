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
	"github.com/converge-dev/converge/framework/api/review"
)

// AdmissionReviewAPIVersion is the AdmissionReview version served.
const AdmissionReviewAPIVersion = review.AdmissionAPIVersion

// The AdmissionReview wire types, shared with the API server's webhook client
// (package framework/api/review). AdmissionRequest keeps Object, OldObject
// and Options as raw JSON so typed handlers decode them once.
type (
	AdmissionReview      = review.AdmissionReview
	AdmissionRequest     = review.AdmissionRequest
	AdmissionResponse    = review.AdmissionResponse
	UserInfo             = review.UserInfo
	GroupVersionKind     = review.GroupVersionKind
	GroupVersionResource = review.GroupVersionResource
)

// Operation is CREATE, UPDATE, DELETE or CONNECT.
type Operation = review.Operation

// Operations.
const (
	Create  = review.Create
	Update  = review.Update
	Delete  = review.Delete
	Connect = review.Connect
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
		var in AdmissionReview
		if err := decodeReview(w, r, &in); err != nil {
			return
		}
		if in.Request == nil {
			http.Error(w, "AdmissionReview has no request", http.StatusBadRequest)
			return
		}
		resp := h.Handle(r.Context(), in.Request)
		if resp == nil {
			resp = Errored(http.StatusInternalServerError, errors.New("the webhook returned no response"))
		}
		resp.UID = in.Request.UID
		writeJSON(w, AdmissionReview{APIVersion: review.AdmissionAPIVersion, Kind: review.AdmissionKind, Response: resp})
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
