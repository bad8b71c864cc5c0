package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
)

func TestDefaultPod(t *testing.T) {
	p := &Pod{Spec: PodSpec{
		Containers: []Container{{Name: "c", Image: "nginx",
			Ports:         []ContainerPort{{ContainerPort: 80}},
			Env:           []EnvVar{{Name: "N", ValueFrom: &EnvVarSource{FieldRef: &ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			LivenessProbe: &Probe{ProbeHandler: ProbeHandler{HTTPGet: &HTTPGetAction{Port: api.FromInt(80)}}},
			Resources:     ResourceRequirements{Limits: ResourceList{"cpu": api.MustParseQuantity("1")}},
		}, {Name: "d", Image: "nginx:1.27"}, {Name: "e", Image: "nginx:latest"}},
		Volumes: []Volume{{Name: "cm", VolumeSource: VolumeSource{ConfigMap: &ConfigMapVolumeSource{LocalObjectReference: LocalObjectReference{Name: "x"}}}}, {Name: "none"}},
	}}
	DefaultPod(p)
	s := p.Spec
	c := s.Containers[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"restartPolicy", s.RestartPolicy, RestartPolicyAlways},
		{"dnsPolicy", s.DNSPolicy, DNSClusterFirst},
		{"schedulerName", s.SchedulerName, "default-scheduler"},
		{"grace", *s.TerminationGracePeriodSeconds, int64(30)},
		{"securityContext", *s.SecurityContext, PodSecurityContext{}},
		{"enableServiceLinks", *s.EnableServiceLinks, true},
		{"tolerations", len(s.Tolerations), 2},
		{"toleration seconds", *s.Tolerations[0].TolerationSeconds, int64(300)},
		{"pull untagged", c.ImagePullPolicy, PullAlways},
		{"pull tagged", s.Containers[1].ImagePullPolicy, PullIfNotPresent},
		{"pull latest", s.Containers[2].ImagePullPolicy, PullAlways},
		{"termination path", c.TerminationMessagePath, "/dev/termination-log"},
		{"termination policy", c.TerminationMessagePolicy, TerminationMessageReadFile},
		{"port protocol", c.Ports[0].Protocol, ProtocolTCP},
		{"fieldRef apiVersion", c.Env[0].ValueFrom.FieldRef.APIVersion, "v1"},
		{"probe", [4]int32{c.LivenessProbe.TimeoutSeconds, c.LivenessProbe.PeriodSeconds, c.LivenessProbe.SuccessThreshold, c.LivenessProbe.FailureThreshold}, [4]int32{1, 10, 1, 3}},
		{"httpGet scheme", c.LivenessProbe.HTTPGet.Scheme, URISchemeHTTP},
		{"httpGet path", c.LivenessProbe.HTTPGet.Path, "/"},
		{"requests from limits", c.Resources.Requests["cpu"].String(), "1"},
		{"configMap mode", *s.Volumes[0].ConfigMap.DefaultMode, int32(420)},
		{"empty volume", s.Volumes[1].EmptyDir != nil, true},
	}
	for _, ch := range checks {
		if !cmp.Equal(ch.got, ch.want) {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestDefaultTolerationsNotDuplicated(t *testing.T) {
	p := &Pod{Spec: PodSpec{Tolerations: []Toleration{{Operator: TolerationOpExists}}}}
	DefaultPod(p)
	if len(p.Spec.Tolerations) != 1 {
		t.Errorf("got %v", p.Spec.Tolerations)
	}
}

func TestDefaultService(t *testing.T) {
	s := &Service{Spec: ServiceSpec{Ports: []ServicePort{{Port: 80}, {Port: 443, TargetPort: api.FromString("https")}}}}
	DefaultService(s)
	want := ServiceSpec{
		Ports:                 []ServicePort{{Port: 80, Protocol: ProtocolTCP, TargetPort: api.FromInt(80)}, {Port: 443, Protocol: ProtocolTCP, TargetPort: api.FromString("https")}},
		Type:                  ServiceTypeClusterIP,
		SessionAffinity:       ServiceAffinityNone,
		InternalTrafficPolicy: api.Ptr(ServiceInternalTrafficPolicyCluster),
		IPFamilyPolicy:        api.Ptr(IPFamilyPolicySingleStack),
		IPFamilies:            []IPFamily{IPv4Protocol},
	}
	if d := cmp.Diff(want, s.Spec); d != "" {
		t.Errorf("diff (-want +got):\n%s", d)
	}
}

func TestDefaultNamespaceAndSecret(t *testing.T) {
	n := &Namespace{ObjectMeta: api.ObjectMeta{Name: "dev"}}
	DefaultNamespace(n)
	if n.Labels[LabelMetadataName] != "dev" || n.Status.Phase != NamespaceActive || len(n.Spec.Finalizers) != 0 {
		t.Errorf("namespace: %+v", n)
	}
	obj := map[string]any{"spec": map[string]any{"finalizers": []any{"example.com/x"}}}
	namespaceStrategy{}.PrepareForCreate(obj)
	if got := stringsOf(api.NestedSlice(obj, "spec", "finalizers")); !cmp.Equal(got, []string{"example.com/x", "kubernetes"}) {
		t.Errorf("finalizers on create: %v", got)
	}
	s := &Secret{Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}, StringData: map[string]string{"b": "3"}}
	DefaultSecret(s)
	if s.Type != SecretTypeOpaque || string(s.Data["b"]) != "3" || string(s.Data["a"]) != "1" || s.StringData != nil {
		t.Errorf("secret: %+v", s)
	}
}

func TestDefaultPodPhase(t *testing.T) {
	p := &Pod{}
	DefaultPod(p)
	if p.Status.Phase != PodPending {
		t.Errorf("new pod phase %q, want Pending", p.Status.Phase)
	}
	p = &Pod{Status: PodStatus{Phase: PodRunning}}
	DefaultPod(p)
	if p.Status.Phase != PodRunning {
		t.Errorf("running pod phase %q after defaulting", p.Status.Phase)
	}
}
