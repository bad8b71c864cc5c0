package apiserver

import (
	"strings"

	"errors"
	"fmt"
	"net/http"
	"sigs.k8s.io/yaml"
	"slices"
	"strconv"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/fieldmanager"
)

// maxApplyCreateRetries bounds how often an apply that creates loses the race
// with another create and goes back to updating.
const maxApplyCreateRetries = 3

// serveApply serves a server-side apply (PATCH application/apply-patch+yaml)
// on the object (updateMain, creating it when missing) or its status
// (updateStatus).
func (s *Server) serveApply(q *request, mode updateMode) error {
	ctx := q.ctx()
	body, err := s.readBody(q.r)
	if err != nil {
		return err
	}
	// An apply of what was last applied to the object, which it left
	// unchanged, changes nothing again (applymemo.go).
	memo := s.memoizable(ctx, q)
	var digest [32]byte
	var gen int64
	key := storageKey(q.res, q.ri.namespace, q.ri.name)
	if memo {
		gen, digest = s.admissionGeneration(), applyDigest(ctx, q, mode, body)
		if s.appliedBefore(q, key, digest, gen) {
			return nil
		}
	}
	config, err := decodeApplyConfig(q, body)
	if err != nil {
		return err
	}
	if err := checkApplyFields(q, body, config); err != nil {
		return err
	}
	fm := s.fieldManagerFor(q, mode)
	if fm == nil {
		return apierrors.NewUnsupportedMediaType(mediaApplyPatch, []string{mediaJSONPatch, mediaMergePatch})
	}
	q.applied = true
	manager, force := q.query.Get("fieldManager"), isTrue(q.query.Get("force"))
	name := q.ri.name
	for range maxApplyCreateRetries {
		var readRV int64
		out, err := s.guaranteedUpdate(ctx, q, name, mode, func(cur map[string]any, curRV int64) (map[string]any, error) {
			readRV = curRV
			if err := checkApplyPrecondition(q, config, curRV); err != nil {
				return nil, err
			}
			next, _, err := fm.Apply(cur, config, manager, force)
			return next, s.applyError(q, err)
		})
		if !apierrors.IsNotFound(err) || mode != updateMain || q.ri.subresource != "" || !slices.Contains(q.res.ServedVerbs(), "create") {
			if err != nil {
				return err
			}
			if rv := api.NestedString(out, "metadata", "resourceVersion"); memo && rv == strconv.FormatInt(readRV, 10) && len(q.w.Header().Values("Warning")) == 0 {
				// Left unchanged, without warnings to repeat.
				s.rememberUnchanged(key, digest, readRV, gen)
			}
			writeJSON(q.w, http.StatusOK, out)
			return nil
		}
		// Apply creates what does not exist yet.
		if err := checkApplyPrecondition(q, config, 0); err != nil {
			return err
		}
		next, _, err := fm.Apply(nil, config, manager, force)
		if err = s.applyError(q, err); err != nil {
			return err
		}
		created, err := s.create(ctx, q, next, false)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return err
		}
		writeJSONBody(q.w, http.StatusCreated, created)
		return nil
	}
	return apierrors.NewConflict(q.groupResource(), name, apierrors.OptimisticLockMessage)
}

// decodeApplyConfig decodes an applied configuration (YAML or JSON) and
// checks it is of the resource's kind, named as the URL names it.
func decodeApplyConfig(q *request, body []byte) (map[string]any, error) {
	config, err := decodeJSONOrYAML(body, mediaApplyPatch)
	if err != nil {
		return nil, apierrors.NewBadRequest("error decoding patch: " + err.Error())
	}
	gvk := q.res.GroupVersionKind()
	av, _ := config["apiVersion"].(string)
	kind, _ := config["kind"].(string)
	if av != gvk.GroupVersion().String() || kind != gvk.Kind {
		gv, _ := api.ParseGroupVersion(av)
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid object type: %s/%s, Kind=%s", gv.Group, gv.Version, kind))
	}
	if m, ok := config["metadata"]; ok && m != nil {
		if _, ok := m.(map[string]any); !ok {
			return nil, apierrors.NewBadRequest("error decoding patch: metadata must be an object")
		}
	}
	meta := metaOf(config)
	switch n, _ := meta["name"].(string); n {
	case "":
		meta["name"] = q.ri.name
	case q.ri.name:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, q.ri.name))
	}
	if q.res.Namespaced {
		if ns, _ := meta["namespace"].(string); ns != "" && ns != q.ri.namespace {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	return config, nil
}

// checkApplyPrecondition treats a resourceVersion in the configuration as a
// precondition, as Kubernetes does (0: the object must not exist).
func checkApplyPrecondition(q *request, config map[string]any, curRV int64) error {
	rvs := api.NestedString(config, "metadata", "resourceVersion")
	if rvs == "" {
		return nil
	}
	want, err := parseRV(rvs)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if want != curRV {
		return apierrors.NewConflict(q.groupResource(), q.ri.name, apierrors.OptimisticLockMessage)
	}
	return nil
}

// applyError turns what fieldmanager.Manager.Apply returned into the API
// error Kubernetes answers with.
func (s *Server) applyError(q *request, err error) error {
	if err == nil {
		return nil
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	gvk := q.res.GroupVersionKind()
	msg := err.Error()
	var ce *fieldmanager.ConfigError
	if errors.As(err, &ce) {
		msg = fmt.Sprintf("failed to create typed patch object (%s/%s; %s/%s, Kind=%s): %v",
			q.ri.namespace, q.ri.name, gvk.Group, gvk.Version, gvk.Kind, ce.Err)
	}
	return apierrors.FromStatus(api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusFailure, Code: http.StatusInternalServerError, Message: msg,
	})
}

// checkApplyFields applies fieldValidation to an applied configuration, as
// Kubernetes words it for apply: keys repeated in the body (the strict YAML
// decoder's `line N: key "x" already set in map`) and fields the schema does
// not declare (`.spec.x: field not declared in schema`). Strict refuses with
// 400, Warn (the default) warns, Ignore says nothing.
func checkApplyFields(q *request, body []byte, config map[string]any) error {
	mode := q.query.Get("fieldValidation")
	if mode == "Ignore" {
		return nil
	}
	var msgs []string
	// A JSON body without repeated keys passes the strict YAML decoder:
	// it only runs to word what it finds.
	if !isJSONObject(body) || len(api.DuplicateFields(body)) > 0 {
		if _, err := yaml.YAMLToJSONStrict(body); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if _, unknown, _ := q.res.Strategy.Canonicalize(api.DeepCopyJSON(config)); len(unknown) > 0 {
		for _, u := range unknown {
			msgs = append(msgs, "."+u+": field not declared in schema")
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if mode == "Strict" {
		return apierrors.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
	}
	for _, m := range msgs {
		addWarning(q.w, strings.ReplaceAll(m, "\n", " "))
	}
	return nil
}
