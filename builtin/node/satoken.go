package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Service-account tokens for projected volumes, as the kubelet's token
// manager does: a serviceAccountToken source gets a token from the
// serviceaccounts/token subresource (TokenRequest) for the pod's service
// account ("default" when unset), bound to the pod, with the source's audience
// and expirationSeconds (default 1 h, at least 10 min). The token file is
// rewritten in place when 80% of its lifetime passed (or after 24 h). A
// missing ServiceAccount is an error (the pod waits, FailedMount). When the
// control plane issues no tokens (it serves without authentication, so the
// subresource does not exist) the token file is empty.

// tokenRefreshMax bounds how long a token is used before it is renewed.
const tokenRefreshMax = 24 * time.Hour

// serviceAccountToken requests the token of a projection and returns it with
// when it should be renewed (zero when it never needs to be).
func (w *podWorker) serviceAccountToken(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) ([]byte, time.Time, error) {
	name := pod.Spec.ServiceAccountName
	if name == "" {
		name = "default"
	}
	exp := int64(3600)
	if src.ExpirationSeconds != nil {
		exp = max(*src.ExpirationSeconds, 600)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		tr.Spec.Audiences = []string{src.Audience}
	}
	sa := &corev1.ServiceAccount{}
	sa.Namespace, sa.Name = pod.Namespace, name
	issued := time.Now()
	err := w.a.c.SubResource("token").Create(ctx, sa, tr)
	if err == nil {
		ttl := time.Duration(exp) * time.Second
		if !tr.Status.ExpirationTimestamp.IsZero() {
			ttl = tr.Status.ExpirationTimestamp.Sub(issued)
		}
		return []byte(tr.Status.Token), issued.Add(min(ttl*8/10, tokenRefreshMax)), nil
	}
	if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
		return nil, time.Time{}, fmt.Errorf("request a token for service account %s/%s: %w", pod.Namespace, name, err)
	}
	// Not found: the service account, or the subresource (no token issuer).
	if gerr := w.a.c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, sa); gerr != nil {
		if apierrors.IsNotFound(gerr) {
			return nil, time.Time{}, configError{fmt.Sprintf("serviceaccounts %q not found", name)}
		}
		return nil, time.Time{}, fmt.Errorf("get service account %s/%s: %w", pod.Namespace, name, gerr)
	}
	w.log.V(1).Info("The control plane issues no service-account tokens; the token file is empty", "serviceAccount", name)
	return []byte{}, time.Time{}, nil
}

// refreshTokens renews the service-account tokens of the pod's projected
// volumes from the first renewal time until ctx ends, rewriting each token
// file in place (the containers have the directory mounted).
func (w *podWorker) refreshTokens(ctx context.Context, next time.Time) {
	for !next.IsZero() {
		if !sleepCtx(ctx, time.Until(next)) {
			return
		}
		pod := w.current()
		next = time.Time{}
		for _, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for _, src := range v.Projected.Sources {
				t := src.ServiceAccountToken
				if t == nil {
					continue
				}
				tok, renew, err := w.serviceAccountToken(ctx, pod, t)
				if err != nil {
					w.log.Error(err, "Renewing a service-account token failed; retrying in a minute", "volume", v.Name)
					renew = time.Now().Add(time.Minute)
				} else if err := replaceFile(filepath.Join(w.volumeDir(v.Name), t.Path), tok, fileMode(nil, v.Projected.DefaultMode, 0o644)); err != nil {
					w.log.Error(err, "Writing a renewed service-account token failed", "volume", v.Name)
				}
				if !renew.IsZero() && (next.IsZero() || renew.Before(next)) {
					next = renew
				}
			}
		}
	}
}

// replaceFile atomically replaces path's content (write aside, rename).
func replaceFile(path string, data []byte, mode os.FileMode) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
