package review

import "github.com/converge-dev/converge/framework/api"

// ConversionAPIVersion is the ConversionReview version sent and served.
const ConversionAPIVersion = "apiextensions.k8s.io/v1"

// ConversionReview is apiextensions.k8s.io/v1 ConversionReview, the body a
// conversion webhook receives and answers.
type ConversionReview struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Request    *ConversionRequest  `json:"request,omitempty"`
	Response   *ConversionResponse `json:"response,omitempty"`
}

// ConversionRequest asks for Objects to be converted to DesiredAPIVersion.
type ConversionRequest struct {
	UID               string           `json:"uid"`
	DesiredAPIVersion string           `json:"desiredAPIVersion"`
	Objects           []map[string]any `json:"objects"`
}

// ConversionResponse holds the converted objects, in request order, and the
// outcome (Result.Status "Success" or "Failure" with a message).
type ConversionResponse struct {
	UID              string           `json:"uid"`
	ConvertedObjects []map[string]any `json:"convertedObjects"`
	Result           api.Status       `json:"result"`
}
