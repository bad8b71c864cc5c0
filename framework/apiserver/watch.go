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
)

func (s *Server) serveWatch(q *request) error {
	if isTrue(q.query.Get("sendInitialEvents")) {
		return apierrors.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{
			field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")})
	}
	if q.query.Get("resourceVersionMatch") != "" {
		return apierrors.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", field.ErrorList{
			field.Forbidden(field.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")})
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
		f.match = func(l, fl map[string]string) bool {
			return fl["metadata.name"] == name && (inner == nil || inner(l, fl))
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
		st.frame = func(ev *cacheEvent, typ string) ([]byte, error) {
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
	wc, err := s.cacheFor(q.ctx(), q.res)
	if err != nil {
		return internalError("watch cache: %v", err)
	}
	if rv == 0 {
		s.waitOwnWrites(q.ctx(), wc, storagePrefix(q.res))
	}
	w, initial, err := wc.watch(rv, f)
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
	q.w.Header().Set("Content-Type", mediaJSON)
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
	// frame renders one event as the client sees it.
	frame func(ev *cacheEvent, typ string) ([]byte, error)
	// bookmark renders a BOOKMARK at rv; nil when bookmarks were not asked for.
	bookmark      func(rv int64) []byte
	bookmarkEvery time.Duration
	// timeout ends the stream; 0 means none.
	timeout time.Duration
	// sent counts the events written (apiserver_watch_events_total); may be nil.
	sent prometheus.Counter
}

// jsonFrames renders events as JSON watch frames in v's version, each serialized
// once and shared by every watcher of that version.
func jsonFrames(v view) func(ev *cacheEvent, typ string) ([]byte, error) {
	return func(ev *cacheEvent, typ string) ([]byte, error) { return ev.obj.frame(typ, v) }
}

// run writes the stream until ctx ends, the timeout passes, the watcher ends
// (relist, server stop, or it fell behind) or a write fails: the initial events,
// then each batch of new events followed by one flush, and bookmarks at the
// revision up to which the watcher has seen every event.
func (st *watchStream) run(ctx context.Context, w *cacheWatcher, initial []*cacheEvent, sink watchSink) {
	emit := func(ev *cacheEvent, typ string) error {
		b, err := st.frame(ev, typ)
		if err != nil {
			b = errorFrame(err)
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
	sink.Flush()
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
