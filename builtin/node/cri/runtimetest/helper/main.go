// Command helper interprets a script (package script) as a real process: the
// program every runtime runs in the conformance suite and the node agent's tests.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/converge-dev/converge/builtin/node/cri/script"
)

type osSystem struct{ mu sync.Mutex }

func (s *osSystem) Stdout(line string)             { s.mu.Lock(); fmt.Fprintln(os.Stdout, line); s.mu.Unlock() }
func (s *osSystem) Stderr(line string)             { s.mu.Lock(); fmt.Fprintln(os.Stderr, line); s.mu.Unlock() }
func (s *osSystem) Getenv(n string) (string, bool) { return os.LookupEnv(n) }
func (s *osSystem) Getwd() string {
	d, err := os.Getwd()
	if err != nil {
		return "?" + err.Error()
	}
	return d
}
func (s *osSystem) ReadFile(p string) ([]byte, error)  { return os.ReadFile(p) }
func (s *osSystem) WriteFile(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }
func (s *osSystem) Serve(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		host, _ := os.Hostname()
		fmt.Fprintf(w, "ok %s\n", host)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}

func main() {
	steps, err := script.Parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(64)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM)
	term := make(chan struct{}, 4)
	go func() {
		for range sigs {
			term <- struct{}{}
		}
	}()
	os.Exit(script.Run(context.Background(), steps, &osSystem{}, term))
}
