package apiserver

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// request bundles what one resource request needs.
type request struct {
	w     http.ResponseWriter
	r     *http.Request
	ri    requestInfo
	res   *registry.Resource
	query url.Values
	// applied says the object was computed by server-side apply, which
	// keeps managedFields itself.
	applied bool
	// strict holds the body's strict decoding problems other than unknown
	// fields (duplicate fields), reported by the first canonicalize.
	strict []string
	// specWrite marks an updateStatusAndSpec write that a client made to the
	// spec through a subresource (registry.Parent.UpdateSpec): it moves
	// metadata.generation as a main-resource update does.
	specWrite bool
	// adm is what the request's calls to the admission chain share, made
	// at the first.
	adm *admissionMemo
}

// admissionMemo holds the admission attributes of a request's calls to the
// chain (admissionAttributes) and admissionContext's context made from
// parent.
type admissionMemo struct {
	attrs       admissionchain.Attributes
	parent, ctx context.Context
}

// admission returns q's admissionMemo.
func (q *request) admission() *admissionMemo {
	if q.adm == nil {
		q.adm = new(admissionMemo)
	}
	return q.adm
}

func (q *request) ctx() context.Context { return q.r.Context() }

func (q *request) groupResource() api.GroupResource {
	return q.res.GroupVersionResource().GroupResource()
}

func (q *request) groupKind() api.GroupKind {
	return api.GroupKind{Group: q.res.GroupVersion.Group, Kind: q.res.Kind}
}

func (q *request) notFound(name string) error { return apierrors.NewNotFound(q.groupResource(), name) }

func (q *request) dryRun() bool { return slices.Contains(q.query["dryRun"], "All") }

// writeOptionsKind names the options object of a write method, for errors.
var writeOptionsKind = map[string]string{
	http.MethodPost: "CreateOptions", http.MethodPut: "UpdateOptions",
	http.MethodPatch: "PatchOptions", http.MethodDelete: "DeleteOptions",
}

// validateWriteOptions refuses the dryRun and fieldValidation values Kubernetes
// does not define, as its ValidateCreateOptions and friends do: an unknown dryRun
// value must not turn into a real write.
func validateWriteOptions(q *request) error {
	kind, ok := writeOptionsKind[q.r.Method]
	if !ok {
		return nil
	}
	var errs field.ErrorList
	for _, v := range q.query["dryRun"] {
		if v != "All" {
			errs = append(errs, field.NotSupported(field.NewPath("dryRun"), v, []string{"All"}))
		}
	}
	if q.r.Method != http.MethodDelete {
		switch v := q.query.Get("fieldValidation"); v {
		case "", "Ignore", "Warn", "Strict":
		default:
			errs = append(errs, field.NotSupported(field.NewPath("fieldValidation"), v, []string{"Ignore", "Warn", "Strict"}))
		}
		errs = append(errs, validateFieldManagerOptions(q)...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: kind}, "", errs)
	}
	return nil
}

// serveResource serves a resource request; query is r's parsed query, which
// the request owns.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, ri requestInfo, query url.Values) {
	res := s.opts.Registry.Get(ri.gv.WithResource(ri.resource))
	if res == nil {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	q := &request{w: w, r: r, ri: ri, res: res, query: query}
	if res.DeprecationWarning != "" {
		addWarning(w, res.DeprecationWarning)
	}
	if ri.namespace != "" && !res.Namespaced {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	if res.Namespaced && ri.namespace == "" && ri.verb != "list" && ri.verb != "watch" {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	pw := s.protoResponse(q)
	if pw != nil {
		q.w = pw
	}
	err := s.dispatch(q)
	if pw != nil {
		pw.finish()
	}
	if err != nil {
		writeError(w, err)
	}
}

func (s *Server) dispatch(q *request) error {
	ri := q.ri
	if err := validateWriteOptions(q); err != nil {
		return err
	}
	if ri.subresource != "" {
		switch ri.subresource {
		case "status":
			if q.res.StatusSubresource {
				return s.serveStatus(q)
			}
		case "scale":
			if q.res.Scale != nil {
				return s.serveScale(q)
			}
		default:
			if sub, ok := q.res.Subresources[ri.subresource]; ok {
				if err := s.admitConnect(q, sub); err != nil {
					return err
				}
				return sub.Serve(q.w, q.r, &parent{s: s, q: q, kind: sub.Kind().Kind})
			}
		}
		return notFoundPath(q.r.URL.Path)
	}
	if !slices.Contains(q.res.ServedVerbs(), ri.verb) {
		return apierrors.NewMethodNotSupported(q.groupResource(), ri.verb)
	}
	switch ri.verb {
	case "get":
		return s.serveGet(q)
	case "list":
		return s.serveList(q)
	case "watch":
		return s.serveWatch(q)
	case "create":
		if ri.name != "" {
			return apierrors.NewMethodNotSupported(q.groupResource(), "create")
		}
		if q.res.CreateAs != nil {
			return s.serveCreateAs(q)
		}
		return s.serveCreate(q)
	case "update":
		return s.serveUpdate(q, updateMain)
	case "patch":
		return s.servePatch(q, updateMain)
	case "delete":
		return s.serveDelete(q)
	case "deletecollection":
		return s.serveDeleteCollection(q)
	}
	return apierrors.NewMethodNotSupported(q.groupResource(), ri.verb)
}

func addWarning(w http.ResponseWriter, text string) {
	w.Header().Add("Warning", `299 - "`+strings.ReplaceAll(text, `"`, `\"`)+`"`)
}
