package security

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	certificatesv1 "github.com/converge-dev/converge/builtin/api/certificates/v1"
	"github.com/converge-dev/converge/builtin/security/bootstrap"
	"github.com/converge-dev/converge/builtin/security/node"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/builtin/security/serviceaccount"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Options configure New. The zero value of each optional field means its default.
type Options struct {
	// PKI supplies the client-certificate roots; nil disables x509 authentication.
	PKI *pki.PKI
	// TokenFile is a static token file (token,user,uid,"group1,group2").
	TokenFile string
	// Tokens authenticate bearer tokens after the token file (ServiceAccount
	// tokens, ...).
	Tokens []filters.TokenAuthenticator
	// ServiceAccountIssuer is the iss of ServiceAccount tokens (default
	// serviceaccount.DefaultIssuer); tokens are signed with the PKI's sa.key.
	ServiceAccountIssuer string
	// AuditLogPath enables the audit log ("-" for stdout).
	AuditLogPath string
	// AuditPolicyFile selects levels (default: everything at Metadata).
	AuditPolicyFile string
	// AuditMaxBytes and AuditMaxBackups rotate the audit log (defaults 100 MiB, 5).
	AuditMaxBytes   int64
	AuditMaxBackups int
	// MaxMutatingInFlight and MaxReadOnlyInFlight enable 429 limits.
	MaxMutatingInFlight, MaxReadOnlyInFlight int
	// PerUserInFlightPercent is the share of each in-flight budget one user may
	// hold (default 50).
	PerUserInFlightPercent int
	// MaxWatchesPerUser bounds each user's open watches (0: unlimited).
	MaxWatchesPerUser int
	// FlowControl, when set, is API Priority and Fairness: it replaces the
	// mutating and read-only in-flight budgets (MaxWatchesPerUser still
	// applies).
	FlowControl func(http.Handler) http.Handler
	// AlwaysAllow turns authorization off (authentication still applies).
	AlwaysAllow bool
	// ServiceAccounts, when set, enables the ServiceAccount admission plugin
	// (default ServiceAccount, API access volume) with this lookup.
	ServiceAccounts serviceaccount.Getter
	// Mutating and Validating are admission plugins run after the built-in
	// ones, in order: the control plane passes the admission webhooks
	// (WebhookAdmission) here, as Kubernetes runs its webhook plugins last.
	Mutating   []admission.Mutator
	Validating []admission.Validator
	Logger     logr.Logger
}

// Security is the assembled configuration.
type Security struct {
	opts       Options
	lister     atomic.Pointer[rbac.Lister]
	rbac       *rbac.Authorizer
	authorizer filters.Authorizer
	chain      *admission.Chain
	filters    filters.Options
	audit      *filters.AuditLog
	signer     *serviceaccount.Signer
}

// New builds the authenticators, authorizer, admission chain and filters.
func New(opts Options) (*Security, error) {
	s := &Security{opts: opts}
	var errs []error
	var auths []filters.Authenticator
	if opts.PKI != nil {
		auths = append(auths, filters.NewX509(opts.PKI.CAPool()))
	}
	tokens := append([]filters.TokenAuthenticator(nil), opts.Tokens...)
	if opts.PKI != nil {
		s.signer = &serviceaccount.Signer{Key: opts.PKI.ServiceAccountKey(), Issuer: opts.ServiceAccountIssuer}
		var issuers []string
		if opts.ServiceAccountIssuer != "" {
			issuers = []string{opts.ServiceAccountIssuer}
		}
		tokens = append(tokens, &serviceaccount.Authenticator{
			Keys: []*ecdsa.PublicKey{&opts.PKI.ServiceAccountKey().PublicKey}, Issuers: issuers, Lookup: s.serviceAccountUID,
		}, &bootstrap.TokenAuthenticator{Secrets: s.secrets})
	}
	if opts.TokenFile != "" {
		st, err := filters.LoadTokenFile(opts.TokenFile)
		if err != nil {
			errs = append(errs, err)
		} else {
			tokens = append([]filters.TokenAuthenticator{st}, tokens...)
		}
	}
	var reviewer *TokenReviewer
	if len(tokens) > 0 {
		auths = append(auths, filters.BearerToken(tokens...))
		reviewer = &TokenReviewer{Tokens: tokens, APIAudiences: []string{serviceaccount.DefaultIssuer}}
		if opts.ServiceAccountIssuer != "" {
			reviewer.APIAudiences = []string{opts.ServiceAccountIssuer}
		}
	}
	s.rbac = rbac.NewAuthorizer(s.list)
	nodes := node.NewAuthorizer(s.pods)
	nodes.Claims = s.claimVolumes
	s.authorizer = filters.UnionAuthorizer(filters.Privileged, nodes, s.rbac)
	if opts.AlwaysAllow {
		s.authorizer = filters.AlwaysAllow
	}
	s.filters = filters.Options{
		Authenticator: filters.Union(auths...),
		Authentication: filters.AuthenticationOptions{OnFailure: func(r *http.Request, err error) {
			if err != nil {
				opts.Logger.V(1).Info("Authentication failed", "path", r.URL.Path, "error", err.Error())
			}
		}},
		Authorizer: s.authorizer,
		MaxInFlight: filters.MaxInFlightOptions{
			Mutating: opts.MaxMutatingInFlight, ReadOnly: opts.MaxReadOnlyInFlight,
			PerUserPercent: opts.PerUserInFlightPercent, MaxWatchesPerUser: opts.MaxWatchesPerUser,
		},
		FlowControl: opts.FlowControl,
		Inner:       func(h http.Handler) http.Handler { return Reviews(h, s.authorizer, s.rbac, reviewer) },
	}
	if opts.PKI != nil {
		// ServiceAccount issuer discovery, authorized as a non-resource URL.
		d, err := serviceaccount.NewDiscovery(opts.ServiceAccountIssuer, []*ecdsa.PublicKey{&opts.PKI.ServiceAccountKey().PublicKey})
		if err != nil {
			errs = append(errs, err)
		} else {
			reviews := s.filters.Inner
			s.filters.Inner = func(h http.Handler) http.Handler { return d.Wrap(reviews(h)) }
		}
	}
	if opts.AuditLogPath != "" {
		s.audit = &filters.AuditLog{Path: opts.AuditLogPath, MaxBytes: opts.AuditMaxBytes, MaxBackups: opts.AuditMaxBackups}
		s.filters.Audit = filters.AuditOptions{Sink: s.audit, OnError: func(err error) { opts.Logger.Error(err, "Audit write failed") }}
		if opts.AuditPolicyFile != "" {
			p, err := filters.LoadAuditPolicy(opts.AuditPolicyFile)
			if err != nil {
				errs = append(errs, err)
			}
			s.filters.Audit.Policy = p
		}
	}
	var mutators []admission.Mutator
	if opts.ServiceAccounts != nil {
		mutators = append(mutators, &serviceaccount.Admission{Get: opts.ServiceAccounts})
	}
	s.chain = &admission.Chain{
		Mutators:   append(append(mutators, csrRequester{}), opts.Mutating...),
		Validators: append([]admission.Validator{node.Restriction{}, rbac.EscalationCheck(s.rbac, s.authorizer)}, opts.Validating...),
	}
	return s, errors.Join(errs...)
}

// APIServer is the value for apiserver.Options.Security.
func (s *Security) APIServer() apiserver.Security {
	return apiserver.Security{Filters: s.filters, Admission: s.chain}
}

// TokenRequest is the serviceaccounts/token subresource (nil without a PKI):
// add it to the core/v1 serviceaccounts resource's Subresources.
func (s *Security) TokenRequest() registry.Subresource {
	if s.signer == nil {
		return nil
	}
	return &serviceaccount.TokenRequest{Signer: s.signer, Lookup: s.lookup}
}

// lookup reads one object of a core/v1 resource from the watch cache, for
// binding tokens to pods (NotFound as an API error).
func (s *Security) lookup(ctx context.Context, resource, namespace, name string) (map[string]any, error) {
	items, _, err := s.list(ctx, api.GroupVersionResource{Version: "v1", Resource: resource}, namespace)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	for _, b := range items {
		var obj map[string]any
		if json.Unmarshal(b, &obj) == nil && api.NestedString(obj, "metadata", "name") == name {
			return obj, nil
		}
	}
	return nil, apierrors.NewNotFound(api.GroupResource{Resource: resource}, name)
}

func (s *Security) serviceAccountUID(ctx context.Context, namespace, name string) (string, error) {
	items, _, err := s.list(ctx, api.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, namespace)
	if err != nil {
		return "", err
	}
	for _, b := range items {
		var sa struct{ Metadata api.ObjectMeta }
		if json.Unmarshal(b, &sa) == nil && sa.Metadata.Name == name {
			return sa.Metadata.UID, nil
		}
	}
	return "", errors.New("not found")
}

// Authorizer is the full authorizer (system:masters, then RBAC).
func (s *Security) Authorizer() filters.Authorizer { return s.authorizer }

// RBAC is the RBAC authorizer.
func (s *Security) RBAC() *rbac.Authorizer { return s.rbac }

// Attach binds the authorizer and webhooks to srv's watch caches. Requests that
// need policy before Attach fail with an evaluation error.
func (s *Security) Attach(srv *apiserver.Server) {
	l := rbac.Lister(srv.CachedObjects)
	s.lister.Store(&l)
}

// ReviewsOnly is the apiserver.Security of a server without authentication
// or authorization that still serves the authorization.k8s.io reviews (every
// answer is "allowed") and the authentication.k8s.io ones (no token is
// authenticated), so that registering those resources never stores review
// objects and `kubectl auth can-i` answers yes.
func ReviewsOnly() apiserver.Security {
	return apiserver.Security{Filters: filters.Options{
		Inner: func(h http.Handler) http.Handler { return Reviews(h, filters.AlwaysAllow, nil, nil) },
	}}
}

// Bootstrap creates the default roles and bindings through h and waits,
// up to 30 s, until the authorizer sees them (rbac.WaitVisible; it reads the
// server attached by Attach).
func (s *Security) Bootstrap(ctx context.Context, h http.Handler) error {
	if err := rbac.Bootstrap(ctx, h); err != nil {
		return err
	}
	l := s.lister.Load()
	if l == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return rbac.WaitVisible(ctx, *l)
}

// Close closes the audit log.
func (s *Security) Close() error {
	if s.audit != nil {
		return s.audit.Close()
	}
	return nil
}

func (s *Security) list(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error) {
	l := s.lister.Load()
	if l == nil {
		return nil, 0, errors.New("security: not attached to an API server")
	}
	return (*l)(ctx, gvr, namespace)
}

// secrets lists the Secrets of namespace for the bootstrap token authenticator.
func (s *Security) secrets(ctx context.Context, namespace string) ([][]byte, error) {
	items, _, err := s.list(ctx, api.GroupVersionResource{Version: "v1", Resource: "secrets"}, namespace)
	return items, err
}

// csrRequester records who asks in a new CertificateSigningRequest
// (spec.username, uid, groups, extra), whatever the client sent.
type csrRequester struct{}

// MayReadManagedFields implements admission.ManagedFieldsScoper: the
// plugin writes a request's spec only.
func (csrRequester) MayReadManagedFields(context.Context, *admission.Attributes) bool { return false }

// MayMutate implements admission.MutationScoper: only creates change.
func (csrRequester) MayMutate(_ context.Context, a *admission.Attributes) bool {
	return a.Operation == admission.Create
}

// AdmitReport implements admission.ChangeReporter: only the creates of
// CertificateSigningRequests change, so that no other object is
// canonicalized a second time.
func (c csrRequester) AdmitReport(ctx context.Context, a *admission.Attributes) (bool, error) {
	if !csrCreate(a) {
		return false, nil
	}
	return true, c.Admit(ctx, a)
}

// csrCreate reports whether a creates a CertificateSigningRequest.
func csrCreate(a *admission.Attributes) bool {
	return a.Operation == admission.Create && a.Subresource == "" && a.Object != nil &&
		a.Resource.GroupResource() == (api.GroupResource{Group: certificatesv1.GroupVersion.Group, Resource: "certificatesigningrequests"})
}

// Admit implements admission.Mutator.
func (csrRequester) Admit(_ context.Context, a *admission.Attributes) error {
	if !csrCreate(a) {
		return nil
	}
	spec, _ := a.Object["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		a.Object["spec"] = spec
	}
	delete(spec, "username")
	delete(spec, "uid")
	delete(spec, "groups")
	delete(spec, "extra")
	if u := a.User; u != nil {
		spec["username"] = u.Name
		if u.UID != "" {
			spec["uid"] = u.UID
		}
		if len(u.Groups) > 0 {
			groups := make([]any, len(u.Groups))
			for i, g := range u.Groups {
				groups[i] = g
			}
			spec["groups"] = groups
		}
		if len(u.Extra) > 0 {
			extra := map[string]any{}
			for k, vs := range u.Extra {
				l := make([]any, len(vs))
				for i, v := range vs {
					l[i] = v
				}
				extra[k] = l
			}
			spec["extra"] = extra
		}
	}
	return nil
}

// claimVolumes returns the volume of each PersistentVolumeClaim of
// namespace (by claim name) for the Node authorizer.
func (s *Security) claimVolumes(ctx context.Context, namespace string) (map[string]string, error) {
	items, _, err := s.list(ctx, api.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, namespace)
	if err != nil {
		return nil, err
	}
	type claim struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			VolumeName string `json:"volumeName"`
		} `json:"spec"`
	}
	claims, err := decodeAll[claim](items)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(claims))
	for _, c := range claims {
		if c.Spec.VolumeName != "" {
			out[c.Metadata.Name] = c.Spec.VolumeName
		}
	}
	return out, nil
}

// pods lists the pods of namespace bound to nodeName for the Node
// authorizer. Only the pods whose stored (compact) JSON names the node are
// decoded.
func (s *Security) pods(ctx context.Context, namespace, nodeName string) ([]node.Pod, error) {
	items, _, err := s.list(ctx, api.GroupVersionResource{Version: "v1", Resource: "pods"}, namespace)
	if err != nil {
		return nil, err
	}
	q, err := json.Marshal(nodeName)
	if err != nil {
		return nil, err
	}
	needle := append([]byte(`"nodeName":`), q...)
	mine := items[:0:0]
	for _, b := range items {
		if bytes.Contains(b, needle) {
			mine = append(mine, b)
		}
	}
	return decodeAll[node.Pod](mine)
}
