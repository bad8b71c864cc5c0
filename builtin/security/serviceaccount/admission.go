package serviceaccount

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// Names and paths of the ServiceAccount admission plugin, as Kubernetes has them.
const (
	// DefaultServiceAccountName is the ServiceAccount a pod runs as when it names none.
	DefaultServiceAccountName = "default"
	// VolumeNamePrefix starts the name of the projected volume the plugin adds
	// (kube-api-access-XXXXX).
	VolumeNamePrefix = "kube-api-access-"
	// MountPath is where every container gets that volume.
	MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// RootCAConfigMap is the ConfigMap every namespace gets with the cluster CA
	// under RootCAKey.
	RootCAConfigMap = "kube-root-ca.crt"
	// RootCAKey is the key of the CA bundle in RootCAConfigMap.
	RootCAKey = "ca.crt"
	// TokenExpirationSeconds is the lifetime of the projected token (Kubernetes'
	// 3607: an hour and a few seconds, which marks it as an admission-made one).
	TokenExpirationSeconds = 3607
	// mirrorPodAnnotation marks static pods' mirrors: the plugin leaves them alone.
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// Getter returns the stored JSON of ServiceAccount namespace/name, or nil
// and no error when there is none. It should read the current state (not a
// cache that may lag), since pods are often created right after their
// ServiceAccount.
type Getter func(ctx context.Context, namespace, name string) ([]byte, error)

// Admission is Kubernetes' ServiceAccount admission plugin for pod creation:
// it sets spec.serviceAccountName to "default" when empty, refuses a pod whose
// ServiceAccount does not exist (403 "error looking up service account
// NS/NAME: serviceaccount "NAME" not found"), copies the ServiceAccount's
// imagePullSecrets when the pod has none and, unless automountServiceAccountToken
// is false on the pod (or, when the pod does not say, on the ServiceAccount),
// adds the kube-api-access-XXXXX projected volume (token, kube-root-ca.crt's
// ca.crt, the namespace) mounted read-only at MountPath in every container and
// init container that has nothing mounted there yet.
//
// The "default" ServiceAccount is made by a controller shortly after its
// namespace; like Kubernetes the plugin looks for it several times (about
// two seconds in all) before refusing the pod.
type Admission struct {
	// Get looks up ServiceAccounts.
	Get Getter
	// DefaultRetries is how many times the default ServiceAccount is looked
	// up (default 10); other ServiceAccounts are looked up once.
	DefaultRetries int
	// RetryInterval separates those lookups (default 100-200 ms).
	RetryInterval time.Duration
	// Suffix returns the random part of new volume names (default 5 characters
	// of Kubernetes' name generator alphabet).
	Suffix func() string
}

var _ admission.ChangeReporter = (*Admission)(nil)

// Admit implements admission.Mutator.
func (p *Admission) Admit(ctx context.Context, a *admission.Attributes) error {
	_, err := p.AdmitReport(ctx, a)
	return err
}

// MayReadManagedFields implements admission.ManagedFieldsScoper: the
// plugin reads a pod's spec and never its managedFields.
func (p *Admission) MayReadManagedFields(context.Context, *admission.Attributes) bool { return false }

// MayMutate implements admission.MutationScoper: only new pods change.
func (p *Admission) MayMutate(_ context.Context, a *admission.Attributes) bool {
	return a.Operation == admission.Create && a.Resource.GroupResource() == (api.GroupResource{Resource: "pods"})
}

// AdmitReport implements admission.ChangeReporter.
func (p *Admission) AdmitReport(ctx context.Context, a *admission.Attributes) (bool, error) {
	if a.Operation != admission.Create || a.Subresource != "" || a.Object == nil ||
		a.Resource.GroupResource() != (api.GroupResource{Resource: "pods"}) {
		return false, nil
	}
	pod := a.Object
	meta, _ := pod["metadata"].(map[string]any)
	if ann, _ := meta["annotations"].(map[string]any); ann != nil {
		if _, mirror := ann[mirrorPodAnnotation]; mirror {
			return false, nil
		}
	}
	spec, _ := pod["spec"].(map[string]any)
	if spec == nil {
		return false, nil
	}
	changed := false
	name, _ := spec["serviceAccountName"].(string)
	if name == "" {
		name = DefaultServiceAccountName
		spec["serviceAccountName"] = name
		changed = true
	}
	sa, err := p.lookup(ctx, a.Namespace, name)
	if err != nil {
		return changed, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, name, err)
	}
	if shouldAutomount(spec, sa) {
		if MountToken(spec, p.volumeName) {
			changed = true
		}
	}
	if ips, _ := spec["imagePullSecrets"].([]any); len(ips) == 0 && len(sa.ImagePullSecrets) > 0 {
		l := make([]any, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			l[i] = map[string]any{"name": s.Name}
		}
		spec["imagePullSecrets"] = l
		changed = true
	}
	return changed, nil
}

// account is the part of a ServiceAccount the plugin reads.
type account struct {
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken"`
	ImagePullSecrets             []struct {
		Name string `json:"name"`
	} `json:"imagePullSecrets"`
}

// lookup finds the ServiceAccount, retrying for the default one.
func (p *Admission) lookup(ctx context.Context, namespace, name string) (*account, error) {
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = p.DefaultRetries
		if attempts <= 0 {
			attempts = 10
		}
	}
	interval := p.RetryInterval
	if interval <= 0 {
		n, _ := rand.Int(rand.Reader, big.NewInt(100))
		interval = time.Duration(100+n.Int64()) * time.Millisecond
	}
	for i := range attempts {
		if i > 0 {
			t := time.NewTimer(interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		b, err := p.Get(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		if b != nil {
			sa := &account{}
			if err := json.Unmarshal(b, sa); err != nil {
				return nil, fmt.Errorf("decode service account: %w", err)
			}
			return sa, nil
		}
	}
	return nil, apierrors.NewNotFound(api.GroupResource{Resource: "serviceaccount"}, name)
}

// shouldAutomount reports whether a pod (its spec) gets the API access volume:
// the pod's automountServiceAccountToken decides, then the ServiceAccount's,
// then yes.
func shouldAutomount(spec map[string]any, sa *account) bool {
	if v, ok := spec["automountServiceAccountToken"].(bool); ok {
		return v
	}
	if sa != nil && sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// MountToken adds the API access volume to spec (a pod's) and mounts it at
// MountPath in every container and init container without a mount there,
// reusing a kube-api-access-* volume the pod already has. newName names a new
// volume. It reports whether spec changed.
func MountToken(spec map[string]any, newName func() string) bool {
	volumes, _ := spec["volumes"].([]any)
	volName := ""
	for _, v := range volumes {
		if m, ok := v.(map[string]any); ok {
			if n, _ := m["name"].(string); strings.HasPrefix(n, VolumeNamePrefix) {
				volName = n
				break
			}
		}
	}
	hasVolume := volName != ""
	if !hasVolume {
		volName = newName()
	}
	needed := false
	for _, field := range []string{"initContainers", "containers"} {
		cs, _ := spec[field].([]any)
		for _, c := range cs {
			cm, ok := c.(map[string]any)
			if !ok {
				continue
			}
			mounts, _ := cm["volumeMounts"].([]any)
			mounted := false
			for _, vm := range mounts {
				if m, ok := vm.(map[string]any); ok && m["mountPath"] == MountPath {
					mounted = true
					break
				}
			}
			if mounted {
				continue
			}
			cm["volumeMounts"] = append(mounts, map[string]any{"name": volName, "readOnly": true, "mountPath": MountPath})
			needed = true
		}
	}
	if needed && !hasVolume {
		spec["volumes"] = append(volumes, Volume(volName))
	}
	return needed
}

// Volume is the projected API access volume named name: a ServiceAccount
// token (expirationSeconds 3607), the CA from the kube-root-ca.crt ConfigMap
// and the namespace from the downward API, mode 0644.
func Volume(name string) map[string]any {
	return map[string]any{
		"name": name,
		"projected": map[string]any{
			"defaultMode": int64(0o644),
			"sources": []any{
				map[string]any{"serviceAccountToken": map[string]any{"path": "token", "expirationSeconds": int64(TokenExpirationSeconds)}},
				map[string]any{"configMap": map[string]any{"name": RootCAConfigMap,
					"items": []any{map[string]any{"key": RootCAKey, "path": RootCAKey}}}},
				map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{"path": "namespace",
					"fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}},
			},
		},
	}
}

// nameAlphabet is Kubernetes' generateName alphabet (no vowels, no confusable digits).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func (p *Admission) volumeName() string {
	if p.Suffix != nil {
		return VolumeNamePrefix + p.Suffix()
	}
	return VolumeNamePrefix + randomSuffix()
}

func randomSuffix() string {
	b := make([]byte, 5)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(nameAlphabet))))
		b[i] = nameAlphabet[n.Int64()]
	}
	return string(b)
}
