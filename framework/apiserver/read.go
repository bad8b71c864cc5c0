package apiserver

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

func (s *Server) serveGet(q *request) error {
	kv, err := s.opts.Storage.Get(q.ctx(), storageKey(q.res, q.ri.namespace, q.ri.name))
	if errors.Is(err, storage.ErrNotFound) {
		return q.notFound(q.ri.name)
	}
	if err != nil {
		return internalError("get %s: %v", q.ri.name, err)
	}
	if acceptsTable(q.r) {
		o, err := buildCachedObject(kv.Key, kv.Value, kv.ModRevision, q.res.Namespaced, s.storedFields(q.res))
		if err != nil {
			return internalError("%v", err)
		}
		t, err := s.table(q, []*cachedObject{o}, true)
		if err != nil {
			return err
		}
		t["metadata"] = map[string]any{"resourceVersion": strconv.FormatInt(kv.ModRevision, 10)}
		writeJSON(q.w, http.StatusOK, t)
		return nil
	}
	return s.writeStored(q, kv)
}

// writeStored answers the stored object kv in the request's version.
func (s *Server) writeStored(q *request, kv storage.KeyValue) error {
	data := withResourceVersion(kv.Value, kv.ModRevision)
	if v := viewOf(q.res); v.convert != nil || v.defaults != nil {
		m, err := decodeStored(kv.Value, kv.ModRevision)
		if err != nil {
			return internalError("%v", err)
		}
		if av, _ := m["apiVersion"].(string); v.rendersStored(av) {
			if data, err = v.render(data); err != nil {
				return internalError("%v", err)
			}
		}
	}
	writeRawJSON(q.w, http.StatusOK, data)
	return nil
}

// filterFor builds the namespace, label and field filter of a list or watch.
func (s *Server) filterFor(q *request) (objectFilter, error) {
	f := objectFilter{namespace: q.ri.namespace}
	ls, err := labels.Parse(q.query.Get("labelSelector"))
	if err != nil {
		return f, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	fs, err := fields.Parse(q.query.Get("fieldSelector"))
	if err != nil {
		return f, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	var known map[string]string
	if q.res.SelectableFields != nil {
		known = q.res.SelectableFields(map[string]any{})
	}
	selectable := false
	if err := fields.CheckSupported(fs, func(name string) bool {
		if name == "metadata.name" || (name == "metadata.namespace" && q.res.Namespaced) {
			return true
		}
		_, ok := known[name]
		selectable = selectable || ok
		return ok
	}); err != nil {
		return f, apierrors.NewBadRequest(err.Error())
	}
	if selectable && q.res.Convert != nil {
		if q.res.StorageFieldLabels != nil {
			fs = storageFieldSelector(fs, q.res.StorageFieldLabels)
		} else {
			f.fieldsOf = selectableFieldsIn(q.res)
		}
	}
	if !ls.Empty() || !fs.Empty() {
		reqs := fs.Requirements()
		f.match = func(o *cachedObject, fl map[string]string) bool {
			return ls.Matches(o.labels) && fieldsMatch(reqs, o.name, fl)
		}
	}
	return f, nil
}

// selectableFieldsIn returns the fields of objects as res's version sees
// them: the watch cache computes selectable fields once, on the stored object
// with the storage version's paths; in another version (or for an object
// stored in an older version) the object is converted first, as Kubernetes
// evaluates a field selector on the object in the requested version. An
// object that does not convert matches no selectable field.
func selectableFieldsIn(res *registry.Resource) func(o *cachedObject) map[string]string {
	v := viewOf(res)
	version := res.GroupVersion.String()
	stored := res.StorageGroupVersion() == res.GroupVersion
	known := res.SelectableFields(map[string]any{})
	return func(o *cachedObject) map[string]string {
		if stored && o.apiVersion == version && hasKeys(o.fields, known) {
			return o.fields
		}
		m, err := api.DecodeMap(o.data)
		if err == nil {
			m, err = v.object(m)
		}
		if err != nil {
			return map[string]string{"metadata.namespace": o.namespace}
		}
		return objectFields(m, o.namespace, res.Namespaced, res.SelectableFields)
	}
}

// storageFieldSelector rewrites fs's labels to the storage version's
// (registry.Resource.StorageFieldLabels).
func storageFieldSelector(fs fields.Selector, labels map[string]string) fields.Selector {
	reqs := fs.Requirements()
	for i, r := range reqs {
		if l, ok := labels[r.Field]; ok {
			reqs[i].Field = l
		}
	}
	return fields.NewSelector(reqs...)
}

// fieldsMatch reports whether an object named name with selectable fields fl
// (cachedObject.fields: metadata.name is not among them) satisfies every
// requirement; a missing field is "".
func fieldsMatch(reqs []fields.Requirement, name string, fl map[string]string) bool {
	for _, r := range reqs {
		v := fl[r.Field]
		if r.Field == "metadata.name" {
			v = name
		}
		ok := v == r.Value
		if r.Operator == fields.NotEquals {
			ok = !ok
		}
		if !ok {
			return false
		}
	}
	return true
}

// hasKeys reports whether every key of want is in m.
func hasKeys(m, want map[string]string) bool {
	for k := range want {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// continueToken is the opaque pagination state: the list revision and the next
// key. Revision latestRV (-1, as Kubernetes' token) continues at the latest
// revision: the token a 410 for a compacted continue offers, for a list that
// goes on inconsistently.
type continueToken struct {
	RV    int64  `json:"rv"`
	Start string `json:"start"`
}

const latestRV = -1

func encodeContinue(rv int64, start string) string {
	b, _ := json.Marshal(continueToken{RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil || (t.RV <= 0 && t.RV != latestRV) {
		return t, apierrors.NewBadRequest("invalid continue token")
	}
	return t, nil
}

const continueExpiredMessage = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

func (s *Server) serveList(q *request) error {
	if isTrue(q.query.Get("sendInitialEvents")) {
		return apierrors.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{
			field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list")})
	}
	rvParam := q.query.Get("resourceVersion")
	match := q.query.Get("resourceVersionMatch")
	if match != "" && rvParam == "" {
		return apierrors.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{
			field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden unless resourceVersion is provided")})
	}
	switch match {
	case "", "Exact", "NotOlderThan":
	default:
		return apierrors.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{
			field.NotSupported(field.NewPath("resourceVersionMatch"), match, []string{"Exact", "NotOlderThan"})})
	}
	rv, err := parseRV(rvParam)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	f, err := s.filterFor(q)
	if err != nil {
		return err
	}
	var limit int64
	if v := q.query.Get("limit"); v != "" {
		// Negative limits mean no limit, as in Kubernetes; garbage is refused.
		if limit, err = strconv.ParseInt(v, 10, 64); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q", v))
		}
	}
	cont := q.query.Get("continue")
	if cont != "" && rvParam != "" && rvParam != "0" {
		return apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}

	var objs []*cachedObject
	var listRV int64
	var next string
	var remaining *int64
	var fresh *watchCache
	if cont == "" && rvParam == "" && limit <= 0 {
		fresh = s.consistentCache(q.ctx(), q.res)
	}
	switch {
	case cont == "" && rvParam != "" && match != "Exact":
		// "0" or NotOlderThan: serve from the watch cache when it is fresh enough.
		wc, err := s.cacheFor(q.ctx(), q.res)
		if err != nil {
			return internalError("watch cache: %v", err)
		}
		if rv == 0 {
			s.waitOwnWrites(q.ctx(), wc, storagePrefix(q.res))
		}
		if rv > 0 && !wc.waitForRV(q.ctx(), rv, 100*time.Millisecond) {
			cur, err := s.opts.Storage.CurrentRevision(q.ctx())
			if err != nil {
				return internalError("%v", err)
			}
			if rv > cur {
				return tooLargeRV(rv, cur)
			}
			objs, listRV, next, remaining, err = s.listStorage(q, f, 0, "", limit)
			if err != nil {
				return err
			}
			break
		}
		objs, listRV = wc.list(f)
	case fresh != nil:
		// The latest state, whole: from the watch cache once it is known to be
		// current (consistentlist.go).
		objs, listRV = fresh.list(f)
	default:
		start := ""
		at := int64(0)
		if cont != "" {
			t, err := decodeContinue(cont)
			if err != nil {
				return err
			}
			at, start = max(t.RV, 0), t.Start
		} else if match == "Exact" {
			at = rv
		}
		objs, listRV, next, remaining, err = s.listStorage(q, f, at, start, limit)
		if err != nil {
			if errors.Is(err, storage.ErrCompacted) {
				if cont != "" {
					// As Kubernetes: the 410 carries a token that continues
					// from the same key at the latest revision.
					expired := apierrors.NewResourceExpired(continueExpiredMessage)
					expired.ErrStatus.Metadata.Continue = encodeContinue(latestRV, start)
					return expired
				}
				return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", rv))
			}
			if errors.Is(err, storage.ErrFutureRevision) {
				// An Exact resourceVersion (or a forged continue token) ahead of
				// the store: the client's fault, answered like NotOlderThan's.
				cur, cerr := s.opts.Storage.CurrentRevision(q.ctx())
				if cerr != nil {
					return internalError("%v", cerr)
				}
				return tooLargeRV(at, cur)
			}
			return err
		}
	}
	// Items not in the requested version are converted together (one
	// ConversionReview for a conversion webhook) and cached per version.
	if err := viewOf(q.res).renderAll(objs); err != nil {
		return internalError("%v", err)
	}
	if acceptsTable(q.r) {
		t, err := s.table(q, objs, true)
		if err != nil {
			return err
		}
		lm := map[string]any{"resourceVersion": strconv.FormatInt(listRV, 10)}
		if next != "" {
			lm["continue"] = next
		}
		if remaining != nil {
			lm["remainingItemCount"] = *remaining
		}
		t["metadata"] = lm
		writeJSON(q.w, http.StatusOK, t)
		return nil
	}
	return writeList(q, objs, listRV, next, remaining)
}

// writeList renders a list by concatenating each object's cached JSON,
// streamed through a 64 KiB buffer (a list of thousands of objects is not
// built in one allocation first).
func writeList(q *request, objs []*cachedObject, rv int64, next string, remaining *int64) error {
	v := viewOf(q.res)
	items := make([][]byte, len(objs))
	size := 0
	for i, o := range objs {
		data, err := o.dataFor(v)
		if err != nil {
			return internalError("%v", err)
		}
		items[i] = data
		size += len(data) + 1
	}
	head := make([]byte, 0, 256)
	head = append(head, `{"kind":`...)
	head = strconv.AppendQuote(head, q.res.ListKind)
	head = append(head, `,"apiVersion":`...)
	head = strconv.AppendQuote(head, q.res.GroupVersion.String())
	head = append(head, `,"metadata":{"resourceVersion":"`...)
	head = strconv.AppendInt(head, rv, 10)
	head = append(head, '"')
	if next != "" {
		head = append(head, `,"continue":`...)
		head = strconv.AppendQuote(head, next)
	}
	if remaining != nil {
		head = append(head, `,"remainingItemCount":`...)
		head = strconv.AppendInt(head, *remaining, 10)
	}
	head = append(head, `},"items":[`...)
	if len(items) > 0 {
		size-- // no comma before the first item
	}
	if len(items) < 64 || size < 64<<10 {
		b := make([]byte, 0, len(head)+size+2)
		b = append(b, head...)
		for i, data := range items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, data...)
		}
		b = append(b, "]}"...)
		writeRawJSON(q.w, http.StatusOK, b)
		return nil
	}
	q.w.Header().Set("Content-Type", mediaJSON)
	q.w.Header().Set("Content-Length", strconv.Itoa(len(head)+size+2))
	q.w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(q.w, 64<<10)
	_, _ = bw.Write(head)
	for i, data := range items {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		if _, err := bw.Write(data); err != nil {
			return nil // the client went away; the status is sent
		}
	}
	_, _ = bw.WriteString("]}")
	_ = bw.Flush()
	return nil
}

// listStorage reads a consistent page from storage at revision at (0: latest),
// filling up to limit matching objects.
func (s *Server) listStorage(q *request, f objectFilter, at int64, start string, limit int64) ([]*cachedObject, int64, string, *int64, error) {
	prefix := listPrefix(q)
	fieldsOf := s.storedFields(q.res)
	if start == "" {
		start = prefix
	}
	var out []*cachedObject
	listRV := at
	for {
		page := int64(0)
		if limit > 0 {
			page = max(limit-int64(len(out)), 1)
			if f.match != nil {
				page = max(page, 100)
			}
		}
		res, err := s.opts.Storage.List(q.ctx(), prefix, storage.ListOptions{Revision: listRV, Limit: page, StartKey: start})
		if err != nil {
			if errors.Is(err, storage.ErrCompacted) || errors.Is(err, storage.ErrFutureRevision) {
				return nil, 0, "", nil, err
			}
			return nil, 0, "", nil, internalError("list: %v", err)
		}
		listRV = res.Revision
		for i, kv := range res.Items {
			o, err := buildCachedObject(kv.Key, kv.Value, kv.ModRevision, q.res.Namespaced, fieldsOf)
			if err != nil {
				s.log.Error(err, "Skipping undecodable object", "key", kv.Key)
				continue
			}
			if !f.matches(o) {
				continue
			}
			out = append(out, o)
			if limit > 0 && int64(len(out)) == limit {
				more := res.More || i < len(res.Items)-1
				if !more {
					return out, listRV, "", nil, nil
				}
				next := encodeContinue(listRV, kv.Key+"\x00")
				var remaining *int64
				if f.match == nil {
					r := res.Remaining + int64(len(res.Items)-1-i)
					remaining = &r
				}
				return out, listRV, next, remaining, nil
			}
		}
		if !res.More || len(res.Items) == 0 {
			return out, listRV, "", nil, nil
		}
		start = res.Items[len(res.Items)-1].Key + "\x00"
	}
}

// objectMap decodes a cached object's JSON in v's version.
func objectMap(o *cachedObject, v view) (map[string]any, error) {
	data, err := o.dataFor(v)
	if err != nil {
		return nil, err
	}
	return api.DecodeMap(data)
}

var _ = context.Background
var _ = strings.TrimSpace

// tooLargeRV is Kubernetes' answer to a read at a revision the storage has not
// reached: 504 Timeout, "Too large resource version".
func tooLargeRV(rv, cur int64) error {
	return apierrors.NewTimeout(fmt.Sprintf("Too large resource version: %d, current: %d", rv, cur),
		api.StatusCause{Type: "ResourceVersionTooLarge", Message: "Too large resource version"})
}
