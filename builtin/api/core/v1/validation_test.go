package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

func messages(errs field.ErrorList) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "\n")
}

func validPod() *Pod {
	p := &Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: PodSpec{Containers: []Container{{Name: "c", Image: "nginx"}}}}
	DefaultPod(p)
	return p
}

func TestValidatePod(t *testing.T) {
	withMount := func(m VolumeMount) func(*Pod) {
		return func(p *Pod) { p.Spec.Containers[0].VolumeMounts = []VolumeMount{m} }
	}
	tests := []struct {
		name   string
		mutate func(p *Pod)
		want   string
	}{
		{"valid", func(*Pod) {}, ""},
		{"no containers", func(p *Pod) { p.Spec.Containers = nil }, "spec.containers: Required value"},
		{"no image", func(p *Pod) { p.Spec.Containers[0].Image = "" }, "spec.containers[0].image: Required value"},
		{"bad name", func(p *Pod) { p.Spec.Containers[0].Name = "Web_1" }, `spec.containers[0].name: Invalid value: "Web_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"duplicate name", func(p *Pod) { p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0]) }, `spec.containers[1].name: Duplicate value: "c"`},
		{"port range", func(p *Pod) {
			p.Spec.Containers[0].Ports = []ContainerPort{{ContainerPort: 70000, Protocol: ProtocolTCP}}
		}, "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"},
		{"protocol", func(p *Pod) { p.Spec.Containers[0].Ports = []ContainerPort{{ContainerPort: 80, Protocol: "HTTP"}} },
			`spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"`},
		{"restart policy", func(p *Pod) { p.Spec.RestartPolicy = "Sometimes" },
			`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`},
		{"two volume types", func(p *Pod) {
			p.Spec.Volumes = []Volume{{Name: "v", VolumeSource: VolumeSource{EmptyDir: &EmptyDirVolumeSource{}, HostPath: &HostPathVolumeSource{Path: "/x"}}}}
		}, "spec.volumes[0].emptyDir: Forbidden: may not specify more than 1 volume type"},
		{"no volume type", func(p *Pod) { p.Spec.Volumes = []Volume{{Name: "v"}} }, "spec.volumes[0]: Required value: must specify a volume type"},
		{"duplicate volume", func(p *Pod) {
			v := Volume{Name: "v", VolumeSource: VolumeSource{EmptyDir: &EmptyDirVolumeSource{}}}
			p.Spec.Volumes = []Volume{v, v}
		}, `spec.volumes[1].name: Duplicate value: "v"`},
		{"mount unknown volume", func(p *Pod) { p.Spec.Containers[0].VolumeMounts = []VolumeMount{{Name: "x", MountPath: "/x"}} },
			`spec.containers[0].volumeMounts[0].name: Not found: "x"`},
		{"absolute subPath", withMount(VolumeMount{Name: "v", MountPath: "/x", SubPath: "/etc"}),
			`spec.containers[0].volumeMounts[0].subPath: Invalid value: "/etc": must be a relative path`},
		{"backstep subPath", withMount(VolumeMount{Name: "v", MountPath: "/x", SubPath: "a/../.."}),
			`spec.containers[0].volumeMounts[0].subPath: Invalid value: "a/../..": must not contain '..'`},
		{"subPathExpr", withMount(VolumeMount{Name: "v", MountPath: "/x", SubPathExpr: "$(ANNOTATION)/$(POD_NAME)"}), ""},
		{"subPathExpr expanding to a backstep", withMount(VolumeMount{Name: "v", MountPath: "/x", SubPathExpr: "$(POD_NAME)"}), ""},
		{"absolute subPathExpr", withMount(VolumeMount{Name: "v", MountPath: "/x", SubPathExpr: "/$(A)"}),
			`spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "/$(A)": must be a relative path`},
		{"backstep subPathExpr", withMount(VolumeMount{Name: "v", MountPath: "/x", SubPathExpr: "$(A)/.."}),
			`spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(A)/..": must not contain '..'`},
		{"subPath and subPathExpr", withMount(VolumeMount{Name: "v", MountPath: "/x", SubPath: "a", SubPathExpr: "$(A)"}), `spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(A)": subPathExpr and subPath are mutually exclusive`},
		{"relaxed env names", func(p *Pod) {
			p.Spec.Containers[0].Env = []EnvVar{{Name: "1-data-1"}, {Name: "a b:c"}}
			p.Spec.Containers[0].EnvFrom = []EnvFromSource{{Prefix: "1-", ConfigMapRef: &ConfigMapEnvSource{}}}
		}, ""},
		{"env name", func(p *Pod) { p.Spec.Containers[0].Env = []EnvVar{{Name: "A=B"}} },
			`spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`},
		{"env name control character", func(p *Pod) { p.Spec.Containers[0].Env = []EnvVar{{Name: "A\tB"}} },
			`spec.containers[0].env[0].name: Invalid value: "A\tB": a valid environment variable name`},
		{"envFrom prefix", func(p *Pod) {
			p.Spec.Containers[0].EnvFrom = []EnvFromSource{{Prefix: "P=", ConfigMapRef: &ConfigMapEnvSource{}}}
		}, `spec.containers[0].envFrom[0].prefix: Invalid value: "P=": a valid environment variable name must consist only of printable ASCII characters other than '='`},
		{"requests over limits", func(p *Pod) {
			p.Spec.Containers[0].Resources = ResourceRequirements{Limits: ResourceList{"cpu": api.MustParseQuantity("1")}, Requests: ResourceList{"cpu": api.MustParseQuantity("2")}}
		}, `spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPod()
			p.Spec.Volumes = []Volume{{Name: "v", VolumeSource: VolumeSource{EmptyDir: &EmptyDirVolumeSource{}}}}
			tt.mutate(p)
			got := messages(ValidatePod(p))
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestValidatePodNoContainersExactly(t *testing.T) {
	p := &Pod{}
	DefaultPod(p)
	if got := messages(ValidatePod(p)); got != "spec.containers: Required value" {
		t.Errorf("got %q", got)
	}
}

func TestValidatePodUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *Pod)
		forbid bool
	}{
		{"image", func(p *Pod) { p.Spec.Containers[0].Image = "nginx:2" }, false},
		{"deadline", func(p *Pod) { p.Spec.ActiveDeadlineSeconds = api.Ptr(int64(10)) }, false},
		{"add toleration", func(p *Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, Toleration{Key: "k", Operator: TolerationOpExists})
		}, false},
		{"remove toleration", func(p *Pod) { p.Spec.Tolerations = p.Spec.Tolerations[:1] }, true},
		{"node selector", func(p *Pod) { p.Spec.NodeSelector = map[string]string{"a": "b"} }, true},
		{"container name", func(p *Pod) { p.Spec.Containers[0].Name = "d" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validPod()
			p := validPod()
			tt.mutate(p)
			got := messages(ValidatePodUpdate(p, old))
			forbidden := strings.Contains(got, "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`")
			if forbidden != tt.forbid {
				t.Errorf("forbidden=%v, errors:\n%s", forbidden, got)
			}
		})
	}
}

func TestValidateService(t *testing.T) {
	tests := []struct {
		name string
		svc  Service
		want string
	}{
		{"valid", Service{Spec: ServiceSpec{Ports: []ServicePort{{Port: 80}}, Selector: map[string]string{"app": "web"}}}, ""},
		{"no ports", Service{Spec: ServiceSpec{}}, "spec.ports: Required value"},
		{"external name needs no ports", Service{Spec: ServiceSpec{Type: ServiceTypeExternalName, ExternalName: "example.com"}}, ""},
		{"port range", Service{Spec: ServiceSpec{Ports: []ServicePort{{Port: 0}}}}, "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"type", Service{Spec: ServiceSpec{Type: "Magic", Ports: []ServicePort{{Port: 80}}}},
			`spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`},
		{"duplicate names", Service{Spec: ServiceSpec{Ports: []ServicePort{{Name: "a", Port: 80}, {Name: "a", Port: 81}}}}, `spec.ports[1].name: Duplicate value: "a"`},
		{"unnamed multi", Service{Spec: ServiceSpec{Ports: []ServicePort{{Name: "a", Port: 80}, {Port: 81}}}}, "spec.ports[1].name: Required value"},
		{"selector", Service{Spec: ServiceSpec{Ports: []ServicePort{{Port: 80}}, Selector: map[string]string{"app": "bad value"}}}, `spec.selector: Invalid value: "bad value"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.svc
			DefaultService(&s)
			got := messages(ValidateService(&s))
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestValidateConfigMapAndSecret(t *testing.T) {
	big := strings.Repeat("x", MaxSecretSize+1)
	tests := []struct {
		name string
		got  field.ErrorList
		want string
	}{
		{"bad key", ValidateConfigMap(&ConfigMap{Data: map[string]string{"a b": "x"}}),
			`data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`},
		{"too big", ValidateConfigMap(&ConfigMap{Data: map[string]string{"a": big}}), "Too long"},
		{"immutable data", ValidateConfigMapUpdate(&ConfigMap{Immutable: api.Ptr(true), Data: map[string]string{"a": "2"}}, &ConfigMap{Immutable: api.Ptr(true), Data: map[string]string{"a": "1"}}),
			"data: Forbidden: field is immutable when `immutable` is set"},
		{"immutable flag", ValidateConfigMapUpdate(&ConfigMap{}, &ConfigMap{Immutable: api.Ptr(true)}),
			"immutable: Forbidden: field is immutable when `immutable` is set"},
		{"secret key", ValidateSecret(&Secret{Type: SecretTypeOpaque, Data: map[string][]byte{"..x": nil}}), `data[..x]: Invalid value: "..x": must not start with '..'`},
		{"tls keys", ValidateSecret(&Secret{Type: SecretTypeTLS}), "data[tls.crt]: Required value"},
		{"secret type immutable", ValidateSecretUpdate(&Secret{Type: SecretTypeOpaque}, &Secret{Type: "a/b"}), `type: Invalid value: "Opaque": field is immutable`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := messages(tt.got); !strings.Contains(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
