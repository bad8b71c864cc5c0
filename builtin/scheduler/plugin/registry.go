package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
)

// PluginFactory builds a plugin. args are the plugin's pluginConfig args: nil,
// raw JSON ([]byte or json.RawMessage) from a configuration file, or a value
// given from Go code; DecodeArgs handles all three.
type PluginFactory func(ctx context.Context, args any, h Handle) (Plugin, error)

// Registry maps plugin names to factories. The scheduler starts from the
// in-tree registry and merges Options.OutOfTreeRegistry into it.
type Registry map[string]PluginFactory

// Register adds a factory; it fails if the name is taken.
func (r Registry) Register(name string, factory PluginFactory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("plugin %q already registered", name)
	}
	r[name] = factory
	return nil
}

// Unregister removes a factory; it fails if the name is unknown.
func (r Registry) Unregister(name string) error {
	if _, ok := r[name]; !ok {
		return fmt.Errorf("plugin %q not registered", name)
	}
	delete(r, name)
	return nil
}

// Merge adds every factory of o; it fails on a duplicate name.
func (r Registry) Merge(o Registry) error {
	for name, f := range o {
		if err := r.Register(name, f); err != nil {
			return err
		}
	}
	return nil
}

// Clone returns a copy.
func (r Registry) Clone() Registry { return maps.Clone(r) }

// DecodeArgs fills into (a pointer to the plugin's args struct, pre-set to its
// defaults) from args: nil keeps the defaults, []byte/json.RawMessage and
// map[string]any are decoded as JSON over the defaults, and a value or pointer
// of into's element type is copied.
func DecodeArgs[T any](args any, into *T) error {
	switch a := args.(type) {
	case nil:
		return nil
	case T:
		*into = a
		return nil
	case *T:
		if a != nil {
			*into = *a
		}
		return nil
	case []byte:
		if len(a) == 0 {
			return nil
		}
		if err := json.Unmarshal(a, into); err != nil {
			return fmt.Errorf("decode %s: %w", reflect.TypeFor[T]().Name(), err)
		}
		return nil
	case json.RawMessage:
		return DecodeArgs([]byte(a), into)
	case map[string]any:
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode args: %w", err)
		}
		return DecodeArgs(b, into)
	default:
		return fmt.Errorf("args of type %T, want %s", args, reflect.TypeFor[T]())
	}
}
