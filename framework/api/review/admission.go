package review

import (
	"encoding/json"

	"github.com/converge-dev/converge/framework/api"
)

// AdmissionAPIVersion is the AdmissionReview version sent and served.
const AdmissionAPIVersion = "admission.k8s.io/v1"

// AdmissionKind is the kind of an AdmissionReview.
const AdmissionKind = "AdmissionReview"

// AdmissionReview is admission.k8s.io/v1 AdmissionReview, the body an
// admission webhook receives (Request) and answers (Response).
type AdmissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *AdmissionRequest  `json:"request,omitempty"`
	Response   *AdmissionResponse `json:"response,omitempty"`
}

// Operation is what the request does: CREATE, UPDATE, DELETE or CONNECT.
type Operation string

// Operations.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// AdmissionRequest is the request half of an AdmissionReview. Object,
// OldObject and Options are kept as raw JSON: the API server encodes them
// once, and a webhook decodes them once into the type it wants.
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

// UserInfo is the user making the request (authentication.k8s.io/v1 UserInfo).
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// GroupVersionKind is metav1.GroupVersionKind as AdmissionReview encodes it.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// GroupVersionResource is metav1.GroupVersionResource as AdmissionReview encodes it.
type GroupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// AdmissionResponse is the response half of an AdmissionReview. Result
// explains a refusal; Patch, with PatchType "JSONPatch", is a mutating
// webhook's RFC 6902 patch of the object.
type AdmissionResponse struct {
	UID              string            `json:"uid"`
	Allowed          bool              `json:"allowed"`
	Result           *api.Status       `json:"status,omitempty"`
	Patch            []byte            `json:"patch,omitempty"`
	PatchType        *string           `json:"patchType,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
}
