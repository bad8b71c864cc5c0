package job

import (
	"context"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/reconcile"
)

// NewReconciler returns the Job reconciler reading through rd and writing
// through w, without events: for the benchmark, which compares reading the
// server with reading the cache.
func NewReconciler(rd reader, w writer) reconcile.Reconciler {
	return &reconciler{now: time.Now, backoffBase: DefaultBackoffBase, backoffMax: DefaultBackoffMax,
		reader: rd, client: w, recorder: noEvents{}, expect: newExpectations()}
}

type noEvents struct{}

func (noEvents) Event(context.Context, api.Object, string, string, string) {}
