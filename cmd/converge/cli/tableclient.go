package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/converge-dev/converge/framework/client/printers"
	"github.com/converge-dev/converge/framework/client/rest"
)

// tableClient asks the API server for meta.k8s.io Tables through the REST client.
type tableClient struct {
	rest *rest.Client
}

// open sends GET path?query asking for a Table and returns the open body of a
// 2xx answer (for watches); other answers are *apierrors.StatusError.
func (c *tableClient) open(ctx context.Context, path string, query url.Values) (io.ReadCloser, error) {
	return c.rest.Stream(ctx, rest.Request{Method: http.MethodGet, Path: path, Query: query, Accept: printers.TableAccept})
}

// get returns the Table for path (a collection or one object).
func (c *tableClient) get(ctx context.Context, path string, query url.Values) (*printers.Table, error) {
	resp, err := c.rest.Do(ctx, rest.Request{Method: http.MethodGet, Path: path, Query: query, Accept: printers.TableAccept})
	if err != nil {
		return nil, err
	}
	t, err := printers.DecodeTable(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return t, nil
}
