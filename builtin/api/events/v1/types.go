package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is events.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "events.k8s.io", Version: "v1"}

// Event types.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)

// Event reports something that happened to an object (events.k8s.io form).
type Event struct {
	api.TypeMeta             `json:",inline"`
	api.ObjectMeta           `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	EventTime                api.MicroTime           `json:"eventTime" protobuf:"bytes,2,opt,name=eventTime"`
	Series                   *EventSeries            `json:"series,omitempty" protobuf:"bytes,3,opt,name=series"`
	ReportingController      string                  `json:"reportingController,omitempty" protobuf:"bytes,4,opt,name=reportingController"`
	ReportingInstance        string                  `json:"reportingInstance,omitempty" protobuf:"bytes,5,opt,name=reportingInstance"`
	Action                   string                  `json:"action,omitempty" protobuf:"bytes,6,name=action"`
	Reason                   string                  `json:"reason,omitempty" protobuf:"bytes,7,name=reason"`
	Regarding                corev1.ObjectReference  `json:"regarding,omitempty" protobuf:"bytes,8,opt,name=regarding"`
	Related                  *corev1.ObjectReference `json:"related,omitempty" protobuf:"bytes,9,opt,name=related"`
	Note                     string                  `json:"note,omitempty" protobuf:"bytes,10,opt,name=note"`
	Type                     string                  `json:"type,omitempty" protobuf:"bytes,11,opt,name=type"`
	DeprecatedSource         corev1.EventSource      `json:"deprecatedSource,omitempty" protobuf:"bytes,12,opt,name=deprecatedSource"`
	DeprecatedFirstTimestamp api.Time                `json:"deprecatedFirstTimestamp,omitempty" protobuf:"bytes,13,opt,name=deprecatedFirstTimestamp"`
	DeprecatedLastTimestamp  api.Time                `json:"deprecatedLastTimestamp,omitempty" protobuf:"bytes,14,opt,name=deprecatedLastTimestamp"`
	DeprecatedCount          int32                   `json:"deprecatedCount,omitempty" protobuf:"varint,15,opt,name=deprecatedCount"`
}

// EventSeries describes a series of repeated events.
type EventSeries struct {
	Count            int32         `json:"count" protobuf:"varint,1,opt,name=count"`
	LastObservedTime api.MicroTime `json:"lastObservedTime" protobuf:"bytes,2,opt,name=lastObservedTime"`
}

// EventList is a list of Events.
type EventList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Event `json:"items" protobuf:"bytes,2,rep,name=items"`
}
