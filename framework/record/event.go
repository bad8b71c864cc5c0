package record

import "github.com/converge-dev/converge/framework/api"

// event is the part of a core/v1 Event the recorder writes. It carries its
// TypeMeta, so no scheme registration is needed (framework code must not
// import the built-in types).
type event struct {
	api.TypeMeta       `json:",inline"`
	api.ObjectMeta     `json:"metadata"`
	InvolvedObject     objectReference `json:"involvedObject"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
	Source             eventSource     `json:"source,omitempty"`
	FirstTimestamp     api.Time        `json:"firstTimestamp,omitempty"`
	LastTimestamp      api.Time        `json:"lastTimestamp,omitempty"`
	Count              int32           `json:"count,omitempty"`
	Type               string          `json:"type,omitempty"`
	ReportingComponent string          `json:"reportingComponent"`
	ReportingInstance  string          `json:"reportingInstance"`
}

type objectReference struct {
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

type eventSource struct {
	Component string `json:"component,omitempty"`
	Host      string `json:"host,omitempty"`
}

func newEvent(namespace, name string) *event {
	return &event{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: api.ObjectMeta{Namespace: namespace, Name: name},
	}
}
