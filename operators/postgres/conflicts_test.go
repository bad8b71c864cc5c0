package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// conflicts is the operator's transport to the API server. A spec arms it to
// make one of the operator's writes conflict the way a concurrent writer
// does: before that write reaches the server, the spec's interfere function
// writes the same object through another client, so the server itself
// answers 409 Conflict to the operator's write, made on a version that is no
// longer current. Nothing is faked: every request reaches the real server.
type conflicts struct {
	base http.RoundTripper
	mu   sync.Mutex
	// armed holds the conflicts to cause, by request path.
	armed map[string]*conflict
}

// conflict is one write to make conflict.
type conflict struct {
	// when says whether the write with this body is the one (the write
	// happens at most once; other writes to the path pass untouched).
	when func(body []byte) bool
	// interfere writes the object through another client.
	interfere func(ctx context.Context) error
	// result receives what happened to the write, once.
	result chan conflictResult
}

// conflictResult is what happened to an armed write: the status code the
// server answered with, or why there was no answer.
type conflictResult struct {
	Code int
	Err  error
}

func newConflicts(base http.RoundTripper) *conflicts {
	return &conflicts{base: base, armed: map[string]*conflict{}}
}

// arm makes the first PUT to path whose body satisfies when conflict, by
// calling interfere before sending it, until the spec ends. The channel
// reports the outcome.
func (c *conflicts) arm(path string, when func(body []byte) bool, interfere func(ctx context.Context) error) <-chan conflictResult {
	cf := &conflict{when: when, interfere: interfere, result: make(chan conflictResult, 1)}
	c.mu.Lock()
	c.armed[path] = cf
	c.mu.Unlock()
	DeferCleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.armed[path] == cf {
			delete(c.armed, path)
		}
	})
	return cf.result
}

// RoundTrip implements http.RoundTripper.
func (c *conflicts) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPut {
		return c.base.RoundTrip(req)
	}
	c.mu.Lock()
	cf := c.armed[req.URL.Path]
	c.mu.Unlock()
	if cf == nil || req.Body == nil {
		return c.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("conflicts: read body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	mine := c.armed[req.URL.Path] == cf && cf.when(body)
	if mine {
		delete(c.armed, req.URL.Path)
	}
	c.mu.Unlock()
	if !mine {
		return c.base.RoundTrip(req)
	}
	if err := cf.interfere(req.Context()); err != nil {
		cf.result <- conflictResult{Err: fmt.Errorf("interfere: %w", err)}
		return c.base.RoundTrip(req)
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		cf.result <- conflictResult{Err: err}
		return nil, err
	}
	cf.result <- conflictResult{Code: resp.StatusCode}
	return resp, nil
}

// touch writes obj (named by its namespace and name) through the suite's
// client, changing an annotation: a concurrent write, as a user or another
// controller makes.
func touch(ctx context.Context, obj api.Object) error {
	return poll(ctx, func() error {
		if err := suite.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann["example.com/touched"] = time.Now().UTC().Format(time.RFC3339Nano)
		obj.SetAnnotations(ann)
		return suite.c.Update(ctx, obj)
	})
}

// poll calls f every 100 ms until it succeeds or 60 s pass.
func poll(ctx context.Context, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
