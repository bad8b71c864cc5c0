package defaultstorageclass

import (
	"context"
	"fmt"

	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// ListClasses returns the cluster's StorageClasses.
type ListClasses func(ctx context.Context) ([]storagev1.StorageClass, error)

// Admission is the DefaultStorageClass plugin.
type Admission struct {
	list ListClasses
}

// New returns the plugin reading StorageClasses with list.
func New(list ListClasses) *Admission { return &Admission{list: list} }

var (
	_        admission.Mutator        = (*Admission)(nil)
	_        admission.ChangeReporter = (*Admission)(nil)
	_        admission.MutationScoper = (*Admission)(nil)
	claimsGR                          = api.GroupResource{Resource: "persistentvolumeclaims"}
)

// MayReadManagedFields implements admission.ManagedFieldsScoper: the
// plugin reads a claim's storageClassName only.
func (p *Admission) MayReadManagedFields(context.Context, *admission.Attributes) bool { return false }

// MayMutate implements admission.MutationScoper: only claim creates.
func (p *Admission) MayMutate(_ context.Context, a *admission.Attributes) bool {
	return a.Operation == admission.Create && a.Subresource == "" && a.Resource.GroupResource() == claimsGR
}

// Admit sets the default class on a new claim without one.
func (p *Admission) Admit(ctx context.Context, a *admission.Attributes) error {
	_, err := p.AdmitReport(ctx, a)
	return err
}

// AdmitReport is Admit that also reports whether it changed a.Object.
func (p *Admission) AdmitReport(ctx context.Context, a *admission.Attributes) (bool, error) {
	if !p.MayMutate(ctx, a) || a.Object == nil {
		return false, nil
	}
	spec, _ := a.Object["spec"].(map[string]any)
	if spec == nil {
		return false, nil // validation refuses it
	}
	if class, set := spec["storageClassName"]; set && class != nil {
		return false, nil
	}
	classes, err := p.list(ctx)
	if err != nil {
		return false, apierrors.NewInternalError(fmt.Errorf("list storage classes: %w", err))
	}
	def := storagev1.DefaultClass(classes)
	if def == nil {
		return false, nil
	}
	spec["storageClassName"] = def.Name
	return true, nil
}
