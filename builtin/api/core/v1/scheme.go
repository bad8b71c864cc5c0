package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers every top-level kind of this package, and its list type,
// in s under core/v1 (apiVersion "v1"). Binding has no list type: it is only
// created (pods/binding and the create-only bindings resource).
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion(),
		&Namespace{},
		&NamespaceList{},
		&ConfigMap{},
		&ConfigMapList{},
		&Secret{},
		&SecretList{},
		&ServiceAccount{},
		&ServiceAccountList{},
		&Event{},
		&EventList{},
		&Pod{},
		&PodList{},
		&PodTemplate{},
		&PodTemplateList{},
		&ReplicationController{},
		&ReplicationControllerList{},
		&PersistentVolumeClaim{},
		&PersistentVolumeClaimList{},
		&PersistentVolume{},
		&PersistentVolumeList{},
		&Node{},
		&NodeList{},
		&Service{},
		&ServiceList{},
		&Endpoints{},
		&EndpointsList{},
		&Binding{},
		&ResourceQuota{},
		&ResourceQuotaList{},
		&LimitRange{},
		&LimitRangeList{},
	)
}
