package podlog_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// dialLog opens the log of ns/name as a WebSocket offering protocols, with
// the Origin a non-browser client (the e2e suite's x/net/websocket) sends.
func dialLog(ctx context.Context, ns, name, q string, protocols ...string) (*websocket.Conn, *http.Response, error) {
	u := strings.Replace(env.URL, "http", "ws", 1) + fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/log?%s", ns, name, q)
	return websocket.Dial(ctx, u, &websocket.DialOptions{
		Subprotocols: protocols,
		HTTPHeader:   http.Header{"Origin": {"http://localhost"}},
	})
}

// readAll reads messages until the server closes; it returns them and the
// close status.
func readAll(ctx context.Context, c *websocket.Conn) ([]string, websocket.StatusCode) {
	var msgs []string
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			return msgs, websocket.CloseStatus(err)
		}
		msgs = append(msgs, fmt.Sprintf("%s:%s", typ, b))
	}
}

var _ = Describe("pods/log over WebSocket", func() {
	It("streams binary.k8s.io messages and closes normally at the end of the log", func(ctx SpecContext) {
		ns := namespace(ctx)
		pod(ctx, ns, "p", "node-1", "app")
		c, resp, err := dialLog(ctx, ns, "p", "", "binary.k8s.io")
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Header.Get("Sec-WebSocket-Protocol")).To(Equal("binary.k8s.io"))
		msgs, code := readAll(ctx, c)
		Expect(code).To(Equal(websocket.StatusNormalClosure))
		Expect(strings.Join(msgs, "")).To(Equal("MessageBinary:" + ns + "/p line 1\n" + ns + "/p line 2\n"))
	})

	It("streams base64.binary.k8s.io as base64 text messages", func(ctx SpecContext) {
		ns := namespace(ctx)
		pod(ctx, ns, "p", "node-1", "app")
		c, _, err := dialLog(ctx, ns, "p", "", "base64.binary.k8s.io")
		Expect(err).NotTo(HaveOccurred())
		msgs, code := readAll(ctx, c)
		Expect(code).To(Equal(websocket.StatusNormalClosure))
		Expect(msgs).To(HaveLen(1))
		text, ok := strings.CutPrefix(msgs[0], "MessageText:")
		Expect(ok).To(BeTrue(), msgs[0])
		b, err := base64.StdEncoding.DecodeString(text)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(Equal(ns + "/p line 1\n" + ns + "/p line 2\n"))
	})

	It("follows, and stops reading the agent when the client goes away", func(ctx SpecContext) {
		ns := namespace(ctx)
		pod(ctx, ns, "p", "node-1", "app")
		c, _, err := dialLog(ctx, ns, "p", "follow=true")
		Expect(err).NotTo(HaveOccurred())
		typ, b, err := c.Read(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(typ).To(Equal(websocket.MessageBinary))
		Expect(string(b)).To(Equal("first\n"))
		c.CloseNow()
		Eventually(agent.gone).Should(Receive())
	})

	It("answers errors before the upgrade as a Status", func(ctx SpecContext) {
		ns := namespace(ctx)
		_, resp, err := dialLog(ctx, ns, "nope", "", "binary.k8s.io")
		Expect(err).To(HaveOccurred())
		Expect(errors.Is(err, context.Canceled)).To(BeFalse())
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound))
	})
})
