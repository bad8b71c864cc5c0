package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// probeParams are a probe's timings with Kubernetes' defaults.
type probeParams struct {
	initial, period, timeout time.Duration
	success, failure         int
}

func params(p *corev1.Probe) probeParams {
	pp := probeParams{
		initial: time.Duration(p.InitialDelaySeconds) * time.Second,
		period:  time.Duration(p.PeriodSeconds) * time.Second,
		timeout: time.Duration(p.TimeoutSeconds) * time.Second,
		success: int(p.SuccessThreshold), failure: int(p.FailureThreshold),
	}
	if pp.period <= 0 {
		pp.period = 10 * time.Second
	}
	if pp.timeout <= 0 {
		pp.timeout = time.Second
	}
	if pp.success <= 0 {
		pp.success = 1
	}
	if pp.failure <= 0 {
		pp.failure = 3
	}
	return pp
}

// resolvePort turns a number or a named container port into a port.
func resolvePort(c corev1.Container, p api.IntOrString) (int, error) {
	if p.Type == api.Int {
		return int(p.IntVal), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no port named %q in container %s", p.StrVal, c.Name)
}

func (w *podWorker) ip() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.podIP
}

// check runs one handler action; nil means success.
func (w *podWorker) check(ctx context.Context, c corev1.Container, id string, exec *corev1.ExecAction, httpGet *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction) error {
	switch {
	case exec != nil:
		code, out, err := w.a.execSync(ctx, id, exec.Command)
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("command %q exited with %d: %s", exec.Command, code, strings.TrimSpace(string(out)))
		}
		return nil
	case httpGet != nil:
		port, err := resolvePort(c, httpGet.Port)
		if err != nil {
			return err
		}
		host := httpGet.Host
		if host == "" {
			host = w.ip()
		}
		scheme := "http"
		if httpGet.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		path := httpGet.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(port))+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "kube-probe/1.32")
		for _, h := range httpGet.HTTPHeaders {
			if strings.EqualFold(h.Name, "host") {
				req.Host = h.Value
			} else {
				req.Header.Add(h.Name, h.Value)
			}
		}
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true} //nolint:gosec // probes do not verify, like the kubelet
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
		}
		return nil
	case tcp != nil:
		port, err := resolvePort(c, tcp.Port)
		if err != nil {
			return err
		}
		host := tcp.Host
		if host == "" {
			host = w.ip()
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		conn.Close()
		return nil
	}
	return fmt.Errorf("the handler has no action")
}

// probe runs the startup, readiness and liveness probes of one container run
// until ctx ends.
func (r *containerRunner) probe(ctx context.Context, id string) {
	c := r.c
	pod := r.w.current()
	once := func(p *corev1.Probe, pp probeParams) error {
		pctx, cancel := context.WithTimeout(ctx, pp.timeout)
		defer cancel()
		if p.GRPC != nil {
			return r.w.grpcCheck(pctx, p.GRPC)
		}
		return r.w.check(pctx, c, id, p.Exec, p.HTTPGet, p.TCPSocket)
	}
	// loop calls onResult with the debounced outcome after each probe.
	loop := func(p *corev1.Probe, kind string, onResult func(ok bool) bool) {
		pp := params(p)
		if !sleepCtx(ctx, pp.initial) {
			return
		}
		succ, fail := 0, 0
		for {
			err := once(p, pp)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				succ, fail = succ+1, 0
				if succ >= pp.success && !onResult(true) {
					return
				}
			} else {
				succ, fail = 0, fail+1
				r.w.a.rec.Event(ctx, pod, "Warning", "Unhealthy", fmt.Sprintf("%s probe failed: %v", kind, err))
				if fail >= pp.failure && !onResult(false) {
					return
				}
			}
			if !sleepCtx(ctx, pp.period) {
				return
			}
		}
	}
	if c.StartupProbe != nil {
		started := false
		loop(c.StartupProbe, "Startup", func(ok bool) bool {
			if ok {
				started = true
				return false
			}
			r.restartNow(id, fmt.Sprintf("Container %s failed startup probe, will be restarted", c.Name))
			return false
		})
		if !started {
			return
		}
		r.setIfCurrent(id, func(s *corev1.ContainerStatus) { s.Started = api.Ptr(true) })
	}
	if c.LivenessProbe != nil {
		go loop(c.LivenessProbe, "Liveness", func(ok bool) bool {
			if ok {
				return true
			}
			r.restartNow(id, fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.Name))
			return false
		})
	}
	if c.ReadinessProbe == nil {
		r.setIfCurrent(id, func(s *corev1.ContainerStatus) { s.Ready = true })
		return
	}
	loop(c.ReadinessProbe, "Readiness", func(ok bool) bool {
		r.mu.Lock()
		changed := r.status.Ready != ok && r.id == id && r.running
		if changed {
			r.status.Ready = ok
		}
		r.mu.Unlock()
		if changed {
			r.w.markDirty()
		}
		return true
	})
}

// setIfCurrent changes the status only while container id still runs.
func (r *containerRunner) setIfCurrent(id string, f func(s *corev1.ContainerStatus)) {
	r.mu.Lock()
	ok := r.id == id && r.running
	if ok {
		f(&r.status)
	}
	r.mu.Unlock()
	if ok {
		r.w.markDirty()
	}
}
