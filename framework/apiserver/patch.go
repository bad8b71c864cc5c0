package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/fieldmanager"
	"github.com/converge-dev/converge/framework/patch"
)

const (
	mediaJSONPatch      = "application/json-patch+json"
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaApplyPatch     = "application/apply-patch+yaml"
)

// patchTypes returns the patch media types res accepts.
func patchTypes(q *request) []string {
	if q.res.Type == nil {
		return []string{mediaJSONPatch, mediaMergePatch, mediaApplyPatch}
	}
	return []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatch}
}

// applyPatch applies a patch body of the request's patch type to cur.
func applyPatch(q *request, cur map[string]any, body []byte) (map[string]any, error) {
	media := contentType(q.r)
	// A merge patch that does not name managedFields leaves them as they
	// are, so they are kept out of the document patched (their encoding and
	// decoding cost more than the rest of a small object's) and put back
	// after. Strategic directives ($patch: replace, $retainKeys) may drop
	// them with the rest of metadata, and a key may be spelled with escapes:
	// such patches get the whole object.
	var (
		mf     any
		keepMF bool
	)
	if (media == mediaMergePatch || media == mediaStrategicPatch) && !bytes.Contains(body, []byte("managedFields")) &&
		!bytes.Contains(body, []byte("$")) && !bytes.Contains(body, []byte(`\u`)) {
		if meta, ok := cur["metadata"].(map[string]any); ok {
			if mf, keepMF = meta["managedFields"]; keepMF {
				cur, _, _ = fieldmanager.WithoutManagedFields(cur)
			}
		}
	}
	doc, err := json.Marshal(cur)
	if err != nil {
		return nil, internalError("%v", err)
	}
	var out []byte
	switch media {
	case mediaJSONPatch:
		out, err = patch.JSONPatch(doc, body)
	case mediaMergePatch:
		out, err = patch.MergePatch(doc, body)
	case mediaStrategicPatch:
		if q.res.Type == nil {
			return nil, apierrors.NewUnsupportedMediaType(media, patchTypes(q))
		}
		out, err = patch.StrategicMergePatch(doc, body, q.res.Type)
	default:
		return nil, apierrors.NewUnsupportedMediaType(media, patchTypes(q))
	}
	if err != nil {
		switch {
		case errors.Is(err, patch.ErrBadPatch):
			return nil, apierrors.NewBadRequest(err.Error())
		default:
			st := apierrors.NewInvalid(q.groupKind(), q.ri.name, nil)
			st.ErrStatus.Message = err.Error()
			return nil, st
		}
	}
	m, err := api.DecodeMap(out)
	if err != nil {
		return nil, apierrors.NewBadRequest("the patch produced a document that is not an object: " + err.Error())
	}
	if meta, ok := m["metadata"].(map[string]any); ok && keepMF {
		meta["managedFields"] = mf
	}
	return m, nil
}

// servePatch serves PATCH on the object (updateMain) or its status
// (updateStatus).
func (s *Server) servePatch(q *request, mode updateMode) error {
	if contentType(q.r) == mediaApplyPatch {
		return s.serveApply(q, mode)
	}
	out, err := s.patchObject(q.ctx(), q, mode)
	if err != nil {
		return err
	}
	writeJSON(q.w, http.StatusOK, out)
	return nil
}

// patchObject reads the patch body and applies it with retries on conflicts; a
// resourceVersion inside the patch is a precondition.
func (s *Server) patchObject(ctx context.Context, q *request, mode updateMode) (map[string]any, error) {
	media := contentType(q.r)
	if !slices.Contains(patchTypes(q), media) {
		return nil, apierrors.NewUnsupportedMediaType(media, patchTypes(q))
	}
	body, err := s.readBody(q.r)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, apierrors.NewBadRequest("the request body is empty; expected a patch")
	}
	if media == mediaJSONPatch {
		if err := checkJSONPatchSize(body); err != nil {
			return nil, err
		}
	}
	name := q.ri.name
	// applyPatch only reads cur (it patches cur's encoding): cur is not
	// copied. The patched object shares cur's managedFields when the patch
	// leaves them; writers replace an object's managedFields, never change
	// them in place.
	return s.guaranteedUpdateOf(ctx, q, name, mode, false, func(cur map[string]any, curRV int64) (map[string]any, error) {
		next, err := applyPatch(q, cur, body)
		if err != nil {
			return nil, err
		}
		// As in Kubernetes, the patched object must still name the object on the
		// URL; a patch that removes or mangles metadata is refused.
		meta, ok := next["metadata"].(map[string]any)
		if !ok {
			return nil, apierrors.NewBadRequest("the patch removed metadata or made it something other than an object")
		}
		if n, _ := meta["name"].(string); n != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
		}
		if rvs := api.NestedString(next, "metadata", "resourceVersion"); rvs != "" {
			want, err := parseRV(rvs)
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			if want != curRV {
				return nil, apierrors.NewConflict(q.groupResource(), name, apierrors.OptimisticLockMessage)
			}
		}
		return next, nil
	})
}

// maxJSONPatchOperations is the most operations a JSON patch may hold, as in
// Kubernetes.
const maxJSONPatchOperations = 10000

// checkJSONPatchSize refuses a JSON patch of more than maxJSONPatchOperations
// operations with 413, as Kubernetes does. A body too short to hold that many
// is not decoded; one that is not a JSON array is left to the patch itself to
// report.
func checkJSONPatchSize(body []byte) error {
	if len(body) < 2*maxJSONPatchOperations {
		return nil
	}
	var ops []json.RawMessage
	if err := json.Unmarshal(body, &ops); err != nil || len(ops) <= maxJSONPatchOperations {
		return nil
	}
	return apierrors.NewRequestEntityTooLarge(fmt.Sprintf(
		"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
}
