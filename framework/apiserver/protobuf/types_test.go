package protobuf

import (
	"time"

	"github.com/converge-dev/converge/framework/api"
)

// Test-local kinds carrying Kubernetes' protobuf field numbers.

type Namespace struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta  `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec         NamespaceSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status       NamespaceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

type NamespaceSpec struct {
	Finalizers []string `json:"finalizers,omitempty" protobuf:"bytes,1,rep,name=finalizers,casttype=FinalizerName"`
}

type NamespaceStatus struct {
	Phase      string          `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=NamespacePhase"`
	Conditions []api.Condition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
}

type ConfigMap struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta    `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Immutable    *bool             `json:"immutable,omitempty" protobuf:"varint,4,opt,name=immutable"`
	Data         map[string]string `json:"data,omitempty" protobuf:"bytes,2,rep,name=data"`
	BinaryData   map[string][]byte `json:"binaryData,omitempty" protobuf:"bytes,3,rep,name=binaryData"`
}

type Deployment struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta   `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec         DeploymentSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status       DeploymentStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

type DeploymentSpec struct {
	Replicas                *int32             `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	Selector                *api.LabelSelector `json:"selector" protobuf:"bytes,2,opt,name=selector"`
	Template                PodTemplateSpec    `json:"template" protobuf:"bytes,3,opt,name=template"`
	Strategy                DeploymentStrategy `json:"strategy,omitempty" protobuf:"bytes,4,opt,name=strategy"`
	MinReadySeconds         int32              `json:"minReadySeconds,omitempty" protobuf:"varint,5,opt,name=minReadySeconds"`
	RevisionHistoryLimit    *int32             `json:"revisionHistoryLimit,omitempty" protobuf:"varint,6,opt,name=revisionHistoryLimit"`
	Paused                  bool               `json:"paused,omitempty" protobuf:"varint,7,opt,name=paused"`
	ProgressDeadlineSeconds *int32             `json:"progressDeadlineSeconds,omitempty" protobuf:"varint,9,opt,name=progressDeadlineSeconds"`
}

type DeploymentStrategy struct {
	Type          string                   `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=DeploymentStrategyType"`
	RollingUpdate *RollingUpdateDeployment `json:"rollingUpdate,omitempty" protobuf:"bytes,2,opt,name=rollingUpdate"`
}

type RollingUpdateDeployment struct {
	MaxUnavailable *api.IntOrString `json:"maxUnavailable,omitempty" protobuf:"bytes,1,opt,name=maxUnavailable"`
	MaxSurge       *api.IntOrString `json:"maxSurge,omitempty" protobuf:"bytes,2,opt,name=maxSurge"`
}

type DeploymentStatus struct {
	ObservedGeneration int64           `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	Replicas           int32           `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	Conditions         []api.Condition `json:"conditions,omitempty" protobuf:"bytes,6,rep,name=conditions"`
	CollisionCount     *int32          `json:"collisionCount,omitempty" protobuf:"varint,8,opt,name=collisionCount"`
}

type PodTemplateSpec struct {
	Metadata api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec     PodSpec        `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

type PodSpec struct {
	Volumes                       []Volume          `json:"volumes,omitempty" protobuf:"bytes,1,rep,name=volumes"`
	Containers                    []Container       `json:"containers" protobuf:"bytes,2,rep,name=containers"`
	RestartPolicy                 string            `json:"restartPolicy,omitempty" protobuf:"bytes,3,opt,name=restartPolicy,casttype=RestartPolicy"`
	TerminationGracePeriodSeconds *int64            `json:"terminationGracePeriodSeconds,omitempty" protobuf:"varint,4,opt,name=terminationGracePeriodSeconds"`
	NodeSelector                  map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,7,rep,name=nodeSelector"`
	ServiceAccountName            string            `json:"serviceAccountName,omitempty" protobuf:"bytes,8,opt,name=serviceAccountName"`
	HostNetwork                   bool              `json:"hostNetwork,omitempty" protobuf:"varint,11,opt,name=hostNetwork"`
	InitContainers                []Container       `json:"initContainers,omitempty" protobuf:"bytes,20,rep,name=initContainers"`
}

type Volume struct {
	Name         string `json:"name" protobuf:"bytes,1,opt,name=name"`
	VolumeSource `json:",inline" protobuf:"bytes,2,opt,name=volumeSource"`
}

type VolumeSource struct {
	EmptyDir  *EmptyDirVolumeSource  `json:"emptyDir,omitempty" protobuf:"bytes,2,opt,name=emptyDir"`
	ConfigMap *ConfigMapVolumeSource `json:"configMap,omitempty" protobuf:"bytes,19,opt,name=configMap"`
}

type EmptyDirVolumeSource struct {
	Medium    string        `json:"medium,omitempty" protobuf:"bytes,1,opt,name=medium,casttype=StorageMedium"`
	SizeLimit *api.Quantity `json:"sizeLimit,omitempty" protobuf:"bytes,2,opt,name=sizeLimit"`
}

type ConfigMapVolumeSource struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	DefaultMode          *int32 `json:"defaultMode,omitempty" protobuf:"varint,3,opt,name=defaultMode"`
	Optional             *bool  `json:"optional,omitempty" protobuf:"varint,4,opt,name=optional"`
}

type LocalObjectReference struct {
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
}

type Container struct {
	Name            string               `json:"name" protobuf:"bytes,1,opt,name=name"`
	Image           string               `json:"image,omitempty" protobuf:"bytes,2,opt,name=image"`
	Command         []string             `json:"command,omitempty" protobuf:"bytes,3,rep,name=command"`
	Args            []string             `json:"args,omitempty" protobuf:"bytes,4,rep,name=args"`
	Ports           []ContainerPort      `json:"ports,omitempty" protobuf:"bytes,6,rep,name=ports"`
	Env             []EnvVar             `json:"env,omitempty" protobuf:"bytes,7,rep,name=env"`
	Resources       ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,8,opt,name=resources"`
	ReadinessProbe  *Probe               `json:"readinessProbe,omitempty" protobuf:"bytes,11,opt,name=readinessProbe"`
	ImagePullPolicy string               `json:"imagePullPolicy,omitempty" protobuf:"bytes,14,opt,name=imagePullPolicy,casttype=PullPolicy"`
}

type ContainerPort struct {
	Name          string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	ContainerPort int32  `json:"containerPort" protobuf:"varint,3,opt,name=containerPort"`
	Protocol      string `json:"protocol,omitempty" protobuf:"bytes,4,opt,name=protocol,casttype=Protocol"`
}

type EnvVar struct {
	Name  string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
}

type ResourceRequirements struct {
	Limits   map[string]api.Quantity `json:"limits,omitempty" protobuf:"bytes,1,rep,name=limits,casttype=ResourceList,castkey=ResourceName"`
	Requests map[string]api.Quantity `json:"requests,omitempty" protobuf:"bytes,2,rep,name=requests,casttype=ResourceList,castkey=ResourceName"`
}

type Probe struct {
	ProbeHandler        `json:",inline" protobuf:"bytes,1,opt,name=handler"`
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty" protobuf:"varint,2,opt,name=initialDelaySeconds"`
	PeriodSeconds       int32 `json:"periodSeconds,omitempty" protobuf:"varint,4,opt,name=periodSeconds"`
}

type ProbeHandler struct {
	HTTPGet *HTTPGetAction `json:"httpGet,omitempty" protobuf:"bytes,2,opt,name=httpGet"`
}

type HTTPGetAction struct {
	Path string          `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	Port api.IntOrString `json:"port" protobuf:"bytes,2,opt,name=port"`
}

// sampleDeployment is a realistic, Deployment-sized object.
func sampleDeployment() *Deployment {
	created := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	container := func(name string) Container {
		return Container{
			Name:    name,
			Image:   "registry.example.com/team/" + name + ":v1.2.3",
			Command: []string{"/bin/server"},
			Args:    []string{"--port=8080", "--verbose", "--config=/etc/app/config.yaml"},
			Ports:   []ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: "TCP"}, {Name: "metrics", ContainerPort: 9090, Protocol: "TCP"}},
			Env: []EnvVar{
				{Name: "LOG_LEVEL", Value: "debug"}, {Name: "REGION", Value: "eu-west-1"},
				{Name: "FEATURE_FLAGS", Value: "a,b,c"}, {Name: "EMPTY"},
			},
			Resources: ResourceRequirements{
				Limits:   map[string]api.Quantity{"cpu": {S: "500m"}, "memory": {S: "256Mi"}},
				Requests: map[string]api.Quantity{"cpu": {S: "100m"}, "memory": {S: "128Mi"}},
			},
			ReadinessProbe: &Probe{
				ProbeHandler:        ProbeHandler{HTTPGet: &HTTPGetAction{Path: "/healthz", Port: api.FromString("http")}},
				InitialDelaySeconds: 5, PeriodSeconds: 10,
			},
			ImagePullPolicy: "IfNotPresent",
		}
	}
	return &Deployment{
		TypeMeta: api.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		Metadata: api.ObjectMeta{
			Name: "web", Namespace: "default", UID: "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
			ResourceVersion: "12345", Generation: 3,
			CreationTimestamp: api.NewTime(created),
			Labels:            map[string]string{"app": "web", "tier": "frontend", "team": "platform"},
			Annotations:       map[string]string{"deployment.kubernetes.io/revision": "3", "note": "hello"},
			OwnerReferences: []api.OwnerReference{{
				APIVersion: "example.com/v1", Kind: "App", Name: "web", UID: "u-1",
				Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true),
			}},
			Finalizers: []string{"example.com/cleanup"},
		},
		Spec: DeploymentSpec{
			Replicas: api.Ptr[int32](3),
			Selector: &api.LabelSelector{
				MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []api.LabelSelectorRequirement{
					{Key: "tier", Operator: api.LabelSelectorOpIn, Values: []string{"frontend", "edge"}},
				},
			},
			Template: PodTemplateSpec{
				Metadata: api.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "frontend"}},
				Spec: PodSpec{
					Volumes: []Volume{
						{Name: "cache", VolumeSource: VolumeSource{EmptyDir: &EmptyDirVolumeSource{SizeLimit: &api.Quantity{S: "1Gi"}}}},
						{Name: "config", VolumeSource: VolumeSource{ConfigMap: &ConfigMapVolumeSource{
							LocalObjectReference: LocalObjectReference{Name: "web-config"}, DefaultMode: api.Ptr[int32](0o644),
						}}},
					},
					Containers:                    []Container{container("web"), container("sidecar")},
					InitContainers:                []Container{{Name: "init", Image: "busybox", Command: []string{"sh", "-c", "true"}}},
					RestartPolicy:                 "Always",
					TerminationGracePeriodSeconds: api.Ptr[int64](30),
					NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
					ServiceAccountName:            "web",
				},
			},
			Strategy: DeploymentStrategy{
				Type: "RollingUpdate",
				RollingUpdate: &RollingUpdateDeployment{
					MaxUnavailable: api.Ptr(api.FromInt(1)), MaxSurge: api.Ptr(api.FromString("25%")),
				},
			},
			MinReadySeconds:         10,
			RevisionHistoryLimit:    api.Ptr[int32](10),
			ProgressDeadlineSeconds: api.Ptr[int32](600),
		},
		Status: DeploymentStatus{
			ObservedGeneration: 3, Replicas: 3,
			Conditions: []api.Condition{{
				Type: "Available", Status: api.ConditionTrue, LastTransitionTime: api.NewTime(created.Add(time.Minute)),
				Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.",
			}},
		},
	}
}
