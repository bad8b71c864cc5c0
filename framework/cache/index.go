package cache

import (
	"errors"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
)

// FieldIndexName is the name of the Store index IndexField keeps for field.
func FieldIndexName(field string) string { return "field:" + field }

// IndexField indexes the objects of T's kind by a field other than
// metadata.name and metadata.namespace (e.g. "spec.nodeName" of pods, or an
// owner's uid), so that Reader.List answers a field selector requiring
// field=value (client.MatchingFields) from the index instead of failing. value
// returns an object's values of the field (none, one or several).
//
// The kind's informer is created as InformerFor does, if no one asked for it
// yet; an index may be added to a running informer. Indexing a field again
// keeps the first index: callers indexing the same field must mean the same
// values.
func IndexField[T api.Object](f *SharedInformers, field string, value IndexFunc[T]) error {
	inf, err := InformerFor(f, InformerOptions[T]{})
	if err != nil {
		return fmt.Errorf("cache: index %s: %w", field, err)
	}
	if err := inf.Store().AddIndexer(FieldIndexName(field), value); err != nil && !errors.Is(err, ErrIndexExists) {
		return fmt.Errorf("cache: index %s: %w", field, err)
	}
	return nil
}
