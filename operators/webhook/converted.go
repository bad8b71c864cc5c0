package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/converge-dev/converge/framework/patch"
)

// Converted serves h in one version of a kind (apiVersion, "example.com/v2")
// whatever version a request was made in, converting with c (the operator's
// Converter): the objects of a request in another version are converted to
// apiVersion before h sees them, and a patch h returns is applied in
// apiVersion, converted back and answered as a patch of the request's object.
// Register such a webhook for every version (webhook.Rule(group, "*", ...)):
// the configurations Server writes have matchPolicy Exact, so the API server
// calls a webhook only for the versions its rules name, and the handler
// converts (Kubernetes' default matchPolicy Equivalent would make the API
// server convert, and fail writes that do not fit in the other version).
func Converted(apiVersion string, c *Converter, h AdmissionHandler) AdmissionHandler {
	group, version := splitAPIVersion(apiVersion)
	return AdmissionFunc(func(ctx context.Context, req *AdmissionRequest) *AdmissionResponse {
		reqVersion := req.Kind.Version
		if req.Kind.Group != "" {
			reqVersion = req.Kind.Group + "/" + reqVersion
		}
		if reqVersion == apiVersion {
			return h.Handle(ctx, req)
		}
		in := *req
		var err error
		if in.Object, err = convertRaw(c, req.Object, apiVersion); err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("convert object to %s: %w", apiVersion, err))
		}
		if in.OldObject, err = convertRaw(c, req.OldObject, apiVersion); err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("convert oldObject to %s: %w", apiVersion, err))
		}
		in.Kind = GroupVersionKind{Group: group, Version: version, Kind: req.Kind.Kind}
		in.Resource.Version = version
		resp := h.Handle(ctx, &in)
		if resp == nil || len(resp.Patch) == 0 {
			return resp
		}
		patched, err := patch.JSONPatch(in.Object, resp.Patch)
		if err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("apply the webhook's patch in %s: %w", apiVersion, err))
		}
		back, err := convertRaw(c, patched, reqVersion)
		if err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("convert the patched object back to %s: %w", reqVersion, err))
		}
		out := PatchResponse(req.Object, back)
		out.Warnings, out.AuditAnnotations = resp.Warnings, resp.AuditAnnotations
		return out
	})
}

// convertRaw converts a JSON object to apiVersion (absent objects stay absent).
func convertRaw(c *Converter, raw json.RawMessage, apiVersion string) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return raw, nil
	}
	var m map[string]any // as ConversionHandler decodes: numbers are float64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if err := c.Convert(m, apiVersion); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}
