package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// statefulSetYAML has a volumeClaimTemplate; its pod appends to a file in the
// claim how many lines it found there, so each incarnation shows what the
// earlier ones left.
const statefulSetYAML = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  serviceName: web
  selector: {matchLabels: {app: web}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Delete}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: local/sh:1
        command: ["/bin/sh", "-c", "n=$(cat %[1]s/boots 2>/dev/null | wc -l); echo $n >> %[1]s/boots; exec sleep 100000"]
        volumeMounts: [{name: data, mountPath: %[1]s}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`

// The local node of a control plane with the StatefulSet, garbage collector
// and volume binder controllers and the scheduler: claims of volumeClaimTemplates
// become directories on the node.
var _ = Describe("persistentVolumeClaim volumes", Ordered, func() {
	var (
		env *testenv.Environment
		c   *client.Client
	)
	BeforeAll(func(ctx SpecContext) {
		var err error
		env, err = testenv.Start(ctx, testenv.Options{
			LocalNode: true, Scheduler: true,
			Controllers: []string{"statefulset", "garbagecollector", "volumebinder", "ephemeral-volume"},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
		sch, err := all.NewScheme()
		Expect(err).NotTo(HaveOccurred())
		c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
		Expect(err).NotTo(HaveOccurred())
	})

	JustAfterEach(func(ctx SpecContext) {
		if !CurrentSpecReport().Failed() || c == nil {
			return
		}
		evs := &corev1.EventList{}
		if err := c.List(ctx, evs, client.InNamespace("default")); err == nil {
			for _, e := range evs.Items {
				GinkgoWriter.Printf("event %s %s: %s %s\n", e.InvolvedObject.Name, e.Type, e.Reason, e.Message)
			}
		}
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace("default")); err == nil {
			for _, p := range pods.Items {
				GinkgoWriter.Printf("pod %s on %q: %s %s\n", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Message)
			}
		}
	})

	claimDir := func(pvc *corev1.PersistentVolumeClaim) string {
		return filepath.Join(env.Dir, "node", "volumes", "claims", pvc.Namespace, pvc.Name+"-"+pvc.UID)
	}
	boots := func(dir string) func() []string {
		return func() []string {
			data, _ := os.ReadFile(filepath.Join(dir, "boots"))
			return strings.Fields(string(data))
		}
	}
	runningPod := func(ctx context.Context, name string) func(g Gomega) string {
		return func(g Gomega) string {
			p := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)).To(Succeed())
			g.Expect(p.DeletionTimestamp).To(BeNil())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			return p.UID
		}
	}

	It("keeps a claim's files across pod restarts and removes them with the claim on scale-down", func(ctx SpecContext) {
		mnt := filepath.Join(env.Dir, "mnt")
		js, err := yaml.YAMLToJSON([]byte(fmt.Sprintf(statefulSetYAML, mnt)))
		Expect(err).NotTo(HaveOccurred())
		sts := &appsv1.StatefulSet{}
		Expect(json.Unmarshal(js, sts)).To(Succeed())
		Expect(c.Create(ctx, sts)).To(Succeed())

		firstUID := ""
		Eventually(func(g Gomega) { firstUID = runningPod(ctx, "web-0")(g) }, 30*time.Second).Should(Succeed())
		pod := &corev1.Pod{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web-0"}, pod)).To(Succeed())
		pvc := &corev1.PersistentVolumeClaim{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "data-web-0"}, pvc)).To(Succeed())
		Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		Expect(pvc.Spec.VolumeName).To(Equal("pvc-" + pvc.UID))
		Expect(pvc.Annotations).To(HaveKeyWithValue("volume.kubernetes.io/selected-node", pod.Spec.NodeName))
		Expect(pvc.Status.Capacity[string(corev1.ResourceStorage)].String()).To(Equal("1Gi"))
		Expect(pvc.Status.AccessModes).To(Equal([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}))
		dir := claimDir(pvc)
		Eventually(boots(dir), 10*time.Second).Should(Equal([]string{"0"}))

		By("deleting the pod: its replacement sees what it wrote")
		Expect(c.Delete(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(runningPod(ctx, "web-0")(g)).NotTo(Equal(firstUID))
		}, 30*time.Second).Should(Succeed())
		Eventually(boots(dir), 10*time.Second).Should(Equal([]string{"0", "1"}))

		By("scaling to zero with whenScaled: Delete: the claim and its directory go")
		Eventually(func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(sts), sts); err != nil {
				return err
			}
			sts.Spec.Replicas = api.Ptr(int32(0))
			return c.Update(ctx, sts)
		}, 10*time.Second).Should(Succeed())
		Eventually(func() bool {
			err := c.Get(ctx, client.ObjectKeyFromObject(pvc), &corev1.PersistentVolumeClaim{})
			return apierrors.IsNotFound(err)
		}, 30*time.Second).Should(BeTrue())
		Eventually(func() bool {
			_, err := os.Stat(dir)
			return os.IsNotExist(err)
		}, 30*time.Second).Should(BeTrue())
	})

	It("keeps a pod whose claim does not exist Pending with a FailedMount event", func(ctx SpecContext) {
		// Bound by hand: the scheduler would not place it (VolumeBinding).
		nodes := &corev1.NodeList{}
		Expect(c.List(ctx, nodes)).To(Succeed())
		Expect(nodes.Items).To(HaveLen(1))
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "no-claim"}, Spec: corev1.PodSpec{
			NodeName:                      nodes.Items[0].Name,
			TerminationGracePeriodSeconds: api.Ptr(int64(1)),
			Containers: []corev1.Container{{Name: "c", Image: "local/sh:1", Command: []string{"/bin/sh", "-c", "exec sleep 100000"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: filepath.Join(env.Dir, "mnt-none")}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "missing"}}}},
		}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			evs := &corev1.EventList{}
			g.Expect(c.List(ctx, evs, client.InNamespace("default"))).To(Succeed())
			var msgs []string
			for _, e := range evs.Items {
				if e.InvolvedObject.Name == pod.Name && e.Reason == "FailedMount" {
					msgs = append(msgs, e.Message)
				}
			}
			g.Expect(msgs).To(ContainElement(ContainSubstring(`persistentvolumeclaim "missing" not found`)))
		}, 30*time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodPending))
		}, "1s", "200ms").Should(Succeed())
		Expect(c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	})

	It("mounts the hostPath of the PersistentVolume a claim is bound to", func(ctx SpecContext) {
		hostDir := filepath.Join(env.Dir, "pv-data")
		Expect(os.MkdirAll(hostDir, 0o777)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(hostDir, "seed"), []byte("from the volume\n"), 0o644)).To(Succeed())
		pv := &corev1.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "static-pv"}, Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}},
		}}
		Expect(c.Create(ctx, pv)).To(Succeed())
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "static"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: api.Ptr(""),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}},
		}}
		Expect(c.Create(ctx, pvc)).To(Succeed())
		mnt := filepath.Join(env.Dir, "mnt-static")
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "static"}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: api.Ptr(int64(1)),
			Containers: []corev1.Container{{Name: "c", Image: "local/sh:1",
				Command:      []string{"/bin/sh", "-c", "cp " + mnt + "/seed " + mnt + "/copy; exec sleep 100000"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: mnt}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "static"}}}},
		}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		Eventually(func() string {
			b, _ := os.ReadFile(filepath.Join(hostDir, "copy"))
			return string(b)
		}, 30*time.Second).Should(Equal("from the volume\n"))
		Expect(c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)).To(Succeed())
		Expect(pvc.Spec.VolumeName).To(Equal("static-pv"))
		Expect(c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Expect(c.Delete(ctx, pvc)).To(Succeed())
		Expect(c.Delete(ctx, pv)).To(Succeed())
	})

	It("gives an ephemeral volume its own claim, owned by the pod and gone with it", func(ctx SpecContext) {
		mnt := filepath.Join(env.Dir, "mnt-ephemeral")
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "scratch"}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: api.Ptr(int64(1)),
			Containers: []corev1.Container{{Name: "c", Image: "local/sh:1",
				Command:      []string{"/bin/sh", "-c", "echo hello > " + mnt + "/file; exec sleep 100000"},
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: mnt}}}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
				Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					ObjectMeta: api.ObjectMeta{Labels: map[string]string{"kind": "scratch"}},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{string(corev1.ResourceStorage): api.MustParseQuantity("1Gi")}}},
				}}}}},
		}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		Eventually(runningPod(ctx, "scratch"), 30*time.Second).ShouldNot(BeEmpty())
		Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pvc := &corev1.PersistentVolumeClaim{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "scratch-scratch"}, pvc)).To(Succeed())
		Expect(pvc.Labels).To(HaveKeyWithValue("kind", "scratch"))
		Expect(pvc.OwnerReferences).To(HaveLen(1))
		Expect(pvc.OwnerReferences[0].UID).To(Equal(pod.UID))
		Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		dir := claimDir(pvc)
		Eventually(func() string { b, _ := os.ReadFile(filepath.Join(dir, "file")); return string(b) }, 10*time.Second).Should(Equal("hello\n"))

		By("deleting the pod: the garbage collector deletes the claim, the agent its directory")
		Expect(c.Delete(ctx, pod)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(pvc), &corev1.PersistentVolumeClaim{}))
		}, 30*time.Second).Should(BeTrue())
		Eventually(func() bool {
			_, err := os.Stat(dir)
			return os.IsNotExist(err)
		}, 30*time.Second).Should(BeTrue())
	})
})
