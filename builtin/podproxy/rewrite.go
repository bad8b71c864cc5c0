package podproxy

import (
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// rewriter makes a target's answer point back through the proxy: absolute
// paths and URLs of the target in HTML links and in a redirect's Location
// get prefix (the request's path up to and including "/proxy"), as
// Kubernetes' proxy does; CORS headers of the target are dropped.
type rewriter struct {
	prefix     string
	targetHost string
}

// linkAttrs are the HTML attributes holding a URL, by element.
var linkAttrs = map[string][]string{
	"a": {"href"}, "applet": {"codebase"}, "area": {"href"}, "audio": {"src"},
	"base": {"href"}, "blockquote": {"cite"}, "body": {"background"},
	"button": {"formaction"}, "command": {"icon"}, "del": {"cite"}, "embed": {"src"},
	"form": {"action"}, "frame": {"longdesc", "src"}, "head": {"profile"},
	"html": {"manifest"}, "iframe": {"longdesc", "src"},
	"img": {"longdesc", "src", "usemap"}, "input": {"src", "usemap", "formaction"},
	"ins": {"cite"}, "link": {"href"}, "object": {"classid", "codebase", "data", "usemap"},
	"q": {"cite"}, "script": {"src"}, "source": {"src"}, "track": {"src"},
	"video": {"poster", "src"},
}

// response is the proxy's ModifyResponse.
func (rw rewriter) response(resp *http.Response) error {
	for k := range resp.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			resp.Header.Del(k)
		}
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if u, err := url.Parse(loc); err == nil {
			resp.Header.Set("Location", rw.rewriteURL(u))
		}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/html" || resp.Request.Method == http.MethodHead || resp.StatusCode == http.StatusSwitchingProtocols ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified {
		return nil
	}
	orig := resp.Body
	var body io.Reader = orig
	switch enc := strings.ToLower(resp.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		gz, err := gzip.NewReader(orig)
		if err != nil {
			return fmt.Errorf("read the target's gzip answer: %w", err)
		}
		body = gz
	default:
		return nil // an encoding not understood goes through untouched
	}
	pr, pw := io.Pipe()
	go func() {
		err := rw.rewriteHTML(pw, body)
		_ = orig.Close()
		_ = pw.CloseWithError(err)
	}()
	resp.Body = pr
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Encoding")
	return nil
}

// rewriteHTML copies the HTML in r to w with the links of linkAttrs
// rewritten; everything else is copied byte for byte.
func (rw rewriter) rewriteHTML(w io.Writer, r io.Reader) error {
	z := html.NewTokenizer(r)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if err := z.Err(); err != io.EOF {
				return fmt.Errorf("read the target's HTML: %w", err)
			}
			return nil
		}
		out := z.Raw()
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			raw := append([]byte(nil), out...) // TagName lowercases the buffer
			tok := z.Token()
			out = raw
			if rw.rewriteAttrs(&tok) {
				out = []byte(tok.String())
			}
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
}

// rewriteAttrs rewrites tok's link attributes; it reports whether any
// changed.
func (rw rewriter) rewriteAttrs(tok *html.Token) bool {
	names := linkAttrs[tok.Data]
	changed := false
	for i, a := range tok.Attr {
		if a.Namespace != "" || !slices.Contains(names, a.Key) {
			continue
		}
		u, err := url.Parse(a.Val)
		if err != nil {
			continue
		}
		if v := rw.rewriteURL(u); v != a.Val {
			tok.Attr[i].Val, changed = v, true
		}
	}
	return changed
}

// rewriteURL puts prefix before u's path when u is an absolute path, or a
// URL of the target itself; anything else (relative paths, other hosts,
// other schemes) is kept.
func (rw rewriter) rewriteURL(u *url.URL) string {
	orig := u.String()
	if u.Host != "" && u.Host != rw.targetHost || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return orig
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return orig
	}
	u.Scheme, u.Host = "", ""
	if !strings.HasPrefix(u.Path, rw.prefix+"/") && u.Path != rw.prefix {
		p := path.Join(rw.prefix, u.Path)
		if strings.HasSuffix(u.Path, "/") {
			p += "/"
		}
		u.Path, u.RawPath = p, ""
	}
	return u.String()
}
