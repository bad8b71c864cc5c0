// Package autoscale is the HorizontalPodAutoscaler acceptance suite: a real
// control plane (API server, scheduler, deployment and replicaset
// controllers, the autoscaler with a 1 s sync period and a 2 s downscale
// stabilization window) and a node agent on the process runtime sampling
// usage every 500 ms. A Deployment of CPU-burning pods is scaled up on the
// real figures of their processes, then back down once they stop burning.
package autoscale
