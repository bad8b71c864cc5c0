package api

import (
	"fmt"
	"strings"
)

// GroupVersion names an API group at one version. The core group is "".
type GroupVersion struct {
	Group   string
	Version string
}

// String renders the apiVersion form: "v1" for the core group, "apps/v1" otherwise.
func (gv GroupVersion) String() string {
	if gv.Group == "" {
		return gv.Version
	}
	return gv.Group + "/" + gv.Version
}

// WithKind returns the GroupVersionKind of kind in this group version.
func (gv GroupVersion) WithKind(kind string) GroupVersionKind {
	return GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind}
}

// WithResource returns the GroupVersionResource of resource in this group version.
func (gv GroupVersion) WithResource(resource string) GroupVersionResource {
	return GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: resource}
}

// ParseGroupVersion parses an apiVersion string ("v1", "apps/v1").
func ParseGroupVersion(apiVersion string) (GroupVersion, error) {
	if apiVersion == "" {
		return GroupVersion{}, fmt.Errorf("apiVersion is empty")
	}
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		return GroupVersion{Version: apiVersion}, nil
	}
	if strings.Contains(version, "/") || group == "" || version == "" {
		return GroupVersion{}, fmt.Errorf("unexpected GroupVersion string: %s", apiVersion)
	}
	return GroupVersion{Group: group, Version: version}, nil
}

// GroupVersionKind names a kind of object at one version of its group.
type GroupVersionKind struct {
	Group   string
	Version string
	Kind    string
}

// GroupVersion drops the kind.
func (gvk GroupVersionKind) GroupVersion() GroupVersion {
	return GroupVersion{Group: gvk.Group, Version: gvk.Version}
}

// GroupKind drops the version.
func (gvk GroupVersionKind) GroupKind() GroupKind {
	return GroupKind{Group: gvk.Group, Kind: gvk.Kind}
}

// APIVersion renders the apiVersion field value.
func (gvk GroupVersionKind) APIVersion() string { return gvk.GroupVersion().String() }

func (gvk GroupVersionKind) String() string {
	return gvk.GroupVersion().String() + ", Kind=" + gvk.Kind
}

// GroupKind names a kind independent of version.
type GroupKind struct {
	Group string
	Kind  string
}

// String renders "Kind.group" ("Deployment.apps"), or "Kind" in the core group,
// the form Kubernetes uses in validation messages.
func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// GroupVersionResource names a collection served by the API (the plural resource).
type GroupVersionResource struct {
	Group    string
	Version  string
	Resource string
}

// GroupVersion drops the resource.
func (gvr GroupVersionResource) GroupVersion() GroupVersion {
	return GroupVersion{Group: gvr.Group, Version: gvr.Version}
}

// GroupResource drops the version.
func (gvr GroupVersionResource) GroupResource() GroupResource {
	return GroupResource{Group: gvr.Group, Resource: gvr.Resource}
}

func (gvr GroupVersionResource) String() string {
	return gvr.GroupVersion().String() + ", Resource=" + gvr.Resource
}

// GroupResource names a resource independent of version.
type GroupResource struct {
	Group    string
	Resource string
}

// String renders "resource.group" ("deployments.apps"), or "resource" in the core
// group, the form Kubernetes uses in NotFound/AlreadyExists/Conflict messages.
func (gr GroupResource) String() string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}
