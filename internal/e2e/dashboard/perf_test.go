package dashboard

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
)

const perfPods = 1000

var _ = Describe("The pods page with 1,000 pods on simulated nodes", Ordered, func() {
	var (
		cp  *controlplane.ControlPlane
		c   *client.Client
		tab context.Context
	)
	BeforeAll(func(ctx SpecContext) {
		var err error
		cp, err = controlplane.Start(ctx, controlplane.Options{
			DataDir: filepath.Join(GinkgoT().TempDir(), "data"), NoFsync: true, CompactionInterval: -1, Logger: GinkgoLogr.V(1),
			Secure: true, SimulatedNodes: 10,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cp.Close)
		cfg, err := cp.ClientConfig("dashboard-perf")
		Expect(err).NotTo(HaveOccurred())
		sch, err := all.NewScheme()
		Expect(err).NotTo(HaveOccurred())
		c, err = client.New(cfg, client.Options{Scheme: sch})
		Expect(err).NotTo(HaveOccurred())

		// No controllers run here: the default ServiceAccount is made by hand.
		sa := &corev1.ServiceAccount{}
		sa.Name, sa.Namespace = "default", "default"
		Expect(c.Create(ctx, sa)).To(Succeed())
		// Pods bound to the simulated nodes (no scheduler), created by 8 writers.
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, perfPods)
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < perfPods; i += 8 {
					p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: fmt.Sprintf("sim-node-%d", i%10),
						Containers: []corev1.Container{{Name: "app", Image: "example/app:1"}}}}
					p.Name, p.Namespace = fmt.Sprintf("load-%04d", i), "default"
					if err := c.Create(ctx, p); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		Expect(<-errs).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(c.List(ctx, pods, client.InNamespace("default"))).To(Succeed())
			running := 0
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			g.Expect(running).To(Equal(perfPods))
		}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("%d pods created and Running in %s\n", perfPods, time.Since(t0))

		var cancel context.CancelFunc
		tab, cancel = chromedp.NewContext(suite.browser, chromedp.WithNewBrowserContext())
		DeferCleanup(cancel)
		link, err := cp.DashboardLoginURL()
		Expect(err).NotTo(HaveOccurred())
		Expect(chromedp.Do(tab, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(link))).To(Succeed())
		_, err = chromedp.Run(tab, chromedp.Poll[chromedp.Void](`document.getElementById('who').textContent === 'converge-admin'`, chromedp.WithPollingTimeout(10*time.Second)))
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(2*time.Minute))

	It("renders in at most a second and shows a status change within a second of the write", func(ctx SpecContext) {
		// The best of three loads: the machine is shared, a single load measures
		// its neighbours as much as the page.
		var times []float64
		for range 3 {
			Expect(chromedp.Do(tab, chromedp.Navigate("about:blank"), chromedp.Navigate(cp.DashboardURL()+"#/pods"))).To(Succeed())
			// performance.now() counts from the start of the navigation.
			rendered, err := pollAfterNavigation(tab, chromedp.Poll[float64](
				`document.querySelectorAll('table[aria-label="Pods"] tbody tr[data-pod]').length === `+itoa(perfPods)+` &&
				 [...document.querySelectorAll('table[aria-label="Pods"] tbody tr[data-pod]')].every((r) => r.cells[2].textContent === 'Running') && performance.now()`,
				chromedp.WithPollingTimeout(10*time.Second)))
			Expect(err).NotTo(HaveOccurred())
			times = append(times, rendered)
			if rendered <= 1000 {
				break
			}
		}
		GinkgoWriter.Printf("pods page with %d Running pods rendered %.0f ms after navigation (best of up to three loads)\n", perfPods, times)
		Expect(slices.Min(times)).To(BeNumerically("<=", 1000), "the pods page renders within a second")

		// The page notes when the row shows the new status; the test writes it.
		_, err := chromedp.Run(tab, chromedp.Evaluate[chromedp.Void](`window.__seen = 0;
			new MutationObserver(() => {
			  const r = document.querySelector('tr[data-pod="load-0500"]');
			  if (!window.__seen && r && r.cells[2].textContent.startsWith('Evicted')) window.__seen = Date.now();
			}).observe(document.getElementById('live'), {childList: true, subtree: true, characterData: true});`))
		Expect(err).NotTo(HaveOccurred())
		p := &corev1.Pod{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "load-0500"}, p)).To(Succeed())
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "written by the dashboard's performance test"
		written := time.Now()
		Expect(c.Status().Update(ctx, p)).To(Succeed())
		seen, err := chromedp.Run(tab, chromedp.Poll[float64](`window.__seen`, chromedp.WithPollingTimeout(5*time.Second)))
		Expect(err).NotTo(HaveOccurred())
		lag := time.UnixMilli(int64(seen)).Sub(written)
		GinkgoWriter.Printf("status change shown %s after the write\n", lag)
		Expect(lag).To(BeNumerically("<=", time.Second), "a status change shows within a second")
	})
})

// pollAfterNavigation runs poll, again when the page's JavaScript context
// went away under it (the navigation it follows was still settling: chromium
// answers "Cannot find context with specified id"); performance.now() still
// counts from the navigation's start.
func pollAfterNavigation[T any](tab context.Context, poll chromedp.Action[T]) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := chromedp.Run(tab, poll)
		if err == nil || attempt == 2 || !strings.Contains(err.Error(), "Cannot find context with specified id") {
			return v, err
		}
	}
}
