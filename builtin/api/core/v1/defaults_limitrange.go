package v1

// DefaultLimitRange fills in Kubernetes' LimitRange defaults: for Container
// limits, a missing default limit is the max, a missing default request is
// the default limit, else the min.
func DefaultLimitRange(lr *LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type != LimitTypeContainer {
			continue
		}
		if item.Default == nil {
			item.Default = ResourceList{}
		}
		if item.DefaultRequest == nil {
			item.DefaultRequest = ResourceList{}
		}
		for k, v := range item.Max {
			if _, ok := item.Default[k]; !ok {
				item.Default[k] = v
			}
		}
		for k, v := range item.Default {
			if _, ok := item.DefaultRequest[k]; !ok {
				item.DefaultRequest[k] = v
			}
		}
		for k, v := range item.Min {
			if _, ok := item.DefaultRequest[k]; !ok {
				item.DefaultRequest[k] = v
			}
		}
	}
}
