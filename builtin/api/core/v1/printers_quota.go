package v1

import (
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// ResourceQuotaPrinter renders kubectl's resourcequota columns: the requests
// and limits as used/hard pairs.
func ResourceQuotaPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn, ageColumn,
			{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
			{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		},
		Row: rowFunc(func(q *ResourceQuota, now time.Time) []any {
			var req, lim []string
			for _, k := range sortedKeys(q.Status.Hard) {
				used := q.Status.Used[k]
				pair := k + ": " + used.String() + "/" + q.Status.Hard[k].String()
				if used.S == "" {
					pair = k + ": 0/" + q.Status.Hard[k].String()
				}
				if strings.HasPrefix(k, "limits.") {
					lim = append(lim, pair)
				} else {
					req = append(req, pair)
				}
			}
			return []any{q.Name, registry.Age(q.CreationTimestamp, now), strings.Join(req, ", "), strings.Join(lim, ", ")}
		}),
	}
}

// LimitRangePrinter renders kubectl's limitrange columns.
func LimitRangePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn, {Name: "Created At", Type: "date", Description: ageDescription}},
		Row: rowFunc(func(lr *LimitRange, _ time.Time) []any {
			return []any{lr.Name, lr.CreationTimestamp.UTC().Format(time.RFC3339)}
		}),
	}
}
