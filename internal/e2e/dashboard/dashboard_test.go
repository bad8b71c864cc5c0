package dashboard

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/cmd/converge/cli"
	"github.com/converge-dev/converge/framework/client"
)

// readyHello counts the hello pods the pods table shows Running and 1/1 Ready.
const readyHello = `[...document.querySelectorAll('table[aria-label="Pods"] tbody tr[data-pod^="hello-"]')]
  .filter((r) => r.cells[2].textContent === 'Running' && r.cells[3].textContent === '1/1').length`

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`

func hash(ctx context.Context, h string) {
	GinkgoHelper()
	do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = '`+h+`'`))
}

var _ = Describe("The dashboard", Ordered, func() {
	It("logs in with the link converge up prints, and the code works once", func(ctx SpecContext) {
		link, err := suite.cp.DashboardLoginURL()
		Expect(err).NotTo(HaveOccurred())
		do(ctx, chromedp.Navigate(link))
		waitFor(ctx, "the user's name in the header", `document.getElementById('who').textContent === 'converge-admin'`, 10*time.Second)
		url := eval[string](`location.href`)
		Expect(url).NotTo(ContainSubstring("code="), "the login code leaves the address bar")
		Expect(eval[string](`document.cookie`)).To(BeEmpty(), "the session cookie is HttpOnly")
		waitFor(ctx, "the local node Ready", `[...document.querySelectorAll('table[aria-label="Nodes"] tbody tr')].some((r) => r.cells[1]?.textContent.startsWith('Ready'))`, 20*time.Second)
	})

	It("shows the hello Deployment's pods appear and become Ready live after kubectl apply", func(ctx SpecContext) {
		hash(ctx, "#/workloads")
		waitFor(ctx, "the Deployments table", `document.querySelector('table[aria-label="Deployments"]') !== null`, 10*time.Second)
		root, err := filepath.Abs("../../..")
		Expect(err).NotTo(HaveOccurred())
		kubectl(ctx, "apply", "-f", filepath.Join(root, "examples/hello/deployment.yaml"), "-f", filepath.Join(root, "examples/hello/service.yaml"))
		waitFor(ctx, "hello pods listed", `document.querySelectorAll('tr[data-pod^="hello-"]').length >= 2`, 15*time.Second)
		waitFor(ctx, "two hello pods Ready", readyHello+` === 2`, 40*time.Second)
		waitFor(ctx, "the Deployment 2/2", `document.querySelector('tr[data-name="hello"]')?.cells[2].textContent === '2/2'`, 10*time.Second)
		screenshot("workloads")
		// One watch per kind: the page never polls and never opens a kind twice.
		paths := eval[[]string](`window.convergeDashboard.openWatches()`)
		seen := map[string]bool{}
		for _, p := range paths {
			Expect(seen[p]).To(BeFalse(), "two watches of %s", p)
			seen[p] = true
		}
	})

	It("scales the Deployment from the UI and shows the third pod start", func(ctx SpecContext) {
		// With the keyboard alone: Enter on the button, then type the count and Enter.
		do(ctx,
			chromedp.Focus(chromedp.CSS("#act-scale-deployments-default-hello")),
			chromedp.KeyEvent("\r"),
		)
		waitFor(ctx, "the replicas field focused", `document.activeElement?.id === 'replicas' && document.activeElement.labels[0]?.textContent.includes('Replicas of Deployment default/hello')`, 5*time.Second)
		do(ctx, chromedp.KeyEvent("3\r"))
		waitFor(ctx, "three hello pods Ready", readyHello+` === 3`, 40*time.Second)
		waitFor(ctx, "the Deployment 3/3", `document.querySelector('tr[data-name="hello"]')?.cells[2].textContent === '3/3'`, 10*time.Second)

		By("the Service lists the three ready endpoints")
		hash(ctx, "#/services")
		waitFor(ctx, "three ready endpoints", `(() => {
			const r = [...document.querySelectorAll('table[aria-label="Services"] tbody tr')].find((r) => r.cells[0].textContent === 'hello');
			return r && r.cells[5].querySelectorAll('span.ok').length === 3 && /^127\.8\.0\.\d+:8080$/.test(r.cells[5].querySelector('span.ok').textContent);
		})()`, 10*time.Second)
		screenshot("services")

		By("a namespace scope keeps one watch per kind")
		hash(ctx, "#/pods")
		waitFor(ctx, "hello pods", `document.querySelectorAll('tr[data-pod^="hello-"]').length === 3`, 5*time.Second)
		do(ctx, chromedp.SetValue(chromedp.CSS("#ns"), "kube-system"), chromedp.Evaluate[chromedp.Void](`document.getElementById('ns').dispatchEvent(new Event('change'))`))
		waitFor(ctx, "no hello pods in kube-system", `document.querySelector('table[aria-label="Pods"]') !== null && document.querySelectorAll('tr[data-pod^="hello-"]').length === 0`, 5*time.Second)
		Expect(eval[[]string](`window.convergeDashboard.openWatches().filter((p) => p.endsWith('/pods'))`)).To(Equal([]string{"/api/v1/namespaces/kube-system/pods"}))
		do(ctx, chromedp.SetValue(chromedp.CSS("#ns"), ""), chromedp.Evaluate[chromedp.Void](`document.getElementById('ns').dispatchEvent(new Event('change'))`))
		waitFor(ctx, "hello pods again", `document.querySelectorAll('tr[data-pod^="hello-"]').length === 3`, 5*time.Second)
		// The namespaces watch redraws the menu with the scope selected.
		kubectl(ctx, "create", "namespace", "extra")
		waitFor(ctx, "the new namespace offered, All namespaces still chosen", `(() => { const s = document.getElementById('ns'); return [...s.options].some((o) => o.value === 'extra') && s.selectedIndex === 0; })()`, 5*time.Second)
	})

	It("follows a pod's logs", func(ctx SpecContext) {
		do(ctx, chromedp.Click(chromedp.CSS(`a[href^="#/pod/default/hello-"]`)))
		waitFor(ctx, "the probe's requests in the log", `document.getElementById('log')?.textContent.includes('"GET / HTTP/1.1" 200')`, 15*time.Second)
		n := eval[int](`document.getElementById('log').textContent.split('\n').length`)
		// The readiness probe asks every 2 s: new lines arrive on the open stream.
		waitFor(ctx, "more log lines", `document.getElementById('log').textContent.split('\n').length > `+itoa(n), 10*time.Second)
		screenshot("pod-logs")
		// Previous: the container never restarted, and the agent's answer
		// (through the API server) is shown as it words it.
		do(ctx, chromedp.Click(chromedp.CSS("#log-previous")))
		Expect(eval[bool](`(document.querySelector('#logform').requestSubmit(), true)`)).To(BeTrue())
		waitFor(ctx, "the previous container's answer", `document.getElementById('log-error')?.textContent.includes('previous terminated container')`, 10*time.Second)
	})

	It("shows the API server's 422 inline when an edited ConfigMap is invalid, and saves a valid one", func(ctx SpecContext) {
		kubectl(ctx, "create", "configmap", "settings", "--from-literal=mode=fast")
		hash(ctx, "#/edit/api/v1/namespaces/default/configmaps/settings")
		waitFor(ctx, "the YAML", `document.getElementById('yaml')?.value.includes('mode: fast')`, 10*time.Second)
		do(ctx,
			chromedp.Evaluate[chromedp.Void](`{ const t = document.getElementById('yaml'); t.value = t.value.replace('mode: fast', '"bad key!": fast'); }`),
			chromedp.Click(chromedp.CSS("#validate")),
		)
		waitFor(ctx, "the 422 inline", `document.getElementById('verdict').textContent.includes('422 Invalid')`, 10*time.Second)
		Expect(eval[string](`document.getElementById('verdict').textContent`)).To(ContainSubstring(
			`ConfigMap "settings" is invalid: data[bad key!]: Invalid value: "bad key!": a valid config key must consist of alphanumeric characters`))
		screenshot("edit-invalid")
		cm := &corev1.ConfigMap{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, cm)).To(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"mode": "fast"}), "the dry run stored nothing")

		do(ctx,
			chromedp.Evaluate[chromedp.Void](`{ const t = document.getElementById('yaml'); t.value = t.value.replace('"bad key!": fast', 'mode: slow'); }`),
			chromedp.Click(chromedp.CSS("#save")),
		)
		waitFor(ctx, "saved", `document.getElementById('saved') !== null`, 10*time.Second)
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, cm)).To(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"mode": "slow"}))
	})

	It("shows a custom resource's printer columns", func(ctx SpecContext) {
		kubectl(ctx, "apply", "-f", writeTemp("crd.yaml", widgetCRD))
		kubectl(ctx, "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s")
		kubectl(ctx, "apply", "-f", writeTemp("w1.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: 3, color: blue}\n"))
		hash(ctx, "#/crds")
		waitFor(ctx, "the CRD listed", `[...document.querySelectorAll('a[href="#/cr/widgets.example.com"]')].length === 1`, 10*time.Second)
		do(ctx, chromedp.Click(chromedp.CSS(`a[href="#/cr/widgets.example.com"]`)))
		waitFor(ctx, "the printer columns", `[...document.querySelectorAll('table[aria-label="Widget"] thead th')].map((t) => t.textContent).join() === 'Namespace,Name,Size,Color,Age,Actions'`, 10*time.Second)
		waitFor(ctx, "w1's row", `[...document.querySelectorAll('table[aria-label="Widget"] tbody tr')].some((r) => [...r.cells].slice(0, 4).map((c) => c.textContent).join() === 'default,w1,3,blue')`, 10*time.Second)
		// Live: a change shows without reloading.
		kubectl(ctx, "patch", "widget", "w1", "--type=merge", "-p", `{"spec":{"color":"green"}}`)
		waitFor(ctx, "w1 turns green", `[...document.querySelectorAll('table[aria-label="Widget"] tbody tr')].some((r) => r.cells[3]?.textContent === 'green')`, 10*time.Second)
		screenshot("custom-resources")
		hash(ctx, "#/overview")
		waitFor(ctx, "three running pods", `Number(document.querySelector('.phase-running .n')?.textContent) >= 3`, 10*time.Second)
		screenshot("overview")
		hash(ctx, "#/controllers")
		waitFor(ctx, "the deployment controller's reconciles", `Number(document.querySelector('#ctl tr[data-name="deployment"]')?.cells[1].textContent) > 0`, 10*time.Second)
		Expect(eval[string](`document.getElementById('ops').textContent`)).To(ContainSubstring("No operators loaded"))
		screenshot("controllers")
		do(ctx, chromedp.EmulateViewport(390, 844))
		hash(ctx, "#/workloads")
		waitFor(ctx, "the Deployment at phone width", `document.querySelector('tr[data-name="hello"]') !== null`, 10*time.Second)
		screenshot("workloads-phone")
		Expect(eval[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`)).To(BeTrue(), "the page fits the phone's width (tables scroll in their own box)")
		do(ctx, chromedp.EmulateViewport(1280, 800))
	})

	It("says why a pending pod is not scheduled, and filters events", func(ctx SpecContext) {
		kubectl(ctx, "run", "picky", "--image=registry.example/picky:1", "--overrides", `{"spec":{"nodeSelector":{"disk":"ssd"}}}`, "--command", "--", "sleep", "1000")
		hash(ctx, "#/pods")
		waitFor(ctx, "the scheduler's reason in the pods table", `document.querySelector('tr[data-pod="picky"] .why')?.textContent.includes('0/1 nodes are available')`, 15*time.Second)
		do(ctx, chromedp.Click(chromedp.CSS(`a[href="#/pod/default/picky"]`)))
		waitFor(ctx, "the scheduler's reason on the pod's page", `document.getElementById('sched-reason')?.textContent.includes("didn't match Pod's node affinity/selector")`, 10*time.Second)
		screenshot("pending-pod")
		hash(ctx, "#/events")
		waitFor(ctx, "events listed", `document.querySelectorAll('table[aria-label="Events"] tbody tr').length > 3`, 10*time.Second)
		do(ctx,
			chromedp.SetValue(chromedp.CSS("#ev-type"), "Warning"),
			chromedp.SendKeys(chromedp.CSS("#ev-filter"), "picky"),
		)
		waitFor(ctx, "only picky's warnings", `(() => {
			const rows = [...document.querySelectorAll('table[aria-label="Events"] tbody tr')];
			return rows.length >= 1 && rows.every((r) => r.cells[1].textContent === 'Warning' && r.cells[3].textContent === 'Pod/default/picky' && r.cells[2].textContent === 'FailedScheduling');
		})()`, 10*time.Second)
		screenshot("events")
	})

	It("restarts a rollout, deletes after confirmation and cordons a node", func(ctx SpecContext) {
		// A Deployment of its own: hello's pods stay as they are for the next spec.
		kubectl(ctx, "create", "deployment", "sleeper", "--image=registry.example/sleeper:1", "--", "sleep", "3600")
		hash(ctx, "#/workloads")
		do(ctx, chromedp.Click(chromedp.CSS("#act-restart-deployments-default-sleeper")))
		waitFor(ctx, "the restart told", `document.getElementById('toast').textContent === 'Restarted: Deployment default/sleeper'`, 5*time.Second)
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sleeper"}, d)).To(Succeed())
			g.Expect(d.Spec.Template.Annotations).To(HaveKey("kubectl.kubernetes.io/restartedAt"))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

		hash(ctx, "#/pod/default/picky")
		do(ctx, chromedp.Click(chromedp.CSS("#act-delete-pods-default-picky")))
		waitFor(ctx, "the confirmation", `document.activeElement?.id === 'confirm-delete'`, 5*time.Second)
		do(ctx, chromedp.Click(chromedp.CSS("#confirm-delete")))
		waitFor(ctx, "the pod gone", `document.querySelector('main').textContent.includes('This pod does not exist')`, 15*time.Second)

		hash(ctx, "#/overview")
		waitFor(ctx, "a cordon button", `document.querySelector('button[data-act="cordon"]') !== null`, 10*time.Second)
		node := eval[string](`document.querySelector('button[data-act="cordon"]').dataset.name`)
		do(ctx, chromedp.Click(chromedp.CSS(`button[data-act="cordon"]`)))
		waitFor(ctx, "SchedulingDisabled", `[...document.querySelectorAll('table[aria-label="Nodes"] tbody tr')].some((r) => r.cells[1]?.textContent === 'Ready, SchedulingDisabled')`, 10*time.Second)
		n := &corev1.Node{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
		Expect(n.Spec.Unschedulable).To(BeTrue())
		do(ctx, chromedp.Click(chromedp.CSS(`button[data-act="uncordon"]`)))
		waitFor(ctx, "schedulable again", `document.querySelector('button[data-act="cordon"]') !== null`, 10*time.Second)
		Expect(suite.c.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
		Expect(n.Spec.Unschedulable).To(BeFalse())
	})

	It("lets a user bound to view look but not scale, and says that Secrets may not be listed", func(ctx SpecContext) {
		kubectl(ctx, "create", "clusterrolebinding", "viewer-view", "--clusterrole=view", "--user=viewer")
		cfg, err := suite.cp.ClientConfig("ca-only")
		Expect(err).NotTo(HaveOccurred())
		kc := filepath.Join(GinkgoT().TempDir(), "viewer.kubeconfig")
		Expect(pki.WriteKubeconfig(kc, suite.cp.URL(), "viewer", cfg.TLS.CAData, nil, nil, viewerToken)).To(Succeed())
		var out, errOut bytes.Buffer
		Expect(cli.Execute(ctx, []string{"dashboard", "--url", "--kubeconfig", kc}, &out, &errOut)).To(Equal(0), errOut.String())
		link := strings.TrimSpace(out.String())
		Expect(link).To(HavePrefix(suite.cp.URL() + "/ui/login?code="))

		Expect(eval[int](`fetch('/ui/logout', {method: 'POST'}).then((r) => r.status)`, chromedp.EvalAwaitPromise)).To(Equal(403), "a write without the CSRF token")
		Expect(eval[int](`fetch('/ui/api/api/v1/namespaces/default/configmaps/settings', {method: 'DELETE'}).then((r) => r.status)`, chromedp.EvalAwaitPromise)).To(Equal(403), "a write without the CSRF token")
		Expect(eval[int](`fetch('/ui/session').then((r) => r.status)`, chromedp.EvalAwaitPromise)).To(Equal(200))
		do(ctx, chromedp.Click(chromedp.CSS("#logout")))
		Eventually(func() (int, error) { // the page reloads meanwhile
			return chromedp.Run(suite.browser, chromedp.Evaluate[int](`fetch('/ui/session').then((r) => r.status)`, chromedp.EvalAwaitPromise))
		}).WithTimeout(5 * time.Second).Should(Equal(401))
		do(ctx, chromedp.Navigate(suite.cp.DashboardURL()))
		waitFor(ctx, "logged out", `document.querySelector('.login') !== null`, 10*time.Second)
		do(ctx, chromedp.Navigate(link))
		waitFor(ctx, "logged in as viewer", `document.getElementById('who').textContent === 'viewer'`, 10*time.Second)
		hash(ctx, "#/workloads")
		waitFor(ctx, "the scale button refused", `document.getElementById('act-scale-deployments-default-hello')?.disabled === true &&
			document.getElementById('act-scale-deployments-default-hello-why')?.textContent === 'You may not patch deployments/scale in namespace default'`, 10*time.Second)
		Expect(eval[string](`document.getElementById('act-scale-deployments-default-hello').getAttribute('aria-describedby')`)).To(Equal("act-scale-deployments-default-hello-why"))
		Expect(eval[int](readyHello)).To(Equal(3), "the viewer sees the pods")
		screenshot("viewer-workloads")
		hash(ctx, "#/config")
		waitFor(ctx, "Secrets refused in words", `document.querySelector('.forbidden')?.textContent.includes('You may not list secrets')`, 10*time.Second)
		Expect(eval[string](`document.querySelector('.forbidden').textContent`)).To(ContainSubstring(`User "viewer" cannot list resource "secrets"`))
		waitFor(ctx, "the ConfigMaps listed", `document.querySelector('tr[data-name="settings"]') !== null`, 10*time.Second)
		screenshot("viewer-config")
		hash(ctx, "#/controllers")
		waitFor(ctx, "the metrics refused in words", `document.querySelector('#ctl .forbidden')?.textContent.includes('You may not see the controllers\' metrics.')`, 10*time.Second)
		Expect(eval[string](`document.querySelector('#ctl .forbidden').textContent`)).To(ContainSubstring(`User "viewer" cannot get path "/metrics"`))
	})

	It("keeps following the controllers' metrics when their stream cannot connect", func(ctx SpecContext) {
		var out, errOut bytes.Buffer
		Expect(cli.Execute(ctx, []string{"dashboard", "--url", "--kubeconfig", suite.kubeconfig}, &out, &errOut)).To(Equal(0), errOut.String())
		do(ctx, chromedp.Navigate(strings.TrimSpace(out.String())))
		waitFor(ctx, "logged in as admin", `document.getElementById('who').textContent === 'converge-admin'`, 10*time.Second)
		// The browser fails every request for the stream as a dropped
		// connection does ("Failed to fetch"), then lets them through.
		var failed atomic.Int32
		Expect(chromedp.Listen(suite.browser, func(ev any) {
			if e, ok := ev.(*fetch.EventRequestPaused); ok {
				go func() {
					failed.Add(1)
					_ = chromedp.Do(suite.browser, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
						_, err := cdp.Call(ctx, t, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonConnectionReset})
						return err
					}))
				}()
			}
		})).To(Succeed())
		do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/ui/controllers*"}}})
			return err
		}))
		hash(ctx, "#/controllers")
		waitFor(ctx, "the page says it reconnects", `document.getElementById('ctl').textContent.includes('reconnecting')`, 10*time.Second)
		Eventually(failed.Load).WithTimeout(10*time.Second).Should(BeNumerically(">=", 2), "the page retried")
		do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, fetch.Disable, cdp.Empty{})
			return err
		}))
		waitFor(ctx, "the controllers' table after the network came back", `Number(document.querySelector('#ctl tr[data-name="deployment"]')?.cells[1].textContent) > 0`, 20*time.Second)
		Expect(eval[string](`document.getElementById('ctl-state').textContent`)).To(BeEmpty())
	})

	It("drains the node: its pods are evicted and their replacements wait, saying why", func(ctx SpecContext) {
		// converge dashboard with the admin's client certificate: the session
		// browses with a token the server issued for that identity.
		var out, errOut bytes.Buffer
		Expect(cli.Execute(ctx, []string{"dashboard", "--url", "--kubeconfig", suite.kubeconfig}, &out, &errOut)).To(Equal(0), errOut.String())
		do(ctx, chromedp.Navigate(strings.TrimSpace(out.String())))
		waitFor(ctx, "logged in as admin", `document.getElementById('who').textContent === 'converge-admin'`, 10*time.Second)
		waitFor(ctx, "a drain button", `document.querySelector('button[data-act="drain"]:not([disabled])') !== null`, 10*time.Second)
		do(ctx, chromedp.Click(chromedp.CSS(`button[data-act="drain"]`)))
		waitFor(ctx, "drained", `document.getElementById('toast').textContent.startsWith('Drained: Node ')`, 20*time.Second)
		hash(ctx, "#/pods")
		waitFor(ctx, "hello's new pods unschedulable", `[...document.querySelectorAll('tr[data-pod^="hello-"] .why')].filter((w) => w.textContent.includes('unschedulable')).length === 3`, 30*time.Second)
	})
})
