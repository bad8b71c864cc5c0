package v1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/converge-dev/converge/builtin/api/all"
	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// TestJobStatusValidation writes Job status through the real API server: the
// status subresource rejects what Kubernetes' job status strategy rejects, with
// 422 Invalid naming the status fields, and takes a valid status.
func TestJobStatusValidation(t *testing.T) {
	ctx := context.Background()
	env, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	j := &batchv1.Job{}
	j.Name, j.Namespace = "status", "default"
	j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	url := env.URL + "/apis/batch/v1/namespaces/default/jobs/status/status"

	send := func(method, contentType string, body any) (int, api.Status, map[string]any) {
		t.Helper()
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var st api.Status
		var obj map[string]any
		if resp.StatusCode >= 300 {
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatalf("decode %s: %v", raw, err)
			}
		} else if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		return resp.StatusCode, st, obj
	}
	wantInvalid := func(code int, st api.Status, fields ...string) {
		t.Helper()
		if code != http.StatusUnprocessableEntity || st.Reason != "Invalid" || st.Details == nil {
			t.Fatalf("got %d %s %+v, want 422 Invalid", code, st.Reason, st)
		}
		var got []string
		for _, c := range st.Details.Causes {
			got = append(got, c.Field)
		}
		if fmt.Sprint(got) != fmt.Sprint(fields) {
			t.Errorf("causes name %v, want %v (message %q)", got, fields, st.Message)
		}
	}

	// PATCH with a negative count.
	code, st, _ := send(http.MethodPatch, "application/merge-patch+json",
		map[string]any{"status": map[string]any{"succeeded": -1}})
	// Like Kubernetes, both the range and the transition rule report it.
	wantInvalid(code, st, "status.succeeded", "status.succeeded")

	// PUT with a negative count and completedIndexes on a NonIndexed Job.
	cur := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "status"}, cur); err != nil {
		t.Fatal(err)
	}
	cur.Status.Succeeded = -2
	cur.Status.CompletedIndexes = "0"
	code, st, _ = send(http.MethodPut, "application/json", cur)
	wantInvalid(code, st, "status.succeeded", "status.completedIndexes", "status.succeeded")

	// A valid status is stored.
	cur.Status.Succeeded, cur.Status.CompletedIndexes = 0, ""
	cur.Status.Active, cur.Status.Ready = 1, api.Ptr[int32](1)
	cur.Status.StartTime = api.NewTimePtr(cur.CreationTimestamp.Time)
	code, st, obj := send(http.MethodPut, "application/json", cur)
	if code != http.StatusOK {
		t.Fatalf("valid PUT: %d %s", code, st.Message)
	}
	if n, _ := api.NestedInt64(obj, "status", "active"); n != 1 {
		t.Errorf("stored status.active = %d, want 1", n)
	}
	code, st, obj = send(http.MethodPatch, "application/merge-patch+json",
		map[string]any{"status": map[string]any{"succeeded": 1, "active": 0, "ready": 0}})
	if code != http.StatusOK {
		t.Fatalf("valid PATCH: %d %s", code, st.Message)
	}
	if n, _ := api.NestedInt64(obj, "status", "succeeded"); n != 1 {
		t.Errorf("stored status.succeeded = %d, want 1", n)
	}

	// Transition rules: the succeeded counter does not go down.
	code, st, _ = send(http.MethodPatch, "application/merge-patch+json",
		map[string]any{"status": map[string]any{"succeeded": 0}})
	wantInvalid(code, st, "status.succeeded")

	// The main resource ignores status and keeps validating the spec as before.
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "status"}, cur); err != nil {
		t.Fatal(err)
	}
	cur.Labels = map[string]string{"a": "b"}
	cur.Status.Succeeded = -5
	if err := c.Update(ctx, cur); err != nil {
		t.Fatalf("main update: %v", err)
	}
	if cur.Status.Succeeded != 1 {
		t.Errorf("main update changed status.succeeded to %d", cur.Status.Succeeded)
	}
}
