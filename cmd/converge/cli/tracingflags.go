package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/converge-dev/converge/framework/tracing"
)

// addTracingFlags adds the OpenTelemetry flags of a component to fs.
func addTracingFlags(fs *pflag.FlagSet, c *tracing.Config) {
	fs.StringVar(&c.Endpoint, "tracing-endpoint", "", "OTLP/gRPC collector (host:port) to send spans of API requests and reconciles to (\"\" disables tracing)")
	fs.Int32Var(&c.SamplingRatePerMillion, "tracing-sampling-rate-per-million", 0,
		"how many of a million new traces are recorded (requests whose caller sampled their trace always are)")
	c.SDK = tracing.SDKConverge
	fs.Var((*sdkFlag)(&c.SDK), "tracing-sdk", "implementation of the trace API: "+tracing.SDKConverge+
		" (Converge's own spans and OTLP encoding) or "+tracing.SDKOTel+" (the OpenTelemetry SDK and its OTLP exporter)")
}

// sdkFlag is --tracing-sdk: one of tracing.SDKs.
type sdkFlag string

func (f *sdkFlag) String() string { return string(*f) }
func (f *sdkFlag) Type() string   { return "string" }

func (f *sdkFlag) Set(v string) error {
	if !slices.Contains(tracing.SDKs(), v) {
		return fmt.Errorf("must be one of %s", strings.Join(tracing.SDKs(), ", "))
	}
	*f = sdkFlag(v)
	return nil
}
