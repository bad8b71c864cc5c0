package script

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrSyntax reports an unknown verb or a missing argument.
var ErrSyntax = errors.New("script: syntax error")

// Step is one verb and its arguments.
type Step struct {
	Verb string
	Args []string
}

var arity = map[string]int{
	"out": 1, "err": 1, "env": 1, "pwd": 0, "cat": 1, "write": 2, "sleep": 1,
	"on-term": 1, "ignore-term": 0, "serve": 1, "exit": 1,
}

// Parse splits args into steps.
func Parse(args []string) ([]Step, error) {
	var steps []Step
	for i := 0; i < len(args); {
		n, ok := arity[args[i]]
		if !ok {
			return nil, fmt.Errorf("%w: unknown verb %q", ErrSyntax, args[i])
		}
		if i+n > len(args)-1 {
			return nil, fmt.Errorf("%w: %s needs %d argument(s)", ErrSyntax, args[i], n)
		}
		steps = append(steps, Step{Verb: args[i], Args: args[i+1 : i+1+n]})
		i += 1 + n
	}
	for _, s := range steps {
		switch s.Verb {
		case "sleep":
			if s.Args[0] != "forever" {
				if _, err := time.ParseDuration(s.Args[0]); err != nil {
					return nil, fmt.Errorf("%w: sleep %q: %v", ErrSyntax, s.Args[0], err)
				}
			}
		case "on-term", "exit":
			if _, err := strconv.Atoi(s.Args[0]); err != nil {
				return nil, fmt.Errorf("%w: %s %q: not a number", ErrSyntax, s.Verb, s.Args[0])
			}
		}
	}
	return steps, nil
}

// System is what a script acts on: a real process environment (the helper)
// or a simulated one.
type System interface {
	Stdout(line string)
	Stderr(line string)
	Getenv(name string) (string, bool)
	Getwd() string
	ReadFile(path string) ([]byte, error)
	WriteFile(path string, data []byte) error
	// Serve starts serving HTTP on addr in the background.
	Serve(addr string) error
}

// Run executes steps on sys and returns the exit code. A value received on
// term is a SIGTERM; ctx ending stops the script with exit code 137 (killed).
func Run(ctx context.Context, steps []Step, sys System, term <-chan struct{}) int {
	termCode := 143
	ignore := false
	wait := func(d time.Duration, forever bool) (int, bool) {
		var timer <-chan time.Time
		if !forever {
			t := time.NewTimer(d)
			defer t.Stop()
			timer = t.C
		}
		for {
			select {
			case <-timer:
				return 0, false
			case <-ctx.Done():
				return 137, true
			case <-term:
				if ignore {
					continue
				}
				if termCode != 143 {
					sys.Stdout("got SIGTERM")
				}
				return termCode, true
			}
		}
	}
	for _, s := range steps {
		// A SIGTERM that arrived between steps is handled before the next one.
		select {
		case <-term:
			if !ignore {
				if termCode != 143 {
					sys.Stdout("got SIGTERM")
				}
				return termCode
			}
		case <-ctx.Done():
			return 137
		default:
		}
		switch s.Verb {
		case "out":
			sys.Stdout(s.Args[0])
		case "err":
			sys.Stderr(s.Args[0])
		case "env":
			v, _ := sys.Getenv(s.Args[0])
			sys.Stdout(s.Args[0] + "=" + v)
		case "pwd":
			sys.Stdout(sys.Getwd())
		case "cat":
			b, err := sys.ReadFile(s.Args[0])
			if err != nil {
				sys.Stderr(err.Error())
				return 2
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				sys.Stdout(sc.Text())
			}
		case "write":
			if err := sys.WriteFile(s.Args[0], []byte(s.Args[1])); err != nil {
				sys.Stderr(err.Error())
				return 2
			}
		case "sleep":
			var d time.Duration
			if s.Args[0] != "forever" {
				d, _ = time.ParseDuration(s.Args[0])
			}
			if code, done := wait(d, s.Args[0] == "forever"); done {
				return code
			}
		case "on-term":
			termCode, _ = strconv.Atoi(s.Args[0])
			ignore = false
		case "ignore-term":
			ignore = true
		case "serve":
			if err := sys.Serve(s.Args[0]); err != nil {
				sys.Stderr(err.Error())
				return 2
			}
		case "exit":
			code, _ := strconv.Atoi(s.Args[0])
			return code
		}
	}
	return 0
}
