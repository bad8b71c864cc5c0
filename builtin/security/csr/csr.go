package csr

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"time"

	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	certificatesv1 "github.com/converge-dev/converge/builtin/api/certificates/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "csr"

// SignFunc signs a checked request with the cluster CA.
type SignFunc func(req *x509.CertificateRequest, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage, validity time.Duration) ([]byte, error)

// Options configure Setup.
type Options struct {
	// Sign signs approved requests; nil disables signing (the approver still
	// runs).
	Sign SignFunc
	// MaxValidity caps issued certificates (default one year).
	MaxValidity time.Duration
}

// reader reads requests: the manager's informer cache.
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// writer is what the controller writes and asks of the API server.
type writer interface {
	// Approve writes csr's conditions through the approval subresource.
	Approve(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error
	// UpdateStatus writes csr's status (the certificate, or Failed).
	UpdateStatus(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error
	// Allowed asks the API server's authorizer through a SubjectAccessReview.
	Allowed(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error)
}

// Setup adds the controller to mgr. It reads requests from mgr's cache and
// decides auto-approval with SubjectAccessReviews, as kube-controller-manager
// does, so it runs the same in-process and as a separate controller manager.
func Setup(mgr *manager.Manager, opts Options) error {
	if opts.MaxValidity <= 0 {
		opts.MaxValidity = 365 * 24 * time.Hour
	}
	r := &reconciler{opts: opts, read: mgr.Reader(), write: apiWriter{c: mgr.Client()}}
	err := builder.ControllerManagedBy(mgr).Named(Name).
		For(builder.Kind[*certificatesv1.CertificateSigningRequest]()).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// apiWriter is writer through the API client.
type apiWriter struct{ c *client.Client }

func (w apiWriter) Approve(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	return w.c.SubResource("approval").Update(ctx, csr, nil)
}

func (w apiWriter) UpdateStatus(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	return w.c.Status().Update(ctx, csr)
}

func (w apiWriter) Allowed(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: spec}
	if err := w.c.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("create subjectaccessreview: %w", err)
	}
	if sar.Status.EvaluationError != "" && !sar.Status.Allowed {
		return false, fmt.Errorf("subjectaccessreview: %s", sar.Status.EvaluationError)
	}
	return sar.Status.Allowed, nil
}

type reconciler struct {
	opts  Options
	read  reader
	write writer
}

// Reconcile approves and signs one request.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	err := r.read.Get(ctx, client.ObjectKey{Name: req.Name}, csr)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get certificatesigningrequest %s: %w", req.Name, err)
	}
	if csr.IsFinished() {
		return reconcile.Result{}, nil
	}
	if !csr.IsApproved() {
		ok, err := r.autoApprovable(ctx, csr)
		if err != nil || !ok {
			return reconcile.Result{}, err
		}
		now := api.Now()
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: certificatesv1.ConditionTrue, Reason: "AutoApproved",
			Message:        "Auto approving node client certificate after SubjectAccessReview.",
			LastUpdateTime: now, LastTransitionTime: now,
		})
		if err := r.write.Approve(ctx, csr); err != nil {
			return reconcile.Result{}, fmt.Errorf("approve certificatesigningrequest %s: %w", csr.Name, err)
		}
		// The update's watch event brings it back for signing.
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.sign(ctx, csr)
}

var nodeClientUsages = []certificatesv1.KeyUsage{certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}

// nodeClientRequest checks that req asks for a node client certificate.
func nodeClientRequest(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) error {
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") || len(req.Subject.CommonName) == len("system:node:") {
		return fmt.Errorf("subject common name %q does not start with system:node:", req.Subject.CommonName)
	}
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return fmt.Errorf("subject organization %v is not [system:nodes]", req.Subject.Organization)
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return fmt.Errorf("subject alternative names are not allowed")
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return fmt.Errorf("usages %v lack client auth", csr.Spec.Usages)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(nodeClientUsages, u) {
			return fmt.Errorf("usage %q is not allowed", u)
		}
	}
	return nil
}

// autoApprovable reports whether csr is a node client request its requester
// may have approved automatically.
func (r *reconciler) autoApprovable(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (bool, error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		return false, nil
	}
	req, err := certificatesv1.ParseRequest(csr.Spec.Request)
	if err != nil || nodeClientRequest(csr, req) != nil {
		return false, nil
	}
	sub := "nodeclient"
	if csr.Spec.Username == req.Subject.CommonName {
		sub = "selfnodeclient"
	}
	ok, err := r.write.Allowed(ctx, authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: csr.Spec.Extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Group: certificatesv1.GroupVersion.Group,
			Version: "v1", Resource: "certificatesigningrequests", Subresource: sub},
	})
	if err != nil {
		return false, fmt.Errorf("authorize auto-approval of %s: %w", csr.Name, err)
	}
	return ok, nil
}

// sign issues the certificate of an approved request for the signers it
// knows; requests that break a signer's rules are marked Failed.
func (r *reconciler) sign(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if r.opts.Sign == nil {
		return nil
	}
	req, err := certificatesv1.ParseRequest(csr.Spec.Request)
	var extUsage []x509.ExtKeyUsage
	switch csr.Spec.SignerName {
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		if err == nil {
			err = nodeClientRequest(csr, req)
		}
		extUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	case certificatesv1.KubeAPIServerClientSignerName:
		if err == nil && !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
			err = fmt.Errorf("usages %v lack client auth", csr.Spec.Usages)
		}
		for _, u := range csr.Spec.Usages {
			if err == nil && !slices.Contains(nodeClientUsages, u) {
				err = fmt.Errorf("usage %q is not allowed", u)
			}
		}
		extUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	default:
		return nil // another signer's request
	}
	if err != nil {
		now := api.Now()
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: certificatesv1.ConditionTrue, Reason: "SignerValidationFailure",
			Message: err.Error(), LastUpdateTime: now, LastTransitionTime: now,
		})
		return r.write.UpdateStatus(ctx, csr)
	}
	validity := r.opts.MaxValidity
	if s := csr.Spec.ExpirationSeconds; s != nil && time.Duration(*s)*time.Second < validity {
		validity = time.Duration(*s) * time.Second
	}
	cert, err := r.opts.Sign(req, x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment, extUsage, validity)
	if err != nil {
		return fmt.Errorf("sign certificatesigningrequest %s: %w", csr.Name, err)
	}
	csr.Status.Certificate = cert
	if err := r.write.UpdateStatus(ctx, csr); err != nil {
		return fmt.Errorf("store certificate of %s: %w", csr.Name, err)
	}
	return nil
}
