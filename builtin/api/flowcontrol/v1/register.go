package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Resources returns the flowcontrol.apiserver.k8s.io/v1 resources
// (flowschemas and prioritylevelconfigurations, cluster-scoped, with status).
// Each call builds fresh values.
func Resources() []*registry.Resource {
	const ageDesc = "CreationTimestamp is a timestamp representing the server time when this object was created."
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "flowschemas", Kind: "FlowSchema", ListKind: "FlowSchemaList", Singular: "flowschema",
			Strategy: registry.Typed[FlowSchema]{Default: DefaultFlowSchema, Validate: ValidateFlowSchema,
				ValidateUpdateFunc: func(fs, _ *FlowSchema) field.ErrorList { return ValidateFlowSchema(fs) }},
			StatusSubresource: true, Generation: true, NameValidation: validation.NameIsDNSSubdomain,
			Type: reflect.TypeFor[FlowSchema](),
			Printer: &registry.Printer{
				Columns: []registry.Column{
					{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
					{Name: "PriorityLevel", Type: "string", Description: "`name` is the name of the priority level configuration being referenced"},
					{Name: "MatchingPrecedence", Type: "string", Description: "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request."},
					{Name: "DistinguisherMethod", Type: "string", Description: "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema."},
					{Name: "Age", Type: "string", Description: ageDesc},
					{Name: "MissingPL", Type: "string", Description: "`conditions` is a list of the current states of FlowSchema."},
				},
				Row: func(obj map[string]any, now time.Time) ([]any, error) {
					fs, err := registry.FromMap[FlowSchema](obj)
					if err != nil {
						return nil, fmt.Errorf("decode flowschema: %w", err)
					}
					method := "<none>"
					if fs.Spec.DistinguisherMethod != nil {
						method = string(fs.Spec.DistinguisherMethod.Type)
					}
					missing := "?"
					for _, c := range fs.Status.Conditions {
						if c.Type == "Dangling" {
							missing = string(c.Status)
						}
					}
					return []any{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, fmt.Sprint(fs.Spec.MatchingPrecedence), method,
						registry.Age(fs.CreationTimestamp, now), missing}, nil
				},
			},
		},
		{
			GroupVersion: GroupVersion, Resource: "prioritylevelconfigurations", Kind: "PriorityLevelConfiguration",
			ListKind: "PriorityLevelConfigurationList", Singular: "prioritylevelconfiguration",
			Strategy: registry.Typed[PriorityLevelConfiguration]{Default: DefaultPriorityLevelConfiguration, Validate: ValidatePriorityLevelConfiguration,
				ValidateUpdateFunc: func(pl, _ *PriorityLevelConfiguration) field.ErrorList { return ValidatePriorityLevelConfiguration(pl) }},
			StatusSubresource: true, Generation: true, NameValidation: validation.NameIsDNSSubdomain,
			Type: reflect.TypeFor[PriorityLevelConfiguration](),
			Printer: &registry.Printer{
				Columns: []registry.Column{
					{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
					{Name: "Type", Type: "string", Description: "`type` indicates whether this priority level is subject to limitation on request execution."},
					{Name: "NominalConcurrencyShares", Type: "string", Description: "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level."},
					{Name: "Queues", Type: "string", Description: "`queues` is the number of queues for this priority level."},
					{Name: "HandSize", Type: "string", Description: "`handSize` is a small positive number that configures the shuffle sharding of requests into queues."},
					{Name: "QueueLengthLimit", Type: "string", Description: "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time."},
					{Name: "Age", Type: "string", Description: ageDesc},
				},
				Row: func(obj map[string]any, now time.Time) ([]any, error) {
					pl, err := registry.FromMap[PriorityLevelConfiguration](obj)
					if err != nil {
						return nil, fmt.Errorf("decode prioritylevelconfiguration: %w", err)
					}
					ncs, queues, hand, qlen := "<none>", "<none>", "<none>", "<none>"
					if l := pl.Spec.Limited; l != nil {
						if l.NominalConcurrencyShares != nil {
							ncs = fmt.Sprint(*l.NominalConcurrencyShares)
						}
						if q := l.LimitResponse.Queuing; q != nil {
							queues, hand, qlen = fmt.Sprint(q.Queues), fmt.Sprint(q.HandSize), fmt.Sprint(q.QueueLengthLimit)
						}
					}
					return []any{pl.Name, string(pl.Spec.Type), ncs, queues, hand, qlen, registry.Age(pl.CreationTimestamp, now)}, nil
				},
			},
		},
	}
}

// AddToScheme registers the kinds and list kinds in s under
// flowcontrol.apiserver.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &FlowSchema{}, &FlowSchemaList{}, &PriorityLevelConfiguration{}, &PriorityLevelConfigurationList{})
}
