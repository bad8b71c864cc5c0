package fakeclient

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/patch"
	"github.com/converge-dev/converge/framework/scheme"
)

// Client holds objects in memory and serves reads and writes on them. It is
// safe for concurrent use.
type Client struct {
	scheme *scheme.Scheme

	// Fail, when set, is called before every call with its verb ("get",
	// "list", "create", "update", "patch", "delete", "update-status",
	// "patch-status"), the key it names (for get the key asked, for list
	// none) and its object (for list the list); a non-nil error is returned
	// instead of doing the call.
	Fail func(verb string, key client.ObjectKey, obj any) error

	mu      sync.Mutex
	objs    map[api.GroupVersionKind]map[client.ObjectKey][]byte // JSON; guarded by mu
	gone    map[api.GroupVersionKind]map[client.ObjectKey][]byte // last state of deleted objects; guarded by mu
	rv      int                                                  // last resourceVersion; guarded by mu
	actions []string                                             // guarded by mu
}

// New returns a Client holding objs (copies), resolving kinds with s.
func New(s *scheme.Scheme, objs ...api.Object) *Client {
	c := &Client{scheme: s, objs: map[api.GroupVersionKind]map[client.ObjectKey][]byte{},
		gone: map[api.GroupVersionKind]map[client.ObjectKey][]byte{}}
	for _, o := range objs {
		if err := c.put(o); err != nil {
			panic(fmt.Sprintf("fakeclient: seed %T: %v", o, err)) // a broken test fixture
		}
	}
	return c
}

// Add stores a copy of obj as it is (an existing object is replaced), without
// recording an action.
func (c *Client) Add(obj api.Object) error { return c.put(obj) }

func (c *Client) put(obj api.Object) error {
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rv++
	return c.store(gvk, client.ObjectKeyFromObject(obj), obj, "")
}

// Actions returns the writes done so far, e.g. "create Pod ns/name",
// "delete Pod ns/name", "update-status DaemonSet ns/name".
func (c *Client) Actions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.actions)
}

// ResetActions forgets the recorded writes.
func (c *Client) ResetActions() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actions = nil
}

// Get copies the object named key into obj.
func (c *Client) Get(_ context.Context, key client.ObjectKey, obj api.Object) error {
	if err := c.fail("get", key, obj); err != nil {
		return err
	}
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.objs[gvk][key]
	if !ok {
		return notFound(gvk, key.Name)
	}
	return decode(b, obj)
}

// GetDeleted copies into obj the last state of the object named key before
// it was deleted (NotFound when it was never deleted): what a test checks
// of an object the reconciler wrote and then removed.
func (c *Client) GetDeleted(key client.ObjectKey, obj api.Object) error {
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.gone[gvk][key]
	if !ok {
		return notFound(gvk, key.Name)
	}
	return decode(b, obj)
}

// List fills list with the objects matching opts (namespace, label selector,
// field selectors on metadata.name and metadata.namespace), in key order.
func (c *Client) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.fail("list", client.ObjectKey{}, list); err != nil {
		return err
	}
	lgvk, err := c.scheme.ObjectKinds(list)
	if err != nil {
		return err
	}
	gvk := lgvk
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	var o client.ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]client.ObjectKey, 0, len(c.objs[gvk]))
	for k := range c.objs[gvk] {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b client.ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	items := []json.RawMessage{}
	for _, k := range keys {
		b := c.objs[gvk][k]
		var m api.ObjectMeta
		var meta struct {
			Metadata *api.ObjectMeta `json:"metadata"`
		}
		meta.Metadata = &m
		if err := json.Unmarshal(b, &meta); err != nil {
			return err
		}
		if o.Namespace != "" && m.Namespace != o.Namespace {
			continue
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(m.Labels) {
			continue
		}
		if o.FieldSelector != nil && !o.FieldSelector.Matches(map[string]string{"metadata.name": m.Name, "metadata.namespace": m.Namespace}) {
			continue
		}
		items = append(items, b)
	}
	wire := map[string]any{"apiVersion": lgvk.GroupVersion().String(), "kind": lgvk.Kind,
		"metadata": map[string]string{"resourceVersion": strconv.Itoa(c.rv)}, "items": items}
	b, err := json.Marshal(wire)
	if err != nil {
		return err
	}
	return decode(b, list)
}

// Create stores obj, setting its uid, resourceVersion, creationTimestamp and,
// from generateName, its name.
func (c *Client) Create(_ context.Context, obj api.Object, _ ...client.CreateOption) error {
	if err := c.fail("create", client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(fmt.Sprintf("%s%05d", obj.GetGenerateName(), c.rv+1))
	}
	key := client.ObjectKeyFromObject(obj)
	if _, ok := c.objs[gvk][key]; ok {
		return apierrors.NewAlreadyExists(resource(gvk), key.Name)
	}
	c.rv++
	obj.SetResourceVersion("")
	if err := c.store(gvk, key, obj, "uid-"+key.Name); err != nil {
		return err
	}
	c.record("create", gvk, key)
	return decode(c.objs[gvk][key], obj)
}

// Update replaces the stored object, keeping its status, after checking
// obj's resourceVersion when set.
func (c *Client) Update(_ context.Context, obj api.Object, _ ...client.UpdateOption) error {
	if err := c.fail("update", client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	return c.update(obj, "update", false)
}

// Patch applies a JSON, merge or strategic merge patch (the last treated as
// a merge patch) to the stored object and copies the result into obj.
func (c *Client) Patch(_ context.Context, obj api.Object, p client.Patch, _ ...client.PatchOption) error {
	if err := c.fail("patch", client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	return c.patch(obj, p, "patch", false)
}

// Delete removes obj, checking the uid and resourceVersion preconditions.
func (c *Client) Delete(_ context.Context, obj api.Object, opts ...client.DeleteOption) error {
	if err := c.fail("delete", client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	var o client.DeleteOptions
	for _, opt := range opts {
		opt.ApplyToDelete(&o)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	b, ok := c.objs[gvk][key]
	if !ok {
		return notFound(gvk, key.Name)
	}
	if pc := o.Preconditions; pc != nil {
		var cur struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(b, &cur); err != nil {
			return err
		}
		if pc.UID != nil && *pc.UID != cur.Metadata.UID || pc.ResourceVersion != nil && *pc.ResourceVersion != cur.Metadata.ResourceVersion {
			return apierrors.NewConflict(resource(gvk), key.Name, "precondition failed")
		}
	}
	delete(c.objs[gvk], key)
	if c.gone[gvk] == nil {
		c.gone[gvk] = map[client.ObjectKey][]byte{}
	}
	c.gone[gvk][key] = b
	c.record("delete", gvk, key)
	return nil
}

// Status returns a writer of the status subresource.
func (c *Client) Status() client.StatusWriter { return statusWriter{c} }

type statusWriter struct{ c *Client }

func (w statusWriter) Update(_ context.Context, obj api.Object, _ ...client.UpdateOption) error {
	if err := w.c.fail("update-status", client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	return w.c.update(obj, "update-status", true)
}

func (w statusWriter) Patch(_ context.Context, obj api.Object, p client.Patch, _ ...client.PatchOption) error {
	if err := w.c.fail("patch-status", client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	return w.c.patch(obj, p, "patch-status", true)
}

func (c *Client) update(obj api.Object, verb string, status bool) error {
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	old, ok := c.objs[gvk][key]
	if !ok {
		return notFound(gvk, key.Name)
	}
	var cur map[string]any
	if err := json.Unmarshal(old, &cur); err != nil {
		return err
	}
	meta, _ := cur["metadata"].(map[string]any)
	if rv := obj.GetResourceVersion(); rv != "" && rv != meta["resourceVersion"] {
		return apierrors.NewConflict(resource(gvk), key.Name, "the object has been modified; please apply your changes to the latest version and try again")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var next map[string]any
	if err := json.Unmarshal(b, &next); err != nil {
		return err
	}
	return c.commit(gvk, key, obj, cur, next, verb, status)
}

func (c *Client) patch(obj api.Object, p client.Patch, verb string, status bool) error {
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return err
	}
	data, err := p.Data(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	old, ok := c.objs[gvk][key]
	if !ok {
		return notFound(gvk, key.Name)
	}
	var patched []byte
	switch p.Type() {
	case client.JSONPatchType:
		patched, err = patch.JSONPatch(old, data)
	case client.StrategicMergePatchType:
		patched, err = patch.StrategicMergePatch(old, data, reflect.TypeOf(obj).Elem())
	default:
		patched, err = patch.MergePatch(old, data)
	}
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	var cur, next map[string]any
	if err := json.Unmarshal(old, &cur); err != nil {
		return err
	}
	if err := json.Unmarshal(patched, &next); err != nil {
		return err
	}
	meta, _ := cur["metadata"].(map[string]any)
	nmeta, _ := next["metadata"].(map[string]any)
	if rv, ok := nmeta["resourceVersion"]; ok && rv != meta["resourceVersion"] {
		return apierrors.NewConflict(resource(gvk), key.Name, "the object has been modified")
	}
	return c.commit(gvk, key, obj, cur, next, verb, status)
}

// commit stores next (a status write keeps everything but cur's status, any
// other write keeps cur's status), bumps the resourceVersion and copies the
// result into obj; c.mu is held.
func (c *Client) commit(gvk api.GroupVersionKind, key client.ObjectKey, obj api.Object, cur, next map[string]any, verb string, status bool) error {
	if status {
		st := next["status"]
		next = cur
		if st == nil {
			delete(next, "status")
		} else {
			next["status"] = st
		}
	} else if st, ok := cur["status"]; ok {
		next["status"] = st
	} else {
		delete(next, "status")
	}
	meta, _ := next["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		next["metadata"] = meta
	}
	cmeta, _ := cur["metadata"].(map[string]any)
	for _, f := range []string{"uid", "creationTimestamp", "name", "namespace"} {
		if v, ok := cmeta[f]; ok {
			meta[f] = v
		}
	}
	c.rv++
	meta["resourceVersion"] = strconv.Itoa(c.rv)
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	c.objs[gvk][key] = b
	c.record(verb, gvk, key)
	return decode(b, obj)
}

// store saves a copy of obj under key with resourceVersion c.rv when it has
// none, and uid when it has none and uid is set; c.mu is held.
func (c *Client) store(gvk api.GroupVersionKind, key client.ObjectKey, obj api.Object, uid string) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		m["metadata"] = meta
	}
	if uid != "" && (meta["uid"] == nil || meta["uid"] == "") {
		meta["uid"] = uid
	}
	if meta["resourceVersion"] == nil || meta["resourceVersion"] == "" {
		meta["resourceVersion"] = strconv.Itoa(c.rv)
	}
	if b, err = json.Marshal(m); err != nil {
		return err
	}
	if c.objs[gvk] == nil {
		c.objs[gvk] = map[client.ObjectKey][]byte{}
	}
	c.objs[gvk][key] = b
	return nil
}

func (c *Client) record(verb string, gvk api.GroupVersionKind, key client.ObjectKey) {
	c.actions = append(c.actions, verb+" "+gvk.Kind+" "+key.String())
}

func (c *Client) fail(verb string, key client.ObjectKey, obj any) error {
	if c.Fail == nil {
		return nil
	}
	return c.Fail(verb, key, obj)
}

func notFound(gvk api.GroupVersionKind, name string) error {
	return apierrors.NewNotFound(resource(gvk), name)
}

func resource(gvk api.GroupVersionKind) api.GroupResource {
	return api.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
}

// decode replaces *dst with the object in b.
func decode(b []byte, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("fakeclient: %T is not a non-nil pointer", dst)
	}
	v.Elem().SetZero()
	return json.Unmarshal(b, dst)
}
