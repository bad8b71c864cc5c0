package dashboard

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/controlplane"
)

var _ = Describe("The dashboard of converge up --insecure", func() {
	It("logs in over plain HTTP on loopback and lists namespaces", func(ctx SpecContext) {
		cp, err := controlplane.Start(ctx, controlplane.Options{
			DataDir: filepath.Join(GinkgoT().TempDir(), "data"), NoFsync: true, CompactionInterval: -1, Logger: GinkgoLogr.V(1),
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cp.Close)
		Expect(cp.URL()).To(HavePrefix("http://127.0.0.1:"))
		tab, cancel := chromedp.NewContext(suite.browser, chromedp.WithNewBrowserContext())
		DeferCleanup(cancel)
		link, err := cp.DashboardLoginURL()
		Expect(err).NotTo(HaveOccurred())
		Expect(chromedp.Do(tab, chromedp.Navigate(link))).To(Succeed())
		tctx, tcancel := context.WithTimeout(tab, 15*time.Second)
		defer tcancel()
		_, err = chromedp.Run(tctx, chromedp.Poll[chromedp.Void](`document.getElementById('who')?.textContent === 'converge-admin' &&
			[...document.getElementById('ns').options].some((o) => o.value === 'kube-system')`, chromedp.WithPollingTimeout(10*time.Second)))
		if err != nil {
			txt, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText + ' | ' + document.cookie + ' | ' + location.href`))
			Fail("not logged in: " + txt)
		}
		href, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.href`))
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Contains(href, "code=")).To(BeFalse())
	})
})
