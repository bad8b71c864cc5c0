package history

import (
	"context"
	"fmt"
	"maps"
	"slices"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
)

// Writer creates and updates ControllerRevisions, and reads one from the
// server (client.Client).
type Writer interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
}

// Revision describes the ControllerRevision an owner (a DaemonSet or a
// StatefulSet) needs for its current template.
type Revision struct {
	// Owner owns the revision through Ref (its controller reference).
	Owner api.Object
	Ref   api.OwnerReference
	// Template is the owner's pod template; Data what the revision stores.
	Template *corev1.PodTemplateSpec
	Data     []byte
	// Label returns the label that marks the revision (and the pods of it)
	// for the revision named name with template hash hash.
	Label func(name, hash string) (key, value string)
}

// Ensure makes the ControllerRevision of want's template exist among owned
// (the owner's revisions) with the highest revision number, and returns its
// name and the value of its want.Label label (the template hash the owner's
// pods carry).
//
// As Kubernetes' controllers do, a revision is the template's when its data
// equals want.Data, whatever its name: a revision someone else created with
// the owner's controller reference (the e2e suite's ControllerRevision spec
// does) is adopted, the newest such one if several; it gets want.Label's
// label (its name as the value) if it has none. A revision found with a
// lower number than the newest (a rollback) is renumbered to become the
// newest.
//
// Otherwise a new one is named "<owner>-<hash>". owned may come from a cache
// that lags: when the create finds the name taken, the revision is read from
// the server, and if it is the owner's with the same data it is the one
// wanted. A revision of that name with other data, or another owner's, is a
// collision: the owner's collision count goes up and the next hash is tried,
// five times at most.
func Ensure(ctx context.Context, w Writer, want Revision, collisionCount **int32, owned []appsv1.ControllerRevision) (name, label string, err error) {
	var maxRev int64
	equal := -1
	for i, cr := range owned {
		maxRev = max(maxRev, cr.Revision)
		if JSONEqual(cr.Data.Raw, want.Data) && (equal < 0 || cr.Revision > owned[equal].Revision) {
			equal = i
		}
	}
	if equal >= 0 {
		return adopt(ctx, w, want, owned[equal], maxRev)
	}
	ns, owner := want.Owner.GetNamespace(), want.Owner.GetName()
	for range 5 {
		hash := ComputeHash(want.Template, *collisionCount)
		name := owner + "-" + hash
		// A revision of this name among owned has other data (equal data
		// was adopted above): a collision.
		if slices.ContainsFunc(owned, func(cr appsv1.ControllerRevision) bool { return cr.Name == name }) {
			*collisionCount = NextCollisionCount(*collisionCount)
			continue
		}
		lbls := maps.Clone(want.Template.Labels)
		if lbls == nil {
			lbls = map[string]string{}
		}
		k, v := want.Label(name, hash)
		lbls[k] = v
		cr := &appsv1.ControllerRevision{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns, Labels: lbls, OwnerReferences: []api.OwnerReference{want.Ref}},
			Data:       api.RawExtension{Raw: want.Data},
			Revision:   maxRev + 1,
		}
		err := w.Create(ctx, cr)
		if err == nil {
			return name, v, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return "", "", fmt.Errorf("create revision %s: %w", name, err)
		}
		// A fresh read from the server: the cache may not show a revision
		// this owner created moments ago.
		cur := &appsv1.ControllerRevision{}
		if err := w.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cur); err != nil {
			return "", "", fmt.Errorf("get revision %s: %w", name, err)
		}
		if controllerutil.IsControlledBy(cur, want.Owner) && JSONEqual(cur.Data.Raw, want.Data) {
			return name, v, nil
		}
		*collisionCount = NextCollisionCount(*collisionCount)
	}
	return "", "", fmt.Errorf("%s/%s: too many revision hash collisions", ns, owner)
}

// adopt makes cr, a revision of want's data, the newest with want.Label's
// label, and returns its name and label value.
func adopt(ctx context.Context, w Writer, want Revision, cr appsv1.ControllerRevision, maxRev int64) (name, label string, err error) {
	k, v := want.Label(cr.Name, cr.Name)
	changed := false
	if cur, ok := cr.Labels[k]; ok {
		v = cur
	} else {
		cr.Labels = maps.Clone(cr.Labels)
		if cr.Labels == nil {
			cr.Labels = map[string]string{}
		}
		cr.Labels[k] = v
		changed = true
	}
	if cr.Revision < maxRev {
		cr.Revision = maxRev + 1
		changed = true
	}
	if changed {
		if err := w.Update(ctx, &cr); err != nil {
			return "", "", fmt.Errorf("update revision %s: %w", cr.Name, err)
		}
	}
	return cr.Name, v, nil
}
