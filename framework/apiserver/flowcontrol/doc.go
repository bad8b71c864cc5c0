// Package flowcontrol is API Priority and Fairness (APF) as Kubernetes'
// k8s.io/apiserver pkg/util/flowcontrol enforces it: every request is
// classified by the first matching FlowSchema (lowest matchingPrecedence,
// then name) into a priority level and a flow (the schema plus the
// distinguisher: the user for ByUser, the namespace for ByNamespace), and
// waits for a seat of its level.
//
// # Configuration
//
// Config is the compiled form of the FlowSchemas and
// PriorityLevelConfigurations (builtin/flowcontrol converts the stored
// flowcontrol.apiserver.k8s.io/v1 objects into it). Controller.Update swaps it
// in atomically: classification reads one immutable snapshot (no lock, no
// allocation); a level keeps its queues and its executing requests across
// updates when its name stays.
//
// # Seats and work estimation
//
// The server's total concurrency limit (max-requests-inflight plus
// max-mutating-requests-inflight, as in Kubernetes) is divided between the
// levels by nominalConcurrencyShares: NominalCL(l) = ceil(ServerCL *
// NCS(l) / ΣNCS). A request takes the seats its estimate asks for
// (estimate.go, Kubernetes' work estimator): a list one seat per 100 objects
// it will process — every stored object of the resource when the watch
// cache serves it, twice min(limit, stored) from storage, stored plus
// min(limit, stored) with a selector — between 1 and min(10, the level's
// max(1, min(ceil(15% of NominalCL), NominalCL/handSize))); the counts are
// the API server's apiserver_storage_objects, read every minute. A write
// whose resource has at least 10 open watches (on all namespaces, its
// namespace or its name) holds ceil(watches/10) final seats (at most the
// maximum, the latency stretched to keep the work) for 5 ms per seat after
// it finishes: the watch fan-out. Other requests take one seat.
//
// # Borrowing
//
// Each level's current limit lies between NominalCL − lendable seats and
// NominalCL + borrowable seats (borrowingLimitPercent unset: the server's
// limit). Every AdjustPeriod (10 s) Run recomputes the limits as Kubernetes
// does (borrow.go): each level's seat demand (seats in use plus seats
// waiting) is integrated over the period; its smoothed demand is
// max(avg+stddev, 0.977×previous + 0.023×(avg+stddev)); an exempt level gets
// max(lower bound, demand high watermark); the limited levels divide the sum
// of the nominal limits by a fair proportion of their targets (max(smoothed
// demand, lower bound)), each at least max(lower bound, min(NominalCL, high
// watermark)) and at most its upper bound. An idle level thus lends its
// lendable seats to busy ones, and gets them back at the next adjustment
// after it becomes busy. Executing requests are not preempted.
//
// # Queuing and fairness
//
// A Queue level has Queues queues; a flow is dealt a hand of HandSize queues by
// shuffle sharding on the hash of its flow key, and a request joins the
// queue of its hand with the least waiting work. A request finding its
// queue at QueueLengthLimit is rejected at once; one that waits longer than
// the wait limit (default 15 s, a quarter of Kubernetes' request timeout) is
// rejected then. Queues are served by Kubernetes' fair queuing for server
// requests: virtual time advances by the seats the busy queues could use
// divided between them; the head with the earliest virtual finish (its
// queue's next dispatch plus seats × 3 ms, plus final seats × latency) is
// served next, once its seats are free — nothing overtakes a wide request
// that waits for seats; a finished request corrects its queue by its
// actual service time. A Reject level has no queues: a request without
// its free seats is rejected at once.
//
// Converge addition: a flow of a ByUser schema (one user's requests) may hold
// at most PerFlowPercent of its level's nominal seats (default 50, at least
// one; 100 turns it off; a flow holding none may always start one request);
// its next requests wait in its queue. This is the per-user
// share the max-in-flight filter had, so one user flooding a level cannot
// hold every seat while another user's requests wait. Flows of ByNamespace
// schemas and of schemas without a distinguisher are not capped.
//
// Rejected requests get 429 with Retry-After and Kubernetes' message "Too many
// requests, please try again later."; every classified request carries the
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID
// headers.
//
// # Long-running requests
//
// Watches are classified and must get their seats to start (one, or a
// list's estimate with sendInitialEvents=true), so a saturated level queues
// or rejects new watches, and hold them while their initial events are sent,
// as Kubernetes does: the filter puts a filters.WatchInitSignal in the
// request's context; the watch handler calls filters.WatchInitialized once
// the initial events (resourceVersion=0 or unset: the current state;
// sendInitialEvents=true: the streamed list and its initial-events-end
// bookmark) are written and flushed, and the seats are given back then (or
// when the watch ends, if earlier), while the watch runs on. The filter
// counts open watches for the write estimate. Other long-running requests
// (exec, attach, port-forward, proxy, logs) are classified for the headers
// and never wait for a seat.
//
// # Metrics
//
// Collect reports the levels' limits, demand, executing and waiting seats
// and the rejections under Kubernetes' names, and
// apiserver_flowcontrol_work_estimated_seats (priority_level, flow_schema;
// buckets 1, 2, 4, 10): the seats of each request that takes seats (exempt
// ones too, as Kubernetes 1.34 estimates them; not the long-running requests
// other than watches), observed through an observer each compiled schema
// keeps (no label lookup per request).
package flowcontrol
