package manager_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/leaderelection"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
)

// leaseFreezer is a reverse proxy to the API server that, once frozen, holds
// every request for a Lease without answering until the client gives up: the
// leader's renew loop hangs as if its process had stopped, while its watches
// and other requests still work, so a leader that went on acting after losing
// the Lease would be seen reconciling.
type leaseFreezer struct {
	server    *httptest.Server
	transport *http.Transport
	frozen    atomic.Bool
	release   chan struct{} // closed by close: unblocks held requests
}

func newLeaseFreezer(target string) *leaseFreezer {
	u, err := url.Parse(target)
	Expect(err).NotTo(HaveOccurred())
	f := &leaseFreezer{transport: &http.Transport{}, release: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = f.transport
	proxy.FlushInterval = -1 // stream watches
	f.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.frozen.Load() && strings.Contains(r.URL.Path, "/leases") {
			select {
			case <-r.Context().Done():
			case <-f.release:
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	return f
}

func (f *leaseFreezer) close() {
	close(f.release)
	f.server.CloseClientConnections()
	f.server.Close()
	f.transport.CloseIdleConnections()
}

// reconcileLog records when each reconcile of one manager started.
type reconcileLog struct {
	mu     sync.Mutex
	starts []time.Time
}

func (l *reconcileLog) add() {
	l.mu.Lock()
	l.starts = append(l.starts, time.Now())
	l.mu.Unlock()
}

func (l *reconcileLog) snapshot() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.starts...)
}

// stopWatch is a leader-elected Runnable that records when its context ended:
// the moment its manager stopped acting as the leader.
type stopWatch struct{ stopped chan time.Time }

func (s stopWatch) Start(ctx context.Context) error {
	<-ctx.Done()
	s.stopped <- time.Now()
	return nil
}

var _ = Describe("leader election when the leader stops renewing without releasing", func() {
	It("lets the standby take over after the lease expires, and the old leader stops acting before that", func(ctx SpecContext) {
		const (
			leaseName     = "takeover-test"
			leaseDuration = 4 * time.Second
			renewDeadline = 2500 * time.Millisecond
			retryPeriod   = 2 * time.Second
		)
		// RetryPeriod+RenewDeadline > LeaseDuration: a leader that counted its
		// deadline from its first failed retry instead of its last renewal would
		// still act when the standby takes over.
		freezer := newLeaseFreezer(cfg.Host)
		DeferCleanup(freezer.close)
		direct := newManager(manager.Options{}).Client() // the test's own writes, never frozen
		ns := namespace(ctx, direct)

		type candidate struct {
			mgr     *manager.Manager
			log     reconcileLog
			stopped chan time.Time
			done    chan error
		}
		var cs [2]*candidate
		for i := range cs {
			c := &candidate{stopped: make(chan time.Time, 1), done: make(chan error, 1)}
			ccfg := *cfg
			if i == 0 {
				ccfg.Host = freezer.server.URL // only the first leader's Lease traffic can be frozen
			}
			s := newManagerWithConfig(&ccfg, manager.Options{
				LeaderElection: true, LeaderElectionID: leaseName,
				LeaderElectionIdentity: []string{"old", "new"}[i],
				LeaseDuration:          leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			})
			inNS := predicate.Func(func(ev handler.Event) bool { return ev.Object.GetNamespace() == ns })
			Expect(builder.ControllerManagedBy(s).Named("takeover").
				For(builder.Kind[*corev1.ConfigMap](), inNS).
				Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
					c.log.add()
					return reconcile.Result{}, nil
				}))).To(Succeed())
			Expect(s.Add(stopWatch{stopped: c.stopped})).To(Succeed())
			c.mgr = s
			cs[i] = c
		}
		old, standby := cs[0], cs[1]
		runCtx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		go func() { old.done <- old.mgr.Start(runCtx) }()
		Eventually(old.mgr.IsLeader, 10*time.Second).Should(BeTrue())
		go func() { standby.done <- standby.mgr.Start(runCtx) }()

		// A steady stream of changes that any leader would reconcile.
		writes, stopWrites := context.WithCancel(ctx)
		writerDone := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(writerDone)
			for i := 0; writes.Err() == nil; i++ {
				cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "cm-" + string(rune('a'+i%20))},
					Data: map[string]string{"i": time.Now().String()}}
				if err := direct.Create(writes, cm); err != nil {
					_ = direct.Update(writes, cm) // exists: change it instead
				}
				select {
				case <-writes.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
		DeferCleanup(func() { stopWrites(); <-writerDone })
		Eventually(func() int { return len(old.log.snapshot()) }, 10*time.Second).Should(BeNumerically(">=", 3))
		Consistently(func() int { return len(standby.log.snapshot()) }, time.Second).Should(BeZero())

		By("freezing the leader's Lease requests: it can no longer renew, and does not release")
		frozen := time.Now()
		freezer.frozen.Store(true)

		var lostErr error
		Eventually(old.done, renewDeadline+retryPeriod+5*time.Second).Should(Receive(&lostErr))
		Expect(lostErr).To(MatchError(leaderelection.ErrLost))
		var oldStopped time.Time
		Expect(old.stopped).To(Receive(&oldStopped))
		GinkgoWriter.Printf("old leader stopped acting %v after the freeze\n", oldStopped.Sub(frozen))

		Eventually(func() int { return len(standby.log.snapshot()) }, leaseDuration+10*time.Second, 50*time.Millisecond).
			Should(BeNumerically(">=", 1))
		lease := &coordinationv1.Lease{}
		Expect(direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: leaseName}, lease)).To(Succeed())
		Expect(*lease.Spec.HolderIdentity).To(Equal("new"))
		Expect(*lease.Spec.LeaseTransitions).To(BeNumerically(">=", 1))
		acquired := lease.Spec.AcquireTime.Time
		takeover := acquired.Sub(frozen)
		GinkgoWriter.Printf("standby acquired the lease %v after the freeze\n", takeover)

		// Bounded takeover: the old leader's last renewal started at most a
		// RetryPeriod (plus a request) before the freeze, and the standby tries
		// every RetryPeriod once the record has been unchanged for LeaseDuration.
		Expect(takeover).To(BeNumerically(">=", leaseDuration-retryPeriod-time.Second))
		Expect(takeover).To(BeNumerically("<=", leaseDuration+2*retryPeriod+3*time.Second))

		// Fencing: the old leader stopped acting before the standby took over,
		// and every reconcile it started, started before that.
		Expect(oldStopped).To(BeTemporally("<", acquired))
		oldStarts := old.log.snapshot()
		Expect(oldStarts[len(oldStarts)-1]).To(BeTemporally("<", acquired))
		Consistently(func() int { return len(old.log.snapshot()) }, time.Second).Should(Equal(len(oldStarts)))
		Expect(len(standby.log.snapshot())).To(BeNumerically(">=", 1))

		stopWrites()
		<-writerDone
		cancel()
		var standbyErr error
		Eventually(standby.done, 20*time.Second).Should(Receive(&standbyErr))
		Expect(errors.Is(standbyErr, leaderelection.ErrLost)).To(BeFalse())
		Expect(standbyErr).NotTo(HaveOccurred())
		for _, c := range cs {
			c.mgr.Client().REST().CloseIdleConnections()
		}
		direct.REST().CloseIdleConnections()
	})
})
