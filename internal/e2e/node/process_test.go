package node

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// get fetches url on a new connection and returns the body.
func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b), err
}

// podServer is a container running the suite's HTTP server on the pod IP,
// Ready through an HTTP readiness probe.
func podServer() corev1.Container {
	return corev1.Container{
		Name: "server", Image: "local/podserver:1",
		Command: []string{suite.server, "--listen=$(POD_IP):8080"},
		Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: api.FromString("http")}},
			PeriodSeconds: 1,
		},
	}
}

func readyPods(ctx context.Context, g Gomega, selector map[string]string, n int) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(suite.c.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels(selector))).To(Succeed())
	var ready []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && cond(&p, corev1.PodReady) == corev1.ConditionTrue {
			ready = append(ready, p)
		}
	}
	g.Expect(ready).To(HaveLen(n))
	return ready
}

var _ = Describe("The process runtime end to end", func() {
	It("runs a Deployment behind a Service, restarts killed processes, backs off crashing ones and streams logs", func(ctx SpecContext) {
		By("a crashing pod starts first so its back-off grows while the rest runs")
		crasher := &corev1.Pod{}
		crasher.Name, crasher.Namespace = "crasher", "default"
		crasher.Spec.Containers = []corev1.Container{{Name: "crash", Image: "local/podserver:1", Command: []string{suite.server, "-exit", "1"}}}
		Expect(suite.c.Create(ctx, crasher)).To(Succeed())

		By("creating a Service and a Deployment of three replicas")
		labels := map[string]string{"app": "podname"}
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: api.FromString("http")}}}}
		svc.Name, svc.Namespace = "podname", "default"
		Expect(suite.c.Create(ctx, svc)).To(Succeed())
		Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
		dep := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{
			Replicas: api.Ptr(int32(3)), Selector: &api.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{podServer()}}},
		}}
		dep.Name, dep.Namespace = "podname", "default"
		Expect(suite.c.Create(ctx, dep)).To(Succeed())

		By("the pods become Running and Ready through the readiness probe")
		var pods []corev1.Pod
		Eventually(func(g Gomega) { pods = readyPods(ctx, g, labels, 3) }).
			WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		names := map[string]bool{}
		for _, p := range pods {
			names[p.Name] = true
			Expect(p.Status.PodIP).To(HavePrefix("127."))
			Expect(p.Status.ContainerStatuses[0].ContainerID).To(HavePrefix("process://"))
		}

		By("the pods, created after the Service, get its environment variables")
		for name, want := range map[string]string{
			"PODNAME_SERVICE_HOST":      svc.Spec.ClusterIP,
			"PODNAME_SERVICE_PORT":      "80",
			"PODNAME_SERVICE_PORT_WEB":  "80",
			"PODNAME_PORT":              "tcp://" + svc.Spec.ClusterIP + ":80",
			"PODNAME_PORT_80_TCP_ADDR":  svc.Spec.ClusterIP,
			"PODNAME_PORT_80_TCP_PROTO": "tcp",
		} {
			v, err := get(ctx, fmt.Sprintf("http://%s:8080/env/%s", pods[0].Status.PodIP, name))
			Expect(err).NotTo(HaveOccurred())
			Expect(v).To(Equal(want), name)
		}

		By("requests to the Service's ClusterIP reach every replica")
		url := fmt.Sprintf("http://%s:80/", svc.Spec.ClusterIP)
		seen := map[string]bool{}
		Eventually(func(g Gomega) {
			body, err := get(ctx, url)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(names).To(HaveKey(body))
			seen[body] = true
			g.Expect(seen).To(HaveLen(3))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())

		By("killing a container's process, the restart is counted and the pod is Ready again")
		victim := pods[0]
		pid, err := processOf(victim.Status.PodIP)
		Expect(err).NotTo(HaveOccurred())
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: victim.Name}, p)).To(Succeed())
			s := p.Status.ContainerStatuses[0]
			g.Expect(s.RestartCount).To(BeEquivalentTo(1))
			g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(s.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(137))
			g.Expect(s.Ready).To(BeTrue())
			g.Expect(cond(p, corev1.PodReady)).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		body, err := get(ctx, fmt.Sprintf("http://%s:8080/", victim.Status.PodIP))
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(Equal(victim.Name))

		By("`kubectl logs -f` streams lines as they are written")
		follower := pods[1]
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cmd := kubectl(lctx, "logs", "-f", follower.Name)
		out, err := cmd.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		Expect(cmd.Start()).To(Succeed())
		defer func() { cancel(); _ = cmd.Wait() }()
		lines := make(chan string, 100)
		go func() {
			defer GinkgoRecover()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		Eventually(lines).WithContext(ctx).WithTimeout(20*time.Second).Should(Receive(ContainSubstring("listening on")), "kubectl logs -f: %s", &stderr)
		for i := range 3 {
			marker := fmt.Sprintf("marker-%d", i)
			_, err := get(ctx, fmt.Sprintf("http://%s:8080/%s", follower.Status.PodIP, marker))
			Expect(err).NotTo(HaveOccurred())
			Eventually(lines).WithContext(ctx).WithTimeout(10*time.Second).Should(Receive(Equal("served /"+marker+" ")), "kubectl logs -f: %s", &stderr)
		}

		By("a container exiting 1 shows CrashLoopBackOff with growing back-off")
		backoffs := map[string]bool{}
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "crasher"}, p)).To(Succeed())
			g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
			s := p.Status.ContainerStatuses[0]
			if w := s.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
				b, _, _ := strings.Cut(w.Message, " restarting")
				backoffs[b] = true
				g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
				g.Expect(s.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(1))
				g.Expect(s.LastTerminationState.Terminated.Reason).To(Equal("Error"))
			}
			g.Expect(backoffs).To(HaveKey("back-off 10s"))
			g.Expect(backoffs).To(HaveKey("back-off 20s"))
			g.Expect(s.RestartCount).To(BeNumerically(">=", 2))
		}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		out2, err := kubectl(ctx, "get", "pod", "crasher", "--no-headers").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out2)
		Expect(string(out2)).To(ContainSubstring("CrashLoopBackOff"))

		Expect(suite.c.Delete(ctx, crasher)).To(Succeed())
		Expect(suite.c.Delete(ctx, dep)).To(Succeed())
	}, SpecTimeout(3*time.Minute))
})
