package cache_test

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

// An informer for ConfigMaps in one namespace: handlers enqueue keys, readers
// use the store.
func ExampleInformer() {
	run := func(ctx context.Context, c *client.Client) error {
		inf, err := cache.NewClientInformer(c, cache.InformerOptions[*corev1.ConfigMap]{
			Namespace: "default",
			Transform: func(cm *corev1.ConfigMap) *corev1.ConfigMap { cm.ManagedFields = nil; return cm },
		})
		if err != nil {
			return err
		}
		inf.AddHandler(func(ev cache.Event[*corev1.ConfigMap]) {
			fmt.Println(ev.Type, cache.KeyOf(ev.Object)) // e.g. queue.Add(key)
		})
		go func() {
			if inf.WaitForCacheSync(ctx) {
				fmt.Println(len(inf.Store().List()), "configmaps cached")
			}
		}()
		return inf.Start(ctx) // blocks until ctx ends
	}
	_ = run
}
