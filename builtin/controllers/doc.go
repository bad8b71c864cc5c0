// Package controllers lists Converge's built-in controllers (one package each under
// builtin/controllers/<name>) and adds them to a manager. The control plane runs
// them inside `converge up`; testenv runs the ones a test asks for.
//
// # How a controller reads and writes
//
// The controllers follow one pattern; copy it (serviceaccount is the smallest
// example, daemonset a full one). garbagecollector keeps its own graph.
//
//   - Reads come from the informer cache through mgr.Reader() (a
//     cache.Reader: Get and List, copies the caller may modify). The
//     builder's For/Owns/Watches create the informers; a kind that is read
//     but not watched gets one with cache.InformerFor in Setup. A reconcile
//     that reads many objects each time (replicaset, deployment: every pod
//     of the namespace) uses cache.ListerFor instead: the same reads without
//     copies, objects it must clone before changing. A field other than
//     name and namespace is selected through an index (cache.IndexField;
//     pods by node: podutil.IndexByNode). Keys are client.ObjectKey (and
//     cache.KeyOf for an object), never strings built by hand.
//   - Writes go through mgr.Client(), seen by the reconciler as a small
//     interface declared in the controller's package where it is used (1 to
//     4 of Create, Update, Patch, Delete, Status, SubResource), next to a
//     reader interface (Get, List) and a recorder interface (Event).
//   - Tests replace those interfaces, never closure fields: unit tests pass
//     internal/fakeclient (an in-memory Reader and client that records
//     writes), behaviour suites run the real control plane through
//     internal/controllertest.
//   - A cache may lag the controller's own writes. Creations with generated
//     names are guarded by expectations (podutil.Expectations, fed by the
//     pod informer, as in daemonset and replicaset); objects with fixed
//     names make a repeated create answer AlreadyExists and a repeated
//     delete NotFound, which count as done (statefulset, cronjob); updates
//     from a stale object fail with a Conflict and are retried.
//   - A read that must see the server (a fresh read before a destructive
//     action, or a protocol that cannot tolerate a lagging view) goes
//     through the client and says why in a comment at the interface: job
//     (its finalizer-tracked pod counts), namespace (its content, any kind),
//     cronjob (an active Job the cache does not show), internal/history (a
//     ControllerRevision whose create found the name taken).
//
// Owner references come from framework/controllerutil (NewControllerRef,
// GetControllerOf, IsControlledBy); ControllerRevisions from
// internal/history.Ensure; pod ranking, expectations and backoff from
// internal/podutil.
package controllers
