package scheme

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/converge-dev/converge/framework/api"
)

// ErrNotRegistered is returned (wrapped) for a type or kind the Scheme does not know.
var ErrNotRegistered = errors.New("scheme: not registered")

// Scheme maps Go struct types to GroupVersionKinds and back. The zero value is not
// usable; call New.
type Scheme struct {
	mu         sync.RWMutex // guards the four maps
	kindToType map[api.GroupVersionKind]reflect.Type
	typeToKind map[reflect.Type]api.GroupVersionKind
	listToType map[api.GroupVersionKind]reflect.Type
	typeToList map[reflect.Type]api.GroupVersionKind
}

// New returns an empty Scheme.
func New() *Scheme {
	return &Scheme{
		kindToType: map[api.GroupVersionKind]reflect.Type{},
		typeToKind: map[reflect.Type]api.GroupVersionKind{},
		listToType: map[api.GroupVersionKind]reflect.Type{},
		typeToList: map[reflect.Type]api.GroupVersionKind{},
	}
}

// structType returns the struct type behind a non-nil pointer to a struct.
func structType(v any) (reflect.Type, error) {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("scheme: %T is not a pointer to a struct", v)
	}
	return t.Elem(), nil
}

func validGVK(gvk api.GroupVersionKind) error {
	if gvk.Version == "" || gvk.Kind == "" {
		return fmt.Errorf("scheme: %v needs a version and a kind", gvk)
	}
	return nil
}

// Add registers obj's Go type (a pointer to a struct, e.g. &corev1.ConfigMap{}) as
// gvk. Registering the same pair twice is a no-op; a conflicting pair is an error.
func (s *Scheme) Add(gvk api.GroupVersionKind, obj api.Object) error {
	return s.add(gvk, obj, s.kindToType, s.typeToKind)
}

// AddList registers list's Go type (e.g. &corev1.ConfigMapList{}) as the list kind
// gvk, by convention the item kind + "List".
func (s *Scheme) AddList(gvk api.GroupVersionKind, list any) error {
	if _, ok := list.(api.Object); ok {
		return fmt.Errorf("scheme: list kind %v: %T is an object, not a list", gvk, list)
	}
	return s.add(gvk, list, s.listToType, s.typeToList)
}

func (s *Scheme) add(gvk api.GroupVersionKind, v any, byKind map[api.GroupVersionKind]reflect.Type, byType map[reflect.Type]api.GroupVersionKind) error {
	if err := validGVK(gvk); err != nil {
		return err
	}
	t, err := structType(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := byKind[gvk]; ok && old != t {
		return fmt.Errorf("scheme: %v is already registered as %s, cannot register %s", gvk, typeName(old), typeName(t))
	}
	if old, ok := byType[t]; ok && old != gvk {
		return fmt.Errorf("scheme: %s is already registered as %v, cannot register it as %v", typeName(t), old, gvk)
	}
	byKind[gvk], byType[t] = t, gvk
	return nil
}

// AddKnownTypes registers each of objs in gv, deriving the kind from the Go type
// name: &ConfigMap{} becomes Kind "ConfigMap"; a type that does not implement
// api.Object and whose name ends in "List" (&ConfigMapList{}) is registered as a
// list kind. This is what a types package's AddToScheme usually calls:
//
//	func AddToScheme(s *scheme.Scheme) error {
//		return s.AddKnownTypes(GroupVersion(), &ConfigMap{}, &ConfigMapList{}, &Pod{}, &PodList{})
//	}
func (s *Scheme) AddKnownTypes(gv api.GroupVersion, objs ...any) error {
	var errs []error
	for _, o := range objs {
		t, err := structType(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		gvk := gv.WithKind(t.Name())
		if obj, ok := o.(api.Object); ok {
			errs = append(errs, s.Add(gvk, obj))
			continue
		}
		if !strings.HasSuffix(t.Name(), "List") {
			errs = append(errs, fmt.Errorf("scheme: %s is neither an api.Object nor a list type named ...List", typeName(t)))
			continue
		}
		errs = append(errs, s.AddList(gvk, o))
	}
	return errors.Join(errs...)
}

// kinded is what types embedding api.TypeMeta offer.
type kinded interface {
	GroupVersionKind() api.GroupVersionKind
}

// ObjectKinds returns the GroupVersionKind of obj, an object or a list. If obj
// carries apiVersion and kind (TypeMeta, Unstructured), those win; otherwise its Go
// type must be registered.
func (s *Scheme) ObjectKinds(obj any) (api.GroupVersionKind, error) {
	if k, ok := obj.(kinded); ok && !isNilPointer(obj) {
		if gvk := k.GroupVersionKind(); gvk.Kind != "" && gvk.Version != "" {
			return gvk, nil
		}
	}
	if ul, ok := obj.(*api.UnstructuredList); ok && ul != nil && ul.Kind != "" {
		gv, err := api.ParseGroupVersion(ul.APIVersion)
		if err != nil {
			return api.GroupVersionKind{}, fmt.Errorf("scheme: unstructured list: %w", err)
		}
		return gv.WithKind(ul.Kind), nil
	}
	t, err := structType(obj)
	if err != nil {
		return api.GroupVersionKind{}, err
	}
	s.mu.RLock()
	gvk, ok := s.typeToKind[t]
	if !ok {
		gvk, ok = s.typeToList[t]
	}
	s.mu.RUnlock()
	if !ok {
		if _, isU := obj.(*api.Unstructured); isU {
			return api.GroupVersionKind{}, fmt.Errorf("%w: the Unstructured object has no apiVersion/kind; set them with SetGroupVersionKind", ErrNotRegistered)
		}
		if _, isUL := obj.(*api.UnstructuredList); isUL {
			return api.GroupVersionKind{}, fmt.Errorf("%w: the UnstructuredList has no APIVersion/Kind; set them (e.g. Kind \"ConfigMapList\")", ErrNotRegistered)
		}
		return api.GroupVersionKind{}, fmt.Errorf("%w: no kind is registered for the Go type %s; register it with Scheme.Add(gvk, &%s{}) (or AddList for lists), or call its package's AddToScheme",
			ErrNotRegistered, typeName(t), t.Name())
	}
	return gvk, nil
}

// IsList reports whether obj's Go type is a registered list type or an
// UnstructuredList.
func (s *Scheme) IsList(obj any) bool {
	if _, ok := obj.(*api.UnstructuredList); ok {
		return true
	}
	t, err := structType(obj)
	if err != nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.typeToList[t]
	return ok
}

// Recognizes reports whether gvk is a registered object kind.
func (s *Scheme) Recognizes(gvk api.GroupVersionKind) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.kindToType[gvk]
	return ok
}

// New returns a new, empty object of the registered kind gvk with its apiVersion
// and kind set.
func (s *Scheme) New(gvk api.GroupVersionKind) (api.Object, error) {
	s.mu.RLock()
	t, ok := s.kindToType[gvk]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: no Go type is registered for %v", ErrNotRegistered, gvk)
	}
	obj := reflect.New(t).Interface().(api.Object)
	obj.SetGroupVersionKind(gvk)
	return obj, nil
}

// NewList returns a new, empty list of the registered list kind gvk (e.g.
// ConfigMapList), as a pointer to its struct.
func (s *Scheme) NewList(gvk api.GroupVersionKind) (any, error) {
	s.mu.RLock()
	t, ok := s.listToType[gvk]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: no Go list type is registered for %v", ErrNotRegistered, gvk)
	}
	l := reflect.New(t).Interface()
	if k, ok := l.(interface{ SetGroupVersionKind(api.GroupVersionKind) }); ok {
		k.SetGroupVersionKind(gvk)
	}
	return l, nil
}

// KnownKinds returns the registered object kinds, in no particular order.
func (s *Scheme) KnownKinds() []api.GroupVersionKind {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]api.GroupVersionKind, 0, len(s.kindToType))
	for k := range s.kindToType {
		out = append(out, k)
	}
	return out
}

func typeName(t reflect.Type) string {
	if t.PkgPath() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
