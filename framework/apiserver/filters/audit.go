package filters

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"sigs.k8s.io/yaml"
)

// Level is how much of a request the audit log records.
type Level string

// Audit levels, from nothing to everything.
const (
	LevelNone            Level = "None"
	LevelMetadata        Level = "Metadata"
	LevelRequest         Level = "Request"
	LevelRequestResponse Level = "RequestResponse"
)

func (l Level) rank() int {
	switch l {
	case LevelMetadata:
		return 1
	case LevelRequest:
		return 2
	case LevelRequestResponse:
		return 3
	}
	return 0
}

// AuditPolicy selects the level of each request (audit.k8s.io/v1 Policy): the
// first matching rule wins, no match means None.
type AuditPolicy struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Rules      []AuditPolicyRule `json:"rules"`
}

// AuditPolicyRule matches requests; empty lists match everything.
type AuditPolicyRule struct {
	Level      Level    `json:"level"`
	Users      []string `json:"users,omitempty"`
	UserGroups []string `json:"userGroups,omitempty"`
	Verbs      []string `json:"verbs,omitempty"`
	Resources  []struct {
		Group         string   `json:"group,omitempty"`
		Resources     []string `json:"resources,omitempty"`
		ResourceNames []string `json:"resourceNames,omitempty"`
	} `json:"resources,omitempty"`
	Namespaces      []string `json:"namespaces,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// DefaultAuditPolicy logs every request at Metadata.
var DefaultAuditPolicy = &AuditPolicy{Rules: []AuditPolicyRule{{Level: LevelMetadata}}}

// LoadAuditPolicy reads a policy file (YAML or JSON).
func LoadAuditPolicy(path string) (*AuditPolicy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit policy: %w", err)
	}
	p := &AuditPolicy{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		return nil, fmt.Errorf("audit policy %s: %w", path, err)
	}
	for i, r := range p.Rules {
		switch r.Level {
		case LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse:
		default:
			return nil, fmt.Errorf("audit policy %s: rules[%d].level: unsupported value %q", path, i, r.Level)
		}
	}
	return p, nil
}

// LevelFor returns the level of a request by u described by ri.
func (p *AuditPolicy) LevelFor(u *User, ri *RequestInfo) Level {
	for _, r := range p.Rules {
		if r.matches(u, ri) {
			return r.Level
		}
	}
	return LevelNone
}

func (r *AuditPolicyRule) matches(u *User, ri *RequestInfo) bool {
	if len(r.Users) > 0 && (u == nil || !slices.Contains(r.Users, u.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 {
		if u == nil || !slices.ContainsFunc(r.UserGroups, u.InGroup) {
			return false
		}
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, ri.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		if !ri.IsResourceRequest {
			return false
		}
		if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, ri.Namespace) {
			return false
		}
		if len(r.Resources) > 0 {
			combined := ri.Resource
			if ri.Subresource != "" {
				combined += "/" + ri.Subresource
			}
			ok := false
			for _, gr := range r.Resources {
				if gr.Group != ri.APIGroup {
					continue
				}
				if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, ri.Name) {
					continue
				}
				if len(gr.Resources) == 0 {
					ok = true
					break
				}
				for _, res := range gr.Resources {
					if res == combined || res == "*" || (ri.Subresource != "" && (res == ri.Resource+"/*" || res == "*/"+ri.Subresource)) {
						ok = true
						break
					}
				}
			}
			if !ok {
				return false
			}
		}
	}
	if len(r.NonResourceURLs) > 0 {
		if ri.IsResourceRequest {
			return false
		}
		ok := false
		for _, u := range r.NonResourceURLs {
			if u == "*" || u == ri.Path || (strings.HasSuffix(u, "*") && strings.HasPrefix(ri.Path, strings.TrimSuffix(u, "*"))) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// AuditEvent is one audit.k8s.io/v1 Event.
type AuditEvent struct {
	Kind                     string            `json:"kind"`
	APIVersion               string            `json:"apiVersion"`
	Level                    Level             `json:"level"`
	AuditID                  string            `json:"auditID"`
	Stage                    string            `json:"stage"`
	RequestURI               string            `json:"requestURI"`
	Verb                     string            `json:"verb"`
	User                     User              `json:"user"`
	ImpersonatedUser         *User             `json:"impersonatedUser,omitempty"`
	SourceIPs                []string          `json:"sourceIPs,omitempty"`
	UserAgent                string            `json:"userAgent,omitempty"`
	ObjectRef                *AuditObjectRef   `json:"objectRef,omitempty"`
	ResponseStatus           *AuditStatus      `json:"responseStatus,omitempty"`
	RequestObject            json.RawMessage   `json:"requestObject,omitempty"`
	ResponseObject           json.RawMessage   `json:"responseObject,omitempty"`
	RequestReceivedTimestamp string            `json:"requestReceivedTimestamp"`
	StageTimestamp           string            `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// AuditObjectRef names the object a request is about.
type AuditObjectRef struct {
	Resource    string `json:"resource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	APIGroup    string `json:"apiGroup,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// AuditStatus is the response's code (and message for failures).
type AuditStatus struct {
	Metadata struct{} `json:"metadata"`
	Code     int      `json:"code"`
	Status   string   `json:"status,omitempty"`
	Message  string   `json:"message,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

// LatencyAnnotation carries the request's latency in audit events.
const LatencyAnnotation = "converge.dev/latency"

// AuditSink receives finished events. Implementations must be safe for
// concurrent use.
type AuditSink interface {
	WriteEvent(ev *AuditEvent) error
}

// AuditLog writes events as JSON lines to a file, rotating it by size: when a
// write would make it exceed MaxBytes the file is renamed to Path.1 (Path.1 to
// Path.2, ..., keeping MaxBackups) and a new one is started.
type AuditLog struct {
	// Path of the log file; "-" writes to stdout without rotation.
	Path string
	// MaxBytes per file (default 100 MiB).
	MaxBytes int64
	// MaxBackups rotated files are kept (default 5).
	MaxBackups int

	mu   sync.Mutex // guards f and size
	f    *os.File
	size int64
}

var _ AuditSink = (*AuditLog)(nil)

// WriteEvent implements AuditSink.
func (l *AuditLog) WriteEvent(ev *AuditEvent) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("audit: encode event: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Path == "-" {
		_, err := os.Stdout.Write(b)
		return err
	}
	maxBytes := l.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 100 << 20
	}
	if l.f == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	if l.size > 0 && l.size+int64(len(b)) > maxBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(b)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("audit: write: %w", err)
	}
	return nil
}

func (l *AuditLog) open() error {
	f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit: open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("audit: open log: %w", err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

func (l *AuditLog) rotate() error {
	backups := l.MaxBackups
	if backups <= 0 {
		backups = 5
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("audit: rotate: %w", err)
	}
	l.f = nil
	_ = os.Remove(l.Path + "." + strconv.Itoa(backups))
	for i := backups - 1; i >= 1; i-- {
		_ = os.Rename(l.Path+"."+strconv.Itoa(i), l.Path+"."+strconv.Itoa(i+1))
	}
	if err := os.Rename(l.Path, l.Path+".1"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("audit: rotate: %w", err)
	}
	return l.open()
}

// Close closes the file; a later write reopens it.
func (l *AuditLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// AuditOptions configure WithAudit.
type AuditOptions struct {
	// Policy selects levels; nil means DefaultAuditPolicy.
	Policy *AuditPolicy
	// Sink receives the events. Required.
	Sink AuditSink
	// MaxBodyBytes caps the request and response bodies recorded (default 1 MiB);
	// larger bodies are omitted.
	MaxBodyBytes int
	// OnError is told about failed writes; may be nil.
	OnError func(err error)
}

// auditContext is the in-flight event that inner filters complete.
type auditContext struct {
	mu           sync.Mutex
	user         *User
	impersonated *User
	decision     string
	reason       string
	annotations  map[string]string
}

type auditKey struct{}

// AddAuditAnnotation adds key=value to the annotations of the request's audit
// event (admission plugins' annotations); the first value of a key stays.
func AddAuditAnnotation(ctx context.Context, key, value string) {
	if ac, ok := ctx.Value(auditKey{}).(*auditContext); ok {
		ac.mu.Lock()
		if ac.annotations == nil {
			ac.annotations = map[string]string{}
		}
		if _, dup := ac.annotations[key]; !dup {
			ac.annotations[key] = value
		}
		ac.mu.Unlock()
	}
}

func recordUser(ctx context.Context, u *User) {
	if ac, ok := ctx.Value(auditKey{}).(*auditContext); ok {
		ac.mu.Lock()
		ac.user = u
		ac.mu.Unlock()
	}
}

func recordImpersonation(ctx context.Context, u *User) {
	if ac, ok := ctx.Value(auditKey{}).(*auditContext); ok {
		ac.mu.Lock()
		ac.impersonated = u
		ac.mu.Unlock()
	}
}

func recordDecision(ctx context.Context, decision, reason string) {
	if ac, ok := ctx.Value(auditKey{}).(*auditContext); ok {
		ac.mu.Lock()
		ac.decision, ac.reason = decision, reason
		ac.mu.Unlock()
	}
}

// WithAudit records one event per request at the level the policy selects, at
// stage ResponseComplete. It sets the Audit-Id response header. The user is the
// one authentication (inside this filter) found; requests refused with 401 are
// logged with an empty user. Secrets are never recorded above Metadata.
func WithAudit(next http.Handler, opts AuditOptions) http.Handler {
	policy := opts.Policy
	if policy == nil {
		policy = DefaultAuditPolicy
	}
	maxBody := opts.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = 1 << 20
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri, ok := RequestInfoFrom(r.Context())
		if !ok {
			ri = NewRequestInfo(r)
		}
		id := r.Header.Get("Audit-ID")
		if id == "" {
			id = uuid.NewString()
		}
		w.Header().Set("Audit-Id", id)
		ac := &auditContext{}
		if u, ok := UserFrom(r.Context()); ok {
			ac.user = u
		}
		ctx := context.WithValue(r.Context(), auditKey{}, ac)
		// The level depends on the user, known only after authentication; bodies
		// are captured whenever the policy could ask for them and dropped after.
		var reqBody *bytes.Buffer
		if policyMayRecordBodies(policy) && ri.IsResourceRequest && !ri.IsReadOnly() && r.Body != nil {
			reqBody = &bytes.Buffer{}
			r.Body = &teeBody{rc: r.Body, buf: reqBody, max: maxBody}
		}
		rec := &responseRecorder{ResponseWriter: w, code: http.StatusOK}
		if policyMayRecordBodies(policy) && !ri.IsLongRunning() {
			rec.body, rec.max = &bytes.Buffer{}, maxBody
		}
		next.ServeHTTP(rec, r.WithContext(ctx))

		ac.mu.Lock()
		u, imp := ac.user, ac.impersonated
		decision, reason := ac.decision, ac.reason
		annotations := ac.annotations
		ac.mu.Unlock()
		level := policy.LevelFor(u, ri)
		if level == LevelNone {
			return
		}
		if ri.IsResourceRequest && ri.APIGroup == "" && ri.Resource == "secrets" && level.rank() > LevelMetadata.rank() {
			level = LevelMetadata
		}
		now := time.Now()
		ev := &AuditEvent{
			Kind: "Event", APIVersion: "audit.k8s.io/v1", Level: level, AuditID: id, Stage: "ResponseComplete",
			RequestURI: r.URL.RequestURI(), Verb: ri.Verb, UserAgent: r.UserAgent(),
			SourceIPs:                sourceIPs(r),
			RequestReceivedTimestamp: start.UTC().Format("2006-01-02T15:04:05.000000Z"),
			StageTimestamp:           now.UTC().Format("2006-01-02T15:04:05.000000Z"),
			Annotations:              map[string]string{LatencyAnnotation: now.Sub(start).String()},
			ResponseStatus:           &AuditStatus{Code: rec.code},
		}
		if u != nil {
			ev.User = *u
		}
		ev.ImpersonatedUser = imp
		for k, v := range annotations {
			ev.Annotations[k] = v
		}
		if decision != "" {
			ev.Annotations["authorization.k8s.io/decision"] = decision
			if reason != "" {
				ev.Annotations["authorization.k8s.io/reason"] = reason
			}
		}
		if ri.IsResourceRequest {
			ev.ObjectRef = &AuditObjectRef{Resource: ri.Resource, Namespace: ri.Namespace, Name: ri.Name,
				APIGroup: ri.APIGroup, APIVersion: ri.APIVersion, Subresource: ri.Subresource}
		}
		if rec.code >= 400 && rec.body != nil && !rec.overflow {
			var st struct{ Status, Message, Reason string }
			if json.Unmarshal(rec.body.Bytes(), &st) == nil {
				ev.ResponseStatus.Status, ev.ResponseStatus.Message, ev.ResponseStatus.Reason = st.Status, st.Message, st.Reason
			}
		}
		if level.rank() >= LevelRequest.rank() && reqBody != nil && reqBody.Len() > 0 && reqBody.Len() <= maxBody && json.Valid(reqBody.Bytes()) {
			ev.RequestObject = json.RawMessage(reqBody.Bytes())
		}
		if level == LevelRequestResponse && rec.body != nil && !rec.overflow && json.Valid(rec.body.Bytes()) {
			ev.ResponseObject = json.RawMessage(rec.body.Bytes())
		}
		if err := opts.Sink.WriteEvent(ev); err != nil && opts.OnError != nil {
			opts.OnError(err)
		}
	})
}

func policyMayRecordBodies(p *AuditPolicy) bool {
	return slices.ContainsFunc(p.Rules, func(r AuditPolicyRule) bool { return r.Level.rank() >= LevelRequest.rank() })
}

func sourceIPs(r *http.Request) []string {
	var ips []string
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		for _, ip := range strings.Split(xff, ",") {
			if ip = strings.TrimSpace(ip); ip != "" {
				ips = append(ips, ip)
			}
		}
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil && !slices.Contains(ips, host) {
		ips = append(ips, host)
	}
	return ips
}

// teeBody copies what the handler reads, up to max bytes.
type teeBody struct {
	rc  io.ReadCloser
	buf *bytes.Buffer
	max int
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if n > 0 && t.buf.Len() <= t.max {
		t.buf.Write(p[:n])
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// responseRecorder notes the status code and, when body is set, copies the
// response body up to max bytes. It keeps http.Flusher and Hijacker working.
type responseRecorder struct {
	http.ResponseWriter
	code     int
	wrote    bool
	body     *bytes.Buffer
	max      int
	overflow bool
}

func (r *responseRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *responseRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	if r.body != nil && !r.overflow {
		if r.body.Len()+len(b) > r.max {
			r.overflow = true
			r.body.Reset()
		} else {
			r.body.Write(b)
		}
	}
	return r.ResponseWriter.Write(b)
}

func (r *responseRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *responseRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := r.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("audit: response writer cannot hijack")
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *responseRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
