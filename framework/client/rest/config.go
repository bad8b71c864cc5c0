package rest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Config says how to reach and authenticate to an API server. The zero value of
// every field except Host (or Hosts) means its default.
type Config struct {
	// Host is the server's base URL (https://host:port or http://host:port); a bare
	// host:port means https.
	Host string
	// Hosts are more servers of the same cluster (API server replicas), tried in
	// order after Host when a server cannot be reached or answers 503; see the
	// package doc for the failover rules. Host may be empty when Hosts is not;
	// duplicates are ignored.
	Hosts []string
	// BearerToken is sent as "Authorization: Bearer <token>".
	BearerToken string
	// BearerTokenFile holds a token; it is re-read when the file changes and wins
	// over BearerToken.
	BearerTokenFile string
	// Username and Password enable basic authentication.
	Username, Password string
	// TLS configures server verification and client certificates.
	TLS TLSConfig
	// Timeout bounds each non-watch request attempt (0: no timeout beyond ctx).
	Timeout time.Duration
	// UserAgent is sent with every request (default "converge-client").
	UserAgent string
	// QPS enables client-side rate limiting when > 0: the sustained number of
	// requests per second. Off by default.
	QPS float32
	// Burst is the token bucket size when QPS > 0 (default max(1, int(QPS))).
	Burst int
	// MaxTries bounds the attempts per request, first included (default 5).
	MaxTries int
	// Transport, when set, carries every request instead of a network
	// connection: TLS is then not used (the transport authenticates its
	// requests itself), the other settings still apply. `converge up` gives
	// its in-process components one that calls the API server's handler
	// (framework/apiserver/inprocess).
	Transport http.RoundTripper
}

// TLSConfig configures TLS. File fields are paths; Data fields hold PEM bytes and
// win over the corresponding file.
type TLSConfig struct {
	CAData   []byte
	CAFile   string
	CertData []byte
	CertFile string
	KeyData  []byte
	KeyFile  string
	// Insecure skips server certificate verification (tests only).
	Insecure bool
	// ServerName overrides the name checked in the server certificate.
	ServerName string
}

// DefaultUserAgent is sent when Config.UserAgent is empty.
const DefaultUserAgent = "converge-client"

// servers returns Host followed by Hosts, without empty entries and duplicates.
func (c *Config) servers() []string {
	var out []string
	for _, h := range append([]string{c.Host}, c.Hosts...) {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// validate checks the config and returns all problems at once, and the base URL
// of every server (Host first, then Hosts).
func (c *Config) validate() ([]*url.URL, error) {
	var errs []error
	hosts := c.servers()
	if len(hosts) == 0 {
		return nil, errors.New("rest config: Host is empty; set the API server URL (e.g. https://127.0.0.1:6443)")
	}
	var bases []*url.URL
	for _, host := range hosts {
		u, err := url.Parse(host)
		if err != nil || u.Scheme == "" || u.Host == "" {
			u, err = url.Parse("https://" + host)
			if err != nil || u.Host == "" {
				errs = append(errs, fmt.Errorf("rest config: Host %q is not a URL (want https://host:port)", host))
				continue
			}
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("rest config: Host %q: scheme must be http or https", host))
		}
		u.Path = trimSlash(u.Path)
		bases = append(bases, u)
	}
	if (c.TLS.CertFile != "" || len(c.TLS.CertData) > 0) != (c.TLS.KeyFile != "" || len(c.TLS.KeyData) > 0) {
		errs = append(errs, errors.New("rest config: a client certificate needs both a certificate and a key"))
	}
	if c.QPS < 0 || c.Burst < 0 || c.MaxTries < 0 || c.Timeout < 0 {
		errs = append(errs, errors.New("rest config: QPS, Burst, MaxTries and Timeout must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return bases, nil
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
