package v1

import (
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// ReplicationControllerPrinter renders kubectl's replicationcontroller columns.
func ReplicationControllerPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Desired", Type: "integer", Description: "Replicas is the number of desired replicas."},
			{Name: "Current", Type: "integer", Description: "Replicas is the most recently observed number of replicas."},
			{Name: "Ready", Type: "integer", Description: "The number of ready replicas for this replication controller."},
			ageColumn,
			{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
			{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
			{Name: "Selector", Type: "string", Priority: 1, Description: "Selector is a label query over pods that should match the Replicas count."},
		},
		Row: rowFunc(func(rc *ReplicationController, now time.Time) []any {
			var desired int64
			if rc.Spec.Replicas != nil {
				desired = int64(*rc.Spec.Replicas)
			}
			var names, images []string
			if rc.Spec.Template != nil {
				for _, c := range rc.Spec.Template.Spec.Containers {
					names, images = append(names, c.Name), append(images, c.Image)
				}
			}
			return []any{rc.Name, desired, int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), registry.Age(rc.CreationTimestamp, now),
				strings.Join(names, ","), strings.Join(images, ","), labels.SelectorFromSet(rc.Spec.Selector).String()}
		}),
	}
}
