package v1

import "github.com/converge-dev/converge/framework/api"

// Taint repels pods that do not tolerate it.
type Taint struct {
	Key       string      `json:"key" protobuf:"bytes,1,opt,name=key"`
	Value     string      `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
	Effect    TaintEffect `json:"effect" protobuf:"bytes,3,opt,name=effect,casttype=TaintEffect"`
	TimeAdded *api.Time   `json:"timeAdded,omitempty" protobuf:"bytes,4,opt,name=timeAdded"`
}

// ServiceAffinity has the JSON and protobuf shape of Kubernetes' core/v1 ServiceAffinity.
type ServiceAffinity string

// Values of ServiceAffinity.
const (
	ServiceAffinityClientIP ServiceAffinity = "ClientIP"
	ServiceAffinityNone     ServiceAffinity = "None"
)

// SessionAffinityConfig has the JSON and protobuf shape of Kubernetes' core/v1 SessionAffinityConfig.
type SessionAffinityConfig struct {
	ClientIP *ClientIPConfig `json:"clientIP,omitempty" protobuf:"bytes,1,opt,name=clientIP"`
}

// ClientIPConfig has the JSON and protobuf shape of Kubernetes' core/v1 ClientIPConfig.
type ClientIPConfig struct {
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty" protobuf:"varint,1,opt,name=timeoutSeconds"`
}

// ServiceType is an enumeration; see the constants.
type ServiceType string

// Values of ServiceType.
const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
	ServiceTypeExternalName ServiceType = "ExternalName"
)

// ServiceInternalTrafficPolicy is an enumeration; see the constants.
type ServiceInternalTrafficPolicy string

// Values of ServiceInternalTrafficPolicy.
const (
	ServiceInternalTrafficPolicyCluster ServiceInternalTrafficPolicy = "Cluster"
	ServiceInternalTrafficPolicyLocal   ServiceInternalTrafficPolicy = "Local"
)

// ServiceExternalTrafficPolicy is an enumeration; see the constants.
type ServiceExternalTrafficPolicy string

// Values of ServiceExternalTrafficPolicy.
const (
	ServiceExternalTrafficPolicyCluster ServiceExternalTrafficPolicy = "Cluster"
	ServiceExternalTrafficPolicyLocal   ServiceExternalTrafficPolicy = "Local"
)

// ServiceStatus is the observed state of a Service.
type ServiceStatus struct {
	LoadBalancer LoadBalancerStatus `json:"loadBalancer,omitempty" protobuf:"bytes,1,opt,name=loadBalancer"`
	Conditions   []api.Condition    `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,2,rep,name=conditions"`
}

// LoadBalancerStatus is the observed state of a LoadBalancer.
type LoadBalancerStatus struct {
	Ingress []LoadBalancerIngress `json:"ingress,omitempty" protobuf:"bytes,1,rep,name=ingress"`
}

// LoadBalancerIngress has the JSON and protobuf shape of Kubernetes' core/v1 LoadBalancerIngress.
type LoadBalancerIngress struct {
	IP       string              `json:"ip,omitempty" protobuf:"bytes,1,opt,name=ip"`
	Hostname string              `json:"hostname,omitempty" protobuf:"bytes,2,opt,name=hostname"`
	IPMode   *LoadBalancerIPMode `json:"ipMode,omitempty" protobuf:"bytes,3,opt,name=ipMode"`
	Ports    []PortStatus        `json:"ports,omitempty" protobuf:"bytes,4,rep,name=ports"`
}

// IPFamily has the JSON and protobuf shape of Kubernetes' core/v1 IPFamily.
type IPFamily string

// Values of IPFamily.
const (
	IPv4Protocol    IPFamily = "IPv4"
	IPv6Protocol    IPFamily = "IPv6"
	IPFamilyUnknown IPFamily = ""
)

// IPFamilyPolicy is an enumeration; see the constants.
type IPFamilyPolicy string

// Values of IPFamilyPolicy.
const (
	IPFamilyPolicySingleStack      IPFamilyPolicy = "SingleStack"
	IPFamilyPolicyPreferDualStack  IPFamilyPolicy = "PreferDualStack"
	IPFamilyPolicyRequireDualStack IPFamilyPolicy = "RequireDualStack"
)

// ServiceSpec is the desired state of a Service.
type ServiceSpec struct {
	Ports                         []ServicePort                 `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"port" listType:"map" listMapKeys:"port,protocol" protobuf:"bytes,1,rep,name=ports"`
	Selector                      map[string]string             `json:"selector,omitempty" mapType:"atomic" protobuf:"bytes,2,rep,name=selector" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	ClusterIP                     string                        `json:"clusterIP,omitempty" protobuf:"bytes,3,opt,name=clusterIP"`
	ClusterIPs                    []string                      `json:"clusterIPs,omitempty" protobuf:"bytes,18,opt,name=clusterIPs"`
	Type                          ServiceType                   `json:"type,omitempty" protobuf:"bytes,4,opt,name=type,casttype=ServiceType"`
	ExternalIPs                   []string                      `json:"externalIPs,omitempty" protobuf:"bytes,5,rep,name=externalIPs"`
	SessionAffinity               ServiceAffinity               `json:"sessionAffinity,omitempty" protobuf:"bytes,7,opt,name=sessionAffinity,casttype=ServiceAffinity"`
	LoadBalancerIP                string                        `json:"loadBalancerIP,omitempty" protobuf:"bytes,8,opt,name=loadBalancerIP"`
	LoadBalancerSourceRanges      []string                      `json:"loadBalancerSourceRanges,omitempty" protobuf:"bytes,9,opt,name=loadBalancerSourceRanges"`
	ExternalName                  string                        `json:"externalName,omitempty" protobuf:"bytes,10,opt,name=externalName"`
	ExternalTrafficPolicy         ServiceExternalTrafficPolicy  `json:"externalTrafficPolicy,omitempty" protobuf:"bytes,11,opt,name=externalTrafficPolicy"`
	HealthCheckNodePort           int32                         `json:"healthCheckNodePort,omitempty" protobuf:"bytes,12,opt,name=healthCheckNodePort"`
	PublishNotReadyAddresses      bool                          `json:"publishNotReadyAddresses,omitempty" protobuf:"varint,13,opt,name=publishNotReadyAddresses"`
	SessionAffinityConfig         *SessionAffinityConfig        `json:"sessionAffinityConfig,omitempty" protobuf:"bytes,14,opt,name=sessionAffinityConfig"`
	IPFamilies                    []IPFamily                    `json:"ipFamilies,omitempty" protobuf:"bytes,19,opt,name=ipFamilies,casttype=IPFamily"`
	IPFamilyPolicy                *IPFamilyPolicy               `json:"ipFamilyPolicy,omitempty" protobuf:"bytes,17,opt,name=ipFamilyPolicy,casttype=IPFamilyPolicy"`
	AllocateLoadBalancerNodePorts *bool                         `json:"allocateLoadBalancerNodePorts,omitempty" protobuf:"bytes,20,opt,name=allocateLoadBalancerNodePorts"`
	LoadBalancerClass             *string                       `json:"loadBalancerClass,omitempty" protobuf:"bytes,21,opt,name=loadBalancerClass"`
	InternalTrafficPolicy         *ServiceInternalTrafficPolicy `json:"internalTrafficPolicy,omitempty" protobuf:"bytes,22,opt,name=internalTrafficPolicy"`
	TrafficDistribution           *string                       `json:"trafficDistribution,omitempty" protobuf:"bytes,23,opt,name=trafficDistribution"`
}

// ServicePort is a port a service exposes.
type ServicePort struct {
	Name        string          `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Protocol    Protocol        `json:"protocol,omitempty" default:"TCP" protobuf:"bytes,2,opt,name=protocol,casttype=Protocol"`
	AppProtocol *string         `json:"appProtocol,omitempty" protobuf:"bytes,6,opt,name=appProtocol"`
	Port        int32           `json:"port" protobuf:"varint,3,opt,name=port"`
	TargetPort  api.IntOrString `json:"targetPort,omitempty" protobuf:"bytes,4,opt,name=targetPort"`
	NodePort    int32           `json:"nodePort,omitempty" protobuf:"varint,5,opt,name=nodePort"`
}

// Service exposes a set of pods under a stable address.
type Service struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           ServiceSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         ServiceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ServiceList is a list of Service objects.
type ServiceList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Service `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ServiceAccount is an identity for processes running in pods.
type ServiceAccount struct {
	api.TypeMeta                 `json:",inline"`
	api.ObjectMeta               `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Secrets                      []ObjectReference      `json:"secrets,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,2,rep,name=secrets"`
	ImagePullSecrets             []LocalObjectReference `json:"imagePullSecrets,omitempty" protobuf:"bytes,3,rep,name=imagePullSecrets"`
	AutomountServiceAccountToken *bool                  `json:"automountServiceAccountToken,omitempty" protobuf:"varint,4,opt,name=automountServiceAccountToken"`
}

// ServiceAccountList is a list of ServiceAccount objects.
type ServiceAccountList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ServiceAccount `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Endpoints lists the addresses behind a service.
type Endpoints struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Subsets        []EndpointSubset `json:"subsets,omitempty" protobuf:"bytes,2,rep,name=subsets"`
}

// EndpointSubset is a set of addresses sharing a set of ports.
type EndpointSubset struct {
	Addresses         []EndpointAddress `json:"addresses,omitempty" protobuf:"bytes,1,rep,name=addresses"`
	NotReadyAddresses []EndpointAddress `json:"notReadyAddresses,omitempty" protobuf:"bytes,2,rep,name=notReadyAddresses"`
	Ports             []EndpointPort    `json:"ports,omitempty" protobuf:"bytes,3,rep,name=ports"`
}

// EndpointAddress has the JSON and protobuf shape of Kubernetes' core/v1 EndpointAddress.
type EndpointAddress struct {
	IP        string           `json:"ip" protobuf:"bytes,1,opt,name=ip"`
	Hostname  string           `json:"hostname,omitempty" protobuf:"bytes,3,opt,name=hostname"`
	NodeName  *string          `json:"nodeName,omitempty" protobuf:"bytes,4,opt,name=nodeName"`
	TargetRef *ObjectReference `json:"targetRef,omitempty" protobuf:"bytes,2,opt,name=targetRef"`
}

// EndpointPort has the JSON and protobuf shape of Kubernetes' core/v1 EndpointPort.
type EndpointPort struct {
	Name        string   `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Port        int32    `json:"port" protobuf:"varint,2,opt,name=port"`
	Protocol    Protocol `json:"protocol,omitempty" protobuf:"bytes,3,opt,name=protocol,casttype=Protocol"`
	AppProtocol *string  `json:"appProtocol,omitempty" protobuf:"bytes,4,opt,name=appProtocol"`
}

// EndpointsList is a list of Endpoints objects.
type EndpointsList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Endpoints `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// NodeSpec is the desired state of a Node.
type NodeSpec struct {
	PodCIDR             string                   `json:"podCIDR,omitempty" protobuf:"bytes,1,opt,name=podCIDR"`
	PodCIDRs            []string                 `json:"podCIDRs,omitempty" protobuf:"bytes,7,opt,name=podCIDRs" patchStrategy:"merge"`
	ProviderID          string                   `json:"providerID,omitempty" protobuf:"bytes,3,opt,name=providerID"`
	Unschedulable       bool                     `json:"unschedulable,omitempty" protobuf:"varint,4,opt,name=unschedulable"`
	Taints              []Taint                  `json:"taints,omitempty" protobuf:"bytes,5,opt,name=taints"`
	ConfigSource        *NodeConfigSource        `json:"configSource,omitempty" protobuf:"bytes,6,opt,name=configSource"`
	DoNotUseExternalID  string                   `json:"externalID,omitempty" protobuf:"bytes,2,opt,name=externalID"`
	PodPreemptionPolicy *NodePodPreemptionPolicy `json:"podPreemptionPolicy,omitempty" protobuf:"bytes,8,opt,name=podPreemptionPolicy"`
}

// NodePodPreemptionPolicy is an enumeration; see the constants.
type NodePodPreemptionPolicy struct {
	DisableResizePreemption []string `json:"disableResizePreemption,omitempty" protobuf:"bytes,1,rep,name=disableResizePreemption"`
}

// NodeConfigSource has the JSON and protobuf shape of Kubernetes' core/v1 NodeConfigSource.
type NodeConfigSource struct {
	ConfigMap *ConfigMapNodeConfigSource `json:"configMap,omitempty" protobuf:"bytes,2,opt,name=configMap"`
}

// ConfigMapNodeConfigSource has the JSON and protobuf shape of Kubernetes' core/v1 ConfigMapNodeConfigSource.
type ConfigMapNodeConfigSource struct {
	Namespace        string `json:"namespace" protobuf:"bytes,1,opt,name=namespace"`
	Name             string `json:"name" protobuf:"bytes,2,opt,name=name"`
	UID              string `json:"uid,omitempty" protobuf:"bytes,3,opt,name=uid"`
	ResourceVersion  string `json:"resourceVersion,omitempty" protobuf:"bytes,4,opt,name=resourceVersion"`
	KubeletConfigKey string `json:"kubeletConfigKey" protobuf:"bytes,5,opt,name=kubeletConfigKey"`
}

// DaemonEndpoint has the JSON and protobuf shape of Kubernetes' core/v1 DaemonEndpoint.
type DaemonEndpoint struct {
	Port int32 `json:"Port" protobuf:"varint,1,opt,name=Port"`
}

// NodeDaemonEndpoints has the JSON and protobuf shape of Kubernetes' core/v1 NodeDaemonEndpoints.
type NodeDaemonEndpoints struct {
	KubeletEndpoint DaemonEndpoint `json:"kubeletEndpoint,omitempty" protobuf:"bytes,1,opt,name=kubeletEndpoint"`
}

// NodeRuntimeHandlerFeatures has the JSON and protobuf shape of Kubernetes' core/v1 NodeRuntimeHandlerFeatures.
type NodeRuntimeHandlerFeatures struct {
	RecursiveReadOnlyMounts *bool `json:"recursiveReadOnlyMounts,omitempty" protobuf:"varint,1,opt,name=recursiveReadOnlyMounts"`
	UserNamespaces          *bool `json:"userNamespaces,omitempty" protobuf:"varint,2,opt,name=userNamespaces"`
}

// NodeRuntimeHandler has the JSON and protobuf shape of Kubernetes' core/v1 NodeRuntimeHandler.
type NodeRuntimeHandler struct {
	Name     string                      `json:"name" protobuf:"bytes,1,opt,name=name"`
	Features *NodeRuntimeHandlerFeatures `json:"features,omitempty" protobuf:"bytes,2,opt,name=features"`
}

// NodeFeatures has the JSON and protobuf shape of Kubernetes' core/v1 NodeFeatures.
type NodeFeatures struct {
	SupplementalGroupsPolicy *bool `json:"supplementalGroupsPolicy,omitempty" protobuf:"varint,1,opt,name=supplementalGroupsPolicy"`
}

// NodeSystemInfo has the JSON and protobuf shape of Kubernetes' core/v1 NodeSystemInfo.
type NodeSystemInfo struct {
	MachineID               string          `json:"machineID" protobuf:"bytes,1,opt,name=machineID"`
	SystemUUID              string          `json:"systemUUID" protobuf:"bytes,2,opt,name=systemUUID"`
	BootID                  string          `json:"bootID" protobuf:"bytes,3,opt,name=bootID"`
	KernelVersion           string          `json:"kernelVersion" protobuf:"bytes,4,opt,name=kernelVersion"`
	OSImage                 string          `json:"osImage" protobuf:"bytes,5,opt,name=osImage"`
	ContainerRuntimeVersion string          `json:"containerRuntimeVersion" protobuf:"bytes,6,opt,name=containerRuntimeVersion"`
	KubeletVersion          string          `json:"kubeletVersion" protobuf:"bytes,7,opt,name=kubeletVersion"`
	KubeProxyVersion        string          `json:"kubeProxyVersion" protobuf:"bytes,8,opt,name=kubeProxyVersion"`
	OperatingSystem         string          `json:"operatingSystem" protobuf:"bytes,9,opt,name=operatingSystem"`
	Architecture            string          `json:"architecture" protobuf:"bytes,10,opt,name=architecture"`
	Swap                    *NodeSwapStatus `json:"swap,omitempty" protobuf:"bytes,11,opt,name=swap"`
}

// NodeSwapStatus is the observed state of a NodeSwap.
type NodeSwapStatus struct {
	Capacity *int64 `json:"capacity,omitempty" protobuf:"varint,1,opt,name=capacity"`
}

// NodeConfigStatus is the observed state of a NodeConfig.
type NodeConfigStatus struct {
	Assigned      *NodeConfigSource `json:"assigned,omitempty" protobuf:"bytes,1,opt,name=assigned"`
	Active        *NodeConfigSource `json:"active,omitempty" protobuf:"bytes,2,opt,name=active"`
	LastKnownGood *NodeConfigSource `json:"lastKnownGood,omitempty" protobuf:"bytes,3,opt,name=lastKnownGood"`
	Error         string            `json:"error,omitempty" protobuf:"bytes,4,opt,name=error"`
}

// NodeStatus is the observed state of a Node.
type NodeStatus struct {
	Capacity         ResourceList         `json:"capacity,omitempty" protobuf:"bytes,1,rep,name=capacity,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Allocatable      ResourceList         `json:"allocatable,omitempty" protobuf:"bytes,2,rep,name=allocatable,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Phase            NodePhase            `json:"phase,omitempty" protobuf:"bytes,3,opt,name=phase,casttype=NodePhase"`
	Conditions       []NodeCondition      `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,4,rep,name=conditions"`
	Addresses        []NodeAddress        `json:"addresses,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,5,rep,name=addresses"`
	DaemonEndpoints  NodeDaemonEndpoints  `json:"daemonEndpoints,omitempty" protobuf:"bytes,6,opt,name=daemonEndpoints"`
	NodeInfo         NodeSystemInfo       `json:"nodeInfo,omitempty" protobuf:"bytes,7,opt,name=nodeInfo"`
	Images           []ContainerImage     `json:"images,omitempty" protobuf:"bytes,8,rep,name=images"`
	VolumesInUse     []UniqueVolumeName   `json:"volumesInUse,omitempty" protobuf:"bytes,9,rep,name=volumesInUse"`
	VolumesAttached  []AttachedVolume     `json:"volumesAttached,omitempty" protobuf:"bytes,10,rep,name=volumesAttached"`
	Config           *NodeConfigStatus    `json:"config,omitempty" protobuf:"bytes,11,opt,name=config"`
	RuntimeHandlers  []NodeRuntimeHandler `json:"runtimeHandlers,omitempty" protobuf:"bytes,12,rep,name=runtimeHandlers"`
	Features         *NodeFeatures        `json:"features,omitempty" protobuf:"bytes,13,rep,name=features"`
	DeclaredFeatures []string             `json:"declaredFeatures,omitempty" protobuf:"bytes,14,rep,name=declaredFeatures"`
}

// UniqueVolumeName has the JSON and protobuf shape of Kubernetes' core/v1 UniqueVolumeName.
type UniqueVolumeName string

// AttachedVolume has the JSON and protobuf shape of Kubernetes' core/v1 AttachedVolume.
type AttachedVolume struct {
	Name       UniqueVolumeName `json:"name" protobuf:"bytes,1,rep,name=name"`
	DevicePath string           `json:"devicePath" protobuf:"bytes,2,rep,name=devicePath"`
}

// ContainerImage has the JSON and protobuf shape of Kubernetes' core/v1 ContainerImage.
type ContainerImage struct {
	Names     []string `json:"names" protobuf:"bytes,1,rep,name=names"`
	SizeBytes int64    `json:"sizeBytes,omitempty" protobuf:"varint,2,opt,name=sizeBytes"`
}

// NodePhase is an enumeration; see the constants.
type NodePhase string

// Values of NodePhase.
const (
	NodePending    NodePhase = "Pending"
	NodeRunning    NodePhase = "Running"
	NodeTerminated NodePhase = "Terminated"
)

// NodeConditionType is an enumeration; see the constants.
type NodeConditionType string

// Values of NodeConditionType.
const (
	NodeReady                          NodeConditionType = "Ready"
	NodeMemoryPressure                 NodeConditionType = "MemoryPressure"
	NodeDiskPressure                   NodeConditionType = "DiskPressure"
	NodePIDPressure                    NodeConditionType = "PIDPressure"
	NodeNetworkUnavailable             NodeConditionType = "NetworkUnavailable"
	NodeGracefulNodeShutdownInProgress NodeConditionType = "GracefulNodeShutdownInProgress"
	NodeDrainInProgress                NodeConditionType = "DrainInProgress"
	NodeDrained                        NodeConditionType = "Drained"
	NodeMaintenancePlanned             NodeConditionType = "MaintenancePlanned"
	NodeMaintenanceInProgress          NodeConditionType = "MaintenanceInProgress"
)

// NodeCondition is a condition of a node.
type NodeCondition struct {
	Type               NodeConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=NodeConditionType"`
	Status             ConditionStatus   `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	LastHeartbeatTime  api.Time          `json:"lastHeartbeatTime,omitempty" protobuf:"bytes,3,opt,name=lastHeartbeatTime"`
	LastTransitionTime api.Time          `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string            `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	Message            string            `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// NodeAddressType is an enumeration; see the constants.
type NodeAddressType string

// Values of NodeAddressType.
const (
	NodeHostName    NodeAddressType = "Hostname"
	NodeInternalIP  NodeAddressType = "InternalIP"
	NodeExternalIP  NodeAddressType = "ExternalIP"
	NodeInternalDNS NodeAddressType = "InternalDNS"
	NodeExternalDNS NodeAddressType = "ExternalDNS"
)

// NodeAddress has the JSON and protobuf shape of Kubernetes' core/v1 NodeAddress.
type NodeAddress struct {
	Type    NodeAddressType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=NodeAddressType"`
	Address string          `json:"address" protobuf:"bytes,2,opt,name=address"`
}

// Node is a worker machine.
type Node struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           NodeSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         NodeStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// NodeList is a list of Node objects.
type NodeList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Node `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// FinalizerName has the JSON and protobuf shape of Kubernetes' core/v1 FinalizerName.
type FinalizerName string

// Values of FinalizerName.
const (
	FinalizerKubernetes FinalizerName = "kubernetes"
)

// NamespaceSpec is the desired state of a Namespace.
type NamespaceSpec struct {
	Finalizers []FinalizerName `json:"finalizers,omitempty" protobuf:"bytes,1,rep,name=finalizers,casttype=FinalizerName"`
}

// NamespaceStatus is the observed state of a Namespace.
type NamespaceStatus struct {
	Phase      NamespacePhase       `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=NamespacePhase"`
	Conditions []NamespaceCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,2,rep,name=conditions"`
}

// NamespacePhase is an enumeration; see the constants.
type NamespacePhase string

// Values of NamespacePhase.
const (
	NamespaceActive      NamespacePhase = "Active"
	NamespaceTerminating NamespacePhase = "Terminating"
)

// NamespaceConditionType is an enumeration; see the constants.
type NamespaceConditionType string

// Values of NamespaceConditionType.
const (
	NamespaceDeletionDiscoveryFailure NamespaceConditionType = "NamespaceDeletionDiscoveryFailure"
	NamespaceDeletionContentFailure   NamespaceConditionType = "NamespaceDeletionContentFailure"
	NamespaceDeletionGVParsingFailure NamespaceConditionType = "NamespaceDeletionGroupVersionParsingFailure"
	NamespaceContentRemaining         NamespaceConditionType = "NamespaceContentRemaining"
	NamespaceFinalizersRemaining      NamespaceConditionType = "NamespaceFinalizersRemaining"
)

// NamespaceCondition has the JSON and protobuf shape of Kubernetes' core/v1 NamespaceCondition.
type NamespaceCondition struct {
	Type               NamespaceConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=NamespaceConditionType"`
	Status             ConditionStatus        `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	LastTransitionTime api.Time               `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string                 `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	Message            string                 `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// Namespace is a scope for names.
type Namespace struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           NamespaceSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         NamespaceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// NamespaceList is a list of Namespace objects.
type NamespaceList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Namespace `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Binding binds a pod to a node (the pods/binding subresource).
type Binding struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Target         ObjectReference `json:"target" protobuf:"bytes,2,opt,name=target"`
}

// EventSource names the component that reported an event.
type EventSource struct {
	Component string `json:"component,omitempty" protobuf:"bytes,1,opt,name=component"`
	Host      string `json:"host,omitempty" protobuf:"bytes,2,opt,name=host"`
}

// Event reports something that happened to an object (core/v1 form).
type Event struct {
	api.TypeMeta        `json:",inline"`
	api.ObjectMeta      `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	InvolvedObject      ObjectReference  `json:"involvedObject" protobuf:"bytes,2,opt,name=involvedObject"`
	Reason              string           `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
	Message             string           `json:"message,omitempty" protobuf:"bytes,4,opt,name=message"`
	Source              EventSource      `json:"source,omitempty" protobuf:"bytes,5,opt,name=source"`
	FirstTimestamp      api.Time         `json:"firstTimestamp,omitempty" protobuf:"bytes,6,opt,name=firstTimestamp"`
	LastTimestamp       api.Time         `json:"lastTimestamp,omitempty" protobuf:"bytes,7,opt,name=lastTimestamp"`
	Count               int32            `json:"count,omitempty" protobuf:"varint,8,opt,name=count"`
	Type                string           `json:"type,omitempty" protobuf:"bytes,9,opt,name=type"`
	EventTime           api.MicroTime    `json:"eventTime,omitempty" protobuf:"bytes,10,opt,name=eventTime"`
	Series              *EventSeries     `json:"series,omitempty" protobuf:"bytes,11,opt,name=series"`
	Action              string           `json:"action,omitempty" protobuf:"bytes,12,opt,name=action"`
	Related             *ObjectReference `json:"related,omitempty" protobuf:"bytes,13,opt,name=related"`
	ReportingController string           `json:"reportingComponent" protobuf:"bytes,14,opt,name=reportingComponent"`
	ReportingInstance   string           `json:"reportingInstance" protobuf:"bytes,15,opt,name=reportingInstance"`
}

// EventSeries summarises repeated occurrences of an event.
type EventSeries struct {
	Count            int32         `json:"count,omitempty" protobuf:"varint,1,name=count"`
	LastObservedTime api.MicroTime `json:"lastObservedTime,omitempty" protobuf:"bytes,2,name=lastObservedTime"`
}

// EventList is a list of Event objects.
type EventList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Event `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Secret holds secret data; stringData is merged into data on write.
type Secret struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Immutable      *bool             `json:"immutable,omitempty" protobuf:"varint,5,opt,name=immutable"`
	Data           map[string][]byte `json:"data,omitempty" protobuf:"bytes,2,rep,name=data" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	StringData     map[string]string `json:"stringData,omitempty" protobuf:"bytes,4,rep,name=stringData" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Type           SecretType        `json:"type,omitempty" protobuf:"bytes,3,opt,name=type,casttype=SecretType"`
}

// SecretType is an enumeration; see the constants.
type SecretType string

// Values of SecretType.
const (
	SecretTypeOpaque              SecretType = "Opaque"
	SecretTypeServiceAccountToken SecretType = "kubernetes.io/service-account-token"
	SecretTypeDockercfg           SecretType = "kubernetes.io/dockercfg"
	SecretTypeDockerConfigJson    SecretType = "kubernetes.io/dockerconfigjson"
	SecretTypeBasicAuth           SecretType = "kubernetes.io/basic-auth"
	SecretTypeSSHAuth             SecretType = "kubernetes.io/ssh-auth"
	SecretTypeTLS                 SecretType = "kubernetes.io/tls"
	SecretTypeBootstrapToken      SecretType = "bootstrap.kubernetes.io/token"
)

// SecretList is a list of Secret objects.
type SecretList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Secret `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ConfigMap holds non-secret configuration data.
type ConfigMap struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Immutable      *bool             `json:"immutable,omitempty" protobuf:"varint,4,opt,name=immutable"`
	Data           map[string]string `json:"data,omitempty" protobuf:"bytes,2,rep,name=data" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	BinaryData     map[string][]byte `json:"binaryData,omitempty" protobuf:"bytes,3,rep,name=binaryData" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// ConfigMapList is a list of ConfigMap objects.
type ConfigMapList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ConfigMap `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// PortStatus is the observed state of a Port.
type PortStatus struct {
	Port     int32    `json:"port" protobuf:"varint,1,opt,name=port"`
	Protocol Protocol `json:"protocol" protobuf:"bytes,2,opt,name=protocol,casttype=Protocol"`
	Error    *string  `json:"error,omitempty" protobuf:"bytes,3,opt,name=error"`
}

// LoadBalancerIPMode is an enumeration; see the constants.
type LoadBalancerIPMode string

// Values of LoadBalancerIPMode.
const (
	LoadBalancerIPModeVIP   LoadBalancerIPMode = "VIP"
	LoadBalancerIPModeProxy LoadBalancerIPMode = "Proxy"
)
