package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
)

// loopbackError is a non-2xx answer of the in-process handler.
type loopbackError struct {
	code int
	body string
}

func (e loopbackError) Error() string { return fmt.Sprintf("%d %s", e.code, e.body) }

func isNotFoundErr(err error) bool {
	le, ok := err.(loopbackError)
	return ok && le.code == http.StatusNotFound
}

// loopback sends one JSON request to the API server's own handler with ctx
// (which carries the bootstrap user) and decodes the answer into out.
func (cp *ControlPlane) loopback(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	req := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	cp.server.Handler().ServeHTTP(rec, req)
	if rec.Code/100 != 2 {
		return loopbackError{rec.Code, rec.Body.String()}
	}
	if out != nil {
		return json.Unmarshal(rec.Body.Bytes(), out)
	}
	return nil
}
