package daemonset

import (
	"context"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/history"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/reconcile"
)

// NewReconciler returns the DaemonSet reconciler reading through rd and
// writing through w, its expectations fed by pods, without events: for the
// benchmark, which compares reading the server with reading the cache.
func NewReconciler(rd reader, w interface {
	writer
	history.Writer
}, pods *cache.Informer[*corev1.Pod]) reconcile.Reconciler {
	r := &reconciler{now: time.Now, expectations: podutil.NewExpectations(nil), reader: rd, client: w, revisions: w, recorder: noEvents{}}
	pods.AddHandler(r.observePod)
	return r
}

type noEvents struct{}

func (noEvents) Event(context.Context, api.Object, string, string, string) {}
