package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// options are what the command line asks for.
type options struct {
	udp, verbose, zero bool
	wait               time.Duration
	localPort          int
	host, port         string
}

// parse reads nc's command line.
func parse(args []string) (*options, error) {
	o := &options{}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			switch c := a[j]; c {
			case 'u':
				o.udp = true
			case 't':
				o.udp = false
			case 'v':
				o.verbose = true
			case 'z':
				o.zero = true
			case 'n', 'N':
			case 'w', 'p':
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return nil, fmt.Errorf("option requires an argument -- '%c'", c)
					}
					i++
					v = args[i]
				}
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("invalid argument %q for -%c", v, c)
				}
				if c == 'w' {
					o.wait = time.Duration(n) * time.Second
				} else {
					o.localPort = n
				}
				j = len(a)
			default:
				return nil, fmt.Errorf("invalid option -- '%c'", c)
			}
		}
	}
	if len(pos) != 2 {
		return nil, errors.New("a host and a port are required")
	}
	o.host, o.port = pos[0], pos[1]
	return o, nil
}

// talk connects, sends stdin and copies the answer to stdout.
func (o *options) talk(stdin io.Reader, stdout, stderr io.Writer) error {
	network, proto := "tcp", "tcp"
	if o.udp {
		network, proto = "udp", "udp"
	}
	d := net.Dialer{Timeout: o.wait}
	if o.localPort != 0 {
		if o.udp {
			d.LocalAddr = &net.UDPAddr{Port: o.localPort}
		} else {
			d.LocalAddr = &net.TCPAddr{Port: o.localPort}
		}
	}
	conn, err := d.Dial(network, net.JoinHostPort(o.host, o.port))
	if err != nil {
		return fmt.Errorf("connect to %s port %s (%s) failed: %w", o.host, o.port, proto, unwrap(err))
	}
	defer conn.Close()
	if o.verbose {
		fmt.Fprintf(stderr, "Connection to %s %s port [%s/*] succeeded!\n", o.host, o.port, proto)
	}
	if o.zero {
		return nil
	}
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := stdin.Read(buf)
			if n > 0 {
				if _, werr := conn.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return // stdin's end leaves the connection open, as netcat-openbsd without -N
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		if o.wait > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(o.wait))
		}
		n, err := conn.Read(buf)
		if n > 0 {
			if _, werr := stdout.Write(buf[:n]); werr != nil {
				return nil
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, io.EOF):
			return nil
		case o.udp:
			return nil // e.g. ICMP port unreachable: netcat prints nothing more
		default:
			return fmt.Errorf("read from %s port %s (%s): %w", o.host, o.port, proto, unwrap(err))
		}
	}
}

// unwrap is the innermost cause of a network error (e.g. "connection
// refused").
func unwrap(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
