// Package limitrange is Kubernetes' LimitRanger admission plugin: the
// LimitRanges of a namespace give its containers default requests and limits
// (mutating, on pod creation, recorded in the kubernetes.io/limit-ranger
// annotation) and bound what containers, pods and persistent volume claims
// may request (validating: min, max and maxLimitRequestRatio), refusing with
// 403 Forbidden and Kubernetes' messages ("maximum cpu usage per Container is
// 500m, but limit is 600m").
//
// LimitRanges are read through a List function (the API server's watch
// cache), so a change reaches admission once the cache has it.
package limitrange
