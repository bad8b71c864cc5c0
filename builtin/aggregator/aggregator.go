package aggregator

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	apiregistrationv1 "github.com/converge-dev/converge/builtin/api/apiregistration/v1"
	"github.com/converge-dev/converge/builtin/serviceresolver"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

var apiServicesGVR = api.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// Options configure New.
type Options struct {
	// List reads APIServices, Services and EndpointSlices (the watch
	// cache). Required.
	List serviceresolver.Lister
	// Dial connects to NAME.NAMESPACE.svc:PORT (serviceresolver). Required.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ClientCertificate is the front-proxy client certificate presented to
	// aggregated servers; nil presents none (and aggregated servers built on
	// k8s.io/apiserver will not trust the X-Remote-* headers).
	ClientCertificate *tls.Certificate
	// Local reports whether the API server itself serves version of group
	// (any version when version is ""); its requests are never proxied.
	// Nil: none is local.
	Local func(group, version string) bool
	// Logger receives proxy errors at V(1).
	Logger logr.Logger
	// Added, if set, is called when Refresh finds a Service-backed
	// APIService it did not know (the control plane then checks it at once).
	Added func()
}

// Aggregator proxies aggregated group versions and checks their availability.
type Aggregator struct {
	opts  Options
	table atomic.Pointer[table]

	mu         sync.Mutex // guards transports
	transports map[string]*http.Transport
	checked    sync.Map // APIService name → bool, Check's last answer
	// resourceLists holds the last APIResourceList each APIService's
	// server answered Check's probe with (name → []byte); fetched, when
	// discovery last probed an APIService itself (name → time.Time).
	resourceLists, fetched sync.Map
}

// table is the routing table: every APIService naming a Service, by name.
type table struct {
	byName map[string]*apiregistrationv1.APIService
}

// New returns an Aggregator.
func New(opts Options) *Aggregator {
	a := &Aggregator{opts: opts, transports: map[string]*http.Transport{}}
	a.table.Store(&table{byName: map[string]*apiregistrationv1.APIService{}})
	return a
}

// Refresh rereads the APIServices into the routing table.
func (a *Aggregator) Refresh(ctx context.Context) error {
	items, _, err := a.opts.List(ctx, apiServicesGVR, "")
	if err != nil {
		return fmt.Errorf("list apiservices: %w", err)
	}
	t := &table{byName: map[string]*apiregistrationv1.APIService{}}
	for _, b := range items {
		var s apiregistrationv1.APIService
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("decode apiservice: %w", err)
		}
		if s.Spec.Service != nil {
			t.byName[s.Name] = &s
		}
	}
	old := a.table.Swap(t)
	if a.opts.Added != nil {
		for name := range t.byName {
			if old.byName[name] == nil {
				a.opts.Added()
				break
			}
		}
	}
	for _, m := range []*sync.Map{&a.checked, &a.resourceLists, &a.fetched} {
		m.Range(func(name, _ any) bool {
			if t.byName[name.(string)] == nil {
				m.Delete(name)
			}
			return true
		})
	}
	return nil
}

// HasRemote reports whether the last Refresh found Service-backed
// APIServices.
func (a *Aggregator) HasRemote() bool { return len(a.table.Load().byName) > 0 }

// lookup returns the Service-backed APIService of a group version,
// refreshing the table once when it has none.
func (a *Aggregator) lookup(ctx context.Context, group, version string) *apiregistrationv1.APIService {
	name := version + "." + group
	if s := a.table.Load().byName[name]; s != nil {
		return s
	}
	if err := a.Refresh(ctx); err != nil {
		a.opts.Logger.V(1).Info("Reading APIServices failed", "error", err.Error())
		return nil
	}
	return a.table.Load().byName[name]
}

// available reports whether the APIService's last recorded check, else its
// stored Available condition, is True: kube-aggregator answers 503 without
// proxying otherwise, an APIService not checked yet included.
func (a *Aggregator) available(s *apiregistrationv1.APIService) bool {
	if ok, checked := a.checked.Load(s.Name); checked {
		return ok.(bool)
	}
	for _, c := range s.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == "True"
		}
	}
	return false
}

// RemoteVersions lists the group versions of the Service-backed APIServices
// for the API server's discovery (apiserver.Options.RemoteVersions), with
// the resources their servers last answered the availability probe with
// (none yet: aggregated discovery marks the version Stale, as
// kube-aggregator does for an unavailable one).
func (a *Aggregator) RemoteVersions() []apiserver.RemoteVersion {
	var out []apiserver.RemoteVersion
	for name, s := range a.table.Load().byName {
		rv := apiserver.RemoteVersion{Group: s.Spec.Group, Version: s.Spec.Version,
			GroupPriority: s.Spec.GroupPriorityMinimum, VersionPriority: s.Spec.VersionPriority}
		if list, ok := a.resourceLists.Load(name); ok {
			rv.ResourceList = list.([]byte)
		} else if _, checked := a.checked.Load(name); !checked {
			rv.ResourceList = a.fetchResourceList(s)
		}
		out = append(out, rv)
	}
	return out
}

// fetchResourceList probes an APIService whose resources discovery has not
// seen yet and that was not checked yet (created a moment ago, before the
// availability loop came to it), at most once per fetchInterval, and keeps
// what it answers.
func (a *Aggregator) fetchResourceList(s *apiregistrationv1.APIService) []byte {
	now := time.Now()
	if last, ok := a.fetched.Load(s.Name); ok && now.Sub(last.(time.Time)) < fetchInterval {
		return nil
	}
	a.fetched.Store(s.Name, now)
	ctx, cancel := context.WithTimeout(context.Background(), fetchInterval)
	defer cancel()
	list, err := a.probe(ctx, s)
	if err != nil {
		return nil
	}
	a.resourceLists.Store(s.Name, list)
	return list
}

// fetchInterval bounds fetchResourceList's probes (and their wait).
const fetchInterval = 2 * time.Second

// groupServices returns the Service-backed APIServices of group.
func (a *Aggregator) groupServices(group string) []*apiregistrationv1.APIService {
	var out []*apiregistrationv1.APIService
	for _, s := range a.table.Load().byName {
		if s.Spec.Group == group {
			out = append(out, s)
		}
	}
	return out
}

// Wrap proxies the requests of aggregated group versions and passes every
// other request to next. Install it inside authentication and
// authorization.
func (a *Aggregator) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/apis/")
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		parts := strings.SplitN(strings.Trim(rest, "/"), "/", 3)
		if parts[0] == "" {
			next.ServeHTTP(w, r)
			return
		}
		if len(parts) == 1 {
			if !a.serveGroup(w, r, parts[0]) {
				next.ServeHTTP(w, r)
			}
			return
		}
		gv := api.GroupVersion{Group: parts[0], Version: parts[1]}
		if a.opts.Local != nil && a.opts.Local(gv.Group, gv.Version) {
			next.ServeHTTP(w, r)
			return
		}
		s := a.lookup(r.Context(), gv.Group, gv.Version)
		if s == nil {
			next.ServeHTTP(w, r)
			return
		}
		if !a.available(s) {
			filters.WriteStatus(w, apierrors.NewServiceUnavailable("service unavailable"))
			return
		}
		a.proxy(w, r, s)
	})
}

// serveGroup answers /apis/GROUP for a group only aggregated servers serve
// (kube-aggregator's group handler): its versions by versionPriority.
func (a *Aggregator) serveGroup(w http.ResponseWriter, r *http.Request, group string) bool {
	if a.opts.Local != nil && a.opts.Local(group, "") {
		return false
	}
	svcs := a.groupServices(group)
	if len(svcs) == 0 {
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		filters.WriteStatus(w, apierrors.NewMethodNotSupported(api.GroupResource{Group: group}, strings.ToLower(r.Method)))
		return true
	}
	sortVersions(svcs)
	type gvd struct {
		GroupVersion string `json:"groupVersion"`
		Version      string `json:"version"`
	}
	var versions []gvd
	for _, s := range svcs {
		versions = append(versions, gvd{GroupVersion: group + "/" + s.Spec.Version, Version: s.Spec.Version})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "APIGroup", "apiVersion": "v1", "name": group,
		"versions": versions, "preferredVersion": versions[0]})
	return true
}

// sortVersions orders the APIServices of one group by versionPriority
// (highest first), then by Kubernetes' version order.
func sortVersions(svcs []*apiregistrationv1.APIService) {
	slices.SortFunc(svcs, func(x, y *apiregistrationv1.APIService) int {
		if x.Spec.VersionPriority != y.Spec.VersionPriority {
			return int(y.Spec.VersionPriority) - int(x.Spec.VersionPriority)
		}
		return strings.Compare(x.Spec.Version, y.Spec.Version)
	})
}

// remoteHeaders are the request headers the front proxy sets; clients'
// values are dropped.
func isRemoteHeader(name string) bool {
	n := strings.ToLower(name)
	return n == "x-remote-user" || n == "x-remote-uid" || n == "x-remote-group" || strings.HasPrefix(n, "x-remote-extra-")
}

// proxy forwards r to the APIService's Service.
func (a *Aggregator) proxy(w http.ResponseWriter, r *http.Request, s *apiregistrationv1.APIService) {
	tr, err := a.transport(s)
	if err != nil {
		filters.WriteStatus(w, apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	u, _ := filters.UserFrom(r.Context())
	target := serviceURL(s)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.Host = target.Host
			for name := range pr.Out.Header {
				if isRemoteHeader(name) || strings.HasPrefix(strings.ToLower(name), "impersonate-") {
					pr.Out.Header.Del(name)
				}
			}
			pr.Out.Header.Del("Authorization")
			setRemoteUser(pr.Out.Header, u)
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			a.opts.Logger.V(1).Info("Proxying to an aggregated API server failed", "apiservice", s.Name, "path", r.URL.Path, "error", err.Error())
			filters.WriteStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("service unavailable: %s: %v", s.Name, err)))
		},
	}
	rp.ServeHTTP(w, r)
}

// setRemoteUser writes the requestheader headers of u.
func setRemoteUser(h http.Header, u *User) {
	if u == nil {
		return
	}
	h.Set("X-Remote-User", u.Name)
	if u.UID != "" {
		h.Set("X-Remote-Uid", u.UID)
	}
	for _, g := range u.Groups {
		h.Add("X-Remote-Group", g)
	}
	for k, vs := range u.Extra {
		for _, v := range vs {
			h.Add("X-Remote-Extra-"+url.PathEscape(k), v)
		}
	}
}

// User is the authenticated user of a request.
type User = filters.User

// serviceURL is https://NAME.NAMESPACE.svc:PORT of the APIService's Service.
func serviceURL(s *apiregistrationv1.APIService) *url.URL {
	port := int32(443)
	if s.Spec.Service.Port != nil {
		port = *s.Spec.Service.Port
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(s.Spec.Service.Name+"."+s.Spec.Service.Namespace+".svc", strconv.Itoa(int(port)))}
}

// transport returns the (shared) transport of an APIService's TLS settings.
func (a *Aggregator) transport(s *apiregistrationv1.APIService) (*http.Transport, error) {
	serverName := s.Spec.Service.Name + "." + s.Spec.Service.Namespace + ".svc"
	sum := sha256.Sum256(s.Spec.CABundle)
	key := fmt.Sprintf("%s/%t/%x", serverName, s.Spec.InsecureSkipTLSVerify, sum[:8])
	a.mu.Lock()
	defer a.mu.Unlock()
	if tr := a.transports[key]; tr != nil {
		return tr, nil
	}
	cfg := &tls.Config{ServerName: serverName, InsecureSkipVerify: s.Spec.InsecureSkipTLSVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // the APIService's choice
	if !s.Spec.InsecureSkipTLSVerify {
		pool := x509.NewCertPool()
		if len(s.Spec.CABundle) > 0 && !pool.AppendCertsFromPEM(s.Spec.CABundle) {
			return nil, fmt.Errorf("apiservice %s: caBundle holds no PEM certificate", s.Name)
		}
		cfg.RootCAs = pool
	}
	if c := a.opts.ClientCertificate; c != nil {
		cfg.Certificates = []tls.Certificate{*c}
	}
	tr := &http.Transport{
		DialContext:         a.opts.Dial,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 32,
	}
	a.transports[key] = tr
	return tr, nil
}

// errorText shortens an error for a condition message.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
