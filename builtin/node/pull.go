package node

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/kubeletmetrics"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// pullPolicy is the container's imagePullPolicy, defaulted as the API does
// (":latest" or no tag and no digest → Always, else IfNotPresent).
func pullPolicy(c corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	name, _, digest := strings.Cut(c.Image, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i:], "/") {
		tag = name[i+1:]
	}
	if tag == "latest" || (tag == "" && !digest) {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// ensureImage makes the container's image present before a start, when the
// runtime pulls images (cri.ImageService), following imagePullPolicy with the
// kubelet's status reasons and events. It returns false after it reported a
// failure and slept its back-off (the caller retries), or when ctx ended.
// Runtimes without an ImageService get true straight away.
func (r *containerRunner) ensureImage(ctx context.Context) bool {
	a := r.w.a
	is, ok := a.rt.(cri.ImageService)
	if !ok {
		return true
	}
	c := r.container()
	ref := c.Image
	policy := pullPolicy(c)
	img, present, err := is.ImageStatus(ctx, ref)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		// Not "absent": the runtime could not say. The kubelet's words, and
		// another look shortly.
		msg := fmt.Sprintf("Failed to inspect image %q: %v", ref, err)
		r.setWaiting("ImageInspectError", msg)
		a.rec.Event(ctx, r.w.current(), "Warning", "InspectFailed", msg)
		sleepCtx(ctx, time.Second)
		return false
	}
	switch {
	case present && policy != corev1.PullAlways:
		// Recorded after the start attempt (flushPulled), in the same order:
		// an event is a write the start need not wait for.
		r.pulledEvent = fmt.Sprintf("Container image %q already present on machine", ref)
		a.images.used(img.ID)
		r.setImageID(img)
		return true
	case !present && policy == corev1.PullNever:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", ref)
		r.setWaiting("ErrImageNeverPull", msg)
		a.rec.Event(ctx, r.w.current(), "Warning", "ErrImageNeverPull", msg)
		a.rec.Event(ctx, r.w.current(), "Warning", "Failed", "Error: ErrImageNeverPull")
		r.pullBackoff = r.nextPullBackoff(r.pullBackoff)
		sleepCtx(ctx, r.pullBackoff)
		return false
	}

	a.rec.Event(ctx, r.w.current(), "Normal", "Pulling", fmt.Sprintf("Pulling image %q", ref))
	res, err := r.pull(ctx, is, ref)
	if err == nil {
		r.pullBackoff = 0
		a.images.used(res.Image.ID)
		r.setImageID(res.Image)
		a.rec.Event(ctx, r.w.current(), "Normal", "Pulled", fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting). Image size: %d bytes.",
			ref, res.Duration.Truncate(time.Millisecond), res.Waited.Truncate(time.Millisecond), res.Image.Size))
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	// ErrImagePull for a moment, then ImagePullBackOff until the next try.
	r.setWaiting("ErrImagePull", err.Error())
	a.rec.Event(ctx, r.w.current(), "Warning", "Failed", fmt.Sprintf("Failed to pull image %q: %v", ref, err))
	a.rec.Event(ctx, r.w.current(), "Warning", "Failed", "Error: ErrImagePull")
	r.pullBackoff = r.nextPullBackoff(r.pullBackoff)
	hold := min(r.pullBackoff/2, 2*time.Second)
	if !sleepCtx(ctx, hold) {
		return false
	}
	msg := fmt.Sprintf("Back-off pulling image %q", ref)
	r.setWaiting("ImagePullBackOff", msg)
	a.rec.Event(ctx, r.w.current(), "Normal", "BackOff", msg)
	a.rec.Event(ctx, r.w.current(), "Warning", "Failed", "Error: ImagePullBackOff")
	sleepCtx(ctx, r.pullBackoff-hold)
	return false
}

// flushPulled records the Pulled event ensureImage left, if any.
func (r *containerRunner) flushPulled(ctx context.Context) {
	if r.pulledEvent == "" {
		return
	}
	r.w.a.rec.Event(ctx, r.w.current(), "Normal", "Pulled", r.pulledEvent)
	r.pulledEvent = ""
}

// setImageID reports the image as the kubelet on containerd does:
// "<repository>@<manifest digest>", with the container's next status.
func (r *containerRunner) setImageID(img cri.Image) {
	if len(img.Names) == 0 || img.Digest == "" {
		return
	}
	repo, _, _ := strings.Cut(img.Names[0], "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	// Not a status write of its own: the next change (running, or why the
	// container waits) carries it.
	r.mu.Lock()
	r.status.ImageID = repo + "@" + img.Digest
	r.mu.Unlock()
}

func (r *containerRunner) setWaiting(reason, msg string) {
	r.setStatus(func(s *corev1.ContainerStatus) {
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	})
}

func (r *containerRunner) nextPullBackoff(cur time.Duration) time.Duration {
	o := r.w.a.opts
	if cur == 0 {
		return o.ImagePullBackOffBase
	}
	return min(2*cur, o.ImagePullBackOffMax)
}

// pull pulls ref with the pod's credentials for its registry, trying each
// matching credential in turn (as the kubelet does), or none when there is none.
func (r *containerRunner) pull(ctx context.Context, is cri.ImageService, ref string) (res cri.PullResult, err error) {
	defer func(t time.Time) { r.w.a.metrics.RuntimeOperation(kubeletmetrics.OpPullImage, t, err) }(time.Now())
	host := cri.RegistryHost(ref)
	var matching []cri.Credential
	for _, c := range r.w.pullCredentials(ctx) {
		if cri.SameRegistry(c.Host, host) {
			matching = append(matching, c)
		}
	}
	if len(matching) == 0 {
		return is.PullImage(ctx, ref, nil)
	}
	for _, c := range matching {
		if res, err = is.PullImage(ctx, ref, []cri.Credential{c}); err == nil || ctx.Err() != nil {
			return res, err
		}
	}
	return res, err
}

// pullCredentials reads the registry logins of the pod's imagePullSecrets and
// of its service account's. Secrets that are missing or unreadable are
// reported with a FailedToRetrieveImagePullSecret event and skipped.
func (w *podWorker) pullCredentials(ctx context.Context) []cri.Credential {
	pod := w.current()
	names := make([]string, 0, len(pod.Spec.ImagePullSecrets))
	for _, s := range pod.Spec.ImagePullSecrets {
		names = append(names, s.Name)
	}
	saName := pod.Spec.ServiceAccountName
	if saName == "" {
		saName = "default"
	}
	sa := &corev1.ServiceAccount{}
	if err := w.a.c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: saName}, sa); err == nil {
		for _, s := range sa.ImagePullSecrets {
			names = append(names, s.Name)
		}
	} else if !apierrors.IsNotFound(err) {
		w.log.V(1).Info("Cannot read the service account's image pull secrets", "serviceAccount", saName, "error", err.Error())
	}
	var creds []cri.Credential
	var failed []string
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		s := &corev1.Secret{}
		if err := w.a.c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, s); err != nil {
			failed = append(failed, name)
			continue
		}
		c, err := dockerCredentials(s)
		if err != nil {
			w.log.V(1).Info("Unusable image pull secret", "secret", name, "error", err.Error())
			failed = append(failed, name)
			continue
		}
		creds = append(creds, c...)
	}
	if len(failed) > 0 {
		w.a.rec.Event(ctx, pod, "Warning", "FailedToRetrieveImagePullSecret",
			fmt.Sprintf("Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(failed, ", ")))
	}
	return creds
}

// dockerAuth is one registry's entry in a Docker config.
type dockerAuth struct {
	Username      string `json:"username"`
	Password      string `json:"password"`
	Auth          string `json:"auth"`
	IdentityToken string `json:"identitytoken"`
	RegistryToken string `json:"registrytoken"`
}

// dockerCredentials reads a kubernetes.io/dockerconfigjson (.dockerconfigjson:
// {"auths": {host: …}}) or kubernetes.io/dockercfg (.dockercfg: {host: …})
// Secret; an entry's "auth" is base64 "user:password".
func dockerCredentials(s *corev1.Secret) ([]cri.Credential, error) {
	var auths map[string]dockerAuth
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		var cfg struct {
			Auths map[string]dockerAuth `json:"auths"`
		}
		if err := json.Unmarshal(s.Data[corev1.DockerConfigJSONKey], &cfg); err != nil {
			return nil, fmt.Errorf("parse %s: %w", corev1.DockerConfigJSONKey, err)
		}
		auths = cfg.Auths
	case corev1.SecretTypeDockercfg:
		if err := json.Unmarshal(s.Data[corev1.DockerConfigKey], &auths); err != nil {
			return nil, fmt.Errorf("parse %s: %w", corev1.DockerConfigKey, err)
		}
	default:
		return nil, fmt.Errorf("type %q is not %s or %s", s.Type, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg)
	}
	var out []cri.Credential
	for _, host := range slices.Sorted(maps.Keys(auths)) {
		a := auths[host]
		c := cri.Credential{Host: host, Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken}
		if a.Auth != "" {
			user, pass, err := cri.DecodeAuth(a.Auth)
			if err != nil {
				return nil, fmt.Errorf("registry %s: %w", host, err)
			}
			c.Username, c.Password = user, pass
		}
		out = append(out, c)
	}
	return out, nil
}
