package v1

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the certificates.k8s.io/v1 resources.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion:      GroupVersion,
		Resource:          "certificatesigningrequests",
		Kind:              "CertificateSigningRequest",
		ListKind:          "CertificateSigningRequestList",
		Singular:          "certificatesigningrequest",
		ShortNames:        []string{"csr"},
		StatusSubresource: true,
		Strategy: registry.Typed[CertificateSigningRequest]{
			Validate:           ValidateCertificateSigningRequest,
			ValidateUpdateFunc: ValidateCertificateSigningRequestUpdate,
		},
		Type: reflect.TypeFor[CertificateSigningRequest](),
		// kubectl and the upstream CSR specs select by signer.
		SelectableFields: func(obj map[string]any) map[string]string {
			return map[string]string{"spec.signerName": api.NestedString(obj, "spec", "signerName")}
		},
		Printer:      csrPrinter(),
		Subresources: map[string]registry.Subresource{"approval": approvalSubresource{}},
	}}
}

// approvalSubresource serves PUT certificatesigningrequests/NAME/approval:
// only status.conditions of the body are taken (kubectl certificate approve
// and deny use it).
type approvalSubresource struct{}

var _ registry.Subresource = approvalSubresource{}

func (approvalSubresource) Verbs() []string { return []string{"get", "update"} }

func (approvalSubresource) Kind() api.GroupVersionKind {
	return GroupVersion.WithKind("CertificateSigningRequest")
}

func (approvalSubresource) Serve(w http.ResponseWriter, r *http.Request, p registry.Parent) error {
	var out map[string]any
	switch r.Method {
	case http.MethodGet:
		obj, err := p.Get(r.Context())
		if err != nil {
			return err
		}
		out = obj
	case http.MethodPut:
		body, err := p.DecodeBody(r, reflect.TypeFor[CertificateSigningRequest]())
		if err != nil {
			return err
		}
		if n := api.NestedString(body, "metadata", "name"); n != "" && n != p.Name() {
			return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, p.Name()))
		}
		conds := api.NestedSlice(body, "status", "conditions")
		out, err = p.Update(r.Context(), func(obj map[string]any) error {
			if conds == nil {
				api.SetNestedField(obj, []any{}, "status", "conditions")
				return nil
			}
			api.SetNestedField(obj, conds, "status", "conditions")
			return nil
		})
		if err != nil {
			return err
		}
	default:
		return apierrors.NewMethodNotSupported(api.GroupResource{Group: GroupVersion.Group, Resource: "certificatesigningrequests/approval"}, strings.ToLower(r.Method))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(out)
}

func csrPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
			{Name: "SignerName", Type: "string", Description: "Requested signer for the request."},
			{Name: "Requestor", Type: "string", Description: "Information about the requesting user."},
			{Name: "RequestedDuration", Type: "string", Description: "Requested certificate duration."},
			{Name: "Condition", Type: "string", Description: "The request's conditions."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			c, err := registry.FromMap[CertificateSigningRequest](obj)
			if err != nil {
				return nil, fmt.Errorf("decode certificatesigningrequest: %w", err)
			}
			duration := "<none>"
			if c.Spec.ExpirationSeconds != nil {
				duration = (time.Duration(*c.Spec.ExpirationSeconds) * time.Second).String()
			}
			var conds []string
			for _, cond := range c.Status.Conditions {
				conds = append(conds, string(cond.Type))
			}
			if len(c.Status.Certificate) > 0 {
				conds = append(conds, "Issued")
			}
			state := strings.Join(conds, ",")
			if state == "" {
				state = "Pending"
			}
			return []any{c.Name, registry.Age(c.CreationTimestamp, now), c.Spec.SignerName, c.Spec.Username, duration, state}, nil
		},
	}
}
