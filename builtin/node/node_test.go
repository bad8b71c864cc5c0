package node_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

func podLogs(ctx SpecContext, pod, container, query string) (string, error) {
	return podLogsIn(ctx, "default", pod, container, query)
}

// podLogsIn reads a container's log from the agent, for a pod of any namespace.
func podLogsIn(ctx context.Context, namespace, pod, container, query string) (string, error) {
	url := fmt.Sprintf("http://127.0.0.1:%d/containerLogs/%s/%s/%s?%s", suite.agent.LogPort(), namespace, pod, container, query)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%d: %s", resp.StatusCode, b)
	}
	return string(b), err
}

func status(p *corev1.Pod, name string) corev1.ContainerStatus {
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if s.Name == name {
			return s
		}
	}
	return corev1.ContainerStatus{}
}

func cond(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

var _ = Describe("Node registration", func() {
	It("registers a Ready node with labels, capacity, addresses, daemon endpoint and a renewed lease", func(ctx SpecContext) {
		n := &corev1.Node{}
		Eventually(func(g Gomega) {
			g.Expect(suite.c.Get(ctx, client.ObjectKey{Name: nodeName}, n)).To(Succeed())
			g.Expect(n.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
		}).WithContext(ctx).Should(Succeed())
		Expect(n.Labels).To(HaveKeyWithValue(node.LabelHostname, nodeName))
		Expect(n.Labels).To(HaveKeyWithValue(node.LabelOS, "linux"))
		Expect(n.Labels).To(HaveKey(node.LabelArch))
		Expect(n.Labels).To(HaveKeyWithValue(node.LabelZone, "zone-a"))
		Expect(n.Status.Capacity).To(HaveKey("cpu"))
		Expect(n.Status.Allocatable).To(HaveKey("memory"))
		Expect(n.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}))
		Expect(n.Status.DaemonEndpoints.KubeletEndpoint.Port).To(BeEquivalentTo(suite.agent.LogPort()))
		Expect(n.Status.NodeInfo.ContainerRuntimeVersion).To(HavePrefix("process://"))
		Expect(n.Spec.PodCIDR).To(Equal("127.77.0.0/16"))
		for _, t := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
			Expect(n.Status.Conditions).To(ContainElement(HaveField("Type", t)))
		}
		lease := &coordinationv1.Lease{}
		Eventually(func() error {
			return suite.c.Get(ctx, client.ObjectKey{Namespace: node.LeaseNamespace, Name: nodeName}, lease)
		}).WithContext(ctx).Should(Succeed())
		Expect(*lease.Spec.HolderIdentity).To(Equal(nodeName))
		Expect(lease.Spec.RenewTime).NotTo(BeNil())
	}, SpecTimeout(90*time.Second))
})

var _ = Describe("Pods on the process runtime", func() {
	It("runs a pod to Running and Ready through a readiness probe and serves on its pod IP", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "web"
		c := helperContainer("web", "serve", "$(POD_IP):8080", "out", "serving", "sleep", "forever")
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: api.FromInt(8080)}}, PeriodSeconds: 1}
		c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: api.FromInt(8080)}}, PeriodSeconds: 1}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		var p *corev1.Pod
		Eventually(func(g Gomega) {
			var err error
			p, err = getPod(ctx, "web")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(cond(p, corev1.PodReady)).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(p.Status.PodIP).To(HavePrefix("127.77."))
		Expect(p.Status.HostIP).To(Equal("127.0.0.1"))
		for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady} {
			Expect(cond(p, t)).To(Equal(corev1.ConditionTrue), string(t))
		}
		st := status(p, "web")
		Expect(st.Ready).To(BeTrue())
		Expect(*st.Started).To(BeTrue())
		Expect(st.ContainerID).To(HavePrefix("process://"))
		Expect(st.Image).To(Equal("local/helper:1"))
		resp, err := http.Get("http://" + p.Status.PodIP + ":8080/")
		Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(string(body)).To(HavePrefix("ok"))

		By("the agent's /pods lists it, as the kubelet's (nodes/proxy/pods)")
		resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", suite.agent.LogPort()))
		Expect(err).NotTo(HaveOccurred())
		var list corev1.PodList
		Expect(json.NewDecoder(resp.Body).Decode(&list)).To(Succeed())
		resp.Body.Close()
		Expect(list.Kind).To(Equal("PodList"))
		Expect(list.Items).To(ContainElement(And(HaveField("Name", "web"), HaveField("UID", p.UID))))

		By("killing the container's process, the container restarts")
		id := strings.TrimPrefix(st.ContainerID, "process://")
		rs, err := suite.rt.Status(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(syscall.Kill(rs.PID, syscall.SIGKILL)).To(Succeed())
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "web")()
			g.Expect(err).NotTo(HaveOccurred())
			s := status(p, "web")
			g.Expect(s.RestartCount).To(BeEquivalentTo(1))
			g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(s.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(137))
			g.Expect(s.Ready).To(BeTrue())
			g.Expect(cond(p, corev1.PodReady)).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		By("the previous container's log stays available")
		Eventually(func() (string, error) { return podLogs(ctx, "web", "web", "previous=true") }).WithContext(ctx).Should(ContainSubstring("serving"))
	}, SpecTimeout(90*time.Second))

	It("shows CrashLoopBackOff with growing delays for a container exiting 1", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "crash"
		pod.Spec.Containers = []corev1.Container{helperContainer("crash", "err", "failing", "exit", "1")}
		createAndBind(ctx, pod)
		seen := map[string]bool{}
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "crash")()
			g.Expect(err).NotTo(HaveOccurred())
			s := status(p, "crash")
			if s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff" {
				seen[s.State.Waiting.Message[:strings.Index(s.State.Waiting.Message, " restarting")]] = true
				g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
				g.Expect(s.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(1))
				g.Expect(s.LastTerminationState.Terminated.Reason).To(Equal("Error"))
			}
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(s.RestartCount).To(BeNumerically(">=", 3))
			// Delays double: 400ms (may be too brief to observe), 800ms, 1.6s, ...
			g.Expect(seen).To(HaveKey("back-off 800ms"))
			g.Expect(seen).To(HaveKey("back-off 1.6s"))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
	}, SpecTimeout(90*time.Second))

	It("captures logs and serves them with follow, tailLines and timestamps", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "logger"
		pod.Spec.Containers = []corev1.Container{helperContainer("logger", "out", "hello", "err", "to stderr", "sleep", "4s", "out", "world", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, "logger", "logger", "") }).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(20 * time.Millisecond).Should(And(ContainSubstring("hello\n"), ContainSubstring("to stderr\n")))
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		url := fmt.Sprintf("http://127.0.0.1:%d/containerLogs/default/logger/logger?follow=true&tailLines=1", suite.agent.LogPort())
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.Header.Get("Content-Type")).To(HavePrefix("text/plain"))
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Or(Equal("to stderr\n"), Equal("hello\n"))) // streams are not ordered with each other
		line, err = br.ReadString('\n')                             // arrives while following
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Equal("world\n"))
		out, err := podLogs(ctx, "logger", "logger", "timestamps=true&tailLines=1")
		Expect(err).NotTo(HaveOccurred())
		ts, text, _ := strings.Cut(strings.TrimSpace(out), " ")
		_, err = time.Parse(time.RFC3339Nano, ts)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(Equal("world"))
		_, err = podLogs(ctx, "nope", "logger", "")
		Expect(err).To(MatchError(ContainSubstring("404")))
	}, SpecTimeout(90*time.Second))

	It("terminates a deleted pod gracefully", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "graceful"
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(10))
		c := helperContainer("main", "on-term", "0", "out", "ready", "sleep", "forever")
		marker := filepath.Join(GinkgoT().TempDir(), "prestop")
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{suite.helper, "write", marker, "ran"}}}}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, "graceful", "main", "") }).WithContext(ctx).Should(ContainSubstring("ready"))
		p, _ := getPod(ctx, "graceful")()
		logDir := filepath.Join(suite.root, "logs", "default_graceful_"+p.UID, "main")
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		Eventually(func() string {
			b, _ := os.ReadFile(filepath.Join(logDir, "0.log"))
			return string(b)
		}).WithContext(ctx).WithTimeout(15 * time.Second).Should(ContainSubstring("got SIGTERM"))
		b, err := os.ReadFile(marker)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(Equal("ran"))
	}, SpecTimeout(90*time.Second))

	It("runs init containers in order before the containers", func(ctx SpecContext) {
		dir := "/tmp/converge-node-e2e-init"
		pod := &corev1.Pod{}
		pod.Name = "inits"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		mount := []corev1.VolumeMount{{Name: "work", MountPath: dir}}
		i1 := helperContainer("first", "write", dir+"/one", "1")
		i2 := helperContainer("second", "cat", dir+"/one", "write", dir+"/two", "2")
		m := helperContainer("main", "cat", dir+"/two", "exit", "0")
		i1.VolumeMounts, i2.VolumeMounts, m.VolumeMounts = mount, mount, mount
		pod.Spec.InitContainers = []corev1.Container{i1, i2}
		pod.Spec.Containers = []corev1.Container{m}
		createAndBind(ctx, pod)
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "inits")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded))
			for _, n := range []string{"first", "second", "main"} {
				g.Expect(status(p, n).State.Terminated).NotTo(BeNil(), n)
				g.Expect(status(p, n).State.Terminated.Reason).To(Equal("Completed"), n)
			}
			// Init containers that succeeded are Ready; a finished app container is not.
			g.Expect(status(p, "first").Ready).To(BeTrue())
			g.Expect(status(p, "second").Ready).To(BeTrue())
			g.Expect(status(p, "main").Ready).To(BeFalse())
			g.Expect(cond(p, corev1.PodInitialized)).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(podLogs(ctx, "inits", "main", "")).To(Equal("2\n"))
	}, SpecTimeout(90*time.Second))

	It("gives the process env and configMap, secret, emptyDir and downwardAPI volumes", func(ctx SpecContext) {
		cm := &corev1.ConfigMap{Data: map[string]string{"greeting": "hello", "file.txt": "from-configmap"}}
		cm.Name, cm.Namespace = "app-config", "default"
		Expect(suite.c.Create(ctx, cm)).To(Succeed())
		sec := &corev1.Secret{Data: map[string][]byte{"password": []byte("s3cret")}}
		sec.Name, sec.Namespace = "app-secret", "default"
		Expect(suite.c.Create(ctx, sec)).To(Succeed())
		base := "/tmp/converge-node-e2e-vol"
		pod := &corev1.Pod{}
		pod.Name = "envvol"
		pod.Labels = map[string]string{"app": "envvol"}
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Volumes = []corev1.Volume{
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
			{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-secret"}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		}
		c := helperContainer("main",
			"env", "GREETING", "env", "PASSWORD", "env", "MY_NAME", "env", "EXPANDED", "env", "CFG_greeting", "env", "POD_IP",
			"cat", base+"/cm/file.txt", "cat", base+"/sec/password", "cat", base+"/info/labels",
			"write", base+"/scratch/x", "y", "pwd")
		c.WorkingDir = base + "/scratch"
		c.EnvFrom = []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}
		c.Env = []corev1.EnvVar{
			{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "greeting"}}},
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app-secret"}, Key: "password"}}},
			{Name: "MY_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "EXPANDED", Value: "$(GREETING)-$(MY_NAME)-$(UNDEFINED)"},
		}
		c.VolumeMounts = []corev1.VolumeMount{
			{Name: "cm", MountPath: base + "/cm"}, {Name: "sec", MountPath: base + "/sec"},
			{Name: "scratch", MountPath: base + "/scratch"}, {Name: "info", MountPath: base + "/info"},
		}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		var p *corev1.Pod
		Eventually(func(g Gomega) {
			var err error
			p, err = getPod(ctx, "envvol")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), "%+v", p.Status.ContainerStatuses)
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		out, err := podLogs(ctx, "envvol", "main", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(strings.TrimSpace(out), "\n")).To(Equal([]string{
			"GREETING=hello", "PASSWORD=s3cret", "MY_NAME=envvol", "EXPANDED=hello-envvol-$(UNDEFINED)",
			"CFG_greeting=hello", "POD_IP=" + p.Status.PodIP,
			"from-configmap", "s3cret", `app="envvol"`, base + "/scratch",
		}))
	}, SpecTimeout(90*time.Second))

	It("reports CreateContainerConfigError for a missing ConfigMap and CreateContainerError for an image-only container", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "badconfig"
		c := helperContainer("main", "sleep", "forever")
		c.Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Key: "k"}}}}
		img := corev1.Container{Name: "imageonly", Image: "nginx:1.27"}
		pod.Spec.Containers = []corev1.Container{c, img}
		createAndBind(ctx, pod)
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "badconfig")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodPending))
			s := status(p, "main")
			g.Expect(s.State.Waiting).NotTo(BeNil())
			g.Expect(s.State.Waiting.Reason).To(Equal("CreateContainerConfigError"))
			g.Expect(s.State.Waiting.Message).To(ContainSubstring(`configmap "missing" not found`))
			s = status(p, "imageonly")
			g.Expect(s.State.Waiting).NotTo(BeNil())
			g.Expect(s.State.Waiting.Reason).To(Equal("CreateContainerError"))
			g.Expect(s.State.Waiting.Message).To(ContainSubstring(`the process runtime runs ` + "`command`" + `; image "nginx:1.27" has no local entrypoint`))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
	}, SpecTimeout(90*time.Second))
})
