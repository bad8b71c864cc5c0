package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// options are what the command line asks for.
type options struct {
	url            string
	method         string
	headers        []string
	data           *string
	output         string
	writeOut       string
	connectTimeout time.Duration
	maxTime        time.Duration
	silent         bool
	showErrors     bool
	insecure       bool
	fail           bool
	iface          string
}

// parse reads curl's command line (options before or after the URL).
func parse(args []string) (*options, error) {
	o := &options{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %s: requires parameter", a)
			}
			i++
			return args[i], nil
		}
		seconds := func() (time.Duration, error) {
			v, err := value()
			if err != nil {
				return 0, err
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				return 0, fmt.Errorf("option %s: expected a proper numerical parameter", a)
			}
			return time.Duration(f * float64(time.Second)), nil
		}
		var err error
		switch a {
		case "-g", "--globoff", "-q", "--disable", "-v", "--verbose", "-L", "--location":
		case "-s", "--silent":
			o.silent = true
		case "-S", "--show-error":
			o.showErrors = true
		case "-k", "--insecure":
			o.insecure = true
		case "-f", "--fail":
			o.fail = true
		case "-o", "--output":
			o.output, err = value()
		case "-w", "--write-out":
			o.writeOut, err = value()
		case "-X", "--request":
			o.method, err = value()
		case "-H", "--header":
			var h string
			h, err = value()
			o.headers = append(o.headers, h)
		case "-d", "--data", "--data-raw", "--data-binary":
			var d string
			d, err = value()
			o.data = &d
		case "--interface":
			o.iface, err = value()
		case "--connect-timeout":
			o.connectTimeout, err = seconds()
		case "-m", "--max-time":
			o.maxTime, err = seconds()
		default:
			switch {
			case strings.HasPrefix(a, "-") && len(a) > 2 && !strings.HasPrefix(a, "--"):
				// Combined short flags without values, e.g. -sS, -qs.
				for _, c := range a[1:] {
					if !strings.ContainsRune("gqsSkfvL", c) {
						return nil, fmt.Errorf("option %s: is unknown", a)
					}
				}
				o.silent = o.silent || strings.ContainsRune(a, 's')
				o.showErrors = o.showErrors || strings.ContainsRune(a, 'S')
				o.insecure = o.insecure || strings.ContainsRune(a, 'k')
				o.fail = o.fail || strings.ContainsRune(a, 'f')
			case strings.HasPrefix(a, "-"):
				return nil, fmt.Errorf("option %s: is unknown", a)
			case o.url != "":
				return nil, fmt.Errorf("only one URL is supported, got %q and %q", o.url, a)
			default:
				o.url = a
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if o.url == "" {
		return nil, errors.New("no URL specified")
	}
	if !strings.Contains(o.url, "://") {
		o.url = "http://" + o.url
	}
	if o.method == "" {
		o.method = http.MethodGet
		if o.data != nil {
			o.method = http.MethodPost
		}
	}
	return o, nil
}

// fetch makes the request and writes the body (to -o's file or stdout) and
// -w's text; it returns curl's exit code.
func (o *options) fetch(stdout io.Writer) (int, error) {
	ctx := context.Background()
	if o.maxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.maxTime)
		defer cancel()
	}
	var body io.Reader
	if o.data != nil {
		body = strings.NewReader(*o.data)
	}
	req, err := http.NewRequestWithContext(ctx, o.method, o.url, body)
	if err != nil {
		return 3, fmt.Errorf("URL using bad/illegal format: %w", err)
	}
	for _, h := range o.headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if o.data != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("User-Agent", "curl/8.0 (converge conformance stand-in)")
	dialer := &net.Dialer{Timeout: o.connectTimeout}
	if o.connectTimeout == 0 {
		dialer.Timeout = 300 * time.Second
	}
	if o.iface != "" {
		// An address (curl also takes an interface name; the specs pass IPs).
		ip := net.ParseIP(o.iface)
		if ip == nil {
			return 45, fmt.Errorf("Couldn't bind to '%s'", o.iface)
		}
		dialer.LocalAddr = &net.TCPAddr{IP: ip}
	}
	tr := &http.Transport{DialContext: dialer.DialContext, TLSClientConfig: &tls.Config{InsecureSkipVerify: o.insecure}} //nolint:gosec // -k
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		o.writeStatus(stdout, 0)
		return errorCode(err), err
	}
	defer resp.Body.Close()
	if o.fail && resp.StatusCode >= 400 {
		return 22, fmt.Errorf("The requested URL returned error: %d", resp.StatusCode)
	}
	out := stdout
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			return 23, fmt.Errorf("failed writing body: %w", err)
		}
		defer f.Close()
		out = f
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return errorCode(err), err
	}
	o.writeStatus(stdout, resp.StatusCode)
	return 0, nil
}

// writeStatus writes -w's text with code as %{http_code} (000 when there
// was no answer, as curl).
func (o *options) writeStatus(w io.Writer, code int) {
	if o.writeOut != "" {
		_, _ = io.WriteString(w, strings.NewReplacer("%{http_code}", fmt.Sprintf("%03d", code), `\n`, "\n").Replace(o.writeOut))
	}
}

// errorCode is curl's exit code for a failed request.
func errorCode(err error) int {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return 28
	case errors.As(err, &dnsErr):
		return 6
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return 7
	default:
		return 56
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
