package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"
)

// BenchmarkCreate compares creates/s of a custom resource (Foo) with ConfigMaps
// of about the same size, in the same control plane.
func BenchmarkCreate(b *testing.B) {
	env := testenv.StartT(b, testenv.Options{})
	c := &client{base: env.URL, hc: &http.Client{Timeout: 30 * time.Second}}
	ctx := context.Background()
	r, err := c.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", readDoc("crds/samplecontroller.k8s.io_foos.yaml"), nil)
	if err != nil || r.code != http.StatusCreated {
		b.Fatalf("create CRD: %v %s", err, r.raw)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, _ := c.do(ctx, http.MethodGet, "/apis/samplecontroller.k8s.io/v1alpha1", nil, nil)
		if r.code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("Foo not served")
		}
		time.Sleep(10 * time.Millisecond)
	}
	payload := strings.Repeat("x", 64)
	run := func(b *testing.B, path string, obj func(i int) map[string]any) {
		i := 0
		for b.Loop() {
			r, err := c.do(ctx, http.MethodPost, path, obj(i), nil)
			if err != nil || r.code != http.StatusCreated {
				b.Fatalf("create: %v %s", err, r.raw)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
	}
	b.Run("Foo", func(b *testing.B) {
		prefix := fmt.Sprintf("foo-%d-", time.Now().UnixNano())
		run(b, "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos", func(i int) map[string]any {
			return map[string]any{"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
				"metadata": map[string]any{"name": fmt.Sprintf("%s%d", prefix, i)},
				"spec":     map[string]any{"deploymentName": payload, "replicas": int64(3)}}
		})
	})
	b.Run("ConfigMap", func(b *testing.B) {
		prefix := fmt.Sprintf("cm-%d-", time.Now().UnixNano())
		run(b, "/api/v1/namespaces/default/configmaps", func(i int) map[string]any {
			return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": fmt.Sprintf("%s%d", prefix, i)},
				"data":     map[string]any{"deploymentName": payload, "replicas": "3"}}
		})
	})
}
