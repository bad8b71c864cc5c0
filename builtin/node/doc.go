// Package node is the node agent (the kubelet equivalent). An Agent registers
// its Node, renews its Lease, watches the pods bound to it and runs one worker
// per pod against a cri.Runtime, serves container logs over HTTP, and
// reports node and pod status.
//
// Contract:
//   - Registration: the Node gets capacity/allocatable (the machine's CPU and
//     memory unless Options.Capacity overrides them), the kubernetes.io/hostname,
//     kubernetes.io/os and kubernetes.io/arch labels (plus
//     topology.kubernetes.io/zone when Options.Zone is set), InternalIP
//     (Options.InternalIP; with PodNetworkCNI by default the host's
//     default-route address, package nodeip) and Hostname addresses, nodeInfo, spec.podCIDR and
//     status.daemonEndpoints.kubeletEndpoint.Port (the log server).
//   - Heartbeats: the Lease kube-node-lease/<node> is renewed every
//     LeaseRenewInterval (10 s). Node conditions (Ready, MemoryPressure,
//     DiskPressure, PIDPressure) are computed every NodeStatusUpdateInterval
//     (10 s) and written only when they change or NodeStatusReportInterval
//     (5 min) has passed.
//   - Pods: one worker per pod UID; init containers run one at a time in order,
//     then all containers start. Restart policies with CrashLoopBackOff (first
//     restart immediate, then CrashLoopBackOffBase doubling to
//     CrashLoopBackOffMax, reset after BackOffResetAfter of running), probes,
//     env/envFrom/$(VAR) expansion, volumes as per-pod directories (claims as
//     per-claim directories that outlive pods, claims.go), graceful
//     termination (preStop, SIGTERM, grace, SIGKILL). A pod with a
//     deletionTimestamp is terminated by its deadline (the deletion grace from
//     when the agent saw it, never past the deletionTimestamp, moved earlier by
//     a shorter second DELETE), gets a terminal final status, and is deleted
//     with gracePeriodSeconds=0 and its UID as precondition; a pod that
//     disappeared (force deleted) has its containers stopped within 2 s.
//   - Pod IPs: with PodNetworkLoopback (the process runtime) each pod gets its
//     own address from PodCIDR (default 127.10.0.0/16, loopback, so the process
//     runtime's programs can bind it); with PodNetworkCNI (the containerd
//     runtime) its own network namespace and an IP from the Node's podCIDR
//     (default 10.42.0.0/24) through CNI (package podnet, podnetwork.go).
//     hostNetwork pods get the node's InternalIP. The IP is status.podIP and the
//     POD_IP environment variable.
//   - Logs: GET http://<InternalIP>:<port>/containerLogs/{namespace}/{pod}/{container}
//     with follow, tailLines, timestamps, sinceSeconds, sinceTime, previous,
//     limitBytes (text/plain, flushed per line when following).
//   - Resource stats (package stats): every StatsInterval (10 s) the node's
//     totals and each running container's CPU time and working set (the
//     runtime's cri.StatsProvider) are read; the same port serves them at
//     GET /stats/summary (JSON, CPU rates over the last interval, read by
//     metrics.k8s.io) and GET /metrics/resource (the kubelet's Prometheus
//     names).
//   - Metrics: GET /metrics on the same port serves the kubelet's names
//     (package kubeletmetrics); over HTTPS every request is authenticated and
//     authorized as the kubelet's (package nodeauth: nodes/metrics,
//     nodes/stats, nodes/proxy). GET /healthz and GET /pods (a v1 PodList of
//     the pods it runs, as the kubelet's) too; the API server's nodes/proxy
//     reaches all of them.
//   - Streams (streamserver.go, protocols in package stream): GET or POST
//     /exec/{ns}/{pod}/{container} (cri.StreamExecer), /attach/... (the
//     container's terminal through cri.TTYAttacher when it runs on one; else
//     the log from now on, stdin through cri.StdinAttacher) and
//     /portforward/{ns}/{pod} (the pod IP, then 127.0.0.1); the same listener
//     and TLS as the logs.
//   - Ephemeral containers (ephemeral.go, kubectl debug): started once each
//     when the pod's spec gains them and it runs, never restarted, reported
//     in status.ephemeralContainerStatuses; targetContainerName becomes
//     ContainerSpec.TargetID. A runtime without cri.StreamExecer cannot run
//     them: Waiting CreateContainerError with the reason, and an event.
//   - Start(ctx) blocks until ctx ends; then it stops every container it runs
//     (the process runtime's children would otherwise outlive it).
//   - Restarts: with a runtime that implements cri.Lister (the process
//     runtime with a StateDir), an agent that was killed finds the containers
//     it started and re-adopts them: running ones are watched instead of
//     started again (same ID, restart count and pod IP), dead ones are
//     restarted by policy, those of vanished pods are removed (adopt.go).
//   - DNS: each pod's /etc/resolv.conf is formed as the kubelet does from its
//     dnsPolicy and dnsConfig, Options.ClusterDNS/ClusterDomain and the host's
//     resolver file (limits with DNSConfigForming events) and mounted where
//     the runtime keeps mounts private (cri.PrivateMounter) (dns.go).
//   - Environment: the service variables of the pod's namespace and of
//     default/kubernetes, as the kubelet injects them (serviceenv.go).
//   - Hooks: postStart and preStop with exec, httpGet and sleep handlers; a
//     failed postStart kills the container (lifecycle.go). Probes: exec,
//     httpGet, tcpSocket and gRPC (grpcprobe.go).
//   - Projected serviceAccountToken sources are issued through TokenRequest
//     and renewed in place (satoken.go).
package node
