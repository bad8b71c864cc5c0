package v1

import (
	"github.com/converge-dev/converge/framework/api"
)

// +kubebuilder:rbac:groups=corpus.converge.dev,resources=widgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=corpus.converge.dev,resources=widgets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=*
// +kubebuilder:rbac:urls=/metrics,verbs=get
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=system,roleName=leader-election

// Phase is a widget's lifecycle phase.
// +kubebuilder:validation:Enum=Pending;Running;Failed
type Phase string

// Port is a TCP port.
// +kubebuilder:validation:Minimum=1
// +kubebuilder:validation:Maximum=65535
type Port int32

// Labels are string pairs, replaced as a whole on apply.
// +mapType=atomic
type Labels map[string]string

// Widget exercises every marker.
//
// It has a second paragraph.
// TODO: this line is left out.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Namespaced,shortName=wd;wdg,categories={all,corpus},path=widgets,singular=widget
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="lifecycle phase",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:storageversion
type Widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec WidgetSpec `json:"spec"`
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state of a Widget.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.replicas",message="minReplicas must not exceed replicas"
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:MaxProperties=40
type WidgetSpec struct {
	// Replicas is the number of copies.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:validation:MultipleOf=1
	// +kubebuilder:default=1
	Replicas int32 `json:"replicas"`

	// MinReplicas has an exclusive lower bound.
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +optional
	MinReplicas int32 `json:"minReplicas,omitempty"`

	// Name must be a DNS label.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name,omitempty"`

	// Mode is one of three.
	// +kubebuilder:validation:Enum=fast;safe;"with,comma"
	// +kubebuilder:default=safe
	Mode string `json:"mode,omitempty"`

	// Phase has its type's enum.
	Phase Phase `json:"phase,omitempty"`

	// Port is bounded by its type.
	// +kubebuilder:default=8080
	Port Port `json:"port,omitempty"`

	// Email has a format.
	// +kubebuilder:validation:Format=email
	// +kubebuilder:validation:Optional
	Email string `json:"email"`

	// Size is a string on the wire.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=int64
	// +optional
	Size int64 `json:"size,omitempty"`

	// Tags are unique strings.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:UniqueItems=true
	// +kubebuilder:validation:items:MaxLength=20
	// +kubebuilder:validation:items:Pattern=`^[a-z]+$`
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`

	// Ports are keyed by name and protocol.
	// +listType=map
	// +listMapKey=name
	// +listMapKey=protocol
	// +optional
	Ports []NamedPort `json:"ports,omitempty"`

	// Steps are replaced as a whole.
	// +listType=atomic
	// +kubebuilder:default={}
	// +optional
	Steps []string `json:"steps,omitempty"`

	// Labels map strings.
	// +optional
	Labels Labels `json:"labels,omitempty"`

	// Annotations are granular.
	// +mapType=granular
	// +kubebuilder:validation:MaxProperties=5
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Config keeps unknown fields.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:XPreserveUnknownFields
	// +optional
	Config *api.RawExtension `json:"config,omitempty"`

	// Anything is not described further.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Anything *api.RawExtension `json:"anything,omitempty"`

	// Template is an embedded object.
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:validation:XEmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *api.RawExtension `json:"template,omitempty"`

	// Target is a port number or name.
	// +kubebuilder:validation:XIntOrString
	// +optional
	Target *api.IntOrString `json:"target,omitempty"`

	// Limit is a resource quantity.
	// +optional
	Limit *api.Quantity `json:"limit,omitempty"`

	// Timeout is a duration.
	// +kubebuilder:default="30s"
	// +optional
	Timeout *api.Duration `json:"timeout,omitempty"`

	// Deadline is a time.
	// +nullable
	// +optional
	Deadline *api.Time `json:"deadline,omitempty"`

	// Policy has a default object.
	// +kubebuilder:default={mode: "auto", retries: 3}
	// +optional
	Policy *Policy `json:"policy,omitempty"`

	// Weights map names to numbers.
	// +kubebuilder:validation:MinProperties=1
	// +optional
	Weights map[string]int64 `json:"weights,omitempty"`

	// Immutable may not change.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="immutable",reason=FieldValueForbidden,fieldPath=".immutable"
	// +kubebuilder:validation:XValidation:rule="size(self) < 10",messageExpression="'too long: ' + self"
	// +optional
	Immutable string `json:"immutable,omitempty"`

	// Secret is not serialised.
	Secret string `json:"-"`

	// Data is base64.
	// +optional
	Data []byte `json:"data,omitempty"`

	// Matrix nests arrays.
	// +optional
	Matrix [][]int32 `json:"matrix,omitempty"`

	// Common fields are inlined.
	Common `json:",inline"`

	// The doc of an embedded struct is dropped.
	Extra `json:",inline"`
}

// Common is inlined into WidgetSpec.
type Common struct {
	// Owner of the widget.
	Owner string `json:"owner"`
}

// Extra is an embedded struct.
type Extra struct {
	// Note is free text.
	// +optional
	Note string `json:"note,omitempty"`
}

// NamedPort is an entry of an associative list.
// +structType=atomic
type NamedPort struct {
	// Name of the port.
	Name string `json:"name"`
	// Protocol of the port.
	// +kubebuilder:default=TCP
	Protocol string `json:"protocol"`
	// Port number.
	Port Port `json:"port"`
}

// Policy is a small object.
type Policy struct {
	// +optional
	Mode string `json:"mode,omitempty"`
	// +optional
	Retries int32 `json:"retries,omitempty"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	// Replicas observed.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Selector of the pods (scale subresource).
	// +optional
	Selector string `json:"selector,omitempty"`
	// Phase observed.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Conditions of the widget.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []api.Condition `json:"conditions,omitempty"`
	// LastUpdate is when the status was written.
	// +optional
	LastUpdate api.Time `json:"lastUpdate,omitempty"`
}

// WidgetList is a list of Widgets.
// +kubebuilder:object:root=true
type WidgetList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []Widget `json:"items"`
}

// Gadget is cluster-scoped and deprecated in v1.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:deprecatedversion:warning="corpus.converge.dev/v1 Gadget is deprecated"
// +kubebuilder:selectablefield:JSONPath=`.spec.color`
// +kubebuilder:metadata:annotations="corpus.converge.dev/note=generated",labels="corpus=yes"
type Gadget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec GadgetSpec `json:"spec,omitempty"`
}

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	// Color is the gadget's color.
	// +kubebuilder:validation:Enum=red;green;blue
	// +kubebuilder:default=red
	// +optional
	Color string `json:"color,omitempty"`
	// Ratio is a float (dangerous types allowed with a flag).
	// +kubebuilder:validation:Type=string
	// +optional
	Ratio string `json:"ratio,omitempty"`
}

// GadgetList is a list of Gadgets.
type GadgetList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []Gadget `json:"items"`
}
