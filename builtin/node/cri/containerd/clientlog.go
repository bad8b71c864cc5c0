package containerd

import (
	"context"
	"io"

	clog "github.com/containerd/log"
	"github.com/go-logr/logr"
	"github.com/sirupsen/logrus"
)

// withClientLog routes what containerd's client code logs during ctx (the
// registry resolver logs every failed fetch at info) to the logr logger in
// ctx at V(1) instead of stderr.
func withClientLog(ctx context.Context) context.Context {
	l := logrus.New()
	l.Out = io.Discard
	l.AddHook(logrHook{log: logr.FromContextOrDiscard(ctx).V(1)})
	return clog.WithLogger(ctx, logrus.NewEntry(l))
}

type logrHook struct{ log logr.Logger }

func (logrHook) Levels() []logrus.Level { return logrus.AllLevels }

func (h logrHook) Fire(e *logrus.Entry) error {
	kv := []any{"message", e.Message, "level", e.Level.String()}
	for k, v := range e.Data {
		kv = append(kv, k, v)
	}
	h.log.Info("containerd client", kv...)
	return nil
}
