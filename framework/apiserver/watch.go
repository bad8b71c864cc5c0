package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

func (s *Server) serveWatch(q *request) error {
	wl, err := parseWatchList(q)
	if err != nil {
		return err
	}
	rv, err := parseRV(q.query.Get("resourceVersion"))
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	f, err := s.filterFor(q)
	if err != nil {
		return err
	}
	// A watch on one object by name (kubectl get -w NAME) filters by name too.
	if q.ri.name != "" {
		name := q.ri.name
		inner := f.match
		f.match = func(o *cachedObject, fl map[string]string) bool {
			return o.name == name && (inner == nil || inner(o, fl))
		}
	}
	gv := q.res.GroupVersion
	st := &watchStream{frame: jsonFrames(viewOf(q.res)), sent: s.metrics.watchEventCounter(gv.Group, gv.Version, q.res.Resource)}
	if ts := q.query.Get("timeoutSeconds"); ts != "" {
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || n < 0 {
			return apierrors.NewBadRequest("invalid timeoutSeconds: " + ts)
		}
		st.timeout = time.Duration(n) * time.Second
	} else if t := q.query.Get("timeout"); t != "" {
		if d, err := time.ParseDuration(t); err == nil {
			st.timeout = d
		}
	}
	if acceptsTable(q.r) {
		first := true
		st.frame = func(ev *cacheEvent, typ string, _ *[]byte) ([]byte, error) {
			b := s.tableFrame(q, ev.obj, typ, first)
			first = false
			return b, nil
		}
	}
	if isTrue(q.query.Get("allowWatchBookmarks")) {
		st.bookmarkEvery = s.opts.BookmarkInterval
		kind, av := q.res.Kind, q.res.GroupVersion.String()
		st.bookmark = func(rv int64) []byte {
			return fmt.Appendf(nil, `{"type":"BOOKMARK","object":{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"%d","creationTimestamp":null}}}`+"\n",
				kind, av, rv)
		}
	}
	contentType := mediaJSON
	if s.protoWatch(q, st) {
		contentType = mediaProtobufWatch
	}
	wc, err := s.cacheFor(q.ctx(), q.res)
	if err != nil {
		return internalError("watch cache: %v", err)
	}
	var w *cacheWatcher
	var initial []*cacheEvent
	switch {
	case wl.initialEvents:
		// A streaming list: the state at a revision not older than asked, then
		// the initial-events-end bookmark, then what follows.
		w, initial, err = s.startWatchList(q, wc, f, rv, wl.consistent)
		if err != nil {
			var se *apierrors.StatusError
			if errors.As(err, &se) {
				return err
			}
		} else if st.bookmark != nil {
			st.initialEnd = initialEventsEnd(q.res.Kind, q.res.GroupVersion.String())
			if st.protoInitialEnd != nil {
				st.initialEnd = st.protoInitialEnd
			}
		}
	case wl.set && rv == 0:
		// sendInitialEvents=false: changes from now on (after this server's
		// own writes so far), no initial state.
		s.waitOwnWrites(q.ctx(), wc, storagePrefix(q.res))
		w, initial, err = wc.watch(max(wc.currentRV(), 1), f)
	default:
		if rv == 0 {
			s.waitOwnWrites(q.ctx(), wc, storagePrefix(q.res))
		}
		w, initial, err = wc.watchFrom(q.ctx(), rv, f)
	}
	if err != nil {
		var tooOld errTooOld
		if errors.As(err, &tooOld) {
			return apierrors.NewResourceExpired(tooOld.Error())
		}
		return internalError("watch: %v", err)
	}
	defer wc.forget(w)
	if len(initial) > 0 {
		// The initial events are converted together, like a list's items. If
		// that fails, each is converted on its own as it is sent and one that
		// fails becomes an ERROR event.
		objs := make([]*cachedObject, len(initial))
		for i, ev := range initial {
			objs[i] = ev.obj
		}
		if err := viewOf(q.res).renderAll(objs); err != nil {
			s.log.V(1).Info("Converting the initial events of a watch failed", "resource", q.res.Resource, "error", err.Error())
		}
	}
	q.w.Header().Set("Content-Type", contentType)
	q.w.Header().Set("Transfer-Encoding", "chunked")
	q.w.WriteHeader(http.StatusOK)
	st.run(q.ctx(), w, initial, responseSink{q.w})
	return nil
}

// watchSink receives a watch stream (the HTTP response in serveWatch).
type watchSink interface {
	Write(p []byte) (int, error)
	// Flush sends what was written so far.
	Flush()
}

type responseSink struct{ w http.ResponseWriter }

func (r responseSink) Write(p []byte) (int, error) { return r.w.Write(p) }

func (r responseSink) Flush() {
	if f, ok := r.w.(http.Flusher); ok {
		f.Flush()
	}
}

// watchStream renders one client watch.
type watchStream struct {
	// frame renders one event as the client sees it; it may render into
	// *scratch (see cacheEvent.frame).
	frame func(ev *cacheEvent, typ string, scratch *[]byte) ([]byte, error)
	// bookmark renders a BOOKMARK at rv; nil when bookmarks were not asked for.
	bookmark      func(rv int64) []byte
	bookmarkEvery time.Duration
	// initialEnd renders the bookmark that ends a streaming list's initial
	// events (sendInitialEvents=true with bookmarks); nil otherwise.
	initialEnd func(rv int64) []byte
	// timeout ends the stream; 0 means none.
	timeout time.Duration
	// sent counts the events written (apiserver_watch_events_total); may be nil.
	sent prometheus.Counter
	// errorFrame renders the event that reports a frame that failed to
	// render, before the stream ends; nil means errorFrame's JSON ERROR event.
	errorFrame func(err error) []byte
	// protoInitialEnd is initialEnd for a protobuf stream (see protoWatch).
	protoInitialEnd func(rv int64) []byte
}

// jsonFrames renders events as JSON watch frames in v's version (see
// cacheEvent.frame): the object's JSON is serialized once per version and
// shared by every watcher.
func jsonFrames(v view) func(ev *cacheEvent, typ string, scratch *[]byte) ([]byte, error) {
	return func(ev *cacheEvent, typ string, scratch *[]byte) ([]byte, error) { return ev.frame(typ, v, scratch) }
}

// run writes the stream until ctx ends, the timeout passes, the watcher ends
// (relist, server stop, or it fell behind) or a write fails: the initial events,
// then each batch of new events followed by one flush, and bookmarks at the
// revision up to which the watcher has seen every event.
func (st *watchStream) run(ctx context.Context, w *cacheWatcher, initial []*cacheEvent, sink watchSink) {
	var scratch []byte // frames rendered for this stream alone; the sink copies them
	emit := func(ev *cacheEvent, typ string) error {
		b, err := st.frame(ev, typ, &scratch)
		if err != nil {
			if st.errorFrame != nil {
				b = st.errorFrame(err)
			} else {
				b = errorFrame(err)
			}
		}
		if _, werr := sink.Write(b); werr != nil {
			return werr
		}
		if st.sent != nil {
			st.sent.Inc()
		}
		return err
	}
	for _, ev := range initial {
		if err := emit(ev, api.EventAdded); err != nil {
			return
		}
	}
	if st.initialEnd != nil {
		if _, err := sink.Write(st.initialEnd(w.startRV)); err != nil {
			return
		}
	}
	sink.Flush()
	// The initial events are sent: priority and fairness gives the
	// watch's seats back.
	filters.WatchInitialized(ctx)
	var timeoutC <-chan time.Time
	if st.timeout > 0 {
		t := time.NewTimer(st.timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	var bookmarkC <-chan time.Time
	if st.bookmark != nil && st.bookmarkEvery > 0 {
		t := time.NewTicker(st.bookmarkEvery)
		defer t.Stop()
		bookmarkC = t.C
	}
	for {
		wake := w.c.wakeChan() // before consuming, so no publish is missed
		n, err := w.consume(emit)
		if n > 0 || err != nil {
			sink.Flush()
		}
		if err != nil {
			return
		}
		select {
		case <-wake:
		case <-w.done:
			return
		case <-ctx.Done():
			return
		case <-timeoutC:
			return
		case <-bookmarkC:
			if _, err := w.consume(emit); err != nil {
				sink.Flush()
				return
			}
			if _, err := sink.Write(st.bookmark(w.lastRV)); err != nil {
				return
			}
			sink.Flush()
		}
	}
}

// errorFrame renders an ERROR watch event for err.
func errorFrame(err error) []byte {
	b, _ := json.Marshal(map[string]any{"type": "ERROR", "object": map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": err.Error(), "code": 500}})
	return append(b, '\n')
}

// watchListOptions are a watch's streaming-list parameters.
type watchListOptions struct {
	// set: sendInitialEvents was given (true or false).
	set bool
	// initialEvents: sendInitialEvents=true.
	initialEvents bool
	// consistent: the initial state must be the latest (resourceVersion "").
	consistent bool
}

// parseWatchList validates sendInitialEvents and resourceVersionMatch on a
// watch as Kubernetes does with the WatchList feature on: sendInitialEvents
// needs resourceVersionMatch=NotOlderThan, which needs sendInitialEvents.
func parseWatchList(q *request) (watchListOptions, error) {
	var o watchListOptions
	v, set := q.query["sendInitialEvents"]
	match := q.query.Get("resourceVersionMatch")
	var errs field.ErrorList
	if set {
		o.set = true
		b, err := strconv.ParseBool(v[0])
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("invalid sendInitialEvents %q: %v", v[0], err))
		}
		o.initialEvents = b
		if match != "NotOlderThan" {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
		}
	}
	if match != "" {
		if !set {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		if match != "NotOlderThan" {
			errs = append(errs, field.NotSupported(field.NewPath("resourceVersionMatch"), match, []string{"NotOlderThan"}))
		}
	}
	if len(errs) > 0 {
		return o, apierrors.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", errs)
	}
	o.consistent = o.initialEvents && q.query.Get("resourceVersion") == ""
	return o, nil
}

// startWatchList registers a streaming list's watcher and returns its initial
// events: the watch cache's state once it has reached rv (or the server's own
// writes for "0"); otherwise — a consistent request (resourceVersion ""), or
// an rv the cache has not reached because nothing under this resource changed
// since — the latest state read from storage, the watcher following from that
// read's revision. An rv beyond the storage's revision is a Timeout, "Too large
// resource version", as Kubernetes answers.
func (s *Server) startWatchList(q *request, wc *watchCache, f objectFilter, rv int64, consistent bool) (*cacheWatcher, []*cacheEvent, error) {
	if !consistent {
		if rv == 0 {
			s.waitOwnWrites(q.ctx(), wc, storagePrefix(q.res))
			return wc.watch(0, f)
		}
		if wc.waitForRV(q.ctx(), rv, 100*time.Millisecond) {
			return wc.watch(0, f)
		}
		cur, err := s.opts.Storage.CurrentRevision(q.ctx())
		if err != nil {
			return nil, nil, internalError("current revision: %v", err)
		}
		if rv > cur {
			return nil, nil, tooLargeRV(rv, cur)
		}
	}
	objs, listRV, _, _, err := s.listStorage(q, f, 0, "", 0)
	if err != nil {
		return nil, nil, err
	}
	w, _, err := wc.watchFrom(q.ctx(), listRV, f)
	if err != nil {
		return nil, nil, err
	}
	initial := make([]*cacheEvent, len(objs))
	for i, o := range objs {
		initial[i] = &cacheEvent{typ: api.EventAdded, obj: o, rv: o.rv}
	}
	return w, initial, nil
}

// initialEventsEnd renders the BOOKMARK that ends a streaming list's initial
// events: annotated k8s.io/initial-events-end, at the revision of the state sent.
func initialEventsEnd(kind, apiVersion string) func(rv int64) []byte {
	return func(rv int64) []byte {
		return fmt.Appendf(nil, `{"type":"BOOKMARK","object":{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"%d","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n",
			kind, apiVersion, rv)
	}
}
