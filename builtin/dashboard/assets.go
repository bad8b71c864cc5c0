package dashboard

import (
	"embed"
	"net/http"
	"strings"
)

// files are the dashboard's page, scripts and styles, written by hand: no
// build step, go build embeds them as they are.
//
//go:embed assets
var files embed.FS

// assetHandler serves /ui/ (the page) and /ui/assets/… (scripts, styles).
func assetHandler() http.Handler {
	static := http.StripPrefix(Prefix, http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if strings.HasPrefix(r.URL.Path, Prefix+"assets/") {
			w.Header().Set("Cache-Control", "no-cache")
			static.ServeHTTP(w, r)
			return
		}
		if r.URL.Path != Prefix {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, files, "assets/index.html")
	})
}
