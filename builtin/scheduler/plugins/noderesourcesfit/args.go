package noderesourcesfit

import (
	"errors"
	"fmt"
)

// Scoring strategy types.
const (
	LeastAllocated           = "LeastAllocated"
	MostAllocated            = "MostAllocated"
	RequestedToCapacityRatio = "RequestedToCapacityRatio"
)

// MaxCustomPriorityScore is the top of a RequestedToCapacityRatio shape score.
const MaxCustomPriorityScore = 10

// ResourceSpec is a resource and its scoring weight.
type ResourceSpec struct {
	Name   string `json:"name"`
	Weight int64  `json:"weight,omitempty"`
}

// UtilizationShapePoint is one point of the RequestedToCapacityRatio shape:
// utilisation in percent (0-100) and score (0-10).
type UtilizationShapePoint struct {
	Utilization int32 `json:"utilization"`
	Score       int32 `json:"score"`
}

// RequestedToCapacityRatioParam holds the shape.
type RequestedToCapacityRatioParam struct {
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
}

// ScoringStrategy selects and parameterises the score.
type ScoringStrategy struct {
	Type                     string                         `json:"type,omitempty"`
	Resources                []ResourceSpec                 `json:"resources,omitempty"`
	RequestedToCapacityRatio *RequestedToCapacityRatioParam `json:"requestedToCapacityRatio,omitempty"`
}

// Args are the NodeResourcesFitArgs of the configuration file.
type Args struct {
	// IgnoredResources are extended resources Filter does not check.
	IgnoredResources []string `json:"ignoredResources,omitempty"`
	// IgnoredResourceGroups are prefixes ("example.com") of ignored extended resources.
	IgnoredResourceGroups []string         `json:"ignoredResourceGroups,omitempty"`
	ScoringStrategy       *ScoringStrategy `json:"scoringStrategy,omitempty"`
}

// DefaultResources are cpu and memory with weight 1.
func DefaultResources() []ResourceSpec {
	return []ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
}

func (a *Args) complete() {
	if a.ScoringStrategy == nil {
		a.ScoringStrategy = &ScoringStrategy{}
	}
	s := a.ScoringStrategy
	if s.Type == "" {
		s.Type = LeastAllocated
	}
	if len(s.Resources) == 0 {
		s.Resources = DefaultResources()
	}
	for i := range s.Resources {
		if s.Resources[i].Weight == 0 {
			s.Resources[i].Weight = 1
		}
	}
	if s.Type == RequestedToCapacityRatio && (s.RequestedToCapacityRatio == nil || len(s.RequestedToCapacityRatio.Shape) == 0) {
		s.RequestedToCapacityRatio = &RequestedToCapacityRatioParam{Shape: []UtilizationShapePoint{{0, 0}, {100, MaxCustomPriorityScore}}}
	}
}

func (a *Args) validate() error {
	var errs []error
	s := a.ScoringStrategy
	switch s.Type {
	case LeastAllocated, MostAllocated, RequestedToCapacityRatio:
	default:
		errs = append(errs, fmt.Errorf("scoringStrategy.type: Unsupported value: %q", s.Type))
	}
	for i, r := range s.Resources {
		if r.Weight < 1 || r.Weight > 100 {
			errs = append(errs, fmt.Errorf("scoringStrategy.resources[%d].weight: must be in the range [1, 100]", i))
		}
	}
	if s.Type == RequestedToCapacityRatio {
		shape := s.RequestedToCapacityRatio.Shape
		for i, p := range shape {
			if p.Utilization < 0 || p.Utilization > 100 {
				errs = append(errs, fmt.Errorf("shape[%d].utilization: must be in the range [0, 100]", i))
			}
			if p.Score < 0 || p.Score > MaxCustomPriorityScore {
				errs = append(errs, fmt.Errorf("shape[%d].score: must be in the range [0, 10]", i))
			}
			if i > 0 && p.Utilization <= shape[i-1].Utilization {
				errs = append(errs, fmt.Errorf("shape[%d].utilization: values must be sorted in increasing order", i))
			}
		}
	}
	return errors.Join(errs...)
}
