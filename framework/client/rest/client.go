package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/converge-dev/converge/framework/tracing"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// Media types used by the client.
const (
	ContentTypeJSON = "application/json"
)

const (
	defaultMaxTries = 5
	maxRetryAfter   = 10 * time.Second
	baseBackoff     = 100 * time.Millisecond
	maxErrorBody    = 1 << 20
)

// Client performs HTTP requests against an API server, failing over between the
// servers of its Config. Build it with NewClient.
type Client struct {
	bases []*url.URL
	// current indexes bases: the server requests go to. It moves to the next
	// server when one fails (compare-and-swap, so concurrent failures of the same
	// server move it once) and stays there while that one answers.
	current  atomic.Int32
	http     *http.Client
	timeout  time.Duration
	limiter  *tokenBucket // nil: no client-side rate limiting
	maxTries int
	// sleep waits d or until ctx ends.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient validates cfg and builds a Client. cfg is not retained.
func NewClient(cfg *Config) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("rest: config is nil")
	}
	bases, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	hc, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{bases: bases, http: hc, timeout: cfg.Timeout, maxTries: cfg.MaxTries, sleep: sleepCtx}
	if c.maxTries == 0 {
		c.maxTries = defaultMaxTries
	}
	if cfg.QPS > 0 {
		c.limiter = newTokenBucket(cfg.QPS, cfg.Burst)
	}
	return c, nil
}

// Host returns the base URL of the server requests currently go to.
func (c *Client) Host() string { return c.bases[c.current.Load()].String() }

// Hosts returns the base URLs of all servers in failover order.
func (c *Client) Hosts() []string {
	out := make([]string, len(c.bases))
	for i, b := range c.bases {
		out[i] = b.String()
	}
	return out
}

// failover moves the client off server from (if it is still the current one).
func (c *Client) failover(from int32) {
	if len(c.bases) > 1 {
		c.current.CompareAndSwap(from, (from+1)%int32(len(c.bases)))
	}
}

// Request is one API call. Path is absolute ("/api/v1/namespaces/default/pods").
type Request struct {
	Method      string
	Path        string
	Query       url.Values
	Body        []byte
	ContentType string // default application/json when Body is set
	// Accept overrides the Accept header (default application/json), e.g. to ask
	// for a meta.k8s.io Table.
	Accept string
}

// Response is a successful (2xx) answer.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// Do performs r and returns the response of a 2xx answer; any other answer is an
// *apierrors.StatusError. Retries follow the package contract.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	resp, cancel, err := c.do(ctx, r, true)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read response: %w", r.Method, r.Path, err)
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// Stream performs r (typically a watch) and returns the open body of a 2xx answer;
// the caller must close it. Config.Timeout does not apply; ctx bounds the stream.
func (c *Client) Stream(ctx context.Context, r Request) (io.ReadCloser, error) {
	resp, _, err := c.do(ctx, r, false)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func (c *Client) url(base *url.URL, r Request) string {
	u := *base
	u.Path = base.Path + r.Path
	u.RawQuery = r.Query.Encode()
	return u.String()
}

// notSent reports whether err shows that the request never left the client: the
// connection could not be established (refused, unreachable, DNS), so even a
// non-idempotent request can safely go to another server.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

func idempotent(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// do runs the retry loop. On success it returns the response with an unread body
// and the cancel function of the attempt's timeout (a no-op when there is none).
func (c *Client) do(ctx context.Context, r Request, withTimeout bool) (*http.Response, context.CancelFunc, error) {
	multi := len(c.bases) > 1
	maxTries := c.maxTries
	if multi {
		maxTries = max(maxTries, len(c.bases)+1)
	}
	var lastErr error
	for attempt := 1; ; attempt++ {
		idx := c.current.Load()
		target := c.url(c.bases[idx], r)
		if c.limiter != nil {
			if err := c.limiter.Wait(ctx); err != nil {
				return nil, nil, fmt.Errorf("%s %s: rate limiter: %w", r.Method, r.Path, err)
			}
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if withTimeout && c.timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, c.timeout)
		}
		req, err := http.NewRequestWithContext(actx, r.Method, target, bytes.NewReader(r.Body))
		if err != nil {
			cancel()
			return nil, nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
		}
		if r.Body == nil {
			req.Body, req.GetBody = http.NoBody, nil
			req.ContentLength = 0
		} else {
			ct := r.ContentType
			if ct == "" {
				ct = ContentTypeJSON
			}
			req.Header.Set("Content-Type", ct)
		}
		accept := r.Accept
		if accept == "" {
			accept = ContentTypeJSON
		}
		req.Header.Set("Accept", accept)
		tracing.Inject(ctx, req.Header)

		resp, err := c.http.Do(req)
		var wait time.Duration
		switch {
		case err != nil:
			cancel()
			if ctx.Err() != nil || !(idempotent(r.Method) || multi && notSent(err)) {
				return nil, nil, err // *url.Error names method and URL
			}
			lastErr = err
			c.failover(idx)
			wait = c.backoff(attempt)
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			return resp, cancel, nil
		default:
			body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			_ = resp.Body.Close()
			cancel()
			lastErr = ErrorFromResponse(r.Method, resp.StatusCode, resp.Header, body)
			ra, ok := retryAfter(resp)
			if multi && resp.StatusCode == http.StatusServiceUnavailable {
				// This server cannot serve now: the next one may. Idempotent
				// requests go there; others only when Retry-After says so.
				c.failover(idx)
				if ok || idempotent(r.Method) {
					switch b := c.backoff(attempt); {
					case b == 0: // the next server has not been tried yet
						ra = 0
					case !ok:
						ra = b
					}
					ok = true
				}
			}
			if !ok {
				return nil, nil, lastErr
			}
			wait = ra
		}
		if attempt >= maxTries {
			return nil, nil, lastErr
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, nil, fmt.Errorf("%s %s: waiting to retry: %w (last error: %w)", r.Method, r.Path, err, lastErr)
		}
	}
}

// backoff is the wait before attempt+1 after a connection failure. With one
// server it doubles from baseBackoff; with several, the next server is tried at
// once while some server has not been tried in this round, and the wait doubles
// per round.
func (c *Client) backoff(attempt int) time.Duration {
	n := len(c.bases)
	if n == 1 {
		return baseBackoff << (attempt - 1)
	}
	if attempt%n != 0 {
		return 0
	}
	return baseBackoff << (attempt/n - 1)
}

// retryAfter reports whether resp may be retried and after how long: 429 and 5xx
// answers with a Retry-After header in seconds.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	h := resp.Header.Get("Retry-After")
	if h == "" {
		return 0, false
	}
	secs, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || secs < 0 {
		return 0, false
	}
	return min(time.Duration(secs)*time.Second, maxRetryAfter), true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrorFromResponse turns a non-2xx answer into a *apierrors.StatusError: the
// Status in body if there is one, otherwise one synthesised from code.
func ErrorFromResponse(method string, code int, header http.Header, body []byte) *apierrors.StatusError {
	var st api.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && (st.Status != "" || st.Code != 0) {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		if st.Status == "" {
			st.Status = api.StatusFailure
		}
		return apierrors.FromStatus(st)
	}
	reason, msg := reasonForCode(code)
	if method == http.MethodPost && code == http.StatusConflict {
		reason, msg = apierrors.ReasonAlreadyExists, "the server reported a conflict"
	}
	if text := strings.TrimSpace(string(body)); text != "" && len(text) < 512 && !strings.HasPrefix(text, "{") {
		msg += " (" + text + ")"
	}
	st = api.Status{Status: api.StatusFailure, Code: int32(code), Reason: reason, Message: msg}
	if ra := header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(ra); err == nil {
			st.Details = &api.StatusDetails{RetryAfterSeconds: int32(secs)}
		}
	}
	return apierrors.FromStatus(st)
}

// reasonForCode follows Kubernetes' client: the reason and a generic message for
// an HTTP code without a Status body.
func reasonForCode(code int) (string, string) {
	switch code {
	case http.StatusBadRequest:
		return apierrors.ReasonBadRequest, "the server rejected our request for an unknown reason"
	case http.StatusUnauthorized:
		return apierrors.ReasonUnauthorized, "the server has asked for the client to provide credentials"
	case http.StatusForbidden:
		return apierrors.ReasonForbidden, "the server does not allow access to the requested resource"
	case http.StatusNotFound:
		return apierrors.ReasonNotFound, "the server could not find the requested resource"
	case http.StatusMethodNotAllowed:
		return apierrors.ReasonMethodNotAllowed, "the server does not allow this method on the requested resource"
	case http.StatusNotAcceptable:
		return apierrors.ReasonNotAcceptable, "the server was unable to respond with a content type that the client supports"
	case http.StatusConflict:
		return apierrors.ReasonConflict, "the server reported a conflict"
	case http.StatusGone:
		return apierrors.ReasonGone, "the server has asked for the client to retry the request"
	case http.StatusRequestEntityTooLarge:
		return apierrors.ReasonRequestEntityTooLarge, "the server has rejected the request because the request is too large"
	case http.StatusUnsupportedMediaType:
		return apierrors.ReasonUnsupportedMediaType, "the server does not support the content type of the request"
	case http.StatusUnprocessableEntity:
		return apierrors.ReasonInvalid, "the server rejected our request due to an error in our request"
	case http.StatusTooManyRequests:
		return apierrors.ReasonTooManyRequests, "the server has received too many requests and has asked us to try again later"
	case http.StatusInternalServerError:
		return apierrors.ReasonInternalError, "an error on the server has prevented the request from succeeding"
	case http.StatusServiceUnavailable:
		return apierrors.ReasonServiceUnavailable, "the server is currently unable to handle the request"
	case http.StatusGatewayTimeout:
		return apierrors.ReasonTimeout, "the server was unable to return a response in the time allotted, but may still be processing the request"
	default:
		if code >= 500 {
			return apierrors.ReasonInternalError, fmt.Sprintf("an error on the server (HTTP %d) has prevented the request from succeeding", code)
		}
		return apierrors.ReasonUnknown, fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
	}
}

// CloseIdleConnections closes kept-alive connections that carry no request.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }
