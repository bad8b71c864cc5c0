// Package ephemeral is the ephemeral volume controller: for every pod volume
// of type ephemeral it creates the PersistentVolumeClaim "<pod>-<volume>" from
// the volume's volumeClaimTemplate, owned (as controller) by the pod, so the
// claim lives and dies with the pod, as Kubernetes' ephemeral volume
// controller does. The claim is then bound and materialised like any other
// (see the volumebinder controller and the node agent).
package ephemeral
