package generate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/operators/generate/markers"
	"github.com/converge-dev/converge/operators/generate/rbac"
	"github.com/converge-dev/converge/operators/generate/schema"
	"github.com/converge-dev/converge/operators/scaffold"
)

// Options select what to read.
type Options struct {
	// Dir is the directory the patterns are relative to (default: the
	// current one).
	Dir string
	// Patterns are go list package patterns (default ./...).
	Patterns []string
	// RoleName names the role of +kubebuilder:rbac markers without
	// roleName (default manager-role, kubebuilder's).
	RoleName string
	// AllowDangerousTypes allows float fields.
	AllowDangerousTypes bool
	// BuildFlags are passed to the go command (e.g. -tags).
	BuildFlags []string
	// Env is the go command's environment (default: this process's).
	Env []string
}

// Result is what the markers and types ask for.
type Result struct {
	CRDs         []crdapi.CustomResourceDefinition
	ClusterRoles []rbacv1.ClusterRole
	Roles        []rbacv1.Role
}

// Generate loads the packages and returns their CRDs and roles. All errors
// are returned together, each naming its file and line.
func Generate(ctx context.Context, opts Options) (*Result, error) {
	patterns := opts.Patterns
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	cfg := &packages.Config{Context: ctx, Dir: opts.Dir, BuildFlags: opts.BuildFlags, Env: opts.Env,
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo |
			packages.NeedImports}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load packages: %w", err)
	}
	var errs []error
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, errors.New(e.Error()))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("load packages: %w", errors.Join(errs...))
	}
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return cmp.Compare(a.PkgPath, b.PkgPath) })
	g := &generator{src: newSources(cfg.Fset), roleName: cmp.Or(opts.RoleName, "manager-role")}
	if len(pkgs) > 0 {
		g.src = newSources(pkgs[0].Fset)
	}
	g.schemas = &schema.Builder{Decl: g.src.decl, AllowDangerousTypes: opts.AllowDangerousTypes}
	return g.run(pkgs)
}

type generator struct {
	src      *sources
	schemas  *schema.Builder
	roleName string
	errs     []error
}

// kind is one Go type that is a Kubernetes kind in one group version.
type kind struct {
	group, version string
	obj            *types.TypeName
}

func (g *generator) run(pkgs []*packages.Package) (*Result, error) {
	var kinds []kind
	var rbacMarkers []markers.Marker
	for _, p := range pkgs {
		if len(p.GoFiles) == 0 || p.Types == nil {
			continue
		}
		pm := g.src.packageMarkers(filepath.Dir(p.GoFiles[0]), p.Name)
		rbacMarkers = append(rbacMarkers, pm.All("kubebuilder:rbac")...)
		gm, ok := pm.Get("groupName")
		if !ok || pm.Has("kubebuilder:skip") {
			continue
		}
		version := p.Name
		if vm, ok := pm.Get("versionName"); ok {
			version = vm.Value.(string)
		}
		scope := p.Types.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if ok && isKind(tn) {
				kinds = append(kinds, kind{group: gm.Value.(string), version: version, obj: tn})
			}
		}
	}
	res := &Result{}
	type gk struct{ group, kind string }
	byGK := map[gk][]kind{}
	var order []gk
	for _, k := range kinds {
		key := gk{k.group, k.obj.Name()}
		if _, ok := byGK[key]; !ok {
			order = append(order, key)
		}
		byGK[key] = append(byGK[key], k)
	}
	slices.SortFunc(order, func(a, b gk) int { return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.group, b.group)) })
	for _, key := range order {
		if crd, ok := g.crd(key.group, key.kind, byGK[key]); ok {
			res.CRDs = append(res.CRDs, crd)
		}
	}
	res.ClusterRoles, res.Roles = rbac.Roles(rbacMarkers, g.roleName)
	errs := append(g.src.errs, g.errs...)
	if err := g.schemas.Err(); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(dedupe(errs)...)
}

func dedupe(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, e := range errs {
		for _, line := range strings.Split(e.Error(), "\n") {
			if line != "" && !seen[line] {
				seen[line] = true
				out = append(out, errors.New(line))
			}
		}
	}
	return out
}

// isKind reports whether tn is a struct embedding TypeMeta and ObjectMeta
// (of metav1 or Converge's framework/api).
func isKind(tn *types.TypeName) bool {
	st, ok := tn.Type().Underlying().(*types.Struct)
	if !ok {
		return false
	}
	var typeMeta, objectMeta bool
	for i := range st.NumFields() {
		f := st.Field(i)
		if !f.Embedded() {
			continue
		}
		n, ok := types.Unalias(f.Type()).(*types.Named)
		if !ok || n.Obj().Pkg() == nil {
			continue
		}
		switch n.Obj().Pkg().Path() {
		case "k8s.io/apimachinery/pkg/apis/meta/v1", "github.com/converge-dev/converge/framework/api":
		default:
			continue
		}
		switch n.Obj().Name() {
		case "TypeMeta":
			typeMeta = true
		case "ObjectMeta":
			objectMeta = true
		}
	}
	return typeMeta && objectMeta
}

func (g *generator) errorf(pos fmt.Stringer, format string, args ...any) {
	g.errs = append(g.errs, fmt.Errorf("%s: %s", pos, fmt.Sprintf(format, args...)))
}

// crd assembles one CustomResourceDefinition from the kind's versions, as
// controller-gen's NeedCRDFor does.
func (g *generator) crd(group, kindName string, versions []kind) (crdapi.CustomResourceDefinition, bool) {
	plural := scaffold.Plural(kindName)
	crd := crdapi.CustomResourceDefinition{
		TypeMeta: api.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		Spec: crdapi.CustomResourceDefinitionSpec{Group: group, Scope: "Namespaced",
			Names: crdapi.CustomResourceDefinitionNames{Kind: kindName, ListKind: kindName + "List", Plural: plural,
				Singular: strings.ToLower(kindName)}},
	}
	decls := make([]*schema.Decl, len(versions))
	for i, k := range versions {
		s := g.schemas.Named(k.obj)
		if _, ok := s.Properties["metadata"]; ok {
			s.Properties["metadata"] = crdapi.JSONSchemaProps{Type: "object"}
		}
		crd.Spec.Versions = append(crd.Spec.Versions, crdapi.CustomResourceDefinitionVersion{Name: k.version, Served: true,
			Schema: &crdapi.CustomResourceValidation{OpenAPIV3Schema: &s}})
		d, err := g.src.decl(k.obj)
		if err != nil {
			g.errs = append(g.errs, err)
			d = &schema.Decl{}
		}
		decls[i] = d
	}
	var skip []string
	for i, k := range versions {
		d := decls[i]
		v := &crd.Spec.Versions[i]
		for _, m := range d.Markers {
			switch m.Name {
			case "kubebuilder:subresource:status":
				subresources(v).Status = &crdapi.CustomResourceSubresourceStatus{}
			case "kubebuilder:subresource:scale":
				sc := &crdapi.CustomResourceSubresourceScale{SpecReplicasPath: m.String("specpath"), StatusReplicasPath: m.String("statuspath")}
				if sel, ok := m.Arg("selectorpath").(string); ok {
					sc.LabelSelectorPath = &sel
				}
				subresources(v).Scale = sc
			case "kubebuilder:printcolumn":
				subresources(v)
				prio, _ := m.Arg("priority").(int)
				v.AdditionalPrinterColumns = append(v.AdditionalPrinterColumns, crdapi.CustomResourceColumnDefinition{
					Name: m.String("name"), Type: m.String("type"), JSONPath: m.String("JSONPath"),
					Description: m.String("description"), Format: m.String("format"), Priority: int32(prio)})
			case "kubebuilder:selectablefield":
				v.SelectableFields = append(v.SelectableFields, crdapi.SelectableField{JSONPath: m.String("JSONPath")})
			case "kubebuilder:resource":
				if p := m.String("path"); p != "" {
					crd.Spec.Names.Plural = p
				}
				if s := m.String("singular"); s != "" {
					crd.Spec.Names.Singular = s
				}
				crd.Spec.Names.ShortNames = m.Strings("shortName")
				crd.Spec.Names.Categories = m.Strings("categories")
				crd.Spec.Scope = cmp.Or(m.String("scope"), "Namespaced")
			case "kubebuilder:storageversion":
				v.Storage = true
			case "kubebuilder:unservedversion":
				v.Served = false
			case "kubebuilder:deprecatedversion":
				v.Deprecated = true
				if w, ok := m.Arg("warning").(string); ok {
					v.DeprecationWarning = &w
				}
			case "kubebuilder:metadata":
				if err := applyMetadata(&crd.Metadata, m); err != nil {
					g.errorf(m.Pos, "+%s: %v", m.Name, err)
				}
			case "kubebuilder:skipversion":
				if len(versions) == 1 {
					g.errorf(m.Pos, "+kubebuilder:skipversion: cannot skip the only version %s of %s", k.version, kindName)
					continue
				}
				skip = append(skip, k.version)
			}
		}
	}
	crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v crdapi.CustomResourceDefinitionVersion) bool {
		return slices.Contains(skip, v.Name)
	})
	crd.Metadata.Name = crd.Spec.Names.Plural + "." + group
	if len(crd.Spec.Versions) == 0 {
		return crd, false
	}
	slices.SortStableFunc(crd.Spec.Versions, func(a, b crdapi.CustomResourceDefinitionVersion) int { return cmp.Compare(a.Name, b.Name) })
	if len(crd.Spec.Versions) == 1 {
		crd.Spec.Versions[0].Storage = true
	}
	pos := decls[0].Pos
	storage := 0
	served := false
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage++
		}
		served = served || v.Served
	}
	switch {
	case storage == 0:
		g.errorf(pos, "CRD %s has no storage version: mark one version's type with +kubebuilder:storageversion", crd.Metadata.Name)
	case storage > 1:
		g.errorf(pos, "CRD %s has %d storage versions: +kubebuilder:storageversion must mark exactly one", crd.Metadata.Name, storage)
	}
	if !served {
		g.errorf(pos, "CRD %s serves no version", crd.Metadata.Name)
	}
	return crd, true
}

func subresources(v *crdapi.CustomResourceDefinitionVersion) *crdapi.CustomResourceSubresources {
	if v.Subresources == nil {
		v.Subresources = &crdapi.CustomResourceSubresources{}
	}
	return v.Subresources
}

func applyMetadata(meta *api.ObjectMeta, m markers.Marker) error {
	for _, kv := range m.Strings("annotations") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("annotation %s is not in 'key=value' form", kv)
		}
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[k] = v
	}
	for _, kv := range m.Strings("labels") {
		k, v, _ := strings.Cut(kv, "=")
		if meta.Labels == nil {
			meta.Labels = map[string]string{}
		}
		meta.Labels[k] = v
	}
	return nil
}
