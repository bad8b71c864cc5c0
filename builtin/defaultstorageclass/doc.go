// Package defaultstorageclass is Kubernetes' DefaultStorageClass admission
// plugin: a PersistentVolumeClaim created without spec.storageClassName gets
// the cluster's default StorageClass (the one annotated
// storageclass.kubernetes.io/is-default-class: "true"; the newest when
// several are), so that `kubectl get pvc` shows the class it will be
// provisioned from. A claim that names a class, even "", is left alone, and
// so is one created while no class is the default (the volume binder assigns
// the default to such claims later, as Kubernetes' retroactive assignment
// does).
package defaultstorageclass
