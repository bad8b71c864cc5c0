package record

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Event types.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// WriteTimeout bounds one event write.
const WriteTimeout = 10 * time.Second

const maxRemembered = 4096

// Client is what a Recorder needs; *client.Client implements it.
type Client interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Patch(ctx context.Context, obj api.Object, p client.Patch, opts ...client.PatchOption) error
	GroupVersionKindFor(obj any) (api.GroupVersionKind, error)
}

// Recorder records events on behalf of one component (e.g. a controller).
type Recorder struct {
	c         Client
	component string
	host      string
	log       logr.Logger

	mu   sync.Mutex
	seen map[eventKey]*seenEvent // guarded by mu
}

type eventKey struct{ uid, typ, reason, message string }

type seenEvent struct {
	namespace, name string
	count           int32
}

// New returns a recorder writing with c as component.
func New(c Client, component string, log logr.Logger) *Recorder {
	host, _ := os.Hostname()
	return &Recorder{c: c, component: component, host: host, log: log.WithValues("component", component), seen: map[eventKey]*seenEvent{}}
}

// Eventf records an event with a formatted message.
func (r *Recorder) Eventf(ctx context.Context, obj api.Object, eventType, reason, format string, args ...any) {
	r.Event(ctx, obj, eventType, reason, fmt.Sprintf(format, args...))
}

// Event records that reason happened to obj (eventType is Normal or Warning;
// reason is a short UpperCamelCase word; message is for humans).
func (r *Recorder) Event(ctx context.Context, obj api.Object, eventType, reason, message string) {
	ctx, cancel := context.WithTimeout(ctx, WriteTimeout)
	defer cancel()
	if err := r.record(ctx, obj, eventType, reason, message); err != nil {
		r.log.Error(err, "Failed to record event", "object", key(obj), "reason", reason)
	}
}

func (r *Recorder) record(ctx context.Context, obj api.Object, eventType, reason, message string) error {
	now := api.Now()
	k := eventKey{uid: obj.GetUID(), typ: eventType, reason: reason, message: message}
	if k.uid == "" {
		k.uid = key(obj)
	}
	r.mu.Lock()
	prev, ok := r.seen[k]
	var count int32
	if ok {
		prev.count++
		count = prev.count
	}
	r.mu.Unlock()

	if ok {
		ev := newEvent(prev.namespace, prev.name)
		body, err := json.Marshal(map[string]any{"count": count, "lastTimestamp": now})
		if err != nil {
			return err
		}
		err = r.c.Patch(ctx, ev, client.RawPatch(client.MergePatchType, body))
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
		// The event expired on the server: create a new one.
	}

	gvk, err := r.c.GroupVersionKindFor(obj)
	if err != nil {
		return fmt.Errorf("record: kind of %s: %w", key(obj), err)
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	ev := newEvent(ns, obj.GetName()+"."+strconv.FormatInt(time.Now().UnixNano(), 16))
	ev.InvolvedObject = objectReference{
		APIVersion: gvk.APIVersion(), Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(),
	}
	ev.Reason, ev.Message, ev.Type = reason, message, eventType
	ev.Source = eventSource{Component: r.component, Host: r.host}
	ev.FirstTimestamp, ev.LastTimestamp, ev.Count = now, now, 1
	ev.ReportingComponent, ev.ReportingInstance = r.component, r.host
	if err := r.c.Create(ctx, ev); err != nil {
		return err
	}
	r.mu.Lock()
	if len(r.seen) >= maxRemembered {
		clear(r.seen)
	}
	r.seen[k] = &seenEvent{namespace: ev.Namespace, name: ev.Name, count: 1}
	r.mu.Unlock()
	return nil
}

func key(obj api.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
