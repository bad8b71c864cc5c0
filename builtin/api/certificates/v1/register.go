package v1

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/patch"
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
		// As in Kubernetes, /status may change labels and annotations too.
		StatusUpdatesMetadata: true,
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

func (approvalSubresource) Verbs() []string { return []string{"get", "patch", "update"} }

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
	case http.MethodPatch:
		obj, err := patchApproval(r, p)
		if err != nil {
			return err
		}
		out = obj
	default:
		return apierrors.NewMethodNotSupported(api.GroupResource{Group: GroupVersion.Group, Resource: "certificatesigningrequests/approval"}, strings.ToLower(r.Method))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(out)
}

// patchApproval applies a merge or strategic merge patch to the
// CertificateSigningRequest and keeps, as Kubernetes' approval strategy
// does, only its status.conditions and its labels and annotations.
func patchApproval(r *http.Request, p registry.Parent) (map[string]any, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	apply := func(doc []byte) ([]byte, error) { return patch.MergePatch(doc, body) }
	switch media {
	case "application/merge-patch+json":
	case "application/strategic-merge-patch+json":
		apply = func(doc []byte) ([]byte, error) {
			return patch.StrategicMergePatch(doc, body, reflect.TypeFor[CertificateSigningRequest]())
		}
	default:
		return nil, apierrors.NewUnsupportedMediaType(media, []string{"application/merge-patch+json", "application/strategic-merge-patch+json"})
	}
	return p.Update(r.Context(), func(obj map[string]any) error {
		doc, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		patched, err := apply(doc)
		if err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		var got map[string]any
		if err := json.Unmarshal(patched, &got); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		conds := api.NestedSlice(got, "status", "conditions")
		if conds == nil {
			conds = []any{}
		}
		api.SetNestedField(obj, conds, "status", "conditions")
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := api.NestedMap(got, "metadata")[k]; ok && v != nil {
				api.SetNestedField(obj, v, "metadata", k)
			} else {
				delete(api.NestedMap(obj, "metadata"), k)
			}
		}
		return nil
	})
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
