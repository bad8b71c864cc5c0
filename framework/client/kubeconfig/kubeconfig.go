package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/client/rest"
)

// File is the subset of the kubeconfig format Converge understands.
type File struct {
	CurrentContext string         `json:"current-context"`
	Clusters       []NamedCluster `json:"clusters"`
	Users          []NamedUser    `json:"users"`
	Contexts       []NamedContext `json:"contexts"`
}

// NamedCluster is one entry of clusters.
type NamedCluster struct {
	Name    string  `json:"name"`
	Cluster Cluster `json:"cluster"`
}

// Cluster says where a server is and how to trust it.
type Cluster struct {
	Server                   string `json:"server"`
	TLSServerName            string `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthority     string `json:"certificate-authority,omitempty"`
	CertificateAuthorityData string `json:"certificate-authority-data,omitempty"`
	// Extensions are kubeconfig's named extensions; kubectl keeps and ignores
	// them. Converge reads ServersExtension.
	Extensions []NamedExtension `json:"extensions,omitempty"`
}

// NamedExtension is one entry of a cluster's extensions.
type NamedExtension struct {
	Name      string          `json:"name"`
	Extension json.RawMessage `json:"extension"`
}

// ServersExtension names the cluster extension that lists more API servers of
// the cluster, tried after server when it fails (rest.Config.Hosts):
//
//	clusters:
//	- name: prod
//	  cluster:
//	    server: https://10.0.0.1:6443
//	    extensions:
//	    - name: servers.converge.dev
//	      extension:
//	        apiVersion: converge.dev/v1
//	        kind: Servers
//	        servers: [https://10.0.0.2:6443, https://10.0.0.3:6443]
//
// A kubeconfig has one server per cluster; kubectl and client-go use server and
// ignore the extension, so the file stays valid for them.
const ServersExtension = "servers.converge.dev"

// Servers is the content of the ServersExtension extension.
type Servers struct {
	APIVersion string   `json:"apiVersion,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	Servers    []string `json:"servers"`
}

// NewServersExtension returns the ServersExtension entry listing servers.
func NewServersExtension(servers []string) NamedExtension {
	b, _ := json.Marshal(Servers{APIVersion: "converge.dev/v1", Kind: "Servers", Servers: servers})
	return NamedExtension{Name: ServersExtension, Extension: b}
}

// moreServers returns the servers listed by the cluster's ServersExtension.
func (c Cluster) moreServers() ([]string, error) {
	for _, e := range c.Extensions {
		if e.Name != ServersExtension {
			continue
		}
		var s Servers
		if err := json.Unmarshal(e.Extension, &s); err != nil {
			return nil, fmt.Errorf("extension %s: %w", ServersExtension, err)
		}
		return s.Servers, nil
	}
	return nil, nil
}

// NamedUser is one entry of users.
type NamedUser struct {
	Name string   `json:"name"`
	User AuthInfo `json:"user"`
}

// AuthInfo holds a user's credentials.
type AuthInfo struct {
	ClientCertificate     string `json:"client-certificate,omitempty"`
	ClientCertificateData string `json:"client-certificate-data,omitempty"`
	ClientKey             string `json:"client-key,omitempty"`
	ClientKeyData         string `json:"client-key-data,omitempty"`
	Token                 string `json:"token,omitempty"`
	TokenFile             string `json:"tokenFile,omitempty"`
	Username              string `json:"username,omitempty"`
	Password              string `json:"password,omitempty"`
	// Exec and AuthProvider plugins are not supported; their presence is reported.
	Exec         any `json:"exec,omitempty"`
	AuthProvider any `json:"auth-provider,omitempty"`
}

// NamedContext is one entry of contexts.
type NamedContext struct {
	Name    string  `json:"name"`
	Context Context `json:"context"`
}

// Context ties a cluster, a user and a default namespace together.
type Context struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
}

// DefaultNamespace is used when a context names no namespace.
const DefaultNamespace = "default"

// ReadFile parses the kubeconfig at path and makes its relative file paths
// absolute (relative to path's directory).
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	var f File
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parse kubeconfig %s: %w", path, err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for i := range f.Clusters {
		abs(&f.Clusters[i].Cluster.CertificateAuthority)
	}
	for i := range f.Users {
		u := &f.Users[i].User
		abs(&u.ClientCertificate)
		abs(&u.ClientKey)
		abs(&u.TokenFile)
	}
	return &f, nil
}

// merge adds to f what it does not define yet from o (first definition wins).
func (f *File) merge(o *File) {
	if f.CurrentContext == "" {
		f.CurrentContext = o.CurrentContext
	}
	for _, c := range o.Clusters {
		if !slices.ContainsFunc(f.Clusters, func(x NamedCluster) bool { return x.Name == c.Name }) {
			f.Clusters = append(f.Clusters, c)
		}
	}
	for _, u := range o.Users {
		if !slices.ContainsFunc(f.Users, func(x NamedUser) bool { return x.Name == u.Name }) {
			f.Users = append(f.Users, u)
		}
	}
	for _, c := range o.Contexts {
		if !slices.ContainsFunc(f.Contexts, func(x NamedContext) bool { return x.Name == c.Name }) {
			f.Contexts = append(f.Contexts, c)
		}
	}
}

// LoadKubeconfig reads the kubeconfig at path and returns the client Config and
// default namespace of context (the file's current-context if empty).
func LoadKubeconfig(path, context string) (*rest.Config, string, error) {
	f, err := ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	cfg, ns, err := f.ClientConfig(context)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, ns, nil
}

// ClientConfig resolves context (current-context if empty) into a Config and the
// context's namespace ("default" if it names none).
func (f *File) ClientConfig(context string) (*rest.Config, string, error) {
	name := context
	if name == "" {
		name = f.CurrentContext
	}
	if name == "" {
		return nil, "", fmt.Errorf("no context given and current-context is not set; pass a context (one of %s) or run `kubectl config use-context NAME`", f.contextNames())
	}
	i := slices.IndexFunc(f.Contexts, func(c NamedContext) bool { return c.Name == name })
	if i < 0 {
		return nil, "", fmt.Errorf("context %q not found; contexts in this kubeconfig: %s", name, f.contextNames())
	}
	ctx := f.Contexts[i].Context
	ci := slices.IndexFunc(f.Clusters, func(c NamedCluster) bool { return c.Name == ctx.Cluster })
	if ci < 0 {
		return nil, "", fmt.Errorf("context %q refers to cluster %q, which is not defined under clusters", name, ctx.Cluster)
	}
	cl := f.Clusters[ci].Cluster
	if cl.Server == "" {
		return nil, "", fmt.Errorf("cluster %q has no server; set clusters[].cluster.server", ctx.Cluster)
	}
	more, err := cl.moreServers()
	if err != nil {
		return nil, "", fmt.Errorf("cluster %q: %w", ctx.Cluster, err)
	}
	cfg := &rest.Config{Host: cl.Server, Hosts: more}
	cfg.TLS.ServerName = cl.TLSServerName
	cfg.TLS.Insecure = cl.InsecureSkipTLSVerify
	cfg.TLS.CAFile = cl.CertificateAuthority
	var errs []error
	decode := func(field, s string) []byte {
		if s == "" {
			return nil
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s is not valid base64: %w", field, err))
		}
		return b
	}
	cfg.TLS.CAData = decode(fmt.Sprintf("cluster %q certificate-authority-data", ctx.Cluster), cl.CertificateAuthorityData)
	if ctx.User != "" {
		ui := slices.IndexFunc(f.Users, func(u NamedUser) bool { return u.Name == ctx.User })
		if ui < 0 {
			return nil, "", fmt.Errorf("context %q refers to user %q, which is not defined under users", name, ctx.User)
		}
		u := f.Users[ui].User
		if u.Exec != nil || u.AuthProvider != nil {
			errs = append(errs, fmt.Errorf("user %q uses an exec or auth-provider plugin, which Converge does not support; use a token, token file or client certificate", ctx.User))
		}
		cfg.TLS.CertFile, cfg.TLS.KeyFile = u.ClientCertificate, u.ClientKey
		cfg.TLS.CertData = decode(fmt.Sprintf("user %q client-certificate-data", ctx.User), u.ClientCertificateData)
		cfg.TLS.KeyData = decode(fmt.Sprintf("user %q client-key-data", ctx.User), u.ClientKeyData)
		cfg.BearerToken, cfg.BearerTokenFile = u.Token, u.TokenFile
		cfg.Username, cfg.Password = u.Username, u.Password
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	ns := ctx.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	return cfg, ns, nil
}

func (f *File) contextNames() string {
	if len(f.Contexts) == 0 {
		return "(none)"
	}
	names := make([]string, len(f.Contexts))
	for i, c := range f.Contexts {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// Environment is what FromEnvironment reads from the process; tests replace it.
type Environment struct {
	// Getenv returns an environment variable (os.Getenv).
	Getenv func(string) string
	// HomeDir is the user's home directory (for ~/.kube/config).
	HomeDir string
	// ServiceAccountDir holds token, ca.crt and namespace
	// (/var/run/secrets/kubernetes.io/serviceaccount).
	ServiceAccountDir string
}

// ServiceAccountDir is where Kubernetes mounts a pod's service account.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// DefaultEnvironment describes the running process.
func DefaultEnvironment() Environment {
	home, _ := os.UserHomeDir()
	return Environment{Getenv: os.Getenv, HomeDir: home, ServiceAccountDir: ServiceAccountDir}
}

// FromEnvironment finds the client configuration the way kubectl and
// controller-runtime do (see the package doc), using the real process environment.
// kubeconfigFlag is the value of a --kubeconfig flag ("" if unset); context
// selects a kubeconfig context ("" for current-context).
func FromEnvironment(kubeconfigFlag, context string) (*rest.Config, string, error) {
	return DefaultEnvironment().Load(kubeconfigFlag, context)
}

// Load is FromEnvironment against e.
func (e Environment) Load(kubeconfigFlag, context string) (*rest.Config, string, error) {
	getenv := e.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if kubeconfigFlag != "" {
		return LoadKubeconfig(kubeconfigFlag, context)
	}
	if list := getenv("KUBECONFIG"); list != "" {
		var merged *File
		var tried []string
		for _, p := range filepath.SplitList(list) {
			if p == "" {
				continue
			}
			tried = append(tried, p)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			f, err := ReadFile(p)
			if err != nil {
				return nil, "", fmt.Errorf("KUBECONFIG: %w", err)
			}
			if merged == nil {
				merged = f
			} else {
				merged.merge(f)
			}
		}
		if merged != nil {
			cfg, ns, err := merged.ClientConfig(context)
			if err != nil {
				return nil, "", fmt.Errorf("KUBECONFIG=%s: %w", list, err)
			}
			return cfg, ns, nil
		}
		return nil, "", fmt.Errorf("KUBECONFIG=%s: none of the files exist (%s); fix or unset KUBECONFIG", list, strings.Join(tried, ", "))
	}
	if getenv("KUBERNETES_SERVICE_HOST") != "" {
		return e.InCluster()
	}
	if e.HomeDir != "" {
		p := filepath.Join(e.HomeDir, ".kube", "config")
		if _, err := os.Stat(p); err == nil {
			return LoadKubeconfig(p, context)
		}
	}
	return nil, "", errors.New("no client configuration found: pass --kubeconfig, set KUBECONFIG, run in a pod with a service account, or create ~/.kube/config")
}

// InCluster builds the Config of a pod's service account: the API server from
// KUBERNETES_SERVICE_HOST/PORT, the token (re-read when rotated) and CA from
// ServiceAccountDir; the namespace from its namespace file ("default" if absent).
func (e Environment) InCluster() (*rest.Config, string, error) {
	getenv := e.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, "", errors.New("in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set (are we running in a pod?)")
	}
	dir := e.ServiceAccountDir
	if dir == "" {
		dir = ServiceAccountDir
	}
	tokenFile := filepath.Join(dir, "token")
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, "", fmt.Errorf("in-cluster config: service account token: %w; mount a service account token (automountServiceAccountToken)", err)
	}
	cfg := &rest.Config{
		Host:            "https://" + joinHostPort(host, port),
		BearerTokenFile: tokenFile,
	}
	if ca := filepath.Join(dir, "ca.crt"); fileExists(ca) {
		cfg.TLS.CAFile = ca
	}
	ns := DefaultNamespace
	if b, err := os.ReadFile(filepath.Join(dir, "namespace")); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			ns = s
		}
	}
	return cfg, ns, nil
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
