package csr

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "github.com/converge-dev/converge/builtin/api/certificates/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/filters"
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
	// Authorizer decides auto-approval (the API server's authorizer).
	Authorizer filters.Authorizer
	// Sign signs approved requests; nil disables signing.
	Sign SignFunc
	// MaxValidity caps issued certificates (default one year).
	MaxValidity time.Duration
}

// Setup adds the controller to mgr.
func Setup(mgr *manager.Manager, opts Options) error {
	if opts.MaxValidity <= 0 {
		opts.MaxValidity = 365 * 24 * time.Hour
	}
	c := mgr.Client()
	r := &reconciler{opts: opts,
		get: func(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error) {
			csr := &certificatesv1.CertificateSigningRequest{}
			return csr, c.Get(ctx, client.ObjectKey{Name: name}, csr)
		},
		approve: func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
			return c.SubResource("approval").Update(ctx, csr, nil)
		},
		updateStatus: func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
			return c.Status().Update(ctx, csr)
		},
	}
	err := builder.ControllerManagedBy(mgr).Named(Name).
		For(builder.Kind[*certificatesv1.CertificateSigningRequest]()).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

type reconciler struct {
	opts         Options
	get          func(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error)
	approve      func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error
	updateStatus func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error
}

// Reconcile approves and signs one request.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr, err := r.get(ctx, req.Name)
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
		if err := r.approve(ctx, csr); err != nil {
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
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || r.opts.Authorizer == nil {
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
	u := &filters.User{Name: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups}
	d, _, err := r.opts.Authorizer.Authorize(ctx, filters.Attributes{User: u, Verb: "create", ResourceRequest: true,
		APIGroup: certificatesv1.GroupVersion.Group, APIVersion: "v1", Resource: "certificatesigningrequests", Subresource: sub})
	if err != nil {
		return false, fmt.Errorf("authorize auto-approval of %s: %w", csr.Name, err)
	}
	return d == filters.DecisionAllow, nil
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
		return r.updateStatus(ctx, csr)
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
	if err := r.updateStatus(ctx, csr); err != nil {
		return fmt.Errorf("store certificate of %s: %w", csr.Name, err)
	}
	return nil
}
