package markers

import "strings"

// Target is what a marker describes; a definition may allow several.
type Target uint8

// Targets.
const (
	Package Target = 1 << iota
	Type
	Field
)

// Kind is the type of a marker's value.
type Kind int

// Kinds.
const (
	Flag    Kind = iota // no value: +optional
	String              // +kubebuilder:validation:Pattern=`^a+$`
	Int                 // +kubebuilder:validation:MaxLength=10
	Number              // +kubebuilder:validation:Minimum=0.5
	Bool                // +kubebuilder:validation:UniqueItems=true
	Strings             // {a,b} or a;b
	Any                 // +kubebuilder:default=...: the type is guessed from the text
	Anys                // +kubebuilder:validation:Enum=a;b;c: a list of Any
	JSON                // +default=<JSON>
	Args                // named arguments: +kubebuilder:printcolumn:name=Age,type=date,JSONPath=...
)

// Arg is one named argument of an Args marker.
type Arg struct {
	Name     string
	Kind     Kind
	Optional bool
}

// Def defines a marker: its name, where it may appear and its value.
type Def struct {
	Name    string
	Targets Target
	Kind    Kind
	Args    []Arg // Kind == Args
}

// Registry holds definitions by name.
type Registry map[string]*Def

// Add registers d (replacing one of the same name).
func (r Registry) Add(d *Def) { r[d.Name] = d }

// lookup finds the definition of the marker text (without the leading '+')
// for target: first the whole name before '=', then that name without its
// last ':' segment, which is then the first argument's name
// (+kubebuilder:printcolumn:name=Age → kubebuilder:printcolumn, name=Age).
func (r Registry) lookup(text string, t Target) (d *Def, fields string) {
	anon, rest, hasValue := strings.Cut(text, "=")
	if d := r[anon]; d != nil && d.Targets&t != 0 {
		return d, rest
	}
	if !hasValue {
		return nil, ""
	}
	i := strings.LastIndexByte(anon, ':')
	if i < 0 {
		return nil, ""
	}
	if d := r[anon[:i]]; d != nil && d.Targets&t != 0 && d.Kind == Args {
		return d, anon[i+1:] + "=" + rest
	}
	return nil, ""
}

// ValidationPrefix is the prefix of the schema validation markers;
// ItemsPrefix applies them to an array's items instead.
const (
	ValidationPrefix = "kubebuilder:validation:"
	ItemsPrefix      = ValidationPrefix + "items:"
)

// CRD returns the registry of every marker `converge operator generate`
// reads: schema validation (also as items:), field and type markers, CRD
// markers, list/map topology, package markers and RBAC.
func CRD() Registry {
	r := Registry{}
	ft := Field | Type
	validation := []*Def{
		{Name: "Maximum", Kind: Number}, {Name: "Minimum", Kind: Number},
		{Name: "ExclusiveMaximum", Kind: Bool}, {Name: "ExclusiveMinimum", Kind: Bool},
		{Name: "MultipleOf", Kind: Number},
		{Name: "MinProperties", Kind: Int}, {Name: "MaxProperties", Kind: Int},
		{Name: "MaxLength", Kind: Int}, {Name: "MinLength", Kind: Int}, {Name: "Pattern", Kind: String},
		{Name: "MaxItems", Kind: Int}, {Name: "MinItems", Kind: Int}, {Name: "UniqueItems", Kind: Bool},
		{Name: "Enum", Kind: Anys}, {Name: "Format", Kind: String}, {Name: "Type", Kind: String},
		{Name: "XPreserveUnknownFields", Kind: Flag}, {Name: "XEmbeddedResource", Kind: Flag},
		{Name: "XIntOrString", Kind: Flag},
		{Name: "XValidation", Kind: Args, Args: []Arg{{Name: "rule", Kind: String}, {Name: "message", Kind: String, Optional: true},
			{Name: "messageExpression", Kind: String, Optional: true}, {Name: "reason", Kind: String, Optional: true},
			{Name: "fieldPath", Kind: String, Optional: true}, {Name: "optionalOldSelf", Kind: Bool, Optional: true}}},
	}
	for _, d := range validation {
		r.Add(&Def{Name: ValidationPrefix + d.Name, Targets: ft, Kind: d.Kind, Args: d.Args})
		r.Add(&Def{Name: ItemsPrefix + d.Name, Targets: ft, Kind: d.Kind, Args: d.Args})
	}
	for _, d := range []*Def{
		{Name: "kubebuilder:validation:Required", Targets: Field | Package},
		{Name: "kubebuilder:validation:Optional", Targets: Field | Package},
		{Name: "required", Targets: Field}, {Name: "optional", Targets: Field},
		{Name: "k8s:required", Targets: Field}, {Name: "k8s:optional", Targets: Field},
		{Name: "nullable", Targets: Field},
		{Name: "kubebuilder:default", Targets: Field, Kind: Any},
		{Name: "default", Targets: Field, Kind: JSON},
		{Name: "kubebuilder:example", Targets: Field, Kind: Any},
		{Name: "kubebuilder:validation:EmbeddedResource", Targets: Field},
		{Name: "kubebuilder:validation:Schemaless", Targets: Field},
		{Name: "kubebuilder:pruning:PreserveUnknownFields", Targets: ft},
		{Name: "kubebuilder:title", Targets: ft, Kind: Any},
		{Name: "listType", Targets: ft, Kind: String}, {Name: "listMapKey", Targets: ft, Kind: String},
		{Name: "k8s:listType", Targets: ft, Kind: String}, {Name: "k8s:listMapKey", Targets: ft, Kind: String},
		{Name: "mapType", Targets: ft, Kind: String}, {Name: "structType", Targets: ft, Kind: String},
		{Name: "kubebuilder:externalDocs", Targets: ft, Kind: Args, Args: []Arg{{Name: "url", Kind: String},
			{Name: "description", Kind: String, Optional: true}}},

		{Name: "kubebuilder:subresource:status", Targets: Type},
		{Name: "kubebuilder:subresource:scale", Targets: Type, Kind: Args, Args: []Arg{{Name: "specpath", Kind: String},
			{Name: "statuspath", Kind: String}, {Name: "selectorpath", Kind: String, Optional: true}}},
		{Name: "kubebuilder:printcolumn", Targets: Type, Kind: Args, Args: []Arg{{Name: "name", Kind: String},
			{Name: "type", Kind: String}, {Name: "JSONPath", Kind: String}, {Name: "description", Kind: String, Optional: true},
			{Name: "format", Kind: String, Optional: true}, {Name: "priority", Kind: Int, Optional: true}}},
		{Name: "kubebuilder:resource", Targets: Type, Kind: Args, Args: []Arg{{Name: "path", Kind: String, Optional: true},
			{Name: "shortName", Kind: Strings, Optional: true}, {Name: "categories", Kind: Strings, Optional: true},
			{Name: "singular", Kind: String, Optional: true}, {Name: "scope", Kind: String, Optional: true}}},
		{Name: "kubebuilder:storageversion", Targets: Type},
		{Name: "kubebuilder:skipversion", Targets: Type},
		{Name: "kubebuilder:unservedversion", Targets: Type},
		{Name: "kubebuilder:deprecatedversion", Targets: Type, Kind: Args, Args: []Arg{{Name: "warning", Kind: String, Optional: true}}},
		{Name: "kubebuilder:selectablefield", Targets: Type, Kind: Args, Args: []Arg{{Name: "JSONPath", Kind: String}}},
		{Name: "kubebuilder:metadata", Targets: Type, Kind: Args, Args: []Arg{{Name: "annotations", Kind: Strings, Optional: true},
			{Name: "labels", Kind: Strings, Optional: true}}},

		{Name: "groupName", Targets: Package, Kind: String},
		{Name: "versionName", Targets: Package, Kind: String},
		{Name: "kubebuilder:skip", Targets: Package},
		{Name: "kubebuilder:rbac", Targets: Package, Kind: Args, Args: []Arg{{Name: "groups", Kind: Strings, Optional: true},
			{Name: "resources", Kind: Strings, Optional: true}, {Name: "resourceNames", Kind: Strings, Optional: true},
			{Name: "verbs", Kind: Strings}, {Name: "urls", Kind: Strings, Optional: true},
			{Name: "namespace", Kind: String, Optional: true}, {Name: "roleName", Kind: String, Optional: true}}},
	} {
		r.Add(d)
	}
	return r
}
