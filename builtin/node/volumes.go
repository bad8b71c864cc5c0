package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/expand"
)

// volumeDir is where a pod's volume lives on the host.
func (w *podWorker) volumeDir(name string) string { return filepath.Join(w.dir, "volumes", name) }

func fileMode(item, def *int32, fallback os.FileMode) os.FileMode {
	if item != nil {
		return os.FileMode(*item)
	}
	if def != nil {
		return os.FileMode(*def)
	}
	return fallback
}

// projection collects files of a volume.
type projection struct {
	files map[string][]byte
	modes map[string]os.FileMode
}

func (p *projection) add(path string, data []byte, mode os.FileMode) {
	p.files[path], p.modes[path] = data, mode
}

func (w *podWorker) projectKeys(p *projection, data map[string][]byte, items []corev1.KeyToPath, def *int32, kind, name string, optional bool) error {
	if len(items) == 0 {
		for k, v := range data {
			p.add(k, v, fileMode(nil, def, 0o644))
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return configError{fmt.Sprintf("configuration key %q not found in %s %q", it.Key, kind, name)}
		}
		p.add(it.Path, v, fileMode(it.Mode, def, 0o644))
	}
	return nil
}

func (w *podWorker) projectConfigMap(ctx context.Context, p *projection, ns, name string, items []corev1.KeyToPath, def *int32, optional *bool) error {
	cm, err := w.configMap(ctx, ns, name)
	if err != nil {
		if _, ok := err.(configError); ok && optional != nil && *optional {
			return nil
		}
		return err
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return w.projectKeys(p, data, items, def, "ConfigMap", name, optional != nil && *optional)
}

func (w *podWorker) projectSecret(ctx context.Context, p *projection, ns, name string, items []corev1.KeyToPath, def *int32, optional *bool) error {
	s, err := w.secret(ctx, ns, name)
	if err != nil {
		if _, ok := err.(configError); ok && optional != nil && *optional {
			return nil
		}
		return err
	}
	return w.projectKeys(p, s.Data, items, def, "Secret", name, optional != nil && *optional)
}

func (w *podWorker) projectDownward(p *projection, pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, def *int32) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = fieldRefValue(pod, w.a.opts.InternalIP, w.ip(), it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = w.a.resourceFieldValue(pod, corev1.Container{}, it.ResourceFieldRef)
		}
		if err != nil {
			return configError{err.Error()}
		}
		p.add(it.Path, []byte(v), fileMode(it.Mode, def, 0o644))
	}
	return nil
}

// setupVolumes materialises every volume of the pod under its directory.
func (w *podWorker) setupVolumes(ctx context.Context) error {
	pod := w.current()
	var nextRenewal time.Time // of the earliest service-account token
	for _, v := range pod.Spec.Volumes {
		dir := w.volumeDir(v.Name)
		if v.HostPath == nil && w.keepVolume(dir) {
			// Adopted containers have it mounted (adopt.go); renew its tokens soon.
			if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool { return s.ServiceAccountToken != nil }) {
				nextRenewal = time.Now().Add(time.Minute)
			}
			continue
		}
		p := &projection{files: map[string][]byte{}, modes: map[string]os.FileMode{}}
		var err error
		switch {
		case v.EmptyDir != nil:
			if err := setupEmptyDir(dir, v.EmptyDir); err != nil {
				return fmt.Errorf("volume %s: %w", v.Name, err)
			}
			continue
		case v.HostPath != nil:
			if err := prepareHostPath(v.HostPath); err != nil {
				return fmt.Errorf("volume %s: %w", v.Name, err)
			}
			continue
		case v.PersistentVolumeClaim != nil || v.Ephemeral != nil:
			// An ephemeral volume is the claim "<pod>-<volume>" the ephemeral
			// volume controller creates from its template.
			claim := pod.Name + "-" + v.Name
			if v.PersistentVolumeClaim != nil {
				claim = v.PersistentVolumeClaim.ClaimName
			}
			target, err := w.claimVolume(ctx, pod, claim)
			if err == nil {
				err = linkVolume(dir, target)
			}
			if err != nil {
				return fmt.Errorf("volume %s: %w", v.Name, err)
			}
			continue
		case v.ConfigMap != nil, v.Secret != nil, v.DownwardAPI != nil, v.Projected != nil:
			var renew time.Time
			renew, err = w.projectVolume(ctx, pod, v, p, true)
			if !renew.IsZero() && (nextRenewal.IsZero() || renew.Before(nextRenewal)) {
				nextRenewal = renew
			}
		default:
			return fmt.Errorf("volume %s: this node supports emptyDir, hostPath, persistentVolumeClaim, configMap, secret, downwardAPI and projected volumes only", v.Name)
		}
		if err != nil {
			return fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if err := writeFiles(dir, p.files, p.modes); err != nil {
			return fmt.Errorf("volume %s: %w", v.Name, err)
		}
	}
	if !nextRenewal.IsZero() {
		go w.refreshTokens(ctx, nextRenewal)
	}
	w.resyncOnce.Do(func() { go w.resyncVolumes(ctx) })
	return nil
}

// projectVolume collects the files of a configMap, secret, downwardAPI or
// projected volume into p. Service-account tokens are requested only with
// tokens set (else the volume is not projected: tokens have their own
// renewal, refreshTokens); it returns when the earliest token wants renewal.
func (w *podWorker) projectVolume(ctx context.Context, pod *corev1.Pod, v corev1.Volume, p *projection, tokens bool) (time.Time, error) {
	// A configMap, secret or downwardAPI volume is a projection of one source.
	sources, def := []corev1.VolumeProjection(nil), (*int32)(nil)
	switch {
	case v.ConfigMap != nil:
		sources, def = []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: v.ConfigMap.LocalObjectReference, Items: v.ConfigMap.Items, Optional: v.ConfigMap.Optional}}}, v.ConfigMap.DefaultMode
	case v.Secret != nil:
		sources, def = []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: v.Secret.SecretName}, Items: v.Secret.Items, Optional: v.Secret.Optional}}}, v.Secret.DefaultMode
	case v.DownwardAPI != nil:
		sources, def = []corev1.VolumeProjection{{DownwardAPI: &corev1.DownwardAPIProjection{Items: v.DownwardAPI.Items}}}, v.DownwardAPI.DefaultMode
	case v.Projected != nil:
		sources, def = v.Projected.Sources, v.Projected.DefaultMode
	}
	var nextRenewal time.Time
	for _, src := range sources {
		var err error
		switch {
		case src.ConfigMap != nil:
			err = w.projectConfigMap(ctx, p, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, def, src.ConfigMap.Optional)
		case src.Secret != nil:
			err = w.projectSecret(ctx, p, pod.Namespace, src.Secret.Name, src.Secret.Items, def, src.Secret.Optional)
		case src.DownwardAPI != nil:
			err = w.projectDownward(p, pod, src.DownwardAPI.Items, def)
		case src.ServiceAccountToken != nil:
			if !tokens {
				return time.Time{}, errSkipVolume
			}
			var tok []byte
			var renew time.Time
			if tok, renew, err = w.serviceAccountToken(ctx, pod, src.ServiceAccountToken); err == nil {
				p.add(src.ServiceAccountToken.Path, tok, fileMode(nil, def, 0o644))
				if !renew.IsZero() && (nextRenewal.IsZero() || renew.Before(nextRenewal)) {
					nextRenewal = renew
				}
			}
		}
		if err != nil {
			return nextRenewal, err
		}
	}
	return nextRenewal, nil
}

// errSkipVolume: a volume the resync leaves alone.
var errSkipVolume = errors.New("volume not resynced")

// resyncVolumes re-projects the pod's configMap, secret, downwardAPI and
// projected volumes every VolumeResyncInterval, as the kubelet's periodic
// pod sync does, so ConfigMap, Secret, label and annotation changes reach the
// files (not a subPath's: that is a bind-mount of one generation's file).
// Projected volumes holding a service-account token are left to
// refreshTokens. A volume that cannot be projected keeps its files.
func (w *podWorker) resyncVolumes(ctx context.Context) {
	for sleepCtx(ctx, w.a.opts.VolumeResyncInterval) {
		pod := w.current()
		for _, v := range pod.Spec.Volumes {
			if v.ConfigMap == nil && v.Secret == nil && v.DownwardAPI == nil && v.Projected == nil {
				continue
			}
			p := &projection{files: map[string][]byte{}, modes: map[string]os.FileMode{}}
			if _, err := w.projectVolume(ctx, pod, v, p, false); err != nil {
				if !errors.Is(err, errSkipVolume) && ctx.Err() == nil {
					w.log.V(1).Info("Volume resync failed; keeping its files", "volume", v.Name, "error", err.Error())
				}
				continue
			}
			if err := writeFiles(w.volumeDir(v.Name), p.files, p.modes); err != nil && ctx.Err() == nil {
				w.log.Error(err, "Writing a resynced volume failed", "volume", v.Name)
			}
		}
	}
}

func prepareHostPath(h *corev1.HostPathVolumeSource) error {
	t := corev1.HostPathUnset
	if h.Type != nil {
		t = *h.Type
	}
	fi, err := os.Stat(h.Path)
	switch t {
	case corev1.HostPathDirectoryOrCreate:
		if err != nil {
			return os.MkdirAll(h.Path, 0o755)
		}
	case corev1.HostPathFileOrCreate:
		if err != nil {
			if err := os.MkdirAll(filepath.Dir(h.Path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(h.Path, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
	case corev1.HostPathDirectory:
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a directory", h.Path)
		}
	case corev1.HostPathFile:
		if err != nil || fi.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a file", h.Path)
		}
	}
	return nil
}

// mounts maps a container's volumeMounts to runtime mounts; env is the
// container's environment, which subPathExpr is expanded against.
func (w *podWorker) mounts(pod *corev1.Pod, c corev1.Container, env map[string]string) ([]cri.Mount, error) {
	var out []cri.Mount
	for _, vm := range c.VolumeMounts {
		var vol *corev1.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == vm.Name {
				vol = &pod.Spec.Volumes[i]
			}
		}
		if vol == nil {
			return nil, fmt.Errorf("volume mount %s: no volume of that name", vm.Name)
		}
		host := w.volumeDir(vm.Name)
		ro := vm.ReadOnly
		switch {
		case vol.HostPath != nil:
			host = vol.HostPath.Path
		case vol.PersistentVolumeClaim != nil:
			// The pod's volume directory links to the claim's (claims.go).
			if target, err := filepath.EvalSymlinks(host); err == nil {
				host = target
			}
			ro = ro || vol.PersistentVolumeClaim.ReadOnly
		case vol.ConfigMap != nil, vol.Secret != nil, vol.DownwardAPI != nil, vol.Projected != nil:
			ro = true
		}
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			var err error
			if sub, err = expand.Strict(vm.SubPathExpr, expand.MapLookup(env)); err != nil {
				return nil, fmt.Errorf("volume mount %s: subPathExpr %q: %w", vm.Name, vm.SubPathExpr, err)
			}
		}
		if sub != "" {
			var err error
			if host, err = subPathSource(host, sub); err != nil {
				return nil, err
			}
		}
		out = append(out, cri.Mount{HostPath: host, ContainerPath: vm.MountPath, ReadOnly: ro})
	}
	return w.dnsMount(out), nil
}

func (w *podWorker) teardownVolumes() {
	unmountVolumes(filepath.Join(w.dir, "volumes"))
	_ = os.RemoveAll(filepath.Join(w.dir, "volumes"))
}
