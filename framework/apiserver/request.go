package apiserver

import (
	"net/http"
	"strings"

	"github.com/converge-dev/converge/framework/api"
)

// requestInfo is what the URL says about a resource request.
type requestInfo struct {
	gv          api.GroupVersion
	namespace   string
	resource    string
	name        string
	subresource string
	verb        string
}

// parseResourcePath parses /api/v1/... and /apis/GROUP/VERSION/... paths, split
// by splitPath. ok is false when the path is not a resource path (discovery
// roots are handled first).
func parseResourcePath(method string, parts []string, watchParam bool) (requestInfo, bool) {
	var ri requestInfo
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		ri.gv = api.GroupVersion{Version: parts[1]}
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		ri.gv = api.GroupVersion{Group: parts[1], Version: parts[2]}
		parts = parts[3:]
	default:
		return ri, false
	}
	// Legacy watch paths: /api/v1/watch/...
	legacyWatch := false
	if len(parts) > 0 && parts[0] == "watch" {
		legacyWatch = true
		parts = parts[1:]
		if len(parts) == 0 {
			return ri, false
		}
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		ri.namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	ri.resource = parts[0]
	if len(parts) > 1 {
		ri.name = parts[1]
	}
	if len(parts) > 2 {
		ri.subresource = parts[2]
	}
	// Only proxy subresources have a path of their own after them.
	if len(parts) > 3 && ri.subresource != "proxy" {
		return ri, false
	}
	if ri.resource == "namespaces" && ri.name != "" {
		ri.namespace = ""
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case legacyWatch || (watchParam && ri.subresource == ""):
			ri.verb = "watch"
		case ri.name == "":
			ri.verb = "list"
		default:
			ri.verb = "get"
		}
	case http.MethodPost:
		ri.verb = "create"
	case http.MethodPut:
		ri.verb = "update"
	case http.MethodPatch:
		ri.verb = "patch"
	case http.MethodDelete:
		if ri.name == "" {
			ri.verb = "deletecollection"
		} else {
			ri.verb = "delete"
		}
	default:
		ri.verb = strings.ToLower(method)
	}
	return ri, true
}

func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}
