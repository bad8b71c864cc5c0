package client_test

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/testenv"
)

// This example creates, reads, patches, lists and deletes a ConfigMap. A real
// program would get its configuration with kubeconfig.FromEnvironment(flag, "").
func Example() {
	ctx := context.Background()
	env, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer env.Stop()

	cfg, namespace, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := scheme.New()
	if err := s.AddKnownTypes(corev1.GroupVersion(), &corev1.ConfigMap{}, &corev1.ConfigMapList{}); err != nil {
		fmt.Println(err)
		return
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.REST().CloseIdleConnections()

	cm := &corev1.ConfigMap{
		ObjectMeta: api.ObjectMeta{Name: "settings", Namespace: namespace, Labels: map[string]string{"app": "demo"}},
		Data:       map[string]string{"color": "blue"},
	}
	if err := c.Create(ctx, cm); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created with a uid:", cm.UID != "")

	original := *cm
	original.Data = map[string]string{"color": "blue"}
	cm.Data["color"] = "green"
	if err := c.Patch(ctx, cm, client.MergeFrom(&original)); err != nil {
		fmt.Println(err)
		return
	}

	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{"app": "demo"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, item := range list.Items {
		fmt.Println(item.Name, item.Data["color"])
	}

	if err := c.Delete(ctx, cm); err != nil {
		fmt.Println(err)
		return
	}
	err = c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	fmt.Println("not found after delete:", apierrors.IsNotFound(err))
	// Output:
	// created with a uid: true
	// settings green
	// not found after delete: true
}
