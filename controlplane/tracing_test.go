package controlplane_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlptest"
)

// TestTracingSpanTree runs a control plane that sends every span to an
// in-process OTLP receiver and checks the trees: a request is a server span
// with its admission and etcd steps as children, and a reconcile is the
// parent of the API requests the controller makes with its context (the
// traceparent the client sends), so both form one trace.
//
// It runs with each implementation of the trace API (--tracing-sdk): ours
// exports every 5 s, the OpenTelemetry SDK every 50 ms here.
func TestTracingSpanTree(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // the SDK exports every 50 ms, not 5 s
	for _, sdk := range tracing.SDKs() {
		t.Run(sdk, func(t *testing.T) { testSpanTree(t, sdk) })
	}
}

func testSpanTree(t *testing.T, sdk string) {
	rcv := otlptest.Start(t)
	cp, err := controlplane.Start(t.Context(), controlplane.Options{DataDir: t.TempDir(), NoFsync: true, CompactionInterval: -1,
		Secure: true, Controllers: []string{"deployment"},
		Tracing: tracing.Config{Endpoint: rcv.Addr(), SamplingRatePerMillion: 1_000_000, SDK: sdk}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	cfg, err := cp.ClientConfig("tracing-test")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "traced"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &appsv1.Deployment{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: api.Ptr[int32](1),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}}}}}); err != nil {
		t.Fatal(err)
	}

	// The ConfigMap create: a root server span, admission and etcd below.
	waitFor(ctx, t, func() error {
		create, ok := find(rcv.Spans(), func(s otlptest.Span) bool {
			return s.Name == "create configmaps" && s.Attributes["k8s.name"] == "" && s.ParentSpanID == ""
		})
		if !ok {
			return fmt.Errorf("no root span %q", "create configmaps")
		}
		if create.Kind != tracepb.Span_SPAN_KIND_SERVER || create.Scope != "converge/apiserver" {
			return fmt.Errorf("span %q: kind %v, scope %q", create.Name, create.Kind, create.Scope)
		}
		names := spanNames(rcv.Children(create))
		for _, want := range []string{"admission admit", "admission validate", "etcd create"} {
			if !names[want] {
				return fmt.Errorf("span %q has children %v, want %q among them", create.Name, names, want)
			}
		}
		return nil
	})
	// The deployment controller's reconcile is the parent of the API server's
	// span for the ReplicaSet it creates, in the same trace.
	waitFor(ctx, t, func() error {
		for _, rec := range rcv.Spans() {
			if rec.Name != "Reconcile deployment" || rec.Attributes["name"] != "web" {
				continue
			}
			for _, child := range rcv.Children(rec) {
				if child.Name == "create replicasets" && child.Service == "converge" {
					if !spanNames(rcv.Children(child))["etcd create"] {
						return fmt.Errorf("the API span of the ReplicaSet create has no etcd child")
					}
					return nil
				}
			}
		}
		return fmt.Errorf("no reconcile of default/web with a %q child", "create replicasets")
	})
}

func find(spans []otlptest.Span, ok func(otlptest.Span) bool) (otlptest.Span, bool) {
	for _, s := range spans {
		if ok(s) {
			return s, true
		}
	}
	return otlptest.Span{}, false
}

func spanNames(spans []otlptest.Span) map[string]bool {
	m := map[string]bool{}
	for _, s := range spans {
		m[s.Name] = true
	}
	return m
}

func waitFor(ctx context.Context, t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
