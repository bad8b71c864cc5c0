package v1

import "github.com/converge-dev/converge/framework/api"

// Volume is a named volume of a pod; exactly one source is set.
type Volume struct {
	Name         string `json:"name" protobuf:"bytes,1,opt,name=name"`
	VolumeSource `json:",inline" protobuf:"bytes,2,opt,name=volumeSource"`
}

// VolumeSource holds the one source of a volume.
type VolumeSource struct {
	HostPath              *HostPathVolumeSource              `json:"hostPath,omitempty" protobuf:"bytes,1,opt,name=hostPath"`
	EmptyDir              *EmptyDirVolumeSource              `json:"emptyDir,omitempty" protobuf:"bytes,2,opt,name=emptyDir"`
	GCEPersistentDisk     *GCEPersistentDiskVolumeSource     `json:"gcePersistentDisk,omitempty" protobuf:"bytes,3,opt,name=gcePersistentDisk"`
	AWSElasticBlockStore  *AWSElasticBlockStoreVolumeSource  `json:"awsElasticBlockStore,omitempty" protobuf:"bytes,4,opt,name=awsElasticBlockStore"`
	GitRepo               *GitRepoVolumeSource               `json:"gitRepo,omitempty" protobuf:"bytes,5,opt,name=gitRepo"`
	Secret                *SecretVolumeSource                `json:"secret,omitempty" protobuf:"bytes,6,opt,name=secret"`
	NFS                   *NFSVolumeSource                   `json:"nfs,omitempty" protobuf:"bytes,7,opt,name=nfs"`
	ISCSI                 *ISCSIVolumeSource                 `json:"iscsi,omitempty" protobuf:"bytes,8,opt,name=iscsi"`
	Glusterfs             *GlusterfsVolumeSource             `json:"glusterfs,omitempty" protobuf:"bytes,9,opt,name=glusterfs"`
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty" protobuf:"bytes,10,opt,name=persistentVolumeClaim"`
	RBD                   *RBDVolumeSource                   `json:"rbd,omitempty" protobuf:"bytes,11,opt,name=rbd"`
	FlexVolume            *FlexVolumeSource                  `json:"flexVolume,omitempty" protobuf:"bytes,12,opt,name=flexVolume"`
	Cinder                *CinderVolumeSource                `json:"cinder,omitempty" protobuf:"bytes,13,opt,name=cinder"`
	CephFS                *CephFSVolumeSource                `json:"cephfs,omitempty" protobuf:"bytes,14,opt,name=cephfs"`
	Flocker               *FlockerVolumeSource               `json:"flocker,omitempty" protobuf:"bytes,15,opt,name=flocker"`
	DownwardAPI           *DownwardAPIVolumeSource           `json:"downwardAPI,omitempty" protobuf:"bytes,16,opt,name=downwardAPI"`
	FC                    *FCVolumeSource                    `json:"fc,omitempty" protobuf:"bytes,17,opt,name=fc"`
	AzureFile             *AzureFileVolumeSource             `json:"azureFile,omitempty" protobuf:"bytes,18,opt,name=azureFile"`
	ConfigMap             *ConfigMapVolumeSource             `json:"configMap,omitempty" protobuf:"bytes,19,opt,name=configMap"`
	VsphereVolume         *VsphereVirtualDiskVolumeSource    `json:"vsphereVolume,omitempty" protobuf:"bytes,20,opt,name=vsphereVolume"`
	Quobyte               *QuobyteVolumeSource               `json:"quobyte,omitempty" protobuf:"bytes,21,opt,name=quobyte"`
	AzureDisk             *AzureDiskVolumeSource             `json:"azureDisk,omitempty" protobuf:"bytes,22,opt,name=azureDisk"`
	PhotonPersistentDisk  *PhotonPersistentDiskVolumeSource  `json:"photonPersistentDisk,omitempty" protobuf:"bytes,23,opt,name=photonPersistentDisk"`
	Projected             *ProjectedVolumeSource             `json:"projected,omitempty" protobuf:"bytes,26,opt,name=projected"`
	PortworxVolume        *PortworxVolumeSource              `json:"portworxVolume,omitempty" protobuf:"bytes,24,opt,name=portworxVolume"`
	ScaleIO               *ScaleIOVolumeSource               `json:"scaleIO,omitempty" protobuf:"bytes,25,opt,name=scaleIO"`
	StorageOS             *StorageOSVolumeSource             `json:"storageos,omitempty" protobuf:"bytes,27,opt,name=storageos"`
	CSI                   *CSIVolumeSource                   `json:"csi,omitempty" protobuf:"bytes,28,opt,name=csi"`
	Ephemeral             *EphemeralVolumeSource             `json:"ephemeral,omitempty" protobuf:"bytes,29,opt,name=ephemeral"`
	Image                 *ImageVolumeSource                 `json:"image,omitempty" protobuf:"bytes,30,opt,name=image"`
}

// PersistentVolumeClaimVolumeSource describes a PersistentVolumeClaim volume.
type PersistentVolumeClaimVolumeSource struct {
	ClaimName string `json:"claimName" protobuf:"bytes,1,opt,name=claimName"`
	ReadOnly  bool   `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
}

// PersistentVolumeMode is an enumeration; see the constants.
type PersistentVolumeMode string

// Values of PersistentVolumeMode.
const (
	PersistentVolumeBlock      PersistentVolumeMode = "Block"
	PersistentVolumeFilesystem PersistentVolumeMode = "Filesystem"
)

// PersistentVolumeClaimSpec is the desired state of a PersistentVolumeClaim.
type PersistentVolumeClaimSpec struct {
	AccessModes               []PersistentVolumeAccessMode `json:"accessModes,omitempty" protobuf:"bytes,1,rep,name=accessModes,casttype=PersistentVolumeAccessMode"`
	Selector                  *api.LabelSelector           `json:"selector,omitempty" protobuf:"bytes,4,opt,name=selector"`
	Resources                 VolumeResourceRequirements   `json:"resources,omitempty" protobuf:"bytes,2,opt,name=resources"`
	VolumeName                string                       `json:"volumeName,omitempty" protobuf:"bytes,3,opt,name=volumeName"`
	StorageClassName          *string                      `json:"storageClassName,omitempty" protobuf:"bytes,5,opt,name=storageClassName"`
	VolumeMode                *PersistentVolumeMode        `json:"volumeMode,omitempty" protobuf:"bytes,6,opt,name=volumeMode,casttype=PersistentVolumeMode"`
	DataSource                *TypedLocalObjectReference   `json:"dataSource,omitempty" protobuf:"bytes,7,opt,name=dataSource"`
	DataSourceRef             *TypedObjectReference        `json:"dataSourceRef,omitempty" protobuf:"bytes,8,opt,name=dataSourceRef"`
	VolumeAttributesClassName *string                      `json:"volumeAttributesClassName,omitempty" protobuf:"bytes,9,opt,name=volumeAttributesClassName"`
}

// TypedObjectReference has the JSON and protobuf shape of Kubernetes' core/v1 TypedObjectReference.
type TypedObjectReference struct {
	APIGroup  *string `json:"apiGroup" protobuf:"bytes,1,opt,name=apiGroup"`
	Kind      string  `json:"kind" protobuf:"bytes,2,opt,name=kind"`
	Name      string  `json:"name" protobuf:"bytes,3,opt,name=name"`
	Namespace *string `json:"namespace,omitempty" protobuf:"bytes,4,opt,name=namespace"`
}

// VolumeHealthStatusType is an enumeration; see the constants.
type VolumeHealthStatusType string

// Values of VolumeHealthStatusType.
const (
	VolumeHealthInaccessible VolumeHealthStatusType = "Inaccessible"
	VolumeHealthDataLoss     VolumeHealthStatusType = "DataLoss"
	VolumeHealthDegraded     VolumeHealthStatusType = "Degraded"
)

// VolumeHealthCondition has the JSON and protobuf shape of Kubernetes' core/v1 VolumeHealthCondition.
type VolumeHealthCondition struct {
	Status  VolumeHealthStatusType `json:"status" protobuf:"bytes,1,opt,name=status,casttype=VolumeHealthStatusType"`
	Reason  string                 `json:"reason" protobuf:"bytes,2,opt,name=reason"`
	Message string                 `json:"message,omitempty" protobuf:"bytes,3,opt,name=message"`
}

// PodVolumeHealth has the JSON and protobuf shape of Kubernetes' core/v1 PodVolumeHealth.
type PodVolumeHealth struct {
	Name               string                  `json:"name" protobuf:"bytes,1,opt,name=name"`
	HealthConditions   []VolumeHealthCondition `json:"healthConditions,omitempty" patchStrategy:"merge" patchMergeKey:"status" protobuf:"bytes,2,rep,name=healthConditions"`
	LastTransitionTime api.Time                `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
}

// PersistentVolumeAccessMode is an enumeration; see the constants.
type PersistentVolumeAccessMode string

// Values of PersistentVolumeAccessMode.
const (
	ReadWriteOnce    PersistentVolumeAccessMode = "ReadWriteOnce"
	ReadOnlyMany     PersistentVolumeAccessMode = "ReadOnlyMany"
	ReadWriteMany    PersistentVolumeAccessMode = "ReadWriteMany"
	ReadWriteOncePod PersistentVolumeAccessMode = "ReadWriteOncePod"
)

// HostPathType is an enumeration; see the constants.
type HostPathType string

// Values of HostPathType.
const (
	HostPathUnset             HostPathType = ""
	HostPathDirectoryOrCreate HostPathType = "DirectoryOrCreate"
	HostPathDirectory         HostPathType = "Directory"
	HostPathFileOrCreate      HostPathType = "FileOrCreate"
	HostPathFile              HostPathType = "File"
	HostPathSocket            HostPathType = "Socket"
	HostPathCharDev           HostPathType = "CharDevice"
	HostPathBlockDev          HostPathType = "BlockDevice"
)

// HostPathVolumeSource describes a HostPath volume.
type HostPathVolumeSource struct {
	Path string        `json:"path" protobuf:"bytes,1,opt,name=path"`
	Type *HostPathType `json:"type,omitempty" protobuf:"bytes,2,opt,name=type"`
}

// EmptyDirVolumeSource describes a EmptyDir volume.
type EmptyDirVolumeSource struct {
	Medium    StorageMedium `json:"medium,omitempty" protobuf:"bytes,1,opt,name=medium,casttype=StorageMedium"`
	SizeLimit *api.Quantity `json:"sizeLimit,omitempty" protobuf:"bytes,2,opt,name=sizeLimit"`
	Mode      *int32        `json:"mode,omitempty" protobuf:"varint,3,opt,name=mode"`
}

// GlusterfsVolumeSource describes a Glusterfs volume.
type GlusterfsVolumeSource struct {
	EndpointsName string `json:"endpoints" protobuf:"bytes,1,opt,name=endpoints"`
	Path          string `json:"path" protobuf:"bytes,2,opt,name=path"`
	ReadOnly      bool   `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
}

// RBDVolumeSource describes a RBD volume.
type RBDVolumeSource struct {
	CephMonitors []string              `json:"monitors" protobuf:"bytes,1,rep,name=monitors"`
	RBDImage     string                `json:"image" protobuf:"bytes,2,opt,name=image"`
	FSType       string                `json:"fsType,omitempty" protobuf:"bytes,3,opt,name=fsType"`
	RBDPool      string                `json:"pool,omitempty" protobuf:"bytes,4,opt,name=pool"`
	RadosUser    string                `json:"user,omitempty" protobuf:"bytes,5,opt,name=user"`
	Keyring      string                `json:"keyring,omitempty" protobuf:"bytes,6,opt,name=keyring"`
	SecretRef    *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,7,opt,name=secretRef"`
	ReadOnly     bool                  `json:"readOnly,omitempty" protobuf:"varint,8,opt,name=readOnly"`
}

// CinderVolumeSource describes a Cinder volume.
type CinderVolumeSource struct {
	VolumeID  string                `json:"volumeID" protobuf:"bytes,1,opt,name=volumeID"`
	FSType    string                `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
	ReadOnly  bool                  `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
	SecretRef *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,4,opt,name=secretRef"`
}

// CephFSVolumeSource describes a CephFS volume.
type CephFSVolumeSource struct {
	Monitors   []string              `json:"monitors" protobuf:"bytes,1,rep,name=monitors"`
	Path       string                `json:"path,omitempty" protobuf:"bytes,2,opt,name=path"`
	User       string                `json:"user,omitempty" protobuf:"bytes,3,opt,name=user"`
	SecretFile string                `json:"secretFile,omitempty" protobuf:"bytes,4,opt,name=secretFile"`
	SecretRef  *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,5,opt,name=secretRef"`
	ReadOnly   bool                  `json:"readOnly,omitempty" protobuf:"varint,6,opt,name=readOnly"`
}

// FlockerVolumeSource describes a Flocker volume.
type FlockerVolumeSource struct {
	DatasetName string `json:"datasetName,omitempty" protobuf:"bytes,1,opt,name=datasetName"`
	DatasetUUID string `json:"datasetUUID,omitempty" protobuf:"bytes,2,opt,name=datasetUUID"`
}

// StorageMedium has the JSON and protobuf shape of Kubernetes' core/v1 StorageMedium.
type StorageMedium string

// Values of StorageMedium.
const (
	StorageMediumDefault         StorageMedium = ""
	StorageMediumMemory          StorageMedium = "Memory"
	StorageMediumHugePages       StorageMedium = "HugePages"
	StorageMediumHugePagesPrefix StorageMedium = "HugePages-"
)

// Protocol has the JSON and protobuf shape of Kubernetes' core/v1 Protocol.
type Protocol string

// Values of Protocol.
const (
	ProtocolTCP  Protocol = "TCP"
	ProtocolUDP  Protocol = "UDP"
	ProtocolSCTP Protocol = "SCTP"
)

// GCEPersistentDiskVolumeSource describes a GCEPersistentDisk volume.
type GCEPersistentDiskVolumeSource struct {
	PDName    string `json:"pdName" protobuf:"bytes,1,opt,name=pdName"`
	FSType    string `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
	Partition int32  `json:"partition,omitempty" protobuf:"varint,3,opt,name=partition"`
	ReadOnly  bool   `json:"readOnly,omitempty" protobuf:"varint,4,opt,name=readOnly"`
}

// QuobyteVolumeSource describes a Quobyte volume.
type QuobyteVolumeSource struct {
	Registry string `json:"registry" protobuf:"bytes,1,opt,name=registry"`
	Volume   string `json:"volume" protobuf:"bytes,2,opt,name=volume"`
	ReadOnly bool   `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
	User     string `json:"user,omitempty" protobuf:"bytes,4,opt,name=user"`
	Group    string `json:"group,omitempty" protobuf:"bytes,5,opt,name=group"`
	Tenant   string `json:"tenant,omitempty" protobuf:"bytes,6,opt,name=tenant"`
}

// FlexVolumeSource describes a Flex volume.
type FlexVolumeSource struct {
	Driver    string                `json:"driver" protobuf:"bytes,1,opt,name=driver"`
	FSType    string                `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
	SecretRef *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,3,opt,name=secretRef"`
	ReadOnly  bool                  `json:"readOnly,omitempty" protobuf:"varint,4,opt,name=readOnly"`
	Options   map[string]string     `json:"options,omitempty" protobuf:"bytes,5,rep,name=options" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// AWSElasticBlockStoreVolumeSource describes a AWSElasticBlockStore volume.
type AWSElasticBlockStoreVolumeSource struct {
	VolumeID  string `json:"volumeID" protobuf:"bytes,1,opt,name=volumeID"`
	FSType    string `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
	Partition int32  `json:"partition,omitempty" protobuf:"varint,3,opt,name=partition"`
	ReadOnly  bool   `json:"readOnly,omitempty" protobuf:"varint,4,opt,name=readOnly"`
}

// GitRepoVolumeSource describes a GitRepo volume.
type GitRepoVolumeSource struct {
	Repository string `json:"repository" protobuf:"bytes,1,opt,name=repository"`
	Revision   string `json:"revision,omitempty" protobuf:"bytes,2,opt,name=revision"`
	Directory  string `json:"directory,omitempty" protobuf:"bytes,3,opt,name=directory"`
}

// SecretVolumeSource describes a Secret volume.
type SecretVolumeSource struct {
	SecretName  string      `json:"secretName,omitempty" protobuf:"bytes,1,opt,name=secretName"`
	Items       []KeyToPath `json:"items,omitempty" protobuf:"bytes,2,rep,name=items"`
	DefaultMode *int32      `json:"defaultMode,omitempty" protobuf:"bytes,3,opt,name=defaultMode"`
	Optional    *bool       `json:"optional,omitempty" protobuf:"varint,4,opt,name=optional"`
	DefaultUser *int64      `json:"defaultUser,omitempty" protobuf:"varint,5,opt,name=defaultUser"`
}

// SecretProjection is one source of a projected volume.
type SecretProjection struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	Items                []KeyToPath `json:"items,omitempty" protobuf:"bytes,2,rep,name=items"`
	Optional             *bool       `json:"optional,omitempty" protobuf:"varint,4,opt,name=optional"`
}

// NFSVolumeSource describes a NFS volume.
type NFSVolumeSource struct {
	Server   string `json:"server" protobuf:"bytes,1,opt,name=server"`
	Path     string `json:"path" protobuf:"bytes,2,opt,name=path"`
	ReadOnly bool   `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
}

// ISCSIVolumeSource describes a ISCSI volume.
type ISCSIVolumeSource struct {
	TargetPortal      string                `json:"targetPortal" protobuf:"bytes,1,opt,name=targetPortal"`
	IQN               string                `json:"iqn" protobuf:"bytes,2,opt,name=iqn"`
	Lun               int32                 `json:"lun" protobuf:"varint,3,opt,name=lun"`
	ISCSIInterface    string                `json:"iscsiInterface,omitempty" protobuf:"bytes,4,opt,name=iscsiInterface"`
	FSType            string                `json:"fsType,omitempty" protobuf:"bytes,5,opt,name=fsType"`
	ReadOnly          bool                  `json:"readOnly,omitempty" protobuf:"varint,6,opt,name=readOnly"`
	Portals           []string              `json:"portals,omitempty" protobuf:"bytes,7,opt,name=portals"`
	DiscoveryCHAPAuth bool                  `json:"chapAuthDiscovery,omitempty" protobuf:"varint,8,opt,name=chapAuthDiscovery"`
	SessionCHAPAuth   bool                  `json:"chapAuthSession,omitempty" protobuf:"varint,11,opt,name=chapAuthSession"`
	SecretRef         *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,10,opt,name=secretRef"`
	InitiatorName     *string               `json:"initiatorName,omitempty" protobuf:"bytes,12,opt,name=initiatorName"`
}

// FCVolumeSource describes a FC volume.
type FCVolumeSource struct {
	TargetWWNs []string `json:"targetWWNs,omitempty" protobuf:"bytes,1,rep,name=targetWWNs"`
	Lun        *int32   `json:"lun,omitempty" protobuf:"varint,2,opt,name=lun"`
	FSType     string   `json:"fsType,omitempty" protobuf:"bytes,3,opt,name=fsType"`
	ReadOnly   bool     `json:"readOnly,omitempty" protobuf:"varint,4,opt,name=readOnly"`
	WWIDs      []string `json:"wwids,omitempty" protobuf:"bytes,5,rep,name=wwids"`
}

// AzureFileVolumeSource describes a AzureFile volume.
type AzureFileVolumeSource struct {
	SecretName string `json:"secretName" protobuf:"bytes,1,opt,name=secretName"`
	ShareName  string `json:"shareName" protobuf:"bytes,2,opt,name=shareName"`
	ReadOnly   bool   `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
}

// VsphereVirtualDiskVolumeSource describes a VsphereVirtualDisk volume.
type VsphereVirtualDiskVolumeSource struct {
	VolumePath        string `json:"volumePath" protobuf:"bytes,1,opt,name=volumePath"`
	FSType            string `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
	StoragePolicyName string `json:"storagePolicyName,omitempty" protobuf:"bytes,3,opt,name=storagePolicyName"`
	StoragePolicyID   string `json:"storagePolicyID,omitempty" protobuf:"bytes,4,opt,name=storagePolicyID"`
}

// PhotonPersistentDiskVolumeSource describes a PhotonPersistentDisk volume.
type PhotonPersistentDiskVolumeSource struct {
	PdID   string `json:"pdID" protobuf:"bytes,1,opt,name=pdID"`
	FSType string `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
}

// AzureDataDiskCachingMode is an enumeration; see the constants.
type AzureDataDiskCachingMode string

// Values of AzureDataDiskCachingMode.
const (
	AzureDataDiskCachingNone      AzureDataDiskCachingMode = "None"
	AzureDataDiskCachingReadOnly  AzureDataDiskCachingMode = "ReadOnly"
	AzureDataDiskCachingReadWrite AzureDataDiskCachingMode = "ReadWrite"
)

// AzureDataDiskKind has the JSON and protobuf shape of Kubernetes' core/v1 AzureDataDiskKind.
type AzureDataDiskKind string

// Values of AzureDataDiskKind.
const (
	AzureSharedBlobDisk    AzureDataDiskKind = "Shared"
	AzureDedicatedBlobDisk AzureDataDiskKind = "Dedicated"
	AzureManagedDisk       AzureDataDiskKind = "Managed"
)

// AzureDiskVolumeSource describes a AzureDisk volume.
type AzureDiskVolumeSource struct {
	DiskName    string                    `json:"diskName" protobuf:"bytes,1,opt,name=diskName"`
	DataDiskURI string                    `json:"diskURI" protobuf:"bytes,2,opt,name=diskURI"`
	CachingMode *AzureDataDiskCachingMode `json:"cachingMode,omitempty" protobuf:"bytes,3,opt,name=cachingMode,casttype=AzureDataDiskCachingMode"`
	FSType      *string                   `json:"fsType,omitempty" protobuf:"bytes,4,opt,name=fsType"`
	ReadOnly    *bool                     `json:"readOnly,omitempty" protobuf:"varint,5,opt,name=readOnly"`
	Kind        *AzureDataDiskKind        `json:"kind,omitempty" protobuf:"bytes,6,opt,name=kind,casttype=AzureDataDiskKind"`
}

// PortworxVolumeSource describes a Portworx volume.
type PortworxVolumeSource struct {
	VolumeID string `json:"volumeID" protobuf:"bytes,1,opt,name=volumeID"`
	FSType   string `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
	ReadOnly bool   `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
}

// ScaleIOVolumeSource describes a ScaleIO volume.
type ScaleIOVolumeSource struct {
	Gateway          string                `json:"gateway" protobuf:"bytes,1,opt,name=gateway"`
	System           string                `json:"system" protobuf:"bytes,2,opt,name=system"`
	SecretRef        *LocalObjectReference `json:"secretRef" protobuf:"bytes,3,opt,name=secretRef"`
	SSLEnabled       bool                  `json:"sslEnabled,omitempty" protobuf:"varint,4,opt,name=sslEnabled"`
	ProtectionDomain string                `json:"protectionDomain,omitempty" protobuf:"bytes,5,opt,name=protectionDomain"`
	StoragePool      string                `json:"storagePool,omitempty" protobuf:"bytes,6,opt,name=storagePool"`
	StorageMode      string                `json:"storageMode,omitempty" protobuf:"bytes,7,opt,name=storageMode"`
	VolumeName       string                `json:"volumeName,omitempty" protobuf:"bytes,8,opt,name=volumeName"`
	FSType           string                `json:"fsType,omitempty" protobuf:"bytes,9,opt,name=fsType"`
	ReadOnly         bool                  `json:"readOnly,omitempty" protobuf:"varint,10,opt,name=readOnly"`
}

// StorageOSVolumeSource describes a StorageOS volume.
type StorageOSVolumeSource struct {
	VolumeName      string                `json:"volumeName,omitempty" protobuf:"bytes,1,opt,name=volumeName"`
	VolumeNamespace string                `json:"volumeNamespace,omitempty" protobuf:"bytes,2,opt,name=volumeNamespace"`
	FSType          string                `json:"fsType,omitempty" protobuf:"bytes,3,opt,name=fsType"`
	ReadOnly        bool                  `json:"readOnly,omitempty" protobuf:"varint,4,opt,name=readOnly"`
	SecretRef       *LocalObjectReference `json:"secretRef,omitempty" protobuf:"bytes,5,opt,name=secretRef"`
}

// ConfigMapVolumeSource describes a ConfigMap volume.
type ConfigMapVolumeSource struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	Items                []KeyToPath `json:"items,omitempty" protobuf:"bytes,2,rep,name=items"`
	DefaultMode          *int32      `json:"defaultMode,omitempty" protobuf:"varint,3,opt,name=defaultMode"`
	Optional             *bool       `json:"optional,omitempty" protobuf:"varint,4,opt,name=optional"`
	DefaultUser          *int64      `json:"defaultUser,omitempty" protobuf:"varint,5,opt,name=defaultUser"`
}

// ConfigMapProjection is one source of a projected volume.
type ConfigMapProjection struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	Items                []KeyToPath `json:"items,omitempty" protobuf:"bytes,2,rep,name=items"`
	Optional             *bool       `json:"optional,omitempty" protobuf:"varint,4,opt,name=optional"`
}

// ServiceAccountTokenProjection is one source of a projected volume.
type ServiceAccountTokenProjection struct {
	Audience          string `json:"audience,omitempty" protobuf:"bytes,1,rep,name=audience"`
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty" protobuf:"varint,2,opt,name=expirationSeconds"`
	Path              string `json:"path" protobuf:"bytes,3,opt,name=path"`
	User              *int64 `json:"user,omitempty" protobuf:"varint,4,opt,name=user"`
}

// ClusterTrustBundleProjection is one source of a projected volume.
type ClusterTrustBundleProjection struct {
	Name          *string            `json:"name,omitempty" protobuf:"bytes,1,rep,name=name"`
	SignerName    *string            `json:"signerName,omitempty" protobuf:"bytes,2,rep,name=signerName"`
	LabelSelector *api.LabelSelector `json:"labelSelector,omitempty" protobuf:"bytes,3,rep,name=labelSelector"`
	Optional      *bool              `json:"optional,omitempty" protobuf:"varint,5,opt,name=optional"`
	Path          string             `json:"path" protobuf:"bytes,4,rep,name=path"`
	User          *int64             `json:"user,omitempty" protobuf:"varint,6,opt,name=user"`
}

// PodCertificateProjection is one source of a projected volume.
type PodCertificateProjection struct {
	SignerName           string            `json:"signerName,omitempty" protobuf:"bytes,1,rep,name=signerName"`
	KeyType              string            `json:"keyType,omitempty" protobuf:"bytes,2,rep,name=keyType"`
	MaxExpirationSeconds *int32            `json:"maxExpirationSeconds,omitempty" protobuf:"varint,3,opt,name=maxExpirationSeconds"`
	CredentialBundlePath string            `json:"credentialBundlePath,omitempty" protobuf:"bytes,4,rep,name=credentialBundlePath"`
	KeyPath              string            `json:"keyPath,omitempty" protobuf:"bytes,5,rep,name=keyPath"`
	CertificateChainPath string            `json:"certificateChainPath,omitempty" protobuf:"bytes,6,rep,name=certificateChainPath"`
	UserAnnotations      map[string]string `json:"userAnnotations,omitempty" protobuf:"bytes,7,rep,name=userAnnotations" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	User                 *int64            `json:"user,omitempty" protobuf:"varint,8,opt,name=user"`
}

// ProjectedVolumeSource describes a Projected volume.
type ProjectedVolumeSource struct {
	Sources     []VolumeProjection `json:"sources" protobuf:"bytes,1,rep,name=sources"`
	DefaultMode *int32             `json:"defaultMode,omitempty" protobuf:"varint,2,opt,name=defaultMode"`
	DefaultUser *int64             `json:"defaultUser,omitempty" protobuf:"varint,3,opt,name=defaultUser"`
}

// VolumeProjection holds one source of a projected volume.
type VolumeProjection struct {
	Secret              *SecretProjection              `json:"secret,omitempty" protobuf:"bytes,1,opt,name=secret"`
	DownwardAPI         *DownwardAPIProjection         `json:"downwardAPI,omitempty" protobuf:"bytes,2,opt,name=downwardAPI"`
	ConfigMap           *ConfigMapProjection           `json:"configMap,omitempty" protobuf:"bytes,3,opt,name=configMap"`
	ServiceAccountToken *ServiceAccountTokenProjection `json:"serviceAccountToken,omitempty" protobuf:"bytes,4,opt,name=serviceAccountToken"`
	ClusterTrustBundle  *ClusterTrustBundleProjection  `json:"clusterTrustBundle,omitempty" protobuf:"bytes,5,opt,name=clusterTrustBundle"`
	PodCertificate      *PodCertificateProjection      `json:"podCertificate,omitempty" protobuf:"bytes,6,opt,name=podCertificate"`
}

// KeyToPath has the JSON and protobuf shape of Kubernetes' core/v1 KeyToPath.
type KeyToPath struct {
	Key  string `json:"key" protobuf:"bytes,1,opt,name=key"`
	Path string `json:"path" protobuf:"bytes,2,opt,name=path"`
	Mode *int32 `json:"mode,omitempty" protobuf:"varint,3,opt,name=mode"`
	User *int64 `json:"user,omitempty" protobuf:"varint,4,opt,name=user"`
}

// CSIVolumeSource describes a CSI volume.
type CSIVolumeSource struct {
	Driver               string                `json:"driver" protobuf:"bytes,1,opt,name=driver"`
	ReadOnly             *bool                 `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
	FSType               *string               `json:"fsType,omitempty" protobuf:"bytes,3,opt,name=fsType"`
	VolumeAttributes     map[string]string     `json:"volumeAttributes,omitempty" protobuf:"bytes,4,rep,name=volumeAttributes" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	NodePublishSecretRef *LocalObjectReference `json:"nodePublishSecretRef,omitempty" protobuf:"bytes,5,opt,name=nodePublishSecretRef"`
}

// EphemeralVolumeSource describes a Ephemeral volume.
type EphemeralVolumeSource struct {
	VolumeClaimTemplate *PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty" protobuf:"bytes,1,opt,name=volumeClaimTemplate"`
}

// PersistentVolumeClaimTemplate has the JSON and protobuf shape of Kubernetes' core/v1 PersistentVolumeClaimTemplate.
type PersistentVolumeClaimTemplate struct {
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           PersistentVolumeClaimSpec `json:"spec" protobuf:"bytes,2,name=spec"`
}

// ContainerPort is a port a container exposes.
type ContainerPort struct {
	Name          string   `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	HostPort      int32    `json:"hostPort,omitempty" protobuf:"varint,2,opt,name=hostPort"`
	ContainerPort int32    `json:"containerPort" protobuf:"varint,3,opt,name=containerPort"`
	Protocol      Protocol `json:"protocol,omitempty" default:"TCP" protobuf:"bytes,4,opt,name=protocol,casttype=Protocol"`
	HostIP        string   `json:"hostIP,omitempty" protobuf:"bytes,5,opt,name=hostIP"`
}

// VolumeMount mounts a volume into a container.
type VolumeMount struct {
	Name              string                 `json:"name" protobuf:"bytes,1,opt,name=name"`
	ReadOnly          bool                   `json:"readOnly,omitempty" protobuf:"varint,2,opt,name=readOnly"`
	RecursiveReadOnly *RecursiveReadOnlyMode `json:"recursiveReadOnly,omitempty" protobuf:"bytes,7,opt,name=recursiveReadOnly,casttype=RecursiveReadOnlyMode"`
	MountPath         string                 `json:"mountPath" protobuf:"bytes,3,opt,name=mountPath"`
	SubPath           string                 `json:"subPath,omitempty" protobuf:"bytes,4,opt,name=subPath"`
	MountPropagation  *MountPropagationMode  `json:"mountPropagation,omitempty" protobuf:"bytes,5,opt,name=mountPropagation,casttype=MountPropagationMode"`
	SubPathExpr       string                 `json:"subPathExpr,omitempty" protobuf:"bytes,6,opt,name=subPathExpr"`
	BindMountOptions  []string               `json:"bindMountOptions,omitempty" protobuf:"bytes,8,rep,name=bindMountOptions"`
}

// MountPropagationMode is an enumeration; see the constants.
type MountPropagationMode string

// Values of MountPropagationMode.
const (
	MountPropagationNone            MountPropagationMode = "None"
	MountPropagationHostToContainer MountPropagationMode = "HostToContainer"
	MountPropagationBidirectional   MountPropagationMode = "Bidirectional"
)

// RecursiveReadOnlyMode is an enumeration; see the constants.
type RecursiveReadOnlyMode string

// Values of RecursiveReadOnlyMode.
const (
	RecursiveReadOnlyDisabled   RecursiveReadOnlyMode = "Disabled"
	RecursiveReadOnlyIfPossible RecursiveReadOnlyMode = "IfPossible"
	RecursiveReadOnlyEnabled    RecursiveReadOnlyMode = "Enabled"
)

// VolumeDevice has the JSON and protobuf shape of Kubernetes' core/v1 VolumeDevice.
type VolumeDevice struct {
	Name       string `json:"name" protobuf:"bytes,1,opt,name=name"`
	DevicePath string `json:"devicePath" protobuf:"bytes,2,opt,name=devicePath"`
}

// EnvVar is an environment variable of a container.
type EnvVar struct {
	Name      string        `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value     string        `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty" protobuf:"bytes,3,opt,name=valueFrom"`
}

// EnvVarSource takes an environment variable's value from elsewhere.
type EnvVarSource struct {
	FieldRef         *ObjectFieldSelector   `json:"fieldRef,omitempty" protobuf:"bytes,1,opt,name=fieldRef"`
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty" protobuf:"bytes,2,opt,name=resourceFieldRef"`
	ConfigMapKeyRef  *ConfigMapKeySelector  `json:"configMapKeyRef,omitempty" protobuf:"bytes,3,opt,name=configMapKeyRef"`
	SecretKeyRef     *SecretKeySelector     `json:"secretKeyRef,omitempty" protobuf:"bytes,4,opt,name=secretKeyRef"`
	FileKeyRef       *FileKeySelector       `json:"fileKeyRef,omitempty" protobuf:"bytes,5,opt,name=fileKeyRef"`
}

// FileKeySelector selects a value from another object.
type FileKeySelector struct {
	VolumeName string `json:"volumeName" protobuf:"bytes,1,opt,name=volumeName"`
	Path       string `json:"path" protobuf:"bytes,2,opt,name=path"`
	Key        string `json:"key" protobuf:"bytes,3,opt,name=key"`
	Optional   *bool  `json:"optional,omitempty" protobuf:"varint,4,opt,name=optional"`
}

// ObjectFieldSelector selects a value from another object.
type ObjectFieldSelector struct {
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,1,opt,name=apiVersion"`
	FieldPath  string `json:"fieldPath" protobuf:"bytes,2,opt,name=fieldPath"`
}

// ResourceFieldSelector selects a value from another object.
type ResourceFieldSelector struct {
	ContainerName string       `json:"containerName,omitempty" protobuf:"bytes,1,opt,name=containerName"`
	Resource      string       `json:"resource" protobuf:"bytes,2,opt,name=resource"`
	Divisor       api.Quantity `json:"divisor,omitempty" protobuf:"bytes,3,opt,name=divisor"`
}

// ConfigMapKeySelector selects a value from another object.
type ConfigMapKeySelector struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	Key                  string `json:"key" protobuf:"bytes,2,opt,name=key"`
	Optional             *bool  `json:"optional,omitempty" protobuf:"varint,3,opt,name=optional"`
}

// SecretKeySelector selects a value from another object.
type SecretKeySelector struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	Key                  string `json:"key" protobuf:"bytes,2,opt,name=key"`
	Optional             *bool  `json:"optional,omitempty" protobuf:"varint,3,opt,name=optional"`
}

// EnvFromSource has the JSON and protobuf shape of Kubernetes' core/v1 EnvFromSource.
type EnvFromSource struct {
	Prefix       string              `json:"prefix,omitempty" protobuf:"bytes,1,opt,name=prefix"`
	ConfigMapRef *ConfigMapEnvSource `json:"configMapRef,omitempty" protobuf:"bytes,2,opt,name=configMapRef"`
	SecretRef    *SecretEnvSource    `json:"secretRef,omitempty" protobuf:"bytes,3,opt,name=secretRef"`
}

// ConfigMapEnvSource has the JSON and protobuf shape of Kubernetes' core/v1 ConfigMapEnvSource.
type ConfigMapEnvSource struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	Optional             *bool `json:"optional,omitempty" protobuf:"varint,2,opt,name=optional"`
}

// SecretEnvSource has the JSON and protobuf shape of Kubernetes' core/v1 SecretEnvSource.
type SecretEnvSource struct {
	LocalObjectReference `json:",inline" protobuf:"bytes,1,opt,name=localObjectReference"`
	Optional             *bool `json:"optional,omitempty" protobuf:"varint,2,opt,name=optional"`
}

// HTTPHeader has the JSON and protobuf shape of Kubernetes' core/v1 HTTPHeader.
type HTTPHeader struct {
	Name  string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value string `json:"value" protobuf:"bytes,2,opt,name=value"`
}

// HTTPProtocol has the JSON and protobuf shape of Kubernetes' core/v1 HTTPProtocol.
type HTTPProtocol string

// Values of HTTPProtocol.
const (
	HTTPProtocolHTTP1 HTTPProtocol = "HTTP1"
	HTTPProtocolHTTP2 HTTPProtocol = "HTTP2"
)

// HTTPGetAction is a handler action (probes and lifecycle hooks).
type HTTPGetAction struct {
	Path        string          `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	Port        api.IntOrString `json:"port" protobuf:"bytes,2,opt,name=port"`
	Host        string          `json:"host,omitempty" protobuf:"bytes,3,opt,name=host"`
	Scheme      URIScheme       `json:"scheme,omitempty" protobuf:"bytes,4,opt,name=scheme,casttype=URIScheme"`
	HTTPHeaders []HTTPHeader    `json:"httpHeaders,omitempty" protobuf:"bytes,5,rep,name=httpHeaders"`
	Protocol    *HTTPProtocol   `json:"protocol,omitempty" protobuf:"bytes,6,opt,name=protocol,casttype=HTTPProtocol"`
}

// URIScheme has the JSON and protobuf shape of Kubernetes' core/v1 URIScheme.
type URIScheme string

// Values of URIScheme.
const (
	URISchemeHTTP  URIScheme = "HTTP"
	URISchemeHTTPS URIScheme = "HTTPS"
)

// TCPSocketAction is a handler action (probes and lifecycle hooks).
type TCPSocketAction struct {
	Port api.IntOrString `json:"port" protobuf:"bytes,1,opt,name=port"`
	Host string          `json:"host,omitempty" protobuf:"bytes,2,opt,name=host"`
}

// GRPCAction is a handler action (probes and lifecycle hooks).
type GRPCAction struct {
	Port    int32          `json:"port" protobuf:"bytes,1,opt,name=port"`
	Service *string        `json:"service" protobuf:"bytes,2,opt,name=service"`
	Mode    *GRPCProbeMode `json:"mode,omitempty" protobuf:"bytes,3,opt,name=mode,casttype=GRPCProbeMode"`
}

// GRPCProbeMode is an enumeration; see the constants.
type GRPCProbeMode string

// Values of GRPCProbeMode.
const (
	GRPCProbeModePlaintext GRPCProbeMode = "Plaintext"
	GRPCProbeModeTLS       GRPCProbeMode = "TLS"
)

// ExecAction is a handler action (probes and lifecycle hooks).
type ExecAction struct {
	Command []string `json:"command,omitempty" protobuf:"bytes,1,rep,name=command"`
}

// SleepAction is a handler action (probes and lifecycle hooks).
type SleepAction struct {
	Seconds int64 `json:"seconds" protobuf:"bytes,1,opt,name=seconds"`
}

// Probe is a health check of a container.
type Probe struct {
	ProbeHandler                  `json:",inline" protobuf:"bytes,1,opt,name=handler"`
	InitialDelaySeconds           int32  `json:"initialDelaySeconds,omitempty" protobuf:"varint,2,opt,name=initialDelaySeconds"`
	TimeoutSeconds                int32  `json:"timeoutSeconds,omitempty" protobuf:"varint,3,opt,name=timeoutSeconds"`
	PeriodSeconds                 int32  `json:"periodSeconds,omitempty" protobuf:"varint,4,opt,name=periodSeconds"`
	SuccessThreshold              int32  `json:"successThreshold,omitempty" protobuf:"varint,5,opt,name=successThreshold"`
	FailureThreshold              int32  `json:"failureThreshold,omitempty" protobuf:"varint,6,opt,name=failureThreshold"`
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty" protobuf:"varint,7,opt,name=terminationGracePeriodSeconds"`
}

// PullPolicy is an enumeration; see the constants.
type PullPolicy string

// Values of PullPolicy.
const (
	PullAlways       PullPolicy = "Always"
	PullNever        PullPolicy = "Never"
	PullIfNotPresent PullPolicy = "IfNotPresent"
)

// ResourceResizeRestartPolicy is an enumeration; see the constants.
type ResourceResizeRestartPolicy string

// Values of ResourceResizeRestartPolicy.
const (
	NotRequired      ResourceResizeRestartPolicy = "NotRequired"
	RestartContainer ResourceResizeRestartPolicy = "RestartContainer"
)

// ContainerResizePolicy is an enumeration; see the constants.
type ContainerResizePolicy struct {
	ResourceName  ResourceName                `json:"resourceName" protobuf:"bytes,1,opt,name=resourceName,casttype=ResourceName"`
	RestartPolicy ResourceResizeRestartPolicy `json:"restartPolicy" protobuf:"bytes,2,opt,name=restartPolicy,casttype=ResourceResizeRestartPolicy"`
}

// PreemptionPolicy is an enumeration; see the constants.
type PreemptionPolicy string

// Values of PreemptionPolicy.
const (
	PreemptLowerPriority PreemptionPolicy = "PreemptLowerPriority"
	PreemptNever         PreemptionPolicy = "Never"
)

// TerminationMessagePolicy is an enumeration; see the constants.
type TerminationMessagePolicy string

// Values of TerminationMessagePolicy.
const (
	TerminationMessageReadFile              TerminationMessagePolicy = "File"
	TerminationMessageFallbackToLogsOnError TerminationMessagePolicy = "FallbackToLogsOnError"
)

// Capability has the JSON and protobuf shape of Kubernetes' core/v1 Capability.
type Capability string

// Capabilities has the JSON and protobuf shape of Kubernetes' core/v1 Capabilities.
type Capabilities struct {
	Add  []Capability `json:"add,omitempty" protobuf:"bytes,1,rep,name=add,casttype=Capability"`
	Drop []Capability `json:"drop,omitempty" protobuf:"bytes,2,rep,name=drop,casttype=Capability"`
}

// ResourceRequirements holds a container's resource requests, limits and claims.
type ResourceRequirements struct {
	Limits   ResourceList    `json:"limits,omitempty" protobuf:"bytes,1,rep,name=limits,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Requests ResourceList    `json:"requests,omitempty" protobuf:"bytes,2,rep,name=requests,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Claims   []ResourceClaim `json:"claims,omitempty" protobuf:"bytes,3,opt,name=claims"`
}

// VolumeResourceRequirements has the JSON and protobuf shape of Kubernetes' core/v1 VolumeResourceRequirements.
type VolumeResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty" protobuf:"bytes,1,rep,name=limits,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Requests ResourceList `json:"requests,omitempty" protobuf:"bytes,2,rep,name=requests,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// ResourceClaim has the JSON and protobuf shape of Kubernetes' core/v1 ResourceClaim.
type ResourceClaim struct {
	Name    string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Request string `json:"request,omitempty" protobuf:"bytes,2,opt,name=request"`
}

// Container is one container of a pod.
type Container struct {
	Name                     string                   `json:"name" protobuf:"bytes,1,opt,name=name"`
	Image                    string                   `json:"image,omitempty" protobuf:"bytes,2,opt,name=image"`
	Command                  []string                 `json:"command,omitempty" protobuf:"bytes,3,rep,name=command"`
	Args                     []string                 `json:"args,omitempty" protobuf:"bytes,4,rep,name=args"`
	WorkingDir               string                   `json:"workingDir,omitempty" protobuf:"bytes,5,opt,name=workingDir"`
	Ports                    []ContainerPort          `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"containerPort" listType:"map" listMapKeys:"containerPort,protocol" protobuf:"bytes,6,rep,name=ports"`
	EnvFrom                  []EnvFromSource          `json:"envFrom,omitempty" protobuf:"bytes,19,rep,name=envFrom"`
	Env                      []EnvVar                 `json:"env,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,7,rep,name=env"`
	Resources                ResourceRequirements     `json:"resources,omitempty" protobuf:"bytes,8,opt,name=resources"`
	ResizePolicy             []ContainerResizePolicy  `json:"resizePolicy,omitempty" protobuf:"bytes,23,rep,name=resizePolicy"`
	RestartPolicy            *ContainerRestartPolicy  `json:"restartPolicy,omitempty" protobuf:"bytes,24,opt,name=restartPolicy,casttype=ContainerRestartPolicy"`
	RestartPolicyRules       []ContainerRestartRule   `json:"restartPolicyRules,omitempty" protobuf:"bytes,25,rep,name=restartPolicyRules"`
	VolumeMounts             []VolumeMount            `json:"volumeMounts,omitempty" patchStrategy:"merge" patchMergeKey:"mountPath" protobuf:"bytes,9,rep,name=volumeMounts"`
	VolumeDevices            []VolumeDevice           `json:"volumeDevices,omitempty" patchStrategy:"merge" patchMergeKey:"devicePath" protobuf:"bytes,21,rep,name=volumeDevices"`
	LivenessProbe            *Probe                   `json:"livenessProbe,omitempty" protobuf:"bytes,10,opt,name=livenessProbe"`
	ReadinessProbe           *Probe                   `json:"readinessProbe,omitempty" protobuf:"bytes,11,opt,name=readinessProbe"`
	StartupProbe             *Probe                   `json:"startupProbe,omitempty" protobuf:"bytes,22,opt,name=startupProbe"`
	Lifecycle                *Lifecycle               `json:"lifecycle,omitempty" protobuf:"bytes,12,opt,name=lifecycle"`
	TerminationMessagePath   string                   `json:"terminationMessagePath,omitempty" protobuf:"bytes,13,opt,name=terminationMessagePath"`
	TerminationMessagePolicy TerminationMessagePolicy `json:"terminationMessagePolicy,omitempty" protobuf:"bytes,20,opt,name=terminationMessagePolicy,casttype=TerminationMessagePolicy"`
	ImagePullPolicy          PullPolicy               `json:"imagePullPolicy,omitempty" protobuf:"bytes,14,opt,name=imagePullPolicy,casttype=PullPolicy"`
	SecurityContext          *SecurityContext         `json:"securityContext,omitempty" protobuf:"bytes,15,opt,name=securityContext"`
	Stdin                    bool                     `json:"stdin,omitempty" protobuf:"varint,16,opt,name=stdin"`
	StdinOnce                bool                     `json:"stdinOnce,omitempty" protobuf:"varint,17,opt,name=stdinOnce"`
	TTY                      bool                     `json:"tty,omitempty" protobuf:"varint,18,opt,name=tty"`
}

// ProbeHandler holds the one action of a probe.
type ProbeHandler struct {
	Exec      *ExecAction      `json:"exec,omitempty" protobuf:"bytes,1,opt,name=exec"`
	HTTPGet   *HTTPGetAction   `json:"httpGet,omitempty" protobuf:"bytes,2,opt,name=httpGet"`
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty" protobuf:"bytes,3,opt,name=tcpSocket"`
	GRPC      *GRPCAction      `json:"grpc,omitempty" protobuf:"bytes,4,opt,name=grpc"`
}

// LifecycleHandler holds the one action of a lifecycle hook.
type LifecycleHandler struct {
	Exec      *ExecAction      `json:"exec,omitempty" protobuf:"bytes,1,opt,name=exec"`
	HTTPGet   *HTTPGetAction   `json:"httpGet,omitempty" protobuf:"bytes,2,opt,name=httpGet"`
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty" protobuf:"bytes,3,opt,name=tcpSocket"`
	Sleep     *SleepAction     `json:"sleep,omitempty" protobuf:"bytes,4,opt,name=sleep"`
}

// Signal has the JSON and protobuf shape of Kubernetes' core/v1 Signal.
type Signal string

// Values of Signal.
const (
	SIGABRT         Signal = "SIGABRT"
	SIGALRM         Signal = "SIGALRM"
	SIGBUS          Signal = "SIGBUS"
	SIGCHLD         Signal = "SIGCHLD"
	SIGCLD          Signal = "SIGCLD"
	SIGCONT         Signal = "SIGCONT"
	SIGFPE          Signal = "SIGFPE"
	SIGHUP          Signal = "SIGHUP"
	SIGILL          Signal = "SIGILL"
	SIGINT          Signal = "SIGINT"
	SIGIO           Signal = "SIGIO"
	SIGIOT          Signal = "SIGIOT"
	SIGKILL         Signal = "SIGKILL"
	SIGPIPE         Signal = "SIGPIPE"
	SIGPOLL         Signal = "SIGPOLL"
	SIGPROF         Signal = "SIGPROF"
	SIGPWR          Signal = "SIGPWR"
	SIGQUIT         Signal = "SIGQUIT"
	SIGSEGV         Signal = "SIGSEGV"
	SIGSTKFLT       Signal = "SIGSTKFLT"
	SIGSTOP         Signal = "SIGSTOP"
	SIGSYS          Signal = "SIGSYS"
	SIGTERM         Signal = "SIGTERM"
	SIGTRAP         Signal = "SIGTRAP"
	SIGTSTP         Signal = "SIGTSTP"
	SIGTTIN         Signal = "SIGTTIN"
	SIGTTOU         Signal = "SIGTTOU"
	SIGURG          Signal = "SIGURG"
	SIGUSR1         Signal = "SIGUSR1"
	SIGUSR2         Signal = "SIGUSR2"
	SIGVTALRM       Signal = "SIGVTALRM"
	SIGWINCH        Signal = "SIGWINCH"
	SIGXCPU         Signal = "SIGXCPU"
	SIGXFSZ         Signal = "SIGXFSZ"
	SIGRTMIN        Signal = "SIGRTMIN"
	SIGRTMINPLUS1   Signal = "SIGRTMIN+1"
	SIGRTMINPLUS2   Signal = "SIGRTMIN+2"
	SIGRTMINPLUS3   Signal = "SIGRTMIN+3"
	SIGRTMINPLUS4   Signal = "SIGRTMIN+4"
	SIGRTMINPLUS5   Signal = "SIGRTMIN+5"
	SIGRTMINPLUS6   Signal = "SIGRTMIN+6"
	SIGRTMINPLUS7   Signal = "SIGRTMIN+7"
	SIGRTMINPLUS8   Signal = "SIGRTMIN+8"
	SIGRTMINPLUS9   Signal = "SIGRTMIN+9"
	SIGRTMINPLUS10  Signal = "SIGRTMIN+10"
	SIGRTMINPLUS11  Signal = "SIGRTMIN+11"
	SIGRTMINPLUS12  Signal = "SIGRTMIN+12"
	SIGRTMINPLUS13  Signal = "SIGRTMIN+13"
	SIGRTMINPLUS14  Signal = "SIGRTMIN+14"
	SIGRTMINPLUS15  Signal = "SIGRTMIN+15"
	SIGRTMAXMINUS14 Signal = "SIGRTMAX-14"
	SIGRTMAXMINUS13 Signal = "SIGRTMAX-13"
	SIGRTMAXMINUS12 Signal = "SIGRTMAX-12"
	SIGRTMAXMINUS11 Signal = "SIGRTMAX-11"
	SIGRTMAXMINUS10 Signal = "SIGRTMAX-10"
	SIGRTMAXMINUS9  Signal = "SIGRTMAX-9"
	SIGRTMAXMINUS8  Signal = "SIGRTMAX-8"
	SIGRTMAXMINUS7  Signal = "SIGRTMAX-7"
	SIGRTMAXMINUS6  Signal = "SIGRTMAX-6"
	SIGRTMAXMINUS5  Signal = "SIGRTMAX-5"
	SIGRTMAXMINUS4  Signal = "SIGRTMAX-4"
	SIGRTMAXMINUS3  Signal = "SIGRTMAX-3"
	SIGRTMAXMINUS2  Signal = "SIGRTMAX-2"
	SIGRTMAXMINUS1  Signal = "SIGRTMAX-1"
	SIGRTMAX        Signal = "SIGRTMAX"
)

// Lifecycle holds a container's postStart and preStop hooks.
type Lifecycle struct {
	PostStart  *LifecycleHandler `json:"postStart,omitempty" protobuf:"bytes,1,opt,name=postStart"`
	PreStop    *LifecycleHandler `json:"preStop,omitempty" protobuf:"bytes,2,opt,name=preStop"`
	StopSignal *Signal           `json:"stopSignal,omitempty" protobuf:"bytes,3,opt,name=stopSignal"`
}

// ConditionStatus is the observed state of a Condition.
type ConditionStatus string

// Values of ConditionStatus.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// ContainerStateWaiting has the JSON and protobuf shape of Kubernetes' core/v1 ContainerStateWaiting.
type ContainerStateWaiting struct {
	Reason  string `json:"reason,omitempty" protobuf:"bytes,1,opt,name=reason"`
	Message string `json:"message,omitempty" protobuf:"bytes,2,opt,name=message"`
}

// ContainerStateRunning has the JSON and protobuf shape of Kubernetes' core/v1 ContainerStateRunning.
type ContainerStateRunning struct {
	StartedAt api.Time `json:"startedAt,omitempty" protobuf:"bytes,1,opt,name=startedAt"`
}

// ContainerStateTerminated has the JSON and protobuf shape of Kubernetes' core/v1 ContainerStateTerminated.
type ContainerStateTerminated struct {
	ExitCode    int32    `json:"exitCode" protobuf:"varint,1,opt,name=exitCode"`
	Signal      int32    `json:"signal,omitempty" protobuf:"varint,2,opt,name=signal"`
	Reason      string   `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
	Message     string   `json:"message,omitempty" protobuf:"bytes,4,opt,name=message"`
	StartedAt   api.Time `json:"startedAt,omitempty" protobuf:"bytes,5,opt,name=startedAt"`
	FinishedAt  api.Time `json:"finishedAt,omitempty" protobuf:"bytes,6,opt,name=finishedAt"`
	ContainerID string   `json:"containerID,omitempty" protobuf:"bytes,7,opt,name=containerID"`
}

// ContainerState holds the one current state of a container.
type ContainerState struct {
	Waiting    *ContainerStateWaiting    `json:"waiting,omitempty" protobuf:"bytes,1,opt,name=waiting"`
	Running    *ContainerStateRunning    `json:"running,omitempty" protobuf:"bytes,2,opt,name=running"`
	Terminated *ContainerStateTerminated `json:"terminated,omitempty" protobuf:"bytes,3,opt,name=terminated"`
}

// ContainerStatus is the observed state of one container.
type ContainerStatus struct {
	Name                     string                `json:"name" protobuf:"bytes,1,opt,name=name"`
	State                    ContainerState        `json:"state,omitempty" protobuf:"bytes,2,opt,name=state"`
	LastTerminationState     ContainerState        `json:"lastState,omitempty" protobuf:"bytes,3,opt,name=lastState"`
	Ready                    bool                  `json:"ready" protobuf:"varint,4,opt,name=ready"`
	RestartCount             int32                 `json:"restartCount" protobuf:"varint,5,opt,name=restartCount"`
	Image                    string                `json:"image" protobuf:"bytes,6,opt,name=image"`
	ImageID                  string                `json:"imageID" protobuf:"bytes,7,opt,name=imageID"`
	ContainerID              string                `json:"containerID,omitempty" protobuf:"bytes,8,opt,name=containerID"`
	Started                  *bool                 `json:"started,omitempty" protobuf:"varint,9,opt,name=started"`
	AllocatedResources       ResourceList          `json:"allocatedResources,omitempty" protobuf:"bytes,10,rep,name=allocatedResources,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Resources                *ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,11,opt,name=resources"`
	VolumeMounts             []VolumeMountStatus   `json:"volumeMounts,omitempty" patchStrategy:"merge" patchMergeKey:"mountPath" protobuf:"bytes,12,rep,name=volumeMounts"`
	User                     *ContainerUser        `json:"user,omitempty" protobuf:"bytes,13,opt,name=user,casttype=ContainerUser"`
	AllocatedResourcesStatus []ResourceStatus      `json:"allocatedResourcesStatus,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,14,rep,name=allocatedResourcesStatus"`
	StopSignal               *Signal               `json:"stopSignal,omitempty" protobuf:"bytes,15,opt,name=stopSignal"`
}

// ResourceStatus is the observed state of a Resource.
type ResourceStatus struct {
	Name      ResourceName     `json:"name" protobuf:"bytes,1,opt,name=name"`
	Resources []ResourceHealth `json:"resources,omitempty" protobuf:"bytes,2,rep,name=resources"`
}

// ResourceHealthStatus is the observed state of a ResourceHealth.
type ResourceHealthStatus string

// Values of ResourceHealthStatus.
const (
	ResourceHealthStatusHealthy   ResourceHealthStatus = "Healthy"
	ResourceHealthStatusUnhealthy ResourceHealthStatus = "Unhealthy"
	ResourceHealthStatusUnknown   ResourceHealthStatus = "Unknown"
)

// ResourceID has the JSON and protobuf shape of Kubernetes' core/v1 ResourceID.
type ResourceID string

// ResourceHealth has the JSON and protobuf shape of Kubernetes' core/v1 ResourceHealth.
type ResourceHealth struct {
	ResourceID ResourceID           `json:"resourceID" protobuf:"bytes,1,opt,name=resourceID"`
	Health     ResourceHealthStatus `json:"health,omitempty" protobuf:"bytes,2,name=health"`
	Message    *string              `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// ContainerUser has the JSON and protobuf shape of Kubernetes' core/v1 ContainerUser.
type ContainerUser struct {
	Linux *LinuxContainerUser `json:"linux,omitempty" protobuf:"bytes,1,opt,name=linux,casttype=LinuxContainerUser"`
}

// LinuxContainerUser has the JSON and protobuf shape of Kubernetes' core/v1 LinuxContainerUser.
type LinuxContainerUser struct {
	UID                int64   `json:"uid" protobuf:"varint,1,name=uid"`
	GID                int64   `json:"gid" protobuf:"varint,2,name=gid"`
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty" protobuf:"varint,3,rep,name=supplementalGroups"`
}

// PodPhase is an enumeration; see the constants.
type PodPhase string

// Values of PodPhase.
const (
	PodPending   PodPhase = "Pending"
	PodRunning   PodPhase = "Running"
	PodSucceeded PodPhase = "Succeeded"
	PodFailed    PodPhase = "Failed"
	PodUnknown   PodPhase = "Unknown"
)

// PodConditionType is an enumeration; see the constants.
type PodConditionType string

// Values of PodConditionType.
const (
	ContainersReady           PodConditionType = "ContainersReady"
	PodInitialized            PodConditionType = "Initialized"
	PodReady                  PodConditionType = "Ready"
	PodScheduled              PodConditionType = "PodScheduled"
	DisruptionTarget          PodConditionType = "DisruptionTarget"
	PodReadyToStartContainers PodConditionType = "PodReadyToStartContainers"
	PodResizePending          PodConditionType = "PodResizePending"
	PodResizeInProgress       PodConditionType = "PodResizeInProgress"
	AllContainersRestarting   PodConditionType = "AllContainersRestarting"
)

// PodCondition is a condition of a pod.
type PodCondition struct {
	Type               PodConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=PodConditionType"`
	ObservedGeneration int64            `json:"observedGeneration,omitempty" protobuf:"varint,7,opt,name=observedGeneration"`
	Status             ConditionStatus  `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	LastProbeTime      api.Time         `json:"lastProbeTime,omitempty" protobuf:"bytes,3,opt,name=lastProbeTime"`
	LastTransitionTime api.Time         `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string           `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	Message            string           `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// PodResizeStatus is the observed state of a PodResize.
type PodResizeStatus string

// Values of PodResizeStatus.
const (
	PodResizeStatusInProgress PodResizeStatus = "InProgress"
	PodResizeStatusDeferred   PodResizeStatus = "Deferred"
	PodResizeStatusInfeasible PodResizeStatus = "Infeasible"
)

// VolumeMountStatus is the observed state of a VolumeMount.
type VolumeMountStatus struct {
	Name              string                 `json:"name" protobuf:"bytes,1,opt,name=name"`
	MountPath         string                 `json:"mountPath" protobuf:"bytes,2,opt,name=mountPath"`
	ReadOnly          bool                   `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
	RecursiveReadOnly *RecursiveReadOnlyMode `json:"recursiveReadOnly,omitempty" protobuf:"bytes,4,opt,name=recursiveReadOnly,casttype=RecursiveReadOnlyMode"`
	VolumeStatus      *VolumeStatus          `json:"volumeStatus,omitempty" protobuf:"bytes,5,opt,name=volumeStatus"`
}

// VolumeStatus is the observed state of a Volume.
type VolumeStatus struct {
	Image *ImageVolumeStatus `json:"image,omitempty" protobuf:"bytes,1,opt,name=image"`
}

// ImageVolumeStatus is the observed state of a ImageVolume.
type ImageVolumeStatus struct {
	ImageRef string `json:"imageRef,omitempty" protobuf:"bytes,1,opt,name=imageRef"`
}

// RestartPolicy is an enumeration; see the constants.
type RestartPolicy string

// Values of RestartPolicy.
const (
	RestartPolicyAlways    RestartPolicy = "Always"
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	RestartPolicyNever     RestartPolicy = "Never"
)

// ContainerRestartPolicy is an enumeration; see the constants.
type ContainerRestartPolicy string

// Values of ContainerRestartPolicy.
const (
	ContainerRestartPolicyAlways    ContainerRestartPolicy = "Always"
	ContainerRestartPolicyNever     ContainerRestartPolicy = "Never"
	ContainerRestartPolicyOnFailure ContainerRestartPolicy = "OnFailure"
)

// ContainerRestartRule has the JSON and protobuf shape of Kubernetes' core/v1 ContainerRestartRule.
type ContainerRestartRule struct {
	Action    ContainerRestartRuleAction       `json:"action,omitempty" proto:"bytes,1,opt,name=action" protobuf:"bytes,1,opt,name=action,casttype=ContainerRestartRuleAction"`
	ExitCodes *ContainerRestartRuleOnExitCodes `json:"exitCodes,omitempty" proto:"bytes,2,opt,name=exitCodes" protobuf:"bytes,2,opt,name=exitCodes"`
}

// ContainerRestartRuleAction is an enumeration; see the constants.
type ContainerRestartRuleAction string

// Values of ContainerRestartRuleAction.
const (
	ContainerRestartRuleActionRestart              ContainerRestartRuleAction = "Restart"
	ContainerRestartRuleActionRestartAllContainers ContainerRestartRuleAction = "RestartAllContainers"
)

// ContainerRestartRuleOnExitCodes has the JSON and protobuf shape of Kubernetes' core/v1 ContainerRestartRuleOnExitCodes.
type ContainerRestartRuleOnExitCodes struct {
	Operator ContainerRestartRuleOnExitCodesOperator `json:"operator,omitempty" proto:"bytes,1,opt,name=operator" protobuf:"bytes,1,opt,name=operator,casttype=ContainerRestartRuleOnExitCodesOperator"`
	Values   []int32                                 `json:"values,omitempty" proto:"varint,2,rep,name=values" protobuf:"varint,2,rep,name=values"`
}

// ContainerRestartRuleOnExitCodesOperator has the JSON and protobuf shape of Kubernetes' core/v1 ContainerRestartRuleOnExitCodesOperator.
type ContainerRestartRuleOnExitCodesOperator string

// Values of ContainerRestartRuleOnExitCodesOperator.
const (
	ContainerRestartRuleOnExitCodesOpIn    ContainerRestartRuleOnExitCodesOperator = "In"
	ContainerRestartRuleOnExitCodesOpNotIn ContainerRestartRuleOnExitCodesOperator = "NotIn"
)

// DNSPolicy is an enumeration; see the constants.
type DNSPolicy string

// Values of DNSPolicy.
const (
	DNSClusterFirstWithHostNet DNSPolicy = "ClusterFirstWithHostNet"
	DNSClusterFirst            DNSPolicy = "ClusterFirst"
	DNSDefault                 DNSPolicy = "Default"
	DNSNone                    DNSPolicy = "None"
)

// NodeSelector is a set of node selector terms, any of which must match.
type NodeSelector struct {
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms" protobuf:"bytes,1,rep,name=nodeSelectorTerms"`
}

// NodeSelectorTerm has the JSON and protobuf shape of Kubernetes' core/v1 NodeSelectorTerm.
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty" protobuf:"bytes,1,rep,name=matchExpressions"`
	MatchFields      []NodeSelectorRequirement `json:"matchFields,omitempty" protobuf:"bytes,2,rep,name=matchFields"`
}

// NodeSelectorRequirement has the JSON and protobuf shape of Kubernetes' core/v1 NodeSelectorRequirement.
type NodeSelectorRequirement struct {
	Key      string               `json:"key" protobuf:"bytes,1,opt,name=key"`
	Operator NodeSelectorOperator `json:"operator" protobuf:"bytes,2,opt,name=operator,casttype=NodeSelectorOperator"`
	Values   []string             `json:"values,omitempty" protobuf:"bytes,3,rep,name=values"`
}

// NodeSelectorOperator has the JSON and protobuf shape of Kubernetes' core/v1 NodeSelectorOperator.
type NodeSelectorOperator string

// Values of NodeSelectorOperator.
const (
	NodeSelectorOpIn           NodeSelectorOperator = "In"
	NodeSelectorOpNotIn        NodeSelectorOperator = "NotIn"
	NodeSelectorOpExists       NodeSelectorOperator = "Exists"
	NodeSelectorOpDoesNotExist NodeSelectorOperator = "DoesNotExist"
	NodeSelectorOpGt           NodeSelectorOperator = "Gt"
	NodeSelectorOpLt           NodeSelectorOperator = "Lt"
)

// Affinity groups node, pod and pod anti-affinity rules.
type Affinity struct {
	NodeAffinity    *NodeAffinity    `json:"nodeAffinity,omitempty" protobuf:"bytes,1,opt,name=nodeAffinity"`
	PodAffinity     *PodAffinity     `json:"podAffinity,omitempty" protobuf:"bytes,2,opt,name=podAffinity"`
	PodAntiAffinity *PodAntiAffinity `json:"podAntiAffinity,omitempty" protobuf:"bytes,3,opt,name=podAntiAffinity"`
}

// PodAffinity has the JSON and protobuf shape of Kubernetes' core/v1 PodAffinity.
type PodAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  []PodAffinityTerm         `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,1,rep,name=requiredDuringSchedulingIgnoredDuringExecution"`
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,2,rep,name=preferredDuringSchedulingIgnoredDuringExecution"`
}

// PodAntiAffinity has the JSON and protobuf shape of Kubernetes' core/v1 PodAntiAffinity.
type PodAntiAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  []PodAffinityTerm         `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,1,rep,name=requiredDuringSchedulingIgnoredDuringExecution"`
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,2,rep,name=preferredDuringSchedulingIgnoredDuringExecution"`
}

// WeightedPodAffinityTerm has the JSON and protobuf shape of Kubernetes' core/v1 WeightedPodAffinityTerm.
type WeightedPodAffinityTerm struct {
	Weight          int32           `json:"weight" protobuf:"varint,1,opt,name=weight"`
	PodAffinityTerm PodAffinityTerm `json:"podAffinityTerm" protobuf:"bytes,2,opt,name=podAffinityTerm"`
}

// PodAffinityTerm has the JSON and protobuf shape of Kubernetes' core/v1 PodAffinityTerm.
type PodAffinityTerm struct {
	LabelSelector     *api.LabelSelector `json:"labelSelector,omitempty" protobuf:"bytes,1,opt,name=labelSelector"`
	Namespaces        []string           `json:"namespaces,omitempty" protobuf:"bytes,2,rep,name=namespaces"`
	TopologyKey       string             `json:"topologyKey" protobuf:"bytes,3,opt,name=topologyKey"`
	NamespaceSelector *api.LabelSelector `json:"namespaceSelector,omitempty" protobuf:"bytes,4,opt,name=namespaceSelector"`
	MatchLabelKeys    []string           `json:"matchLabelKeys,omitempty" protobuf:"bytes,5,opt,name=matchLabelKeys"`
	MismatchLabelKeys []string           `json:"mismatchLabelKeys,omitempty" protobuf:"bytes,6,opt,name=mismatchLabelKeys"`
}

// NodeAffinity has the JSON and protobuf shape of Kubernetes' core/v1 NodeAffinity.
type NodeAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  *NodeSelector             `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,1,opt,name=requiredDuringSchedulingIgnoredDuringExecution"`
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,2,rep,name=preferredDuringSchedulingIgnoredDuringExecution"`
}

// PreferredSchedulingTerm has the JSON and protobuf shape of Kubernetes' core/v1 PreferredSchedulingTerm.
type PreferredSchedulingTerm struct {
	Weight     int32            `json:"weight" protobuf:"varint,1,opt,name=weight"`
	Preference NodeSelectorTerm `json:"preference" protobuf:"bytes,2,opt,name=preference"`
}

// TaintEffect has the JSON and protobuf shape of Kubernetes' core/v1 TaintEffect.
type TaintEffect string

// Values of TaintEffect.
const (
	TaintEffectNoSchedule       TaintEffect = "NoSchedule"
	TaintEffectPreferNoSchedule TaintEffect = "PreferNoSchedule"
	TaintEffectNoExecute        TaintEffect = "NoExecute"
)

// Toleration lets a pod tolerate a node taint.
type Toleration struct {
	Key               string             `json:"key,omitempty" protobuf:"bytes,1,opt,name=key"`
	Operator          TolerationOperator `json:"operator,omitempty" protobuf:"bytes,2,opt,name=operator,casttype=TolerationOperator"`
	Value             string             `json:"value,omitempty" protobuf:"bytes,3,opt,name=value"`
	Effect            TaintEffect        `json:"effect,omitempty" protobuf:"bytes,4,opt,name=effect,casttype=TaintEffect"`
	TolerationSeconds *int64             `json:"tolerationSeconds,omitempty" protobuf:"varint,5,opt,name=tolerationSeconds"`
}

// TolerationOperator has the JSON and protobuf shape of Kubernetes' core/v1 TolerationOperator.
type TolerationOperator string

// Values of TolerationOperator.
const (
	TolerationOpExists TolerationOperator = "Exists"
	TolerationOpEqual  TolerationOperator = "Equal"
	TolerationOpLt     TolerationOperator = "Lt"
	TolerationOpGt     TolerationOperator = "Gt"
)

// PodReadinessGate has the JSON and protobuf shape of Kubernetes' core/v1 PodReadinessGate.
type PodReadinessGate struct {
	ConditionType PodConditionType `json:"conditionType" protobuf:"bytes,1,opt,name=conditionType,casttype=PodConditionType"`
}

// PodSpec is the desired state of a Pod: its containers, volumes and scheduling constraints.
type PodSpec struct {
	Volumes                       []Volume                   `json:"volumes,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name" protobuf:"bytes,1,rep,name=volumes"`
	InitContainers                []Container                `json:"initContainers,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,20,rep,name=initContainers"`
	Containers                    []Container                `json:"containers" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,2,rep,name=containers"`
	EphemeralContainers           []EphemeralContainer       `json:"ephemeralContainers,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,34,rep,name=ephemeralContainers"`
	RestartPolicy                 RestartPolicy              `json:"restartPolicy,omitempty" protobuf:"bytes,3,opt,name=restartPolicy,casttype=RestartPolicy"`
	TerminationGracePeriodSeconds *int64                     `json:"terminationGracePeriodSeconds,omitempty" protobuf:"varint,4,opt,name=terminationGracePeriodSeconds"`
	ActiveDeadlineSeconds         *int64                     `json:"activeDeadlineSeconds,omitempty" protobuf:"varint,5,opt,name=activeDeadlineSeconds"`
	DNSPolicy                     DNSPolicy                  `json:"dnsPolicy,omitempty" protobuf:"bytes,6,opt,name=dnsPolicy,casttype=DNSPolicy"`
	NodeSelector                  map[string]string          `json:"nodeSelector,omitempty" mapType:"atomic" protobuf:"bytes,7,rep,name=nodeSelector" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	ServiceAccountName            string                     `json:"serviceAccountName,omitempty" protobuf:"bytes,8,opt,name=serviceAccountName"`
	DeprecatedServiceAccount      string                     `json:"serviceAccount,omitempty" protobuf:"bytes,9,opt,name=serviceAccount"`
	AutomountServiceAccountToken  *bool                      `json:"automountServiceAccountToken,omitempty" protobuf:"varint,21,opt,name=automountServiceAccountToken"`
	NodeName                      string                     `json:"nodeName,omitempty" protobuf:"bytes,10,opt,name=nodeName"`
	HostNetwork                   bool                       `json:"hostNetwork,omitempty" protobuf:"varint,11,opt,name=hostNetwork"`
	HostPID                       bool                       `json:"hostPID,omitempty" protobuf:"varint,12,opt,name=hostPID"`
	HostIPC                       bool                       `json:"hostIPC,omitempty" protobuf:"varint,13,opt,name=hostIPC"`
	ShareProcessNamespace         *bool                      `json:"shareProcessNamespace,omitempty" protobuf:"varint,27,opt,name=shareProcessNamespace"`
	SecurityContext               *PodSecurityContext        `json:"securityContext,omitempty" protobuf:"bytes,14,opt,name=securityContext"`
	ImagePullSecrets              []LocalObjectReference     `json:"imagePullSecrets,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,15,rep,name=imagePullSecrets"`
	Hostname                      string                     `json:"hostname,omitempty" protobuf:"bytes,16,opt,name=hostname"`
	Subdomain                     string                     `json:"subdomain,omitempty" protobuf:"bytes,17,opt,name=subdomain"`
	Affinity                      *Affinity                  `json:"affinity,omitempty" protobuf:"bytes,18,opt,name=affinity"`
	SchedulerName                 string                     `json:"schedulerName,omitempty" protobuf:"bytes,19,opt,name=schedulerName"`
	Tolerations                   []Toleration               `json:"tolerations,omitempty" protobuf:"bytes,22,opt,name=tolerations"`
	HostAliases                   []HostAlias                `json:"hostAliases,omitempty" patchStrategy:"merge" patchMergeKey:"ip" protobuf:"bytes,23,rep,name=hostAliases"`
	PriorityClassName             string                     `json:"priorityClassName,omitempty" protobuf:"bytes,24,opt,name=priorityClassName"`
	Priority                      *int32                     `json:"priority,omitempty" protobuf:"bytes,25,opt,name=priority"`
	DNSConfig                     *PodDNSConfig              `json:"dnsConfig,omitempty" protobuf:"bytes,26,opt,name=dnsConfig"`
	ReadinessGates                []PodReadinessGate         `json:"readinessGates,omitempty" protobuf:"bytes,28,opt,name=readinessGates"`
	RuntimeClassName              *string                    `json:"runtimeClassName,omitempty" protobuf:"bytes,29,opt,name=runtimeClassName"`
	EnableServiceLinks            *bool                      `json:"enableServiceLinks,omitempty" protobuf:"varint,30,opt,name=enableServiceLinks"`
	PreemptionPolicy              *PreemptionPolicy          `json:"preemptionPolicy,omitempty" protobuf:"bytes,31,opt,name=preemptionPolicy"`
	Overhead                      ResourceList               `json:"overhead,omitempty" protobuf:"bytes,32,opt,name=overhead" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	TopologySpreadConstraints     []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty" patchStrategy:"merge" patchMergeKey:"topologyKey" listType:"map" listMapKeys:"topologyKey,whenUnsatisfiable" protobuf:"bytes,33,opt,name=topologySpreadConstraints"`
	SetHostnameAsFQDN             *bool                      `json:"setHostnameAsFQDN,omitempty" protobuf:"varint,35,opt,name=setHostnameAsFQDN"`
	OS                            *PodOS                     `json:"os,omitempty" protobuf:"bytes,36,opt,name=os"`
	HostUsers                     *bool                      `json:"hostUsers,omitempty" protobuf:"bytes,37,opt,name=hostUsers"`
	SchedulingGates               []PodSchedulingGate        `json:"schedulingGates,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,38,opt,name=schedulingGates"`
	ResourceClaims                []PodResourceClaim         `json:"resourceClaims,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name" protobuf:"bytes,39,rep,name=resourceClaims"`
	Resources                     *ResourceRequirements      `json:"resources,omitempty" protobuf:"bytes,40,opt,name=resources"`
	HostnameOverride              *string                    `json:"hostnameOverride,omitempty" protobuf:"bytes,41,opt,name=hostnameOverride"`
	SchedulingGroup               *PodSchedulingGroup        `json:"schedulingGroup,omitempty" protobuf:"bytes,43,opt,name=schedulingGroup"`
	EvictionResponders            []EvictionResponder        `json:"evictionResponders,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,44,rep,name=evictionResponders"`
}

// PodResourceClaim has the JSON and protobuf shape of Kubernetes' core/v1 PodResourceClaim.
type PodResourceClaim struct {
	Name                      string  `json:"name" protobuf:"bytes,1,name=name"`
	ResourceClaimName         *string `json:"resourceClaimName,omitempty" protobuf:"bytes,3,opt,name=resourceClaimName"`
	ResourceClaimTemplateName *string `json:"resourceClaimTemplateName,omitempty" protobuf:"bytes,4,opt,name=resourceClaimTemplateName"`
}

// PodResourceClaimStatus is the observed state of a PodResourceClaim.
type PodResourceClaimStatus struct {
	Name              string  `json:"name" protobuf:"bytes,1,name=name"`
	ResourceClaimName *string `json:"resourceClaimName,omitempty" protobuf:"bytes,2,opt,name=resourceClaimName"`
}

// PodExtendedResourceClaimStatus is the observed state of a PodExtendedResourceClaim.
type PodExtendedResourceClaimStatus struct {
	RequestMappings   []ContainerExtendedResourceRequest `json:"requestMappings" protobuf:"bytes,1,rep,name=requestMappings"`
	ResourceClaimName string                             `json:"resourceClaimName" protobuf:"bytes,2,name=resourceClaimName"`
}

// ContainerExtendedResourceRequest has the JSON and protobuf shape of Kubernetes' core/v1 ContainerExtendedResourceRequest.
type ContainerExtendedResourceRequest struct {
	ContainerName string `json:"containerName" protobuf:"bytes,1,name=containerName"`
	ResourceName  string `json:"resourceName" protobuf:"bytes,2,name=resourceName"`
	RequestName   string `json:"requestName" protobuf:"bytes,3,name=requestName"`
}

// OSName has the JSON and protobuf shape of Kubernetes' core/v1 OSName.
type OSName string

// Values of OSName.
const (
	Linux   OSName = "linux"
	Windows OSName = "windows"
)

// PodOS has the JSON and protobuf shape of Kubernetes' core/v1 PodOS.
type PodOS struct {
	Name OSName `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// PodSchedulingGate has the JSON and protobuf shape of Kubernetes' core/v1 PodSchedulingGate.
type PodSchedulingGate struct {
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// PodSchedulingGroup has the JSON and protobuf shape of Kubernetes' core/v1 PodSchedulingGroup.
type PodSchedulingGroup struct {
	PodGroupName *string `json:"podGroupName,omitempty" protobuf:"bytes,1,opt,name=podGroupName"`
}

// UnsatisfiableConstraintAction is an enumeration; see the constants.
type UnsatisfiableConstraintAction string

// Values of UnsatisfiableConstraintAction.
const (
	DoNotSchedule  UnsatisfiableConstraintAction = "DoNotSchedule"
	ScheduleAnyway UnsatisfiableConstraintAction = "ScheduleAnyway"
)

// NodeInclusionPolicy is an enumeration; see the constants.
type NodeInclusionPolicy string

// Values of NodeInclusionPolicy.
const (
	NodeInclusionPolicyIgnore NodeInclusionPolicy = "Ignore"
	NodeInclusionPolicyHonor  NodeInclusionPolicy = "Honor"
)

// TopologySpreadConstraint has the JSON and protobuf shape of Kubernetes' core/v1 TopologySpreadConstraint.
type TopologySpreadConstraint struct {
	MaxSkew            int32                         `json:"maxSkew" protobuf:"varint,1,opt,name=maxSkew"`
	TopologyKey        string                        `json:"topologyKey" protobuf:"bytes,2,opt,name=topologyKey"`
	WhenUnsatisfiable  UnsatisfiableConstraintAction `json:"whenUnsatisfiable" protobuf:"bytes,3,opt,name=whenUnsatisfiable,casttype=UnsatisfiableConstraintAction"`
	LabelSelector      *api.LabelSelector            `json:"labelSelector,omitempty" protobuf:"bytes,4,opt,name=labelSelector"`
	MinDomains         *int32                        `json:"minDomains,omitempty" protobuf:"varint,5,opt,name=minDomains"`
	NodeAffinityPolicy *NodeInclusionPolicy          `json:"nodeAffinityPolicy,omitempty" protobuf:"bytes,6,opt,name=nodeAffinityPolicy"`
	NodeTaintsPolicy   *NodeInclusionPolicy          `json:"nodeTaintsPolicy,omitempty" protobuf:"bytes,7,opt,name=nodeTaintsPolicy"`
	MatchLabelKeys     []string                      `json:"matchLabelKeys,omitempty" protobuf:"bytes,8,opt,name=matchLabelKeys"`
}

// HostAlias has the JSON and protobuf shape of Kubernetes' core/v1 HostAlias.
type HostAlias struct {
	IP        string   `json:"ip" protobuf:"bytes,1,opt,name=ip"`
	Hostnames []string `json:"hostnames,omitempty" protobuf:"bytes,2,rep,name=hostnames"`
}

// PodFSGroupChangePolicy is an enumeration; see the constants.
type PodFSGroupChangePolicy string

// Values of PodFSGroupChangePolicy.
const (
	FSGroupChangeOnRootMismatch PodFSGroupChangePolicy = "OnRootMismatch"
	FSGroupChangeAlways         PodFSGroupChangePolicy = "Always"
)

// SupplementalGroupsPolicy is an enumeration; see the constants.
type SupplementalGroupsPolicy string

// Values of SupplementalGroupsPolicy.
const (
	SupplementalGroupsPolicyMerge  SupplementalGroupsPolicy = "Merge"
	SupplementalGroupsPolicyStrict SupplementalGroupsPolicy = "Strict"
)

// PodSELinuxChangePolicy is an enumeration; see the constants.
type PodSELinuxChangePolicy string

// Values of PodSELinuxChangePolicy.
const (
	SELinuxChangePolicyRecursive   PodSELinuxChangePolicy = "Recursive"
	SELinuxChangePolicyMountOption PodSELinuxChangePolicy = "MountOption"
)

// PodSecurityContext holds pod-level security settings.
type PodSecurityContext struct {
	SELinuxOptions           *SELinuxOptions                `json:"seLinuxOptions,omitempty" protobuf:"bytes,1,opt,name=seLinuxOptions"`
	WindowsOptions           *WindowsSecurityContextOptions `json:"windowsOptions,omitempty" protobuf:"bytes,8,opt,name=windowsOptions"`
	RunAsUser                *int64                         `json:"runAsUser,omitempty" protobuf:"varint,2,opt,name=runAsUser"`
	RunAsGroup               *int64                         `json:"runAsGroup,omitempty" protobuf:"varint,6,opt,name=runAsGroup"`
	RunAsNonRoot             *bool                          `json:"runAsNonRoot,omitempty" protobuf:"varint,3,opt,name=runAsNonRoot"`
	SupplementalGroups       []int64                        `json:"supplementalGroups,omitempty" protobuf:"varint,4,rep,name=supplementalGroups"`
	SupplementalGroupsPolicy *SupplementalGroupsPolicy      `json:"supplementalGroupsPolicy,omitempty" protobuf:"bytes,12,opt,name=supplementalGroupsPolicy"`
	FSGroup                  *int64                         `json:"fsGroup,omitempty" protobuf:"varint,5,opt,name=fsGroup"`
	Sysctls                  []Sysctl                       `json:"sysctls,omitempty" protobuf:"bytes,7,rep,name=sysctls"`
	FSGroupChangePolicy      *PodFSGroupChangePolicy        `json:"fsGroupChangePolicy,omitempty" protobuf:"bytes,9,opt,name=fsGroupChangePolicy"`
	SeccompProfile           *SeccompProfile                `json:"seccompProfile,omitempty" protobuf:"bytes,10,opt,name=seccompProfile"`
	AppArmorProfile          *AppArmorProfile               `json:"appArmorProfile,omitempty" protobuf:"bytes,11,opt,name=appArmorProfile"`
	SELinuxChangePolicy      *PodSELinuxChangePolicy        `json:"seLinuxChangePolicy,omitempty" protobuf:"bytes,13,opt,name=seLinuxChangePolicy"`
}

// SeccompProfile has the JSON and protobuf shape of Kubernetes' core/v1 SeccompProfile.
type SeccompProfile struct {
	Type             SeccompProfileType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=SeccompProfileType"`
	LocalhostProfile *string            `json:"localhostProfile,omitempty" protobuf:"bytes,2,opt,name=localhostProfile"`
}

// SeccompProfileType is an enumeration; see the constants.
type SeccompProfileType string

// Values of SeccompProfileType.
const (
	SeccompProfileTypeUnconfined     SeccompProfileType = "Unconfined"
	SeccompProfileTypeRuntimeDefault SeccompProfileType = "RuntimeDefault"
	SeccompProfileTypeLocalhost      SeccompProfileType = "Localhost"
)

// AppArmorProfile has the JSON and protobuf shape of Kubernetes' core/v1 AppArmorProfile.
type AppArmorProfile struct {
	Type             AppArmorProfileType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=AppArmorProfileType"`
	LocalhostProfile *string             `json:"localhostProfile,omitempty" protobuf:"bytes,2,opt,name=localhostProfile"`
}

// AppArmorProfileType is an enumeration; see the constants.
type AppArmorProfileType string

// Values of AppArmorProfileType.
const (
	AppArmorProfileTypeUnconfined     AppArmorProfileType = "Unconfined"
	AppArmorProfileTypeRuntimeDefault AppArmorProfileType = "RuntimeDefault"
	AppArmorProfileTypeLocalhost      AppArmorProfileType = "Localhost"
)

// PodQOSClass has the JSON and protobuf shape of Kubernetes' core/v1 PodQOSClass.
type PodQOSClass string

// Values of PodQOSClass.
const (
	PodQOSGuaranteed PodQOSClass = "Guaranteed"
	PodQOSBurstable  PodQOSClass = "Burstable"
	PodQOSBestEffort PodQOSClass = "BestEffort"
)

// PodDNSConfig has the JSON and protobuf shape of Kubernetes' core/v1 PodDNSConfig.
type PodDNSConfig struct {
	Nameservers []string             `json:"nameservers,omitempty" protobuf:"bytes,1,rep,name=nameservers"`
	Searches    []string             `json:"searches,omitempty" protobuf:"bytes,2,rep,name=searches"`
	Options     []PodDNSConfigOption `json:"options,omitempty" protobuf:"bytes,3,rep,name=options"`
}

// PodDNSConfigOption has the JSON and protobuf shape of Kubernetes' core/v1 PodDNSConfigOption.
type PodDNSConfigOption struct {
	Name  string  `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Value *string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
}

// PodIP has the JSON and protobuf shape of Kubernetes' core/v1 PodIP.
type PodIP struct {
	IP string `json:"ip" protobuf:"bytes,1,opt,name=ip"`
}

// HostIP has the JSON and protobuf shape of Kubernetes' core/v1 HostIP.
type HostIP struct {
	IP string `json:"ip" protobuf:"bytes,1,opt,name=ip"`
}

// EphemeralContainerCommon holds the Container fields an ephemeral container may use.
type EphemeralContainerCommon struct {
	Name                     string                   `json:"name" protobuf:"bytes,1,opt,name=name"`
	Image                    string                   `json:"image,omitempty" protobuf:"bytes,2,opt,name=image"`
	Command                  []string                 `json:"command,omitempty" protobuf:"bytes,3,rep,name=command"`
	Args                     []string                 `json:"args,omitempty" protobuf:"bytes,4,rep,name=args"`
	WorkingDir               string                   `json:"workingDir,omitempty" protobuf:"bytes,5,opt,name=workingDir"`
	Ports                    []ContainerPort          `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"containerPort" listType:"map" listMapKeys:"containerPort,protocol" protobuf:"bytes,6,rep,name=ports"`
	EnvFrom                  []EnvFromSource          `json:"envFrom,omitempty" protobuf:"bytes,19,rep,name=envFrom"`
	Env                      []EnvVar                 `json:"env,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,7,rep,name=env"`
	Resources                ResourceRequirements     `json:"resources,omitempty" protobuf:"bytes,8,opt,name=resources"`
	ResizePolicy             []ContainerResizePolicy  `json:"resizePolicy,omitempty" protobuf:"bytes,23,rep,name=resizePolicy"`
	RestartPolicy            *ContainerRestartPolicy  `json:"restartPolicy,omitempty" protobuf:"bytes,24,opt,name=restartPolicy,casttype=ContainerRestartPolicy"`
	RestartPolicyRules       []ContainerRestartRule   `json:"restartPolicyRules,omitempty" protobuf:"bytes,25,rep,name=restartPolicyRules"`
	VolumeMounts             []VolumeMount            `json:"volumeMounts,omitempty" patchStrategy:"merge" patchMergeKey:"mountPath" protobuf:"bytes,9,rep,name=volumeMounts"`
	VolumeDevices            []VolumeDevice           `json:"volumeDevices,omitempty" patchStrategy:"merge" patchMergeKey:"devicePath" protobuf:"bytes,21,rep,name=volumeDevices"`
	LivenessProbe            *Probe                   `json:"livenessProbe,omitempty" protobuf:"bytes,10,opt,name=livenessProbe"`
	ReadinessProbe           *Probe                   `json:"readinessProbe,omitempty" protobuf:"bytes,11,opt,name=readinessProbe"`
	StartupProbe             *Probe                   `json:"startupProbe,omitempty" protobuf:"bytes,22,opt,name=startupProbe"`
	Lifecycle                *Lifecycle               `json:"lifecycle,omitempty" protobuf:"bytes,12,opt,name=lifecycle"`
	TerminationMessagePath   string                   `json:"terminationMessagePath,omitempty" protobuf:"bytes,13,opt,name=terminationMessagePath"`
	TerminationMessagePolicy TerminationMessagePolicy `json:"terminationMessagePolicy,omitempty" protobuf:"bytes,20,opt,name=terminationMessagePolicy,casttype=TerminationMessagePolicy"`
	ImagePullPolicy          PullPolicy               `json:"imagePullPolicy,omitempty" protobuf:"bytes,14,opt,name=imagePullPolicy,casttype=PullPolicy"`
	SecurityContext          *SecurityContext         `json:"securityContext,omitempty" protobuf:"bytes,15,opt,name=securityContext"`
	Stdin                    bool                     `json:"stdin,omitempty" protobuf:"varint,16,opt,name=stdin"`
	StdinOnce                bool                     `json:"stdinOnce,omitempty" protobuf:"varint,17,opt,name=stdinOnce"`
	TTY                      bool                     `json:"tty,omitempty" protobuf:"varint,18,opt,name=tty"`
}

// EphemeralContainer is a debugging container added to a running pod.
type EphemeralContainer struct {
	EphemeralContainerCommon `json:",inline" protobuf:"bytes,1,req"`
	TargetContainerName      string `json:"targetContainerName,omitempty" protobuf:"bytes,2,opt,name=targetContainerName"`
}

// EvictionResponder has the JSON and protobuf shape of Kubernetes' core/v1 EvictionResponder.
type EvictionResponder struct {
	Name     string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Priority *int32 `json:"priority" protobuf:"varint,2,opt,name=priority"`
}

// PodStatus is the observed state of a Pod.
type PodStatus struct {
	ObservedGeneration                   int64                                `json:"observedGeneration,omitempty" protobuf:"varint,17,opt,name=observedGeneration"`
	Phase                                PodPhase                             `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=PodPhase"`
	Conditions                           []PodCondition                       `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,2,rep,name=conditions"`
	Message                              string                               `json:"message,omitempty" protobuf:"bytes,3,opt,name=message"`
	Reason                               string                               `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	NominatedNodeName                    string                               `json:"nominatedNodeName,omitempty" protobuf:"bytes,11,opt,name=nominatedNodeName"`
	HostIP                               string                               `json:"hostIP,omitempty" protobuf:"bytes,5,opt,name=hostIP"`
	HostIPs                              []HostIP                             `json:"hostIPs,omitempty" protobuf:"bytes,16,rep,name=hostIPs" patchStrategy:"merge" patchMergeKey:"ip"`
	PodIP                                string                               `json:"podIP,omitempty" protobuf:"bytes,6,opt,name=podIP"`
	PodIPs                               []PodIP                              `json:"podIPs,omitempty" protobuf:"bytes,12,rep,name=podIPs" patchStrategy:"merge" patchMergeKey:"ip"`
	StartTime                            *api.Time                            `json:"startTime,omitempty" protobuf:"bytes,7,opt,name=startTime"`
	InitContainerStatuses                []ContainerStatus                    `json:"initContainerStatuses,omitempty" protobuf:"bytes,10,rep,name=initContainerStatuses"`
	ContainerStatuses                    []ContainerStatus                    `json:"containerStatuses,omitempty" protobuf:"bytes,8,rep,name=containerStatuses"`
	QOSClass                             PodQOSClass                          `json:"qosClass,omitempty" protobuf:"bytes,9,rep,name=qosClass"`
	EphemeralContainerStatuses           []ContainerStatus                    `json:"ephemeralContainerStatuses,omitempty" protobuf:"bytes,13,rep,name=ephemeralContainerStatuses"`
	Resize                               PodResizeStatus                      `json:"resize,omitempty" protobuf:"bytes,14,opt,name=resize,casttype=PodResizeStatus"`
	ResourceClaimStatuses                []PodResourceClaimStatus             `json:"resourceClaimStatuses,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name" protobuf:"bytes,15,rep,name=resourceClaimStatuses"`
	ExtendedResourceClaimStatus          *PodExtendedResourceClaimStatus      `json:"extendedResourceClaimStatus,omitempty" protobuf:"bytes,18,opt,name=extendedResourceClaimStatus"`
	AllocatedResources                   ResourceList                         `json:"allocatedResources,omitempty" protobuf:"bytes,19,rep,name=allocatedResources,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Resources                            *ResourceRequirements                `json:"resources,omitempty" protobuf:"bytes,20,opt,name=resources"`
	NodeAllocatableResourceClaimStatuses []NodeAllocatableResourceClaimStatus `json:"nodeAllocatableResourceClaimStatuses,omitempty" patchStrategy:"merge" patchMergeKey:"resourceClaimName" protobuf:"bytes,21,rep,name=nodeAllocatableResourceClaimStatuses"`
	VolumeHealth                         []PodVolumeHealth                    `json:"volumeHealth,omitempty" protobuf:"bytes,22,rep,name=volumeHealth"`
}

// Pod is a group of containers scheduled together on one node.
type Pod struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           PodSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         PodStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// PodList is a list of Pod objects.
type PodList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Pod `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// PodTemplateSpec is the pod part of workload templates (Deployment, Job, ...).
type PodTemplateSpec struct {
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           PodSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// PodTemplate is a stored pod template.
type PodTemplate struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Template       PodTemplateSpec `json:"template,omitempty" protobuf:"bytes,2,opt,name=template"`
}

// PodTemplateList is a list of PodTemplate objects.
type PodTemplateList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []PodTemplate `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ResourceName is the name of a resource (cpu, memory, ...).
type ResourceName string

// Values of ResourceName.
const (
	ResourceCPU                      ResourceName = "cpu"
	ResourceMemory                   ResourceName = "memory"
	ResourceStorage                  ResourceName = "storage"
	ResourceEphemeralStorage         ResourceName = "ephemeral-storage"
	ResourcePods                     ResourceName = "pods"
	ResourceServices                 ResourceName = "services"
	ResourceReplicationControllers   ResourceName = "replicationcontrollers"
	ResourceQuotas                   ResourceName = "resourcequotas"
	ResourceSecrets                  ResourceName = "secrets"
	ResourceConfigMaps               ResourceName = "configmaps"
	ResourcePersistentVolumeClaims   ResourceName = "persistentvolumeclaims"
	ResourceServicesNodePorts        ResourceName = "services.nodeports"
	ResourceServicesLoadBalancers    ResourceName = "services.loadbalancers"
	ResourceRequestsCPU              ResourceName = "requests.cpu"
	ResourceRequestsMemory           ResourceName = "requests.memory"
	ResourceRequestsStorage          ResourceName = "requests.storage"
	ResourceRequestsEphemeralStorage ResourceName = "requests.ephemeral-storage"
	ResourceLimitsCPU                ResourceName = "limits.cpu"
	ResourceLimitsMemory             ResourceName = "limits.memory"
	ResourceLimitsEphemeralStorage   ResourceName = "limits.ephemeral-storage"
)

// ResourceList maps resource names to quantities.
type ResourceList map[string]api.Quantity

// ObjectReference points at any object, optionally at a field of it.
type ObjectReference struct {
	Kind            string `json:"kind,omitempty" protobuf:"bytes,1,opt,name=kind"`
	Namespace       string `json:"namespace,omitempty" protobuf:"bytes,2,opt,name=namespace"`
	Name            string `json:"name,omitempty" protobuf:"bytes,3,opt,name=name"`
	UID             string `json:"uid,omitempty" protobuf:"bytes,4,opt,name=uid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	APIVersion      string `json:"apiVersion,omitempty" protobuf:"bytes,5,opt,name=apiVersion"`
	ResourceVersion string `json:"resourceVersion,omitempty" protobuf:"bytes,6,opt,name=resourceVersion"`
	FieldPath       string `json:"fieldPath,omitempty" protobuf:"bytes,7,opt,name=fieldPath"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
}

// TypedLocalObjectReference names an object of a given kind in the same namespace.
type TypedLocalObjectReference struct {
	APIGroup *string `json:"apiGroup" protobuf:"bytes,1,opt,name=apiGroup"`
	Kind     string  `json:"kind" protobuf:"bytes,2,opt,name=kind"`
	Name     string  `json:"name" protobuf:"bytes,3,opt,name=name"`
}

// DownwardAPIVolumeSource describes a DownwardAPI volume.
type DownwardAPIVolumeSource struct {
	Items       []DownwardAPIVolumeFile `json:"items,omitempty" protobuf:"bytes,1,rep,name=items"`
	DefaultMode *int32                  `json:"defaultMode,omitempty" protobuf:"varint,2,opt,name=defaultMode"`
	DefaultUser *int64                  `json:"defaultUser,omitempty" protobuf:"varint,3,opt,name=defaultUser"`
}

// DownwardAPIVolumeFile has the JSON and protobuf shape of Kubernetes' core/v1 DownwardAPIVolumeFile.
type DownwardAPIVolumeFile struct {
	Path             string                 `json:"path" protobuf:"bytes,1,opt,name=path"`
	FieldRef         *ObjectFieldSelector   `json:"fieldRef,omitempty" protobuf:"bytes,2,opt,name=fieldRef"`
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty" protobuf:"bytes,3,opt,name=resourceFieldRef"`
	Mode             *int32                 `json:"mode,omitempty" protobuf:"varint,4,opt,name=mode"`
	User             *int64                 `json:"user,omitempty" protobuf:"varint,5,opt,name=user"`
}

// DownwardAPIProjection is the downward API source of a projected volume.
type DownwardAPIProjection struct {
	Items []DownwardAPIVolumeFile `json:"items,omitempty" protobuf:"bytes,1,rep,name=items"`
}

// SecurityContext holds container-level security settings.
type SecurityContext struct {
	Capabilities             *Capabilities                  `json:"capabilities,omitempty" protobuf:"bytes,1,opt,name=capabilities"`
	Privileged               *bool                          `json:"privileged,omitempty" protobuf:"varint,2,opt,name=privileged"`
	SELinuxOptions           *SELinuxOptions                `json:"seLinuxOptions,omitempty" protobuf:"bytes,3,opt,name=seLinuxOptions"`
	WindowsOptions           *WindowsSecurityContextOptions `json:"windowsOptions,omitempty" protobuf:"bytes,10,opt,name=windowsOptions"`
	RunAsUser                *int64                         `json:"runAsUser,omitempty" protobuf:"varint,4,opt,name=runAsUser"`
	RunAsGroup               *int64                         `json:"runAsGroup,omitempty" protobuf:"varint,8,opt,name=runAsGroup"`
	RunAsNonRoot             *bool                          `json:"runAsNonRoot,omitempty" protobuf:"varint,5,opt,name=runAsNonRoot"`
	ReadOnlyRootFilesystem   *bool                          `json:"readOnlyRootFilesystem,omitempty" protobuf:"varint,6,opt,name=readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool                          `json:"allowPrivilegeEscalation,omitempty" protobuf:"varint,7,opt,name=allowPrivilegeEscalation"`
	ProcMount                *ProcMountType                 `json:"procMount,omitempty" protobuf:"bytes,9,opt,name=procMount"`
	SeccompProfile           *SeccompProfile                `json:"seccompProfile,omitempty" protobuf:"bytes,11,opt,name=seccompProfile"`
	AppArmorProfile          *AppArmorProfile               `json:"appArmorProfile,omitempty" protobuf:"bytes,12,opt,name=appArmorProfile"`
}

// ProcMountType is an enumeration; see the constants.
type ProcMountType string

// Values of ProcMountType.
const (
	DefaultProcMount  ProcMountType = "Default"
	UnmaskedProcMount ProcMountType = "Unmasked"
)

// SELinuxOptions has the JSON and protobuf shape of Kubernetes' core/v1 SELinuxOptions.
type SELinuxOptions struct {
	User  string `json:"user,omitempty" protobuf:"bytes,1,opt,name=user"`
	Role  string `json:"role,omitempty" protobuf:"bytes,2,opt,name=role"`
	Type  string `json:"type,omitempty" protobuf:"bytes,3,opt,name=type"`
	Level string `json:"level,omitempty" protobuf:"bytes,4,opt,name=level"`
}

// WindowsSecurityContextOptions has the JSON and protobuf shape of Kubernetes' core/v1 WindowsSecurityContextOptions.
type WindowsSecurityContextOptions struct {
	GMSACredentialSpecName *string `json:"gmsaCredentialSpecName,omitempty" protobuf:"bytes,1,opt,name=gmsaCredentialSpecName"`
	GMSACredentialSpec     *string `json:"gmsaCredentialSpec,omitempty" protobuf:"bytes,2,opt,name=gmsaCredentialSpec"`
	RunAsUserName          *string `json:"runAsUserName,omitempty" protobuf:"bytes,3,opt,name=runAsUserName"`
	HostProcess            *bool   `json:"hostProcess,omitempty" protobuf:"bytes,4,opt,name=hostProcess"`
}

// Sysctl has the JSON and protobuf shape of Kubernetes' core/v1 Sysctl.
type Sysctl struct {
	Name  string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value string `json:"value" protobuf:"bytes,2,opt,name=value"`
}

// ImageVolumeSource describes a Image volume.
type ImageVolumeSource struct {
	Reference  string     `json:"reference,omitempty" protobuf:"bytes,1,opt,name=reference"`
	PullPolicy PullPolicy `json:"pullPolicy,omitempty" protobuf:"bytes,2,opt,name=pullPolicy,casttype=PullPolicy"`
}

// NodeAllocatableResourceClaimStatus is the observed state of a NodeAllocatableResourceClaim.
type NodeAllocatableResourceClaimStatus struct {
	ResourceClaimName string                             `json:"resourceClaimName" protobuf:"bytes,1,opt,name=resourceClaimName"`
	Containers        []string                           `json:"containers,omitempty" protobuf:"bytes,2,rep,name=containers"`
	Mapping           []NodeAllocatableMappedResources   `json:"mapping,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,4,rep,name=mapping"`
	Overhead          []NodeAllocatableOverheadResources `json:"overhead,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,5,rep,name=overhead"`
}

// NodeAllocatableMappedResources has the JSON and protobuf shape of Kubernetes' core/v1 NodeAllocatableMappedResources.
type NodeAllocatableMappedResources struct {
	Name     ResourceName  `json:"name" protobuf:"bytes,1,opt,name=name,casttype=ResourceName"`
	Quantity *api.Quantity `json:"quantity" protobuf:"bytes,2,opt,name=quantity"`
}

// NodeAllocatableOverheadResources has the JSON and protobuf shape of Kubernetes' core/v1 NodeAllocatableOverheadResources.
type NodeAllocatableOverheadResources struct {
	Name         ResourceName  `json:"name" protobuf:"bytes,1,opt,name=name,casttype=ResourceName"`
	PerPod       *api.Quantity `json:"perPod,omitempty" protobuf:"bytes,2,opt,name=perPod"`
	PerContainer *api.Quantity `json:"perContainer,omitempty" protobuf:"bytes,3,opt,name=perContainer"`
}
