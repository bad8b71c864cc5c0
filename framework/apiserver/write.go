package apiserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/fieldmanager"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

const maxUpdateRetries = 16

// decodeObject decodes a request body (JSON, YAML or protobuf) for res, checking
// that any apiVersion/kind it carries matches the resource.
func (s *Server) decodeObject(q *request, body []byte) (map[string]any, error) {
	media := contentType(q.r)
	var obj map[string]any
	switch media {
	case mediaJSON, mediaYAML, "text/yaml", "application/x-yaml":
		m, unique, err := decodeJSONOrYAMLUnique(body, strings.Replace(strings.Replace(media, "text/yaml", mediaYAML, 1), "application/x-yaml", mediaYAML, 1))
		if err != nil {
			return nil, err
		}
		obj = m
		// A body whose decoding saw no key twice (JSON only: YAML's keys
		// repeat before it becomes JSON) has no duplicate fields to report:
		// its second scan is spared.
		if q.query.Get("fieldValidation") != "Ignore" && !unique {
			q.strict = duplicateFields(body, media == mediaJSON)
		}
	case mediaProtobuf:
		if q.res.Type == nil {
			return nil, apierrors.NewUnsupportedMediaType(media, []string{mediaJSON, mediaYAML})
		}
		tm, m, err := s.proto.Decode(body, q.res.Type)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
		}
		m["apiVersion"], m["kind"] = tm.APIVersion, tm.Kind
		obj = m
	default:
		return nil, apierrors.NewUnsupportedMediaType(media, []string{mediaJSON, mediaYAML, mediaProtobuf})
	}
	return obj, s.checkKind(q.res, obj)
}

// checkKind checks that obj's apiVersion, kind and metadata have the right JSON
// types and that apiVersion and kind, when set, name res; it then sets them.
func (s *Server) checkKind(res *registry.Resource, obj map[string]any) error {
	av, avOK := obj["apiVersion"].(string)
	kind, kindOK := obj["kind"].(string)
	if v, ok := obj["apiVersion"]; ok && !avOK && v != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: apiVersion must be a string, not %s", jsonTypeName(v)))
	}
	if v, ok := obj["kind"]; ok && !kindOK && v != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: kind must be a string, not %s", jsonTypeName(v)))
	}
	if v, ok := obj["metadata"]; ok && v != nil {
		if _, isMap := v.(map[string]any); !isMap {
			return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: metadata must be an object, not %s", jsonTypeName(v)))
		}
	}
	want := res.GroupVersionKind()
	if av != "" && av != want.GroupVersion().String() {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", av, want.GroupVersion()))
	}
	if kind != "" && kind != want.Kind {
		return apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", kind, want.Kind))
	}
	// Set only where they differ: a body that names them already keeps its
	// values (the same strings), and no new interface values are made.
	if gv := want.GroupVersion().String(); av != gv || !avOK {
		obj["apiVersion"] = gv
	}
	if kind != want.Kind || !kindOK {
		obj["kind"] = want.Kind
	}
	return nil
}

// readObject reads and decodes the request body (decodeObject). A JSON body,
// which the decoder does not keep any of, is read into a pooled buffer.
func (s *Server) readObject(q *request) (map[string]any, error) {
	if n := q.r.ContentLength; n > 0 && n <= maxPooledBody && n <= s.opts.MaxRequestBytes && q.r.Body != nil && contentType(q.r) == mediaJSON {
		bp := bodyPool.Get().(*[]byte)
		defer bodyPool.Put(bp)
		if int64(cap(*bp)) < n {
			*bp = make([]byte, n)
		}
		body := (*bp)[:n]
		if _, err := io.ReadFull(q.r.Body, body); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("read request body: %v", err))
		}
		return s.decodeObject(q, body)
	}
	body, err := s.readBody(q.r)
	if err != nil {
		return nil, err
	}
	return s.decodeObject(q, body)
}

// maxPooledBody bounds the bodies readObject reads into pooled buffers.
const maxPooledBody = 64 << 10

var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// jsonTypeName names the JSON type of a decoded value, for error messages.
func jsonTypeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "a number"
	}
}

func metaOf(obj map[string]any) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

// canonicalize runs the strategy and applies the fieldValidation directive.
func (s *Server) canonicalize(q *request, obj map[string]any, name string) (map[string]any, error) {
	out, _, err := s.canonicalizeTyped(q, obj, name, false, false)
	return out, err
}

// canonicalizeTyped is canonicalize that also returns the strategy's typed value
// when asked for and the strategy is a registry.TypedStrategy. owned is set
// by a caller that gives obj up (registry.OwnedCanonicalizer): the result may
// then be obj, or share its maps.
func (s *Server) canonicalizeTyped(q *request, obj map[string]any, name string, typed, owned bool) (map[string]any, registry.Decoded, error) {
	var (
		out     map[string]any
		dec     registry.Decoded
		unknown []string
		errs    field.ErrorList
	)
	if oc, ok := q.res.Strategy.(registry.OwnedCanonicalizer); ok && typed && owned {
		out, dec, unknown, errs = oc.CanonicalizeOwned(obj)
	} else if ts, ok := q.res.Strategy.(registry.TypedStrategy); ok && typed {
		out, dec, unknown, errs = ts.CanonicalizeTyped(obj)
	} else {
		out, unknown, errs = q.res.Strategy.Canonicalize(obj)
	}
	if len(errs) > 0 {
		return nil, dec, apierrors.NewInvalid(q.groupKind(), name, errs)
	}
	if len(unknown) > 0 || len(q.strict) > 0 {
		msgs := make([]string, 0, len(unknown)+len(q.strict))
		for _, u := range unknown {
			msgs = append(msgs, fmt.Sprintf("unknown field %q", u))
		}
		// Duplicates are the body's: reported once, not again when admission
		// has the object canonicalized a second time.
		msgs = append(msgs, q.strict...)
		q.strict = nil
		switch q.query.Get("fieldValidation") {
		case "Strict":
			return nil, dec, apierrors.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
		case "Ignore":
		default:
			for _, m := range msgs {
				addWarning(q.w, strings.ReplaceAll(m, "\n", " "))
			}
		}
	}
	return out, dec, nil
}

// validateMeta validates metadata generically, plus the update rules when old is
// set. meta is obj's metadata when the caller has it decoded already, else nil.
func validateMeta(q *request, obj, old map[string]any, meta *api.ObjectMeta) field.ErrorList {
	if meta == nil {
		m, err := metaForValidation(obj)
		if err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("metadata"), "", err.Error())}
		}
		meta = &m
	}
	var nameFn validation.NameFunc = q.res.NameValidation
	errs := validation.ValidateObjectMeta(meta, q.res.Namespaced, nameFn, field.NewPath("metadata"))
	if old != nil {
		oldMeta, err := metaForValidation(old)
		if err == nil {
			errs = append(errs, validation.ValidateObjectMetaUpdate(meta, &oldMeta, field.NewPath("metadata"))...)
		}
	}
	return errs
}

const nameChars = "bcdfghjklmnpqrstvwxz2456789"

func generateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = nameChars[int(b[i])%len(nameChars)]
	}
	return base + string(b)
}

func (s *Server) serveCreate(q *request) error {
	obj, err := s.readObject(q)
	if err != nil {
		return err
	}
	out, err := s.create(q.ctx(), q, obj, true)
	if err != nil {
		return err
	}
	writeJSONBody(q.w, http.StatusCreated, out)
	return nil
}

// create runs the create path for obj and returns the response body: the stored
// object, with its resourceVersion, in the request's version. create changes
// obj; owned is set by a caller that gives it up entirely (nothing else
// shares its maps), so that the stored object may be built of them.
func (s *Server) create(ctx context.Context, q *request, obj map[string]any, owned bool) (jsonBody, error) {
	meta := metaOf(obj)
	if ns, _ := meta["namespace"].(string); q.res.Namespaced {
		if ns != "" && ns != q.ri.namespace {
			return jsonBody{}, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		if ns == "" {
			meta["namespace"] = q.ri.namespace // else it is set, to the same
		}
	} else {
		delete(meta, "namespace")
	}
	if q.res.StatusSubresource {
		delete(obj, "status")
	}
	name, _ := meta["name"].(string)
	if gn, _ := meta["generateName"].(string); name == "" && gn != "" {
		name = generateName(gn)
		meta["name"] = name
	}
	// Server-owned metadata is set before the strategy runs, so the object it
	// canonicalizes (and may keep decoded for validation) is the one stored.
	meta["uid"] = newUID()
	now := time.Now()
	meta["creationTimestamp"] = now.UTC().Format(time.RFC3339)
	for _, k := range []string{"resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "generation"} {
		delete(meta, k)
	}
	if q.res.Generation {
		meta["generation"] = int64(1)
	}
	p, prepares := q.res.Strategy.(registry.Preparer)
	// As in Kubernetes, the creator owns what it sent and what defaulting
	// added, not status where a status subresource owns it (the status
	// strategies' reset fields), nor what admission adds.
	sent := s.takeManagedFields(q, updateMain, obj)
	unsent := unsentAdmissionDefaults(q.res, obj)
	obj, dec, err := s.canonicalizeTyped(q, obj, name, !prepares, owned)
	if err != nil {
		return jsonBody{}, err
	}
	// The creator's entry is computed now, before mutating admission, as in
	// Kubernetes. It is built decoded, in obj, only for what may read obj's
	// managedFields before it is encoded: admission plugins that say they
	// may (webhooks whose rules select the request, admission policies), a
	// conversion to the storage version. Else it is built as the bytes
	// stored only and put in obj once the rest is done (the strategy and
	// validation ignore managedFields; the entry is valid as built).
	readers := sent.taken && (q.res.Convert != nil || s.admissionReadsManagedFields(ctx, q, name, obj))
	created := s.trackCreate(q, withoutFields(obj, unsent), sent, now, readers)
	if obj, dec, err = s.mutateCreate(ctx, q, name, obj, dec, !prepares); err != nil {
		return jsonBody{}, err
	}
	// The key is the name of the object as stored, whatever the body looked like.
	// It must be there as metadata.name exactly: a key that only matches it
	// case-insensitively ("namE") is no name, and nothing is stored without one.
	name = api.NestedString(obj, "metadata", "name")
	if name == "" {
		return jsonBody{}, apierrors.NewInvalid(q.groupKind(), "", field.ErrorList{
			field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	if prepares {
		p.PrepareForCreate(obj)
	}
	var errs field.ErrorList
	if ts, ok := q.res.Strategy.(registry.TypedStrategy); ok && dec.Value != nil {
		errs = validateMeta(q, obj, nil, dec.Meta)
		errs = append(errs, ts.ValidateCreateTyped(ctx, obj, dec)...)
	} else {
		errs = validateMeta(q, obj, nil, nil)
		errs = append(errs, q.res.Strategy.ValidateCreate(ctx, obj)...)
	}
	if len(errs) > 0 {
		return jsonBody{}, apierrors.NewInvalid(q.groupKind(), name, errs)
	}
	if err := s.validateCreate(ctx, q, name, obj); err != nil {
		return jsonBody{}, err
	}
	if q.res.Namespaced {
		if err := s.checkNamespace(ctx, q, name); err != nil {
			return jsonBody{}, err
		}
	}
	adm, err := admitCreate(ctx, q, obj)
	if err != nil {
		return jsonBody{}, err
	}
	committed := false
	defer func() { adm.end(ctx, committed) }()
	if q.res.Convert == nil {
		created.encodeIn(obj) // the readers are done
	}
	if q.dryRun() {
		b, err := api.EncodeJSON(obj)
		if err != nil {
			return jsonBody{}, internalError("%v", err)
		}
		return jsonBody{head: b}, nil
	}
	stored, err := toStorage(q.res, obj)
	if err != nil {
		return jsonBody{}, internalError("%v", err)
	}
	data, err := encodeStored(stored)
	if err != nil {
		return jsonBody{}, internalError("%v", err)
	}
	if err := s.checkObjectSize(data); err != nil {
		return jsonBody{}, err
	}
	rev, err := s.opts.Storage.Create(ctx, storageKey(q.res, q.ri.namespace, name), data)
	if err != nil {
		if errors.Is(err, storage.ErrExists) {
			return jsonBody{}, apierrors.NewAlreadyExists(q.groupResource(), name)
		}
		return jsonBody{}, internalError("create %s: %v", name, err)
	}
	committed = true
	if v := viewOf(q.res); v.rendersStored(api.NestedString(stored, "apiVersion")) {
		out, err := v.render(withResourceVersion(data, rev))
		if err != nil {
			return jsonBody{}, internalError("%v", err)
		}
		return jsonBody{head: out}, nil
	}
	return storedBody(data, rev), nil
}

// checkObjectSize refuses an encoded object larger than storage takes.
func (s *Server) checkObjectSize(data []byte) error {
	if n := int64(len(data)); n > s.opts.MaxObjectBytes {
		return apierrors.NewRequestEntityTooLarge(fmt.Sprintf("the object is too large to store: %d bytes, limit %d", n, s.opts.MaxObjectBytes))
	}
	return nil
}

// checkNamespace refuses creates in missing or terminating namespaces. It reads
// the namespaces' watch cache and falls back to storage when the cache has not
// seen the namespace yet (it may have been created a moment ago).
func (s *Server) checkNamespace(ctx context.Context, q *request, name string) error {
	nsRes := s.opts.Registry.Get(api.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	if nsRes == nil {
		return nil
	}
	key := storageKey(nsRes, "", q.ri.namespace)
	var deleting bool
	if wc, err := s.cacheFor(ctx, nsRes); err == nil {
		if o := wc.get(key); o != nil {
			deleting = o.deleting
			goto check
		}
	}
	{
		kv, err := s.opts.Storage.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return apierrors.NewNotFound(api.GroupResource{Resource: "namespaces"}, q.ri.namespace)
		}
		if err != nil {
			return internalError("read namespace %s: %v", q.ri.namespace, err)
		}
		ns, err := decodeStored(kv.Value, kv.ModRevision)
		if err != nil {
			return internalError("%v", err)
		}
		deleting = api.NestedString(ns, "metadata", "deletionTimestamp") != ""
	}
check:
	if deleting {
		return apierrors.NewForbidden(q.groupResource(), name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", q.ri.namespace))
	}
	return nil
}

// updateMode says which part of the object an update may change.
type updateMode int

const (
	updateMain          updateMode = iota // everything but status (when there is a status subresource)
	updateStatus                          // only status
	updateStatusAndSpec                   // everything (server-internal writers such as bindings)
)

// guaranteedUpdate reads the object, asks tryUpdate for the new state, runs the
// update path and stores it conditioned on the read revision, retrying when the
// object changed concurrently (tryUpdate decides on explicit preconditions).
// tryUpdate is given a copy of the object read, its own to change.
func (s *Server) guaranteedUpdate(ctx context.Context, q *request, name string, mode updateMode,
	tryUpdate func(cur map[string]any, curRV int64) (map[string]any, error)) (map[string]any, error) {
	return s.guaranteedUpdateOf(ctx, q, name, mode, true, tryUpdate)
}

// guaranteedUpdateOf is guaranteedUpdate; with copyCur false tryUpdate is
// given the object read itself, which it must not change (a replacement
// that does not read it: copying the object, managedFields and all, would be
// wasted).
func (s *Server) guaranteedUpdateOf(ctx context.Context, q *request, name string, mode updateMode, copyCur bool,
	tryUpdate func(cur map[string]any, curRV int64) (map[string]any, error)) (map[string]any, error) {
	key := storageKey(q.res, q.ri.namespace, name)
	for range maxUpdateRetries {
		kv, err := s.opts.Storage.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, q.notFound(name)
		}
		if err != nil {
			return nil, internalError("read %s: %v", name, err)
		}
		cur, err := decodeFor(q, kv.Value, kv.ModRevision)
		if err != nil {
			return nil, internalError("%v", err)
		}
		given := cur
		if copyCur {
			given = api.DeepCopyJSON(cur)
		}
		proposed, err := tryUpdate(given, kv.ModRevision)
		if err != nil {
			return nil, err
		}
		// A uid in the new object is a precondition, as in Kubernetes: the
		// object may have been deleted and recreated since the client read it.
		if uid := api.NestedString(proposed, "metadata", "uid"); uid != "" && uid != api.NestedString(cur, "metadata", "uid") {
			return nil, apierrors.NewConflict(q.groupResource(), name, fmt.Sprintf(
				"Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, api.NestedString(cur, "metadata", "uid")))
		}
		obj, err := s.prepareUpdate(ctx, q, proposed, cur, mode, name)
		if err != nil {
			return nil, err
		}
		adm, err := admitUpdate(ctx, q, obj, cur)
		if err != nil {
			return nil, err
		}
		out, res, err := s.storeUpdate(ctx, q, key, name, kv, cur, obj)
		adm.end(ctx, res == updateStored || res == updateDeleted)
		if res == updateRetry {
			continue
		}
		return out, err
	}
	return nil, apierrors.NewConflict(q.groupResource(), name, apierrors.OptimisticLockMessage)
}

// updateResult says how storeUpdate ended.
type updateResult int

const (
	updateFailed    updateResult = iota // nothing stored; err says why
	updateUnchanged                     // nothing to store (same bytes, or dry run)
	updateRetry                         // the object changed since it was read
	updateStored                        // the new state is stored
	updateDeleted                       // the update removed the last finalizer: the object is gone
)

// storeUpdate stores obj, the next state of the object read as kv (cur),
// conditioned on kv's revision, or deletes it when it is marked for deletion
// and nothing holds it any more.
func (s *Server) storeUpdate(ctx context.Context, q *request, key, name string, kv storage.KeyValue, cur, obj map[string]any) (map[string]any, updateResult, error) {
	stored := obj
	if q.res.Convert != nil {
		var err error
		if stored, err = toStorage(q.res, api.DeepCopyJSON(obj)); err != nil {
			return nil, updateFailed, internalError("%v", err)
		}
	}
	data, err := encodeStored(stored)
	if err != nil {
		return nil, updateFailed, internalError("%v", err)
	}
	if bytes.Equal(data, kv.Value) && !kv.Stale {
		return cur, updateUnchanged, nil
	}
	if err := s.checkObjectSize(data); err != nil {
		return nil, updateFailed, err
	}
	if q.dryRun() {
		return obj, updateUnchanged, nil
	}
	meta := metaOf(obj)
	if deleteDuringUpdate(q, obj) {
		_, rev, err := s.opts.Storage.Delete(ctx, key, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			return nil, updateRetry, nil
		}
		if errors.Is(err, storage.ErrNotFound) {
			return nil, updateFailed, q.notFound(name)
		}
		if err != nil {
			return nil, updateFailed, internalError("delete %s: %v", name, err)
		}
		meta["resourceVersion"] = strconv.FormatInt(rev, 10)
		s.deleted(ctx, q, stored)
		return obj, updateDeleted, nil
	}
	rev, err := s.opts.Storage.Update(ctx, key, data, kv.ModRevision)
	if errors.Is(err, storage.ErrConflict) {
		return nil, updateRetry, nil
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, updateFailed, q.notFound(name)
	}
	if err != nil {
		return nil, updateFailed, internalError("update %s: %v", name, err)
	}
	meta["resourceVersion"] = strconv.FormatInt(rev, 10)
	return obj, updateStored, nil
}

// admission is a registry.Admission the server ends; the zero value does nothing.
type admission registry.Admission

// admitCreate runs the strategy's registry.Admitter, if any, on a new object.
func admitCreate(ctx context.Context, q *request, obj map[string]any) (admission, error) {
	a, ok := q.res.Strategy.(registry.Admitter)
	if !ok {
		return admission{}, nil
	}
	adm, err := a.AdmitCreate(ctx, obj)
	return admission(adm), admitError(err)
}

// admitUpdate runs the strategy's registry.Admitter, if any, on an update.
func admitUpdate(ctx context.Context, q *request, obj, old map[string]any) (admission, error) {
	a, ok := q.res.Strategy.(registry.Admitter)
	if !ok {
		return admission{}, nil
	}
	adm, err := a.AdmitUpdate(ctx, obj, old)
	return admission(adm), admitError(err)
}

func admitError(err error) error {
	var se *apierrors.StatusError
	if err == nil || errors.As(err, &se) {
		return err
	}
	return internalError("%v", err)
}

// end runs Commit when the write was stored and Abort when it was not.
func (a admission) end(ctx context.Context, stored bool) {
	f := a.Abort
	if stored {
		f = a.Commit
	}
	if f != nil {
		f(context.WithoutCancel(ctx))
	}
}

// deleted tells the strategy's registry.DeleteHook, if any, that obj is gone.
func (s *Server) deleted(ctx context.Context, q *request, obj map[string]any) {
	if h, ok := q.res.Strategy.(registry.DeleteHook); ok {
		h.Deleted(context.WithoutCancel(ctx), obj)
	}
}

// prepareUpdate turns a proposed object into the one to store: subresource split,
// canonical form, server-owned metadata, generation, validation.
func (s *Server) prepareUpdate(ctx context.Context, q *request, obj, old map[string]any, mode updateMode, name string) (map[string]any, error) {
	if err := s.checkKind(q.res, obj); err != nil {
		return nil, err
	}
	switch mode {
	case updateStatus:
		next := api.DeepCopyJSON(old)
		if st, ok := obj["status"]; ok {
			next["status"] = st
		} else {
			delete(next, "status")
		}
		if q.res.StatusUpdatesMetadata {
			keys := []string{"labels", "annotations"}
			if q.res.StatusResetsLabels {
				keys = keys[1:]
			}
			for _, k := range keys {
				if v, ok := metaOf(obj)[k]; ok {
					metaOf(next)[k] = v
				} else {
					delete(metaOf(next), k)
				}
			}
		}
		if q.applied {
			// Apply computed the managedFields of this write.
			if mf, ok := metaOf(obj)["managedFields"]; ok {
				metaOf(next)["managedFields"] = mf
			} else {
				delete(metaOf(next), "managedFields")
			}
		}
		obj = next
	case updateMain:
		if q.res.StatusSubresource {
			if st, ok := old["status"]; ok {
				obj["status"] = api.DeepCopyJSONValue(st)
			} else {
				delete(obj, "status")
			}
		}
	}
	meta := metaOf(obj)
	if n, _ := meta["name"].(string); n != "" && n != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	meta["name"] = name
	if q.res.Namespaced {
		if ns, _ := meta["namespace"].(string); ns != "" && ns != q.ri.namespace {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		meta["namespace"] = q.ri.namespace
	} else {
		delete(meta, "namespace")
	}
	oldMeta := metaOf(old)
	// Server-owned fields come from the stored object.
	for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
		if v, ok := oldMeta[k]; ok {
			meta[k] = v
		} else {
			delete(meta, k)
		}
	}
	delete(meta, "selfLink")
	sent := s.takeManagedFields(q, mode, obj)
	out, err := s.canonicalize(q, obj, name)
	if err != nil {
		return nil, err
	}
	s.trackWrite(q, mode, old, out, sent)
	if out, err = s.mutateUpdate(ctx, q, name, out, old); err != nil {
		return nil, err
	}
	if q.res.Generation {
		gen, _ := api.NestedInt64(old, "metadata", "generation")
		// A status write keeps the stored spec; a server-internal write
		// (binding) leaves the generation alone.
		if (mode == updateMain || mode == updateStatusAndSpec && q.specWrite) && specChanged(out, old) {
			gen++
		}
		if gen == 0 {
			gen = 1
		}
		metaOf(out)["generation"] = gen
	}
	errs := validateMeta(q, out, old, nil)
	if mode == updateStatusAndSpec {
		// Server-internal writers (bindings, finalize) may change fields users may
		// not; the result must still be a valid object.
		errs = append(errs, q.res.Strategy.ValidateCreate(ctx, out)...)
	} else {
		if p, ok := q.res.Strategy.(registry.Preparer); ok {
			p.PrepareForUpdate(out, old)
		}
		// The strategy validates the object, not its managedFields (checked
		// with the metadata above): it gets them without, which is cheaper.
		vOut, _, _ := fieldmanager.WithoutManagedFields(out)
		vOld, _, _ := fieldmanager.WithoutManagedFields(old)
		errs = append(errs, validateUpdateOf(ctx, q.res.Strategy, mode, vOut, vOld)...)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(q.groupKind(), name, errs)
	}
	if err := s.validateUpdate(ctx, q, name, out, old); err != nil {
		return nil, err
	}
	return out, nil
}

// validateUpdateOf runs the strategy's update validation: for a status
// subresource write, its registry.StatusValidator when it has one (as
// Kubernetes validates status writes with the status strategy alone).
func validateUpdateOf(ctx context.Context, st registry.Strategy, mode updateMode, obj, old map[string]any) field.ErrorList {
	if mode == updateStatus {
		if sv, ok := st.(registry.StatusValidator); ok {
			return sv.ValidateStatusUpdate(ctx, obj, old)
		}
	}
	return st.ValidateUpdate(ctx, obj, old)
}

// specChanged reports whether anything but metadata and status differs.
func specChanged(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
				c[k] = v
			}
		}
		return c
	}
	return !reflect.DeepEqual(normalizeJSON(strip(a)), normalizeJSON(strip(b)))
}

// normalizeJSON round-trips through JSON so numeric types compare equal.
func normalizeJSON(v map[string]any) map[string]any {
	b, err := api.EncodeJSON(v)
	if err != nil {
		return v
	}
	m, err := api.DecodeMap(b)
	if err != nil {
		return v
	}
	return m
}

// serveUpdate serves PUT on the object (updateMain) or its status
// (updateStatus).
func (s *Server) serveUpdate(q *request, mode updateMode) error {
	body, err := s.readBody(q.r)
	if err != nil {
		return err
	}
	obj, err := s.decodeObject(q, body)
	if err != nil {
		return err
	}
	out, err := s.update(q.ctx(), q, obj, mode)
	if err != nil {
		return err
	}
	writeJSON(q.w, http.StatusOK, out)
	return nil
}

// update replaces the object with obj, honouring its resourceVersion precondition.
func (s *Server) update(ctx context.Context, q *request, obj map[string]any, mode updateMode) (map[string]any, error) {
	name := q.ri.name
	// As in Kubernetes, the body must name the object on the URL: an empty or
	// garbled body must not replace it.
	if n := api.NestedString(obj, "metadata", "name"); n != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	rvs := api.NestedString(obj, "metadata", "resourceVersion")
	want, err := parseRV(rvs)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if want == 0 && q.res.RequireResourceVersion {
		return nil, apierrors.NewInvalid(q.groupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), int64(0), "must be specified for an update")})
	}
	// The new state is obj whatever the object read holds: it is not copied.
	return s.guaranteedUpdateOf(ctx, q, name, mode, false, func(_ map[string]any, curRV int64) (map[string]any, error) {
		if want != 0 && want != curRV {
			return nil, apierrors.NewConflict(q.groupResource(), name, apierrors.OptimisticLockMessage)
		}
		return api.DeepCopyJSON(obj), nil
	})
}

// deleteOptions reads DeleteOptions from the body (JSON or protobuf) and query.
func (s *Server) deleteOptions(q *request) (*api.DeleteOptions, error) {
	opts := &api.DeleteOptions{}
	body, err := s.readBody(q.r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		switch contentType(q.r) {
		case mediaProtobuf:
			if _, m, err := s.proto.Decode(body, reflect.TypeFor[api.DeleteOptions]()); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("decode DeleteOptions: %v", err))
			} else if b, err := json.Marshal(m); err == nil {
				_ = json.Unmarshal(b, opts)
			}
		default:
			if err := json.Unmarshal(body, opts); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("decode DeleteOptions: %v", err))
			}
		}
		if opts.Kind != "" && opts.Kind != "DeleteOptions" {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("decode DeleteOptions: the body is a %s, not DeleteOptions", opts.Kind))
		}
	}
	if v := q.query.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest("invalid gracePeriodSeconds: " + v)
		}
		opts.GracePeriodSeconds = &n
	}
	if v := q.query.Get("propagationPolicy"); v != "" {
		opts.PropagationPolicy = &v
	}
	if v := q.query.Get("orphanDependents"); v != "" {
		b := isTrue(v)
		opts.OrphanDependents = &b
	}
	if slices.Contains(opts.DryRun, "All") {
		q.query["dryRun"] = []string{"All"}
	}
	if err := validateDeleteOptions(opts); err != nil {
		return nil, err
	}
	return opts, nil
}

// validateDeleteOptions refuses what Kubernetes' ValidateDeleteOptions refuses
// (validation.ValidateDeleteOptions) with its first error, 422.
func validateDeleteOptions(opts *api.DeleteOptions) error {
	if errs := validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return apierrors.NewInvalid(api.GroupKind{Kind: "DeleteOptions"}, "", errs[:1])
	}
	return nil
}

func (s *Server) serveDelete(q *request) error {
	opts, err := s.deleteOptions(q)
	if err != nil {
		return err
	}
	out, deleted, err := s.deleteObject(q.ctx(), q, q.ri.name, opts)
	if err != nil {
		return err
	}
	if !deleted {
		if out, err = viewOf(q.res).object(out); err != nil {
			return internalError("%v", err)
		}
		writeJSON(q.w, http.StatusOK, out)
		return nil
	}
	writeJSON(q.w, http.StatusOK, successStatus(q, out))
	return nil
}

func successStatus(q *request, obj map[string]any) api.Status {
	return api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusSuccess,
		Details: &api.StatusDetails{
			Name: api.NestedString(obj, "metadata", "name"), Group: q.res.GroupVersion.Group,
			Kind: q.res.Resource, UID: api.NestedString(obj, "metadata", "uid"),
		},
	}
}

// deleteObject deletes name, or marks it for deletion while finalizers remain.
// deleted reports whether the object is gone.
func (s *Server) deleteObject(ctx context.Context, q *request, name string, opts *api.DeleteOptions) (map[string]any, bool, error) {
	key := storageKey(q.res, q.ri.namespace, name)
	for range maxUpdateRetries {
		kv, err := s.opts.Storage.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, q.notFound(name)
		}
		if err != nil {
			return nil, false, internalError("read %s: %v", name, err)
		}
		cur, err := decodeStored(kv.Value, kv.ModRevision)
		if err != nil {
			return nil, false, internalError("%v", err)
		}
		meta := metaOf(cur)
		if pc := opts.Preconditions; pc != nil {
			if pc.UID != nil && *pc.UID != meta["uid"] {
				return nil, false, apierrors.NewConflict(q.groupResource(), name, fmt.Errorf(
					"the UID in the precondition (%s) does not match the UID in record (%v). The object might have been deleted and then recreated", *pc.UID, meta["uid"]).Error())
			}
			if pc.ResourceVersion != nil && *pc.ResourceVersion != strconv.FormatInt(kv.ModRevision, 10) {
				return nil, false, apierrors.NewConflict(q.groupResource(), name, fmt.Errorf(
					"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%d). The object might have been modified", *pc.ResourceVersion, kv.ModRevision).Error())
			}
		}
		if err := s.admitDeletion(ctx, q, name, cur); err != nil {
			return nil, false, err
		}
		finalizers := stringSlice(api.NestedSlice(cur, "metadata", "finalizers"))
		want := finalizers
		orphan := (opts.OrphanDependents != nil && *opts.OrphanDependents) ||
			(opts.PropagationPolicy != nil && *opts.PropagationPolicy == api.DeletePropagationOrphan) ||
			(opts.OrphanDependents == nil && opts.PropagationPolicy == nil && q.res.OrphanDependentsByDefault &&
				!slices.Contains(finalizers, api.FinalizerDeleteDependents))
		foreground := opts.PropagationPolicy != nil && *opts.PropagationPolicy == api.DeletePropagationForeground
		if orphan && !slices.Contains(want, api.FinalizerOrphanDependents) {
			want = append(slices.Clone(want), api.FinalizerOrphanDependents)
		}
		if foreground && !slices.Contains(want, api.FinalizerDeleteDependents) {
			want = append(slices.Clone(want), api.FinalizerDeleteDependents)
		}
		// Graceful deletion (pods): a grace period marks the object instead;
		// a pending one may only be shortened, and DeleteOptions cannot
		// change the finalizers of an object whose grace is running.
		gAction, gMark, err := graceAction(ctx, q, cur, opts)
		if err != nil {
			return nil, false, err
		}
		if gAction == registry.GracePending {
			return cur, false, nil
		}
		graceful := gAction == registry.GraceMark && *gMark.GracePeriodSeconds > 0
		if graceful || len(want) > 0 || pendingDeletion(q, cur) {
			if gAction != registry.GraceMark && meta["deletionTimestamp"] != nil && len(want) == len(finalizers) {
				return cur, false, nil
			}
			next := api.DeepCopyJSON(cur)
			nm := metaOf(next)
			if gAction == registry.GraceMark {
				setDeletionMark(nm, gMark)
			} else if nm["deletionTimestamp"] == nil {
				nm["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
				nm["deletionGracePeriodSeconds"] = int64(0)
			}
			if len(want) > 0 {
				fs := make([]any, len(want))
				for i, f := range want {
					fs[i] = f
				}
				nm["finalizers"] = fs
			}
			if d := q.res.Deletion; d != nil && d.Prepare != nil {
				d.Prepare(next)
			}
			data, err := encodeStored(next)
			if err != nil {
				return nil, false, internalError("%v", err)
			}
			if q.dryRun() {
				return next, false, nil
			}
			rev, err := s.opts.Storage.Update(ctx, key, data, kv.ModRevision)
			if errors.Is(err, storage.ErrConflict) {
				continue
			}
			if err != nil {
				return nil, false, internalError("mark %s for deletion: %v", name, err)
			}
			nm["resourceVersion"] = strconv.FormatInt(rev, 10)
			return next, false, nil
		}
		if q.dryRun() {
			return cur, true, nil
		}
		_, rev, err := s.opts.Storage.Delete(ctx, key, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, q.notFound(name)
		}
		if err != nil {
			return nil, false, internalError("delete %s: %v", name, err)
		}
		meta["resourceVersion"] = strconv.FormatInt(rev, 10)
		s.deleted(ctx, q, cur)
		return cur, true, nil
	}
	return nil, false, apierrors.NewConflict(q.groupResource(), name, apierrors.OptimisticLockMessage)
}

// pendingDeletion reports kind-specific finalizers that keep obj (namespaces'
// spec.finalizers).
func pendingDeletion(q *request, obj map[string]any) bool {
	d := q.res.Deletion
	return d != nil && d.Pending != nil && d.Pending(obj)
}

func stringSlice(v []any) []string {
	out := make([]string, 0, len(v))
	for _, e := range v {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (s *Server) serveDeleteCollection(q *request) error {
	opts, err := s.deleteOptions(q)
	if err != nil {
		return err
	}
	f, err := s.filterFor(q)
	if err != nil {
		return err
	}
	res, err := s.opts.Storage.List(q.ctx(), listPrefix(q), storage.ListOptions{})
	if err != nil {
		return internalError("list: %v", err)
	}
	var deleted []map[string]any
	fieldsOf := s.storedFields(q.res)
	for _, kv := range res.Items {
		o, err := buildCachedObject(kv.Key, kv.Value, kv.ModRevision, q.res.Namespaced, fieldsOf)
		if err != nil || !f.matches(o) {
			continue
		}
		sub := *q
		sub.ri.namespace = o.namespace
		out, _, err := s.deleteObject(q.ctx(), &sub, o.name, opts)
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if out, err = viewOf(q.res).object(out); err != nil {
			return internalError("%v", err)
		}
		deleted = append(deleted, out)
	}
	if deleted == nil {
		deleted = []map[string]any{}
	}
	writeJSON(q.w, http.StatusOK, map[string]any{
		"kind": q.res.ListKind, "apiVersion": q.res.GroupVersion.String(),
		"metadata": map[string]any{}, "items": deleted,
	})
	return nil
}

func listPrefix(q *request) string {
	p := storagePrefix(q.res)
	if q.res.Namespaced && q.ri.namespace != "" {
		p += q.ri.namespace + "/"
	}
	return p
}
