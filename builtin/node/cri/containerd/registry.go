package containerd

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// Registries configure how registries are reached, in the shape of k3s's
// /etc/rancher/k3s/registries.yaml:
//
//	mirrors:
//	  docker.io:
//	    endpoint: ["http://127.0.0.1:5000", "https://mirror.example.com"]
//	configs:
//	  "registry.example.com:5000":
//	    auth: {username: alice, password: s3cret}   # or auth: <base64 user:pass>, identitytoken: …
//	    tls: {ca_file: /etc/ssl/ca.pem, cert_file: …, key_file: …, insecure_skip_verify: false}
//
// Mirrors are tried in order, then the registry itself. A mirror key "*"
// applies to every registry without its own entry. Configs are keyed by
// host[:port] (of a registry or of a mirror endpoint). The zero value means
// every registry is reached directly: HTTPS, except hosts on a loopback
// address (127.0.0.0/8, ::1, localhost), which are plain HTTP unless a tls
// entry names them.
type Registries struct {
	Mirrors map[string]Mirror         `json:"mirrors,omitempty"`
	Configs map[string]RegistryConfig `json:"configs,omitempty"`
}

// Mirror lists a registry's mirror endpoints ("https://host[:port][/path]";
// without a scheme, HTTPS, or HTTP on loopback).
type Mirror struct {
	Endpoints []string `json:"endpoint,omitempty"`
}

// RegistryConfig is the auth and TLS of one registry host.
type RegistryConfig struct {
	Auth *RegistryAuth `json:"auth,omitempty"`
	TLS  *RegistryTLS  `json:"tls,omitempty"`
}

// RegistryAuth is a registry login: Username and Password, or Auth
// (base64 "user:password"), or IdentityToken (an OAuth2 refresh token).
type RegistryAuth struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
}

// RegistryTLS configures HTTPS to a registry.
type RegistryTLS struct {
	CAFile             string `json:"ca_file,omitempty"`
	CertFile           string `json:"cert_file,omitempty"`
	KeyFile            string `json:"key_file,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

// LoadRegistries reads a registries.yaml file; unknown fields are errors.
func LoadRegistries(path string) (Registries, error) {
	var r Registries
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("read registries config: %w", err)
	}
	if err := yaml.UnmarshalStrict(b, &r); err != nil {
		return r, fmt.Errorf("parse registries config %s: %w", path, err)
	}
	return r, nil
}

// credential returns the login for a host contacted during a pull or push:
// the first of creds whose Host matches, else the configured auth.
func (reg Registries) credential(host string, creds []cri.Credential) (cri.Credential, error) {
	for _, c := range creds {
		if cri.SameRegistry(c.Host, host) {
			return c, nil
		}
	}
	for key, cfg := range reg.Configs {
		if cfg.Auth == nil || !cri.SameRegistry(key, host) {
			continue
		}
		a := cfg.Auth
		c := cri.Credential{Host: host, Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken}
		if a.Auth != "" {
			user, pass, err := cri.DecodeAuth(a.Auth)
			if err != nil {
				return c, fmt.Errorf("registries config %s: %w", key, err)
			}
			c.Username, c.Password = user, pass
		}
		return c, nil
	}
	return cri.Credential{}, nil
}

// hosts returns the containerd registry-host resolution for one pull or push:
// mirrors first (pull and resolve only), then the registry itself. done
// closes the idle connections the operation left.
func (reg Registries) hosts(creds []cri.Credential) (_ docker.RegistryHosts, done func()) {
	var mu sync.Mutex
	var clients []*http.Client
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range clients {
			c.CloseIdleConnections()
		}
	}
	return func(refHost string) ([]docker.RegistryHost, error) {
		var out []docker.RegistryHost
		m, ok := reg.Mirrors[refHost]
		if !ok {
			m = reg.Mirrors["*"]
		}
		for _, ep := range m.Endpoints {
			h, err := reg.endpoint(ep, creds)
			if err != nil {
				return nil, fmt.Errorf("mirror %s of %s: %w", ep, refHost, err)
			}
			h.Capabilities = docker.HostCapabilityPull | docker.HostCapabilityResolve
			out = append(out, h)
		}
		host := refHost
		if host == "docker.io" {
			host = "registry-1.docker.io"
		}
		h, err := reg.endpoint(host, creds)
		if err != nil {
			return nil, fmt.Errorf("registry %s: %w", refHost, err)
		}
		h.Capabilities = docker.HostCapabilityPull | docker.HostCapabilityResolve | docker.HostCapabilityPush
		out = append(out, h)
		mu.Lock()
		for _, h := range out {
			clients = append(clients, h.Client)
		}
		mu.Unlock()
		return out, nil
	}, done
}

// endpoint configures one registry endpoint ("host[:port]" or a URL).
func (reg Registries) endpoint(ep string, creds []cri.Credential) (docker.RegistryHost, error) {
	raw := ep
	if !strings.Contains(raw, "://") {
		raw = "//" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return docker.RegistryHost{}, fmt.Errorf("invalid endpoint %q", ep)
	}
	tlsCfg, hasTLS, err := reg.tlsConfig(u.Host)
	if err != nil {
		return docker.RegistryHost{}, err
	}
	scheme := u.Scheme
	if scheme == "" {
		scheme = "https"
		if docker.IsLocalhost(u.Host) && !hasTLS {
			scheme = "http" // loopback registries are plain HTTP, as Docker allows
		}
	}
	path := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(path, "/v2") {
		path += "/v2"
	}
	hc := &http.Client{Transport: docker.DefaultHTTPTransport(tlsCfg)}
	h := docker.RegistryHost{Client: hc, Host: u.Host, Scheme: scheme, Path: path}
	cred, err := reg.credential(u.Host, creds)
	if err != nil {
		return h, err
	}
	if cred.RegistryToken != "" {
		h.Header = http.Header{"Authorization": {"Bearer " + cred.RegistryToken}}
	}
	h.Authorizer = docker.NewDockerAuthorizer(docker.WithAuthClient(hc), docker.WithAuthCreds(func(host string) (string, string, error) {
		c, err := reg.credential(host, creds)
		if err != nil {
			return "", "", err
		}
		if c.IdentityToken != "" {
			return "", c.IdentityToken, nil // containerd's convention for refresh tokens
		}
		return c.Username, c.Password, nil
	}))
	return h, nil
}

// tlsConfig builds the TLS configuration of host from its configs entry.
func (reg Registries) tlsConfig(host string) (*tls.Config, bool, error) {
	cfg, ok := reg.Configs[host]
	if !ok || cfg.TLS == nil {
		return nil, false, nil
	}
	t := cfg.TLS
	c := &tls.Config{InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // the operator asked for it
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, true, fmt.Errorf("tls of %s: %w", host, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, true, fmt.Errorf("tls of %s: no certificate in %s", host, t.CAFile)
		}
		c.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, true, fmt.Errorf("tls of %s: client certificate: %w", host, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, true, nil
}
