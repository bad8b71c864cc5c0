package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client/rest"
)

// EventType is the type of a watch event.
type EventType string

// Watch event types.
const (
	Added    EventType = api.EventAdded
	Modified EventType = api.EventModified
	Deleted  EventType = api.EventDeleted
	Bookmark EventType = api.EventBookmark
	Error    EventType = api.EventError
)

// Event is one change seen by a Watch. Object is a new object of the watched
// kind (typed when the list is typed, *api.Unstructured otherwise): the new state
// for Added/Modified, the last state for Deleted, and only kind and
// metadata.resourceVersion for Bookmark. For Error, Object is nil and Err holds
// the server's *errors.StatusError (e.g. 410 Expired: relist) or a decoding error.
type Event struct {
	Type   EventType
	Object api.Object
	Err    error
}

// Watcher delivers the events of one watch.
type Watcher interface {
	// ResultChan yields events until the watch ends; then it is closed.
	ResultChan() <-chan Event
	// Stop ends the watch and releases its connection. It is idempotent.
	Stop()
}

// Watch watches the collection of list's kind (list itself is not modified).
// Use ResourceVersion to start after a List, AllowWatchBookmarks for bookmarks.
// The watch ends when the server closes the stream, Stop is called or ctx ends.
func (c *Client) Watch(ctx context.Context, list ObjectList, opts ...ListOption) (Watcher, error) {
	t, err := c.resolveList(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	var o ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	newObj := func() (api.Object, error) { return c.scheme.New(t.gvk) }
	if _, ok := list.(*api.UnstructuredList); ok {
		newObj = func() (api.Object, error) { return &api.Unstructured{}, nil }
	}
	if _, err := newObj(); err != nil {
		return nil, fmt.Errorf("watch %s: %w", t.gvk.Kind, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	body, err := c.rc.Stream(wctx, rest.Request{Method: http.MethodGet, Path: t.path(o.Namespace, ""), Query: o.query(true)})
	if err != nil {
		cancel()
		return nil, err
	}
	w := &streamWatcher{ch: make(chan Event), cancel: cancel, done: make(chan struct{})}
	go w.run(wctx, body, newObj)
	return w, nil
}

type streamWatcher struct {
	ch     chan Event
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func (w *streamWatcher) ResultChan() <-chan Event { return w.ch }

// Stop cancels the stream and waits until the reading goroutine has exited.
func (w *streamWatcher) Stop() {
	w.once.Do(w.cancel)
	<-w.done
}

func (w *streamWatcher) run(ctx context.Context, body io.ReadCloser, newObj func() (api.Object, error)) {
	defer close(w.done)
	defer close(w.ch)
	defer body.Close()
	defer w.cancel()
	frames := newFrameReader(body)
	for {
		f, err := frames.next()
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return
			}
			w.send(ctx, Event{Type: Error, Err: fmt.Errorf("watch stream: %w", err)})
			return
		}
		ev := decodeEvent(f, newObj)
		if f.split && ev.Type == Error {
			// The line was not the event it looked like (e.g. a field after
			// the object): read the stream as JSON from the line on.
			if f, err = frames.reread(f); err != nil {
				w.send(ctx, Event{Type: Error, Err: fmt.Errorf("watch stream: %w", err)})
				return
			}
			ev = decodeEvent(f, newObj)
		}
		if !w.send(ctx, ev) {
			return
		}
	}
}

// decodeEvent turns one event as read into an Event with its object decoded.
func decodeEvent(f frame, newObj func() (api.Object, error)) Event {
	raw := f.raw
	ev := Event{Type: EventType(raw.Type)}
	switch ev.Type {
	case Error:
		var st api.Status
		if err := json.Unmarshal(raw.Object.Raw, &st); err != nil {
			ev.Err = fmt.Errorf("watch stream: decode error event: %w", err)
		} else {
			if st.Status == "" {
				st.Status = api.StatusFailure
			}
			ev.Err = apierrors.FromStatus(st)
		}
	case Added, Modified, Deleted, Bookmark:
		obj, err := newObj()
		if err == nil {
			err = decodeFresh(raw.Object.Raw, obj)
		}
		if err != nil {
			ev = Event{Type: Error, Err: fmt.Errorf("watch stream: %s event: %w", raw.Type, err)}
		} else {
			ev.Object = obj
		}
	default:
		ev = Event{Type: Error, Err: fmt.Errorf("watch stream: unknown event type %q", raw.Type)}
	}
	return ev
}

func (w *streamWatcher) send(ctx context.Context, ev Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
