package cli

import (
	"github.com/spf13/pflag"

	"github.com/converge-dev/converge/framework/tracing"
)

// addTracingFlags adds the OpenTelemetry flags of a component to fs.
func addTracingFlags(fs *pflag.FlagSet, c *tracing.Config) {
	fs.StringVar(&c.Endpoint, "tracing-endpoint", "", "OTLP/gRPC collector (host:port) to send spans of API requests and reconciles to (\"\" disables tracing)")
	fs.Int32Var(&c.SamplingRatePerMillion, "tracing-sampling-rate-per-million", 0,
		"how many of a million new traces are recorded (requests whose caller sampled their trace always are)")
}
