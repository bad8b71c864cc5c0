// Command web is the acceptance suite's web server image: it answers every
// request with "web <version> <hostname>" on :8080. The version is set at
// build time (-ldflags -X main.version=v2).
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
)

var version = "v1"

func main() {
	host, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "web %s %s\n", version, host)
	})
	log.Printf("web %s listening on :8080", version)
	log.Fatal(http.ListenAndServe(":8080", nil))
}
