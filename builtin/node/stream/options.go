package stream

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// Options are the streams a remote command asks for (the query parameters
// stdin, stdout, stderr, tty and, for exec, command).
type Options struct {
	Stdin, Stdout, Stderr, TTY bool
	Command                    []string
}

// ParseOptions reads Options from a query. Booleans are "1" (as the API
// server sends them to the kubelet) or anything strconv.ParseBool accepts.
// At least one stream is required, and a command when exec is true.
func ParseOptions(q url.Values, exec bool) (Options, error) {
	var o Options
	for _, f := range []struct {
		key string
		dst *bool
	}{{"stdin", &o.Stdin}, {"stdout", &o.Stdout}, {"stderr", &o.Stderr}, {"tty", &o.TTY}} {
		v := q.Get(f.key)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: %v", v, f.key, err))
		}
		*f.dst = b
	}
	o.Command = q["command"]
	if exec && len(o.Command) == 0 {
		return o, apierrors.NewBadRequest("you must specify at least one command for the container")
	}
	if !o.Stdin && !o.Stdout && !o.Stderr {
		return o, apierrors.NewBadRequest("you must specify at least 1 of stdin, stdout, stderr")
	}
	return o, nil
}

// Config tunes the servers. The zero value means defaults.
type Config struct {
	// StreamCreationTimeout bounds the wait for a client's streams (default
	// 30s, as the kubelet).
	StreamCreationTimeout time.Duration
	// IdleTimeout closes a SPDY connection without any frame for this long
	// (default 4h, the kubelet's streaming-connection-idle-timeout).
	IdleTimeout time.Duration
}

func (c Config) streamTimeout() time.Duration {
	if c.StreamCreationTimeout <= 0 {
		return 30 * time.Second
	}
	return c.StreamCreationTimeout
}

func (c Config) idleTimeout() time.Duration {
	if c.IdleTimeout <= 0 {
		return 4 * time.Hour
	}
	return c.IdleTimeout
}
