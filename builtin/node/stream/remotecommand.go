package stream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// RunFunc runs one exec or attach session over s until the command ends and
// returns its exit code, or an error when it could not run.
type RunFunc func(ctx context.Context, s cri.Streams) (int, error)

// Kubernetes' reasons for a command's exit code on the error stream.
const (
	ReasonNonZeroExitCode = "NonZeroExitCode"
	CauseExitCode         = "ExitCode"
)

// session is a negotiated remote command connection, whatever the transport.
type session struct {
	protocol string
	streams  cri.Streams
	// result writes the outcome on the error stream.
	result func(api.Status) error
	// close closes the output streams and tears the connection down.
	close func()
}

// ServeRemoteCommand upgrades r to a remote command connection (SPDY or
// WebSocket, see the package documentation), runs run with the streams o asks
// for and reports its result on the error stream. Negotiation failures are
// answered with a Status.
func ServeRemoteCommand(w http.ResponseWriter, r *http.Request, o Options, cfg Config, run RunFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var s *session
	var err error
	switch upgradeOf(r) {
	case transportSPDY:
		s, err = spdySession(ctx, cancel, w, r, o, cfg)
	case transportWebSocket:
		s, err = wsSession(ctx, cancel, w, r, o)
	default:
		WriteError(w, apierrors.NewBadRequest("Upgrade request required"))
		return
	}
	if err != nil {
		return // answered with a Status, or the connection was torn down
	}
	code, err := run(ctx, s.streams)
	_ = s.result(statusOf(code, err)) // fails when the client is gone
	s.close()
}

// statusOf is the error stream's Status for a command's result.
func statusOf(code int, err error) api.Status {
	tm := api.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if err != nil {
		var se *apierrors.StatusError
		if !errors.As(err, &se) {
			se = apierrors.NewInternalError(err)
		}
		st := se.Status()
		st.TypeMeta, st.Status = tm, api.StatusFailure
		return st
	}
	if code == 0 {
		return api.Status{TypeMeta: tm, Status: api.StatusSuccess}
	}
	return api.Status{
		TypeMeta: tm, Status: api.StatusFailure, Reason: ReasonNonZeroExitCode,
		Message: "command terminated with non-zero exit code: exit status " + strconv.Itoa(code),
		Details: &api.StatusDetails{Causes: []api.StatusCause{{Type: CauseExitCode, Message: strconv.Itoa(code)}}},
	}
}

// encodeResult renders st for the error stream of protocol: the Status as
// JSON from v4 on, the message alone before (nothing on success).
func encodeResult(protocol string, st api.Status) []byte {
	switch protocol {
	case ProtocolV5, ProtocolV4:
		b, _ := json.Marshal(st)
		return b
	}
	if st.Status == api.StatusSuccess {
		return nil
	}
	return []byte(st.Message)
}

// decodeResizes sends every JSON size read from r to out until r ends, then
// closes out.
func decodeResizes(r io.Reader, out chan cri.TermSize) {
	defer close(out)
	dec := json.NewDecoder(r)
	for {
		var size cri.TermSize
		if err := dec.Decode(&size); err != nil {
			return
		}
		select {
		case out <- size:
		default: // the runtime reads slowly: keep the newest size
			select {
			case <-out:
			default:
			}
			select {
			case out <- size:
			default:
			}
		}
	}
}
