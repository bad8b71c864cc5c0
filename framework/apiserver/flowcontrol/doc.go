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
// # Seats
//
// The server's total concurrency limit (max-requests-inflight plus
// max-mutating-requests-inflight, as in Kubernetes) is divided between the
// limited levels by nominalConcurrencyShares:
// NominalCL(l) = ceil(ServerCL * NCS(l) / ΣNCS), exempt levels' shares
// counted in the sum. Simplification: a level's current limit is its nominal
// limit; lendablePercent and borrowingLimitPercent are stored and validated
// but seats are not lent or borrowed between levels. Every request takes one
// seat (no width estimation).
//
// # Queuing and fairness
//
// A Queue level has Queues queues; a flow is dealt a hand of HandSize queues by
// shuffle sharding on the hash of its flow key, and a request joins the
// shortest queue of its hand (waiting plus executing). A request finding its
// queue at QueueLengthLimit is rejected at once; one that waits longer than
// the wait limit (default 15 s, a quarter of Kubernetes' request timeout) is
// rejected then. When a seat frees, the non-empty queue with the fewest
// executing requests is served next (ties in round-robin order): fair
// queuing by seats in use, a simplification of Kubernetes' virtual-time fair
// queuing that gives each busy flow an equal share of the level. A Reject
// level has no queues: a request without a free seat is rejected at once.
//
// Converge addition: a flow of a ByUser schema (one user's requests) may hold
// at most PerFlowPercent of its level's seats (default 50, at least one; 100
// turns it off); its next requests wait in its queue. This is the per-user
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
// Watches are classified and must get a seat to start (so a saturated level
// queues or rejects new watches), but give the seat back as soon as they start
// instead of holding it while their initial events are sent (Kubernetes holds
// it through initialization). Other long-running requests (exec, attach,
// port-forward, proxy, logs) are classified for the headers and never wait
// for a seat.
package flowcontrol
