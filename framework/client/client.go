package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/framework/client/restmapper"
	"github.com/converge-dev/converge/framework/scheme"
)

// Config says how to reach the API server; see rest.Config.
type Config = rest.Config

// ObjectKey names an object: namespace (empty for cluster-scoped) and name.
type ObjectKey struct {
	Namespace string
	Name      string
}

// String renders "namespace/name", or "name" when cluster-scoped.
func (k ObjectKey) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// ObjectKeyFromObject returns the key of obj.
func ObjectKeyFromObject(obj api.Object) ObjectKey {
	return ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// IgnoreNotFound returns nil for a NotFound error and err otherwise.
func IgnoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// ObjectList is a list of objects: a pointer to a list struct registered in the
// Scheme (TypeMeta, ListMeta and Items, e.g. *corev1.ConfigMapList) or an
// *api.UnstructuredList whose APIVersion and Kind are set (Kind may be the list
// kind "ConfigMapList" or the item kind "ConfigMap").
type ObjectList = any

// RESTMapper maps kinds to resources. *restmapper.Mapper implements it.
type RESTMapper interface {
	RESTMapping(ctx context.Context, gvk api.GroupVersionKind) (*restmapper.Mapping, error)
}

// Options configure a Client. The zero value means defaults.
type Options struct {
	// Scheme knows the typed objects (default: an empty Scheme, so only
	// Unstructured objects and objects with TypeMeta set work).
	Scheme *scheme.Scheme
	// Mapper maps kinds to resources (default: a restmapper.Mapper over cfg).
	Mapper RESTMapper
}

// Client talks to one API server. Build it with New; it is safe for concurrent use.
type Client struct {
	rc     *rest.Client
	scheme *scheme.Scheme
	mapper RESTMapper
}

// New builds a Client for cfg.
func New(cfg *Config, opts Options) (*Client, error) {
	rc, err := rest.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	return NewForREST(rc, opts), nil
}

// NewForREST builds a Client over an existing rest.Client (sharing its
// connections and rate limiter).
func NewForREST(rc *rest.Client, opts Options) *Client {
	c := &Client{rc: rc, scheme: opts.Scheme, mapper: opts.Mapper}
	if c.scheme == nil {
		c.scheme = scheme.New()
	}
	if c.mapper == nil {
		c.mapper = restmapper.New(rc, restmapper.Options{})
	}
	return c
}

// Scheme returns the client's Scheme.
func (c *Client) Scheme() *scheme.Scheme { return c.scheme }

// RESTMapper returns the client's mapper.
func (c *Client) RESTMapper() RESTMapper { return c.mapper }

// REST returns the underlying HTTP client.
func (c *Client) REST() *rest.Client { return c.rc }

// GroupVersionKindFor returns the kind of obj (an object or a list).
func (c *Client) GroupVersionKindFor(obj any) (api.GroupVersionKind, error) {
	return c.scheme.ObjectKinds(obj)
}

// target is a resolved object or collection.
type target struct {
	gvk     api.GroupVersionKind
	mapping *restmapper.Mapping
}

func (c *Client) resolve(ctx context.Context, obj any) (target, error) {
	gvk, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return target{}, err
	}
	m, err := c.mapper.RESTMapping(ctx, gvk)
	if err != nil {
		return target{}, err
	}
	return target{gvk: gvk, mapping: m}, nil
}

// resolveList resolves a list to its item kind's resource.
func (c *Client) resolveList(ctx context.Context, list ObjectList) (target, error) {
	if list == nil {
		return target{}, errors.New("list is nil")
	}
	if !c.scheme.IsList(list) {
		return target{}, fmt.Errorf("%T is not a list type: register it with Scheme.AddList or pass an *api.UnstructuredList", list)
	}
	lgvk, err := c.scheme.ObjectKinds(list)
	if err != nil {
		return target{}, err
	}
	gvk := lgvk
	gvk.Kind = strings.TrimSuffix(lgvk.Kind, "List")
	if gvk.Kind == "" {
		return target{}, fmt.Errorf("list kind %q names no item kind", lgvk.Kind)
	}
	m, err := c.mapper.RESTMapping(ctx, gvk)
	if err != nil {
		return target{}, err
	}
	return target{gvk: gvk, mapping: m}, nil
}

// path builds /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]].
func (t target) path(namespace, name string, sub ...string) string {
	gvr := t.mapping.Resource
	var b strings.Builder
	if gvr.Group == "" {
		b.WriteString("/api/" + gvr.Version)
	} else {
		b.WriteString("/apis/" + gvr.Group + "/" + gvr.Version)
	}
	if t.mapping.Namespaced && namespace != "" {
		b.WriteString("/namespaces/" + url.PathEscape(namespace))
	}
	b.WriteString("/" + gvr.Resource)
	if name != "" {
		b.WriteString("/" + url.PathEscape(name))
	}
	for _, s := range sub {
		b.WriteString("/" + s)
	}
	return b.String()
}

// encode marshals obj with apiVersion and kind set.
func encode(obj api.Object, gvk api.GroupVersionKind) ([]byte, error) {
	obj.SetGroupVersionKind(gvk)
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", gvk.Kind, err)
	}
	return b, nil
}

// decodeInto replaces *obj with the JSON in data. Typed objects are reset to their
// zero value first, so fields absent from data do not survive.
func decodeInto(data []byte, obj any) error {
	switch o := obj.(type) {
	case *api.Unstructured:
		m, err := api.DecodeMap(data)
		if err != nil {
			return fmt.Errorf("decode response: %w", err)
		}
		o.Object = m
		return nil
	case *api.UnstructuredList:
		var l api.UnstructuredList
		if err := json.Unmarshal(data, &l); err != nil {
			return fmt.Errorf("decode response: %w", err)
		}
		*o = l
		return nil
	}
	rv := reflect.ValueOf(obj)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decode response: %T is not a non-nil pointer", obj)
	}
	fresh := reflect.New(rv.Elem().Type())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		return fmt.Errorf("decode response into %T: %w", obj, err)
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}

// decodeFresh decodes data into obj, a new object with at most its kind set
// (a watch event's, from the scheme): decodeInto without the second zero
// object decodeInto decodes into and copies over. As with decodeInto, the
// kind is data's.
func decodeFresh(data []byte, obj any) error {
	switch o := obj.(type) {
	case *api.Unstructured, *api.UnstructuredList:
		return decodeInto(data, obj)
	case api.Object:
		o.SetGroupVersionKind(api.GroupVersionKind{})
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return fmt.Errorf("decode response into %T: %w", obj, err)
	}
	return nil
}

// isStatus reports whether data is a Status object (the answer of some deletes
// and subresource creates).
func isStatus(data []byte) bool {
	var tm api.TypeMeta
	return json.Unmarshal(data, &tm) == nil && tm.Kind == "Status" && tm.APIVersion == "v1"
}

// Get reads the object named key into obj, whose kind says what to read.
func (c *Client) Get(ctx context.Context, key ObjectKey, obj api.Object) error {
	t, err := c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("get %s: %w", key, err)
	}
	if key.Name == "" {
		return fmt.Errorf("get %s: the name is empty", t.gvk.Kind)
	}
	resp, err := c.rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: t.path(key.Namespace, key.Name)})
	if err != nil {
		return err
	}
	return decodeInto(resp.Body, obj)
}

// List reads a collection into list. Options select the namespace, labels,
// fields and page.
func (c *Client) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	t, err := c.resolveList(ctx, list)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	var o ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	resp, err := c.rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: t.path(o.Namespace, ""), Query: o.query(false)})
	if err != nil {
		return err
	}
	return decodeInto(resp.Body, list)
}

func writeQuery(apply func(*WriteOptions)) url.Values {
	var o WriteOptions
	apply(&o)
	return o.query()
}

// Create creates obj in its namespace and updates obj from the server's answer.
func (c *Client) Create(ctx context.Context, obj api.Object, opts ...CreateOption) error {
	t, err := c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	body, err := encode(obj, t.gvk)
	if err != nil {
		return err
	}
	q := writeQuery(func(o *WriteOptions) {
		for _, opt := range opts {
			opt.ApplyToCreate(o)
		}
	})
	resp, err := c.rc.Do(ctx, rest.Request{Method: http.MethodPost, Path: t.path(obj.GetNamespace(), ""), Query: q, Body: body})
	if err != nil {
		return err
	}
	return decodeInto(resp.Body, obj)
}

// Update replaces obj on the server (optimistically locked on its
// resourceVersion) and updates obj from the answer.
func (c *Client) Update(ctx context.Context, obj api.Object, opts ...UpdateOption) error {
	return c.update(ctx, obj, nil, "", opts)
}

func (c *Client) update(ctx context.Context, obj, body api.Object, sub string, opts []UpdateOption) error {
	t, err := c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("update %s: the name is empty", t.gvk.Kind)
	}
	out := obj
	data, err := c.encodeBody(obj, body, t)
	if err != nil {
		return err
	}
	if body != nil {
		out = body
	}
	q := writeQuery(func(o *WriteOptions) {
		for _, opt := range opts {
			opt.ApplyToUpdate(o)
		}
	})
	resp, err := c.rc.Do(ctx, rest.Request{Method: http.MethodPut, Path: t.path(obj.GetNamespace(), obj.GetName(), subPath(sub)...), Query: q, Body: data})
	if err != nil {
		return err
	}
	return decodeInto(resp.Body, out)
}

// encodeBody encodes body (a subresource object) or, if nil, obj.
func (c *Client) encodeBody(obj, body api.Object, t target) ([]byte, error) {
	if body == nil {
		return encode(obj, t.gvk)
	}
	gvk, err := c.scheme.ObjectKinds(body)
	if err != nil {
		return nil, fmt.Errorf("subresource body: %w", err)
	}
	return encode(body, gvk)
}

func subPath(sub string) []string {
	if sub == "" {
		return nil
	}
	return []string{sub}
}

// Patch applies patch to the object named by obj and updates obj from the answer.
func (c *Client) Patch(ctx context.Context, obj api.Object, patch Patch, opts ...PatchOption) error {
	return c.patch(ctx, obj, nil, "", patch, opts)
}

func (c *Client) patch(ctx context.Context, obj, body api.Object, sub string, patch Patch, opts []PatchOption) error {
	t, err := c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("patch: %w", err)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("patch %s: the name is empty", t.gvk.Kind)
	}
	out := obj
	if body != nil {
		out = body
	}
	data, err := patch.Data(out)
	if err != nil {
		return fmt.Errorf("patch %s %s: %w", t.gvk.Kind, ObjectKeyFromObject(obj), err)
	}
	if patch.Type() == ApplyPatchType && body == nil {
		// An apply configuration names its kind: typed objects often
		// leave TypeMeta empty.
		if data, err = withTypeMeta(data, t.gvk); err != nil {
			return fmt.Errorf("patch %s %s: %w", t.gvk.Kind, ObjectKeyFromObject(obj), err)
		}
	}
	q := writeQuery(func(o *WriteOptions) {
		for _, opt := range opts {
			opt.ApplyToPatch(o)
		}
	})
	resp, err := c.rc.Do(ctx, rest.Request{
		Method: http.MethodPatch, Path: t.path(obj.GetNamespace(), obj.GetName(), subPath(sub)...),
		Query: q, Body: data, ContentType: string(patch.Type()),
	})
	if err != nil {
		return err
	}
	return decodeInto(resp.Body, out)
}

// Delete deletes the object named by obj. obj is not modified.
func (c *Client) Delete(ctx context.Context, obj api.Object, opts ...DeleteOption) error {
	t, err := c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("delete %s: the name is empty", t.gvk.Kind)
	}
	var o DeleteOptions
	for _, opt := range opts {
		opt.ApplyToDelete(&o)
	}
	body, err := encodeDeleteOptions(&o)
	if err != nil {
		return err
	}
	_, err = c.rc.Do(ctx, rest.Request{Method: http.MethodDelete, Path: t.path(obj.GetNamespace(), obj.GetName()), Body: body})
	return err
}

func encodeDeleteOptions(o *DeleteOptions) ([]byte, error) {
	o.TypeMeta = api.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode delete options: %w", err)
	}
	return b, nil
}

// DeleteAllOf deletes every object of obj's kind matching the options
// (deletecollection). Use InNamespace for namespaced kinds.
func (c *Client) DeleteAllOf(ctx context.Context, obj api.Object, opts ...DeleteAllOfOption) error {
	t, err := c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("delete all: %w", err)
	}
	var o DeleteAllOfOptions
	for _, opt := range opts {
		opt.ApplyToDeleteAllOf(&o)
	}
	body, err := encodeDeleteOptions(&o.DeleteOptions)
	if err != nil {
		return err
	}
	_, err = c.rc.Do(ctx, rest.Request{Method: http.MethodDelete, Path: t.path(o.Namespace, ""), Query: o.ListOptions.query(false), Body: body})
	return err
}

// withTypeMeta sets apiVersion and kind in a JSON object that lacks them.
func withTypeMeta(data []byte, gvk api.GroupVersionKind) ([]byte, error) {
	m, err := api.DecodeMap(data)
	if err != nil {
		return nil, fmt.Errorf("decode apply configuration: %w", err)
	}
	if av, _ := m["apiVersion"].(string); av != "" {
		if k, _ := m["kind"].(string); k != "" {
			return data, nil
		}
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return json.Marshal(m)
}
