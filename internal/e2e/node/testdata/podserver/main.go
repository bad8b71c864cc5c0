// Command podserver is the small HTTP server the node e2e suite runs as pods:
// GET / answers with the pod name (HOSTNAME), GET /env/NAME with an
// environment variable, GET /healthz with ok; every request is logged to
// stdout. With -exit N it prints a line and exits N at once; with -cat it
// prints files and exits; with -get it prints what GET of each URL answers
// (names resolved by Go's resolver from /etc/resolv.conf) and exits.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "listen address")
	exit := flag.Int("exit", -1, "exit with this code at once (negative: serve)")
	cat := flag.String("cat", "", "comma-separated files to print (== PATH, then the content), then exit 0")
	get := flag.String("get", "", "comma-separated URLs to GET, printing each answer (URL: BODY), then exit (1 when one failed)")
	flag.Parse()
	name := os.Getenv("HOSTNAME")
	if *get != "" {
		os.Exit(fetch(strings.Split(*get, ",")))
	}
	if *cat != "" {
		for _, p := range strings.Split(*cat, ",") {
			b, err := os.ReadFile(p)
			if err != nil {
				fmt.Printf("== %s\nerror: %v\n", p, err)
				continue
			}
			fmt.Printf("== %s\n%s\n", p, b)
		}
		return
	}
	if *exit >= 0 {
		fmt.Printf("%s exiting with %d\n", name, *exit)
		os.Exit(*exit)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("/env/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, os.Getenv(strings.TrimPrefix(r.URL.Path, "/env/")))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("served %s %s\n", r.URL.Path, r.URL.RawQuery)
		fmt.Fprint(w, name)
	})
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		fmt.Println("got SIGTERM")
		os.Exit(0)
	}()
	fmt.Printf("%s listening on %s\n", name, *listen)
	if err := http.ListenAndServe(*listen, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// fetch prints "URL: BODY" for each URL and returns 1 when one failed.
func fetch(urls []string) int {
	code := 0
	c := &http.Client{Timeout: 10 * time.Second}
	for _, u := range urls {
		resp, err := c.Get(u)
		if err != nil {
			fmt.Printf("%s: error: %v\n", u, err)
			code = 1
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Printf("%s: error: %s %v\n", u, resp.Status, err)
			code = 1
			continue
		}
		fmt.Printf("%s: %s\n", u, b)
	}
	return code
}
