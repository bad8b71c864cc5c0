package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// ClusterReconciler reconciles PostgresClusters. Its side effects on
// PostgreSQL itself go through Options.SQL, so tests can stub them.
type ClusterReconciler struct {
	// Reader reads from the manager's cache the kinds the controller
	// watches: clusters, their pods, services and secrets, and backups.
	Reader client.Reader
	// Client writes, and reads the server where a read must be fresh (see
	// nodeHealth and the final backup in finalize).
	Client   *client.Client
	Recorder *record.Recorder
	Options  Options
	Now      func() time.Time
}

// state is what one reconcile works with.
type state struct {
	c       *PostgresCluster
	secret  map[string]string
	rwIP    string
	root    string
	pods    map[string]*corev1.Pod
	views   []View
	requeue time.Duration
	phase   string
}

func (s *state) soon(d time.Duration) {
	if s.requeue == 0 || d < s.requeue {
		s.requeue = d
	}
}

// DataRoot is the directory on the node holding the cluster's instances.
func (r *ClusterReconciler) DataRoot(c *PostgresCluster) string {
	if c.Spec.Storage.Path != "" {
		return c.Spec.Storage.Path
	}
	return filepath.Join(r.Options.BaseDir, "data", c.Namespace, c.Name)
}

// Reconcile implements reconcile.Reconciler.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c := &PostgresCluster{}
	if err := r.Reader.Get(ctx, req.ObjectKey, c); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		return r.finalize(ctx, c)
	}
	if controllerutil.AddFinalizer(c, ClusterFinalizer) {
		if err := r.Client.Update(ctx, c); err != nil {
			return reconcile.Result{}, err
		}
	}
	before, _ := json.Marshal(c.Status)
	s := &state{c: c, root: r.DataRoot(c)}
	err := r.run(ctx, s)
	r.summarize(s)
	after, _ := json.Marshal(c.Status)
	if string(before) != string(after) {
		if uerr := r.Client.Status().Update(ctx, c); uerr != nil && err == nil {
			err = uerr
		}
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	next := r.Options.PollInterval
	if s.requeue > 0 && s.requeue < next {
		next = s.requeue
	}
	return reconcile.Result{RequeueAfter: next}, nil
}

// run is the ordered list of steps; each returns false to stop this round.
func (r *ClusterReconciler) run(ctx context.Context, s *state) error {
	steps := []func(context.Context, *state) (bool, error){
		r.ensureSecret, r.ensureServices, r.observe, r.managePrimary, r.ensurePods,
		r.relabel, r.fence, r.syncReplication, r.rollingUpdate, r.backups,
	}
	for _, step := range steps {
		cont, err := step(ctx, s)
		if err != nil || !cont {
			return err
		}
	}
	return nil
}

func randomPassword() string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

// ensureSecret creates the credentials Secret once. Existing values are
// never changed; only missing keys are added.
func (r *ClusterReconciler) ensureSecret(ctx context.Context, s *state) (bool, error) {
	c := s.c
	owner, db := "app", "app"
	if b := c.Spec.Bootstrap; b != nil && b.InitDB != nil {
		owner, db = b.InitDB.Owner, b.InitDB.Database
	} else if b != nil && b.Recovery != nil {
		owner, db = b.Recovery.Owner, b.Recovery.Database
	}
	owner, db = cmpOr(owner, "app"), cmpOr(db, "app")
	want := map[string]string{
		KeySuperuserPassword: "", KeyReplicationPassword: "", KeyPassword: "",
		KeyUsername: owner, KeyDatabase: db, "host": rwService(c.Name), "port": "5432",
	}
	sec := &corev1.Secret{}
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: SecretName(c.Name)}, sec)
	if apierrors.IsNotFound(err) {
		sec = &corev1.Secret{ObjectMeta: api.ObjectMeta{Namespace: c.Namespace, Name: SecretName(c.Name),
			Labels: map[string]string{LabelCluster: c.Name}}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
		if err := controllerutil.SetControllerReference(c, sec, r.Client.Scheme()); err != nil {
			return false, err
		}
	} else if err != nil {
		return false, fmt.Errorf("get secret: %w", err)
	}
	changed := sec.ResourceVersion == ""
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	for k, v := range want {
		if _, ok := sec.Data[k]; ok {
			continue
		}
		if v == "" {
			v = randomPassword()
		}
		sec.Data[k], changed = []byte(v), true
	}
	if changed {
		if sec.ResourceVersion == "" {
			err = r.Client.Create(ctx, sec)
		} else {
			err = r.Client.Update(ctx, sec)
		}
		if err != nil {
			return false, fmt.Errorf("write secret %s: %w", sec.Name, err)
		}
	}
	s.secret = map[string]string{}
	for k, v := range sec.Data {
		s.secret[k] = string(v)
	}
	c.Status.SecretName = sec.Name
	return true, nil
}

func (r *ClusterReconciler) ensureServices(ctx context.Context, s *state) (bool, error) {
	for _, want := range BuildServices(s.c) {
		svc := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: want.Namespace, Name: want.Name}}
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
			svc.Labels = want.Labels
			svc.Spec.Selector = want.Spec.Selector
			svc.Spec.Ports = want.Spec.Ports
			svc.Spec.Type = want.Spec.Type
			return controllerutil.SetControllerReference(s.c, svc, r.Client.Scheme())
		}); err != nil {
			return false, fmt.Errorf("service %s: %w", want.Name, err)
		}
		if want.Name == rwService(s.c.Name) {
			s.rwIP = svc.Spec.ClusterIP
		}
	}
	s.c.Status.WriteService, s.c.Status.ReadService = rwService(s.c.Name), roService(s.c.Name)
	if s.rwIP == "" || s.rwIP == "None" {
		s.phase = "Waiting for the -rw service's cluster IP"
		s.soon(time.Second)
		return false, nil
	}
	return true, nil
}

// observe lists the instance pods and asks every running postgres for its
// role and WAL position.
func (r *ClusterReconciler) observe(ctx context.Context, s *state) (bool, error) {
	c := s.c
	list := &corev1.PodList{}
	if err := r.Reader.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{LabelCluster: c.Name}); err != nil {
		return false, fmt.Errorf("list pods: %w", err)
	}
	s.pods = map[string]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Labels[LabelInstance] == "" || !isOwnedBy(p, c) {
			continue
		}
		s.pods[p.Name] = p
	}
	names := DesiredInstances(c.Name, c.Status.CurrentPrimary, int(c.Spec.Instances))
	for n := range s.pods {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, st := range c.Status.InstancesStatus {
		if !slices.Contains(names, st.Name) {
			names = append(names, st.Name)
		}
	}
	s.views = nil
	nodes := map[string]nodeHealth{}
	for _, n := range names {
		v := View{Name: n}
		if p, ok := s.pods[n]; ok {
			v.PodExists, v.Deleting, v.PodIP, v.NodeName = true, p.DeletionTimestamp != nil, p.Status.PodIP, p.Spec.NodeName
			if v.NodeName != "" {
				h, seen := nodes[v.NodeName]
				if !seen {
					h = r.nodeHealth(ctx, v.NodeName)
					nodes[v.NodeName] = h
				}
				v.NodeNotReady, v.NodeNotReadySince = h.notReady, h.since
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady {
					v.Ready = cond.Status == corev1.ConditionTrue
					if !v.Ready {
						v.NotReadySince = cond.LastTransitionTime.Time
					}
				}
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == "postgres" {
					v.RestartCount = cs.RestartCount
					v.Running = cs.State.Running != nil
				}
			}
			// A pod being deleted is not asked, unless its node is not Ready:
			// then nothing may be stopping it, and a failover must know
			// whether it still runs as a primary.
			if v.Running && v.PodIP != "" && (!v.Deleting || v.NodeNotReady) {
				out, err := r.Options.SQL(ctx, v.PodIP, s.secret[KeySuperuserPassword],
					"SELECT pg_is_in_recovery(), CASE WHEN pg_is_in_recovery() THEN greatest(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()) ELSE pg_current_wal_lsn() END")
				if err == nil {
					rec, lsn, _ := strings.Cut(out, "|")
					v.InRecovery = rec == "t"
					if l, err := ParseLSN(lsn); err == nil {
						v.LSN, v.Queried = l, true
					}
				}
			}
		}
		s.views = append(s.views, v)
	}
	return true, nil
}

// nodeHealth is whether a node is Ready, as the node lifecycle controller
// (Unknown: silent agent) or the agent (False) reports it.
type nodeHealth struct {
	notReady bool
	since    time.Time
}

// nodeHealth reads the Ready condition of node. A node that cannot be read
// counts as ready: pod facts decide then.
func (r *ClusterReconciler) nodeHealth(ctx context.Context, name string) nodeHealth {
	n := &corev1.Node{}
	// Nodes are read from the server: the controller does not watch them.
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		if !apierrors.IsNotFound(err) {
			logr.FromContextOrDiscard(ctx).V(1).Info("Reading the node of an instance failed", "node", name, "error", err.Error())
		}
		return nodeHealth{}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
			return nodeHealth{notReady: true, since: cond.LastTransitionTime.Time}
		}
	}
	return nodeHealth{}
}

func isOwnedBy(obj api.Object, owner api.Object) bool {
	ref := controllerutil.GetControllerOf(obj)
	return ref != nil && ref.UID == owner.GetUID()
}

// managePrimary starts a failover or switchover when needed, fences the old
// primary, and promotes the new one.
func (r *ClusterReconciler) managePrimary(ctx context.Context, s *state) (bool, error) {
	c := s.c
	st := &c.Status
	// recorded is the primary the stored status chose (c comes from the
	// cache, so a version the server stored).
	recorded := st.TargetPrimary
	if st.CurrentPrimary == "" {
		st.CurrentPrimary, st.TargetPrimary = InstanceName(c.Name, 1), InstanceName(c.Name, 1)
		if c.Spec.Bootstrap != nil && c.Spec.Bootstrap.Recovery != nil {
			st.InitializedFrom = c.Spec.Bootstrap.Recovery.Backup
		}
	}
	if st.TargetPrimary == "" {
		st.TargetPrimary = st.CurrentPrimary
	}
	now := r.Now()
	pv, _ := findView(s.views, st.CurrentPrimary)
	if st.TargetPrimary == st.CurrentPrimary {
		known := findStatus(st.InstancesStatus, st.CurrentPrimary)
		delay := time.Duration(c.Spec.FailoverDelaySeconds) * time.Second
		if reason := PrimaryFailure(pv, known, delay, now); reason != "" {
			cand := ChooseCandidate(c.Name, s.views, st.CurrentPrimary)
			if cand == "" {
				s.phase = "Primary unavailable (" + reason + "), no ready replica to promote"
				s.soon(time.Second)
			} else {
				st.TargetPrimary, st.FailoverReason = cand, "Failover: "+reason
				r.Recorder.Eventf(ctx, c, "Warning", "FailingOver", "%s; promoting %s", reason, cand)
			}
		} else if want := c.Spec.Primary; want != "" && want != st.CurrentPrimary &&
			slices.Contains(DesiredInstances(c.Name, st.CurrentPrimary, int(c.Spec.Instances)), want) {
			if tv, _ := findView(s.views, want); readyReplica(tv) && pv.Ready {
				st.TargetPrimary, st.FailoverReason = want, "Switchover"
				r.Recorder.Eventf(ctx, c, "Normal", "SwitchingOver", "switching over from %s to %s", st.CurrentPrimary, want)
			} else {
				s.phase = "Switchover to " + want + " waiting for it to be a ready replica"
			}
		}
	}
	if st.TargetPrimary != st.CurrentPrimary {
		failover := strings.HasPrefix(st.FailoverReason, "Failover")
		stopped := !pv.PodExists
		if !stopped && !failover {
			tv, _ := findView(s.views, st.TargetPrimary)
			switch NextSwitchoverStep(st.TargetPrimary, recorded, pv, tv) {
			case SwitchoverRecord:
				s.phase = st.FailoverReason + ": recording " + st.TargetPrimary + " as the target before stopping " + st.CurrentPrimary
				s.soon(100 * time.Millisecond)
				return false, nil
			case SwitchoverAbort:
				r.Recorder.Eventf(ctx, c, "Warning", "SwitchoverAborted", "%s is no longer a ready replica; %s stays the primary",
					st.TargetPrimary, st.CurrentPrimary)
				st.TargetPrimary = st.CurrentPrimary
			case SwitchoverStopped:
				stopped = true
			}
		}
		// Fence the old primary: its pod goes (a failed one at once, a
		// healthy one with a clean shutdown so replicas get all its WAL).
		if st.TargetPrimary != st.CurrentPrimary && !stopped {
			if failover && pv.Queried && !pv.InRecovery && pv.PodIP != "" {
				// It still answers as a primary (its node is unreachable to
				// the control plane, or its pod is unready but postgres runs):
				// shut it down before another instance is promoted, since its
				// node agent may never stop it.
				r.shutDown(ctx, s, pv)
			}
			// A failed primary's pod goes at once. So does a pod already
			// being deleted on a node that is not ready: no agent would ever
			// finish its graceful deletion.
			if !pv.Deleting || (failover && pv.NodeNotReady) {
				var opts []client.DeleteOption
				if failover {
					opts = append(opts, client.GracePeriodSeconds(0))
				}
				if err := r.Client.Delete(ctx, s.pods[pv.Name], opts...); client.IgnoreNotFound(err) != nil {
					return false, fmt.Errorf("fence old primary %s: %w", pv.Name, err)
				}
			}
			s.phase = st.FailoverReason + ": stopping " + st.CurrentPrimary
			s.soon(500 * time.Millisecond)
			return false, nil
		}
	}
	if st.TargetPrimary != st.CurrentPrimary {
		r.Recorder.Eventf(ctx, c, "Normal", "PrimaryChanged", "%s is the new primary (%s)", st.TargetPrimary, st.FailoverReason)
		st.CurrentPrimary = st.TargetPrimary
		pv, _ = findView(s.views, st.CurrentPrimary)
	}
	if pv.Queried && pv.InRecovery && !pv.Deleting {
		if recorded != pv.Name {
			// Chosen in this round: the status names it before it is
			// promoted. Were the status write after a promotion lost (a
			// conflict), the next round would still see the old primary
			// current, promote another instance and fence this one as a
			// second primary, losing the writes it acknowledged.
			s.phase = "Recording " + pv.Name + " as the primary before promoting it"
			s.soon(100 * time.Millisecond)
			return false, nil
		}
		if _, err := r.Options.SQL(ctx, pv.PodIP, s.secret[KeySuperuserPassword], "SELECT pg_promote(true, 60)"); err != nil {
			return false, fmt.Errorf("promote %s: %w", pv.Name, err)
		}
		// pg_rewind of the old primary needs the new timeline in pg_control.
		if _, err := r.Options.SQL(ctx, pv.PodIP, s.secret[KeySuperuserPassword], "CHECKPOINT"); err != nil {
			return false, fmt.Errorf("checkpoint on %s: %w", pv.Name, err)
		}
		r.Recorder.Eventf(ctx, c, "Normal", "Promoted", "promoted %s", pv.Name)
		for i := range s.views {
			if s.views[i].Name == pv.Name {
				s.views[i].InRecovery = false
			}
		}
		s.soon(500 * time.Millisecond)
	}
	return true, nil
}

// shutdownSQL makes the postmaster of the instance it runs on do a fast
// shutdown (SIGINT): clients are disconnected, nothing more is acknowledged.
// COPY TO PROGRAM runs in the server's own PID namespace as its user.
const shutdownSQL = `DO $fence$ BEGIN EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', ` +
	`format('kill -INT "$(head -n 1 "%s/postmaster.pid")"', current_setting('data_directory'))); END $fence$`

// shutDown fences a failed primary that still answers SQL by shutting it
// down. It is best effort: the pod is deleted next in any case, and an
// instance that cannot be reached cannot acknowledge writes either.
func (r *ClusterReconciler) shutDown(ctx context.Context, s *state, v View) {
	pw := s.secret[KeySuperuserPassword]
	if _, err := r.Options.SQL(ctx, v.PodIP, pw, shutdownSQL); err != nil {
		// The shutdown usually ends the session that asked for it. It
		// worked when the server no longer answers as a primary.
		if out, qerr := r.Options.SQL(ctx, v.PodIP, pw, "SELECT pg_is_in_recovery()"); qerr == nil && out == "f" {
			r.Recorder.Eventf(ctx, s.c, "Warning", "FenceFailed", "could not shut down the old primary %s at %s: %v", v.Name, v.PodIP, err)
			return
		}
	}
	r.Recorder.Eventf(ctx, s.c, "Normal", "Fenced", "shut down the old primary %s at %s (node %s) before promoting another instance", v.Name, v.PodIP, v.NodeName)
}

// ensurePods creates missing instance pods (the primary first, replicas once
// the primary serves) and deletes pods beyond spec.instances.
func (r *ClusterReconciler) ensurePods(ctx context.Context, s *state) (bool, error) {
	c := s.c
	st := &c.Status
	desired := DesiredInstances(c.Name, st.CurrentPrimary, int(c.Spec.Instances))
	pv, _ := findView(s.views, st.CurrentPrimary)
	primaryServing := pv.Ready && pv.Queried && !pv.InRecovery
	hash := ConfigHash(&c.Spec)
	for _, name := range desired {
		if _, ok := s.pods[name]; ok {
			continue
		}
		p := InstancePod{Cluster: c, Instance: name, Role: RoleReplica, RWHost: s.rwIP, DataRoot: s.root,
			ConfigHash: hash, BinDir: r.Options.BinDir, UID: r.Options.UID}
		if known := findStatus(st.InstancesStatus, name); known != nil {
			p.NodeName = known.NodeName
		} else {
			p.Fresh = true
		}
		if name == st.CurrentPrimary {
			p.Role = RolePrimary
			if c.Spec.Bootstrap != nil && c.Spec.Bootstrap.Recovery != nil && findStatus(st.InstancesStatus, name) == nil {
				b := &PostgresBackup{}
				if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Spec.Bootstrap.Recovery.Backup}, b); err != nil {
					s.phase = "Waiting for backup " + c.Spec.Bootstrap.Recovery.Backup + ": " + err.Error()
					s.soon(2 * time.Second)
					return false, client.IgnoreNotFound(err)
				}
				if b.Status.Phase != BackupCompleted {
					s.phase = "Waiting for backup " + b.Name + " to complete"
					s.soon(2 * time.Second)
					return false, nil
				}
				p.BackupPath, p.NodeName = filepath.Join(b.Status.Location, "data"), b.Status.NodeName
			}
		} else if !primaryServing {
			if s.phase == "" {
				s.phase = "Waiting for the primary before creating " + name
			}
			continue
		}
		pod := BuildInstancePod(p)
		if err := controllerutil.SetControllerReference(c, pod, r.Client.Scheme()); err != nil {
			return false, err
		}
		if err := r.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, fmt.Errorf("create pod %s: %w", name, err)
		}
		r.Recorder.Eventf(ctx, c, "Normal", "CreatedInstance", "created %s instance %s", p.Role, name)
		if s.phase == "" {
			s.phase = "Creating instance " + name
		}
		s.soon(time.Second)
	}
	for name, pod := range s.pods {
		if slices.Contains(desired, name) || name == st.CurrentPrimary || pod.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("scale down %s: %w", name, err)
		}
		r.Recorder.Eventf(ctx, c, "Normal", "RemovedInstance", "removed instance %s (scale down)", name)
		s.phase = "Scaling down"
	}
	return true, nil
}

// relabel keeps the role label (and so the -rw/-ro Services) in line with
// status.currentPrimary.
func (r *ClusterReconciler) relabel(ctx context.Context, s *state) (bool, error) {
	for name, pod := range s.pods {
		want := RoleReplica
		if name == s.c.Status.CurrentPrimary {
			want = RolePrimary
		}
		if pod.Labels[LabelRole] == want || pod.DeletionTimestamp != nil {
			continue
		}
		pod.Labels[LabelRole] = want
		if err := r.Client.Update(ctx, pod); err != nil {
			return false, fmt.Errorf("label %s %s: %w", name, want, err)
		}
	}
	return true, nil
}

// fence deletes any instance other than the current primary that runs as a
// primary (a former primary restarted in place): it comes back as a replica.
func (r *ClusterReconciler) fence(ctx context.Context, s *state) (bool, error) {
	for _, v := range s.views {
		if v.Name == s.c.Status.CurrentPrimary || !v.Queried || v.InRecovery || v.Deleting || !v.PodExists {
			continue
		}
		if err := r.Client.Delete(ctx, s.pods[v.Name], client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("fence %s: %w", v.Name, err)
		}
		r.Recorder.Eventf(ctx, s.c, "Warning", "Fenced", "%s ran as a second primary; restarting it as a replica", v.Name)
	}
	return true, nil
}

// syncReplication sets synchronous_standby_names on the primary.
func (r *ClusterReconciler) syncReplication(ctx context.Context, s *state) (bool, error) {
	pv, _ := findView(s.views, s.c.Status.CurrentPrimary)
	if !pv.Queried || pv.InRecovery || !pv.Ready {
		return true, nil
	}
	pw := s.secret[KeySuperuserPassword]
	want := SynchronousStandbyNames(&s.c.Spec)
	got, err := r.Options.SQL(ctx, pv.PodIP, pw, "SHOW synchronous_standby_names")
	if err != nil {
		return true, nil // the next round retries
	}
	if got != want {
		q := fmt.Sprintf("ALTER SYSTEM SET synchronous_standby_names = '%s'", want)
		if _, err := r.Options.SQL(ctx, pv.PodIP, pw, q); err != nil {
			return false, fmt.Errorf("set synchronous_standby_names: %w", err)
		}
		if _, err := r.Options.SQL(ctx, pv.PodIP, pw, "SELECT pg_reload_conf()"); err != nil {
			return false, fmt.Errorf("reload configuration: %w", err)
		}
	}
	return true, nil
}

// rollingUpdate replaces pods running an old configuration: replicas one at
// a time, then the primary (after a switchover when Unsupervised).
func (r *ClusterReconciler) rollingUpdate(ctx context.Context, s *state) (bool, error) {
	c := s.c
	hash := ConfigHash(&c.Spec)
	c.Status.ConfigHash = hash
	for _, v := range s.views {
		if !v.PodExists || v.Deleting || !v.Ready {
			return true, nil // only a healthy cluster is updated
		}
	}
	var stalePrimary bool
	for _, v := range s.views {
		pod := s.pods[v.Name]
		if pod.Annotations[AnnotationConfigHash] == hash {
			continue
		}
		if v.Name == c.Status.CurrentPrimary {
			stalePrimary = true
			continue
		}
		s.phase = "Upgrading instance " + v.Name
		s.soon(time.Second)
		return false, r.Client.Delete(ctx, pod)
	}
	if !stalePrimary {
		return true, nil
	}
	cand := ChooseCandidate(c.Name, s.views, c.Status.CurrentPrimary)
	switch {
	case cand == "":
		s.phase = "Upgrading primary " + c.Status.CurrentPrimary + " in place"
		return false, r.Client.Delete(ctx, s.pods[c.Status.CurrentPrimary])
	case c.Spec.PrimaryUpdateStrategy == Supervised:
		s.phase = "Waiting for user action: set spec.primary to switch over and update " + c.Status.CurrentPrimary
	default:
		c.Status.TargetPrimary, c.Status.FailoverReason = cand, "Switchover (update)"
		s.soon(500 * time.Millisecond)
	}
	return true, nil
}

// backups reports the last successful backup, applies the retention policy
// to scheduled backups and creates the next scheduled backup when it is due.
// A scheduled backup is not started while the previous one of the cluster is
// still pending or running.
func (r *ClusterReconciler) backups(ctx context.Context, s *state) (bool, error) {
	c := s.c
	list := &PostgresBackupList{}
	if err := r.Reader.List(ctx, list, client.InNamespace(c.Namespace)); err != nil {
		return false, fmt.Errorf("list backups of %s: %w", c.Name, err)
	}
	var mine []*PostgresBackup
	inFlight := ""
	for i := range list.Items {
		b := &list.Items[i]
		if b.Spec.Cluster != c.Name {
			continue
		}
		mine = append(mine, b)
		if b.DeletionTimestamp != nil {
			continue
		}
		switch b.Status.Phase {
		case BackupCompleted:
			if b.Status.CompletedAt != nil && (c.Status.LastSuccessfulBackup == nil || b.Status.CompletedAt.After(c.Status.LastSuccessfulBackup.Time)) {
				c.Status.LastSuccessfulBackup = b.Status.CompletedAt
			}
		case BackupFailed:
		default:
			if b.Labels[LabelBackupKind] == BackupKindScheduled {
				inFlight = b.Name
			}
		}
	}
	bs := c.Spec.Backup
	if bs == nil {
		return true, nil
	}
	now := r.Now()
	if bs.RetentionPolicy != "" {
		ret, err := ParseRetention(bs.RetentionPolicy)
		if err != nil {
			s.phase = "Invalid backup retention policy: " + err.Error()
			return true, nil
		}
		for _, b := range ExpiredBackups(mine, ret, now) {
			if err := r.Client.Delete(ctx, b); client.IgnoreNotFound(err) != nil {
				return false, fmt.Errorf("retention: delete backup %s: %w", b.Name, err)
			}
			r.Recorder.Eventf(ctx, c, "Normal", "BackupExpired", "deleted backup %s (retention %s)", b.Name, bs.RetentionPolicy)
		}
	}
	if bs.Schedule == "" {
		return true, nil
	}
	sched, err := ParseSchedule(bs.Schedule)
	if err != nil {
		s.phase = "Invalid backup schedule: " + err.Error()
		return true, nil
	}
	last := c.CreationTimestamp.Time
	if c.Status.LastScheduledBackup != nil {
		last = c.Status.LastScheduledBackup.Time
	}
	next := sched.Next(last)
	if now.Before(next) {
		s.soon(next.Sub(now) + 100*time.Millisecond)
		return true, nil
	}
	if pv, _ := findView(s.views, c.Status.CurrentPrimary); !pv.Ready || inFlight != "" {
		s.soon(time.Second)
		return true, nil
	}
	// Named after the activation, so a retry after a failed status update
	// finds the same backup instead of creating a second one.
	b := &PostgresBackup{ObjectMeta: api.ObjectMeta{Namespace: c.Namespace, Name: c.Name + "-" + next.UTC().Format("20060102150405"),
		Labels: map[string]string{LabelCluster: c.Name, LabelBackupKind: BackupKindScheduled}}, Spec: BackupObjectSpec{Cluster: c.Name}}
	if err := r.Client.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("create scheduled backup %s: %w", b.Name, err)
	}
	r.Recorder.Eventf(ctx, c, "Normal", "BackupScheduled", "created scheduled backup %s", b.Name)
	c.Status.LastScheduledBackup = &api.Time{Time: now}
	s.soon(sched.Next(now).Sub(now) + 100*time.Millisecond)
	return true, nil
}

// summarize writes the instance list, counts, phase and conditions.
func (r *ClusterReconciler) summarize(s *state) {
	c := s.c
	st := &c.Status
	st.ObservedGeneration = c.Generation
	st.Selector = LabelCluster + "=" + c.Name + "," + LabelInstance
	if s.views == nil {
		if s.phase != "" {
			st.Phase = s.phase
		}
		return
	}
	var list []InstanceStatus
	var ready, pods int32
	for _, v := range s.views {
		if !v.PodExists {
			if old := findStatus(st.InstancesStatus, v.Name); old != nil && slices.Contains(DesiredInstances(c.Name, st.CurrentPrimary, int(c.Spec.Instances)), v.Name) {
				o := *old
				o.Ready = false
				list = append(list, o)
			}
			continue
		}
		pods++
		is := InstanceStatus{Name: v.Name, Ready: v.Ready, PodIP: v.PodIP, NodeName: v.NodeName, RestartCount: v.RestartCount}
		if old := findStatus(st.InstancesStatus, v.Name); old != nil && is.NodeName == "" {
			is.NodeName = old.NodeName
		}
		if v.Queried {
			is.LSN = FormatLSN(v.LSN)
			is.Role = RoleReplica
			if !v.InRecovery {
				is.Role = RolePrimary
			}
		}
		if v.Ready {
			ready++
		}
		list = append(list, is)
	}
	slices.SortFunc(list, func(a, b InstanceStatus) int { return Ordinal(c.Name, a.Name) - Ordinal(c.Name, b.Name) })
	st.InstancesStatus, st.Instances, st.ReadyInstances = list, pods, ready
	pv, _ := findView(s.views, st.CurrentPrimary)
	healthy := ready == c.Spec.Instances && pods == c.Spec.Instances && pv.Ready && st.TargetPrimary == st.CurrentPrimary
	switch {
	case s.phase != "":
		st.Phase = s.phase
	case healthy:
		st.Phase = "Healthy"
	default:
		st.Phase = fmt.Sprintf("%d of %d instances ready", ready, c.Spec.Instances)
	}
	if healthy && c.Spec.Primary != "" && c.Spec.Primary != st.CurrentPrimary {
		st.Phase = "Switchover to " + c.Spec.Primary + " pending"
		healthy = false
	}
	cond := func(t string, ok bool, reason, msg string) {
		status := "False"
		if ok {
			status = "True"
		}
		controllerutil.SetStatusCondition(&st.Conditions, api.Condition{Type: t, Status: status, Reason: reason,
			Message: msg, ObservedGeneration: c.Generation})
	}
	degraded := st.TargetPrimary != st.CurrentPrimary || (!pv.Ready && findStatus(list, st.CurrentPrimary) != nil && !strings.HasPrefix(st.Phase, "Creating"))
	cond("Ready", healthy, reasonOf(healthy, "ClusterHealthy", "NotReady"), st.Phase)
	cond("Progressing", !healthy && !degraded, reasonOf(!healthy && !degraded, "Reconciling", "Stable"), st.Phase)
	cond("Degraded", degraded, reasonOf(degraded, "PrimaryUnavailable", "AsExpected"), st.Phase)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func reasonOf(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// finalize takes the final backup when asked, stops every instance, removes
// the cluster's data directory on the node and releases the cluster.
func (r *ClusterReconciler) finalize(ctx context.Context, c *PostgresCluster) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(c, ClusterFinalizer) {
		return reconcile.Result{}, nil
	}
	again := reconcile.Result{RequeueAfter: time.Second}
	if c.Spec.Backup != nil && c.Spec.Backup.FinalBackup && c.Status.FinalBackup != "skipped" {
		if c.Status.FinalBackup == "" {
			name := "skipped"
			pv := findStatus(c.Status.InstancesStatus, c.Status.CurrentPrimary)
			if pv != nil && pv.Ready {
				name = c.Name + "-final-" + c.DeletionTimestamp.UTC().Format("20060102150405")
				b := &PostgresBackup{ObjectMeta: api.ObjectMeta{Namespace: c.Namespace, Name: name,
					Labels: map[string]string{LabelCluster: c.Name, LabelBackupKind: BackupKindFinal}}, Spec: BackupObjectSpec{Cluster: c.Name}}
				if err := r.Client.Create(ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
					return reconcile.Result{}, fmt.Errorf("create final backup %s: %w", name, err)
				}
				r.Recorder.Eventf(ctx, c, "Normal", "FinalBackup", "taking final backup %s before deleting the data", name)
			} else {
				r.Recorder.Eventf(ctx, c, "Warning", "FinalBackupSkipped", "no ready primary: deleting without a final backup")
			}
			c.Status.FinalBackup = name
			if err := r.Client.Status().Update(ctx, c); err != nil {
				return reconcile.Result{}, fmt.Errorf("record final backup %s: %w", name, err)
			}
			return again, nil
		}
		b := &PostgresBackup{}
		// The server, not the cache: the final backup was created a moment
		// ago, and a cache that does not show it yet would let the cluster's
		// data go before it is saved.
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Status.FinalBackup}, b)
		if err == nil && b.Status.Phase != BackupCompleted && b.Status.Phase != BackupFailed {
			return again, nil
		}
	}
	list := &corev1.PodList{}
	if err := r.Reader.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{LabelCluster: c.Name}); err != nil {
		return reconcile.Result{}, err
	}
	remaining := 0
	for i := range list.Items {
		p := &list.Items[i]
		if p.Labels[LabelInstance] == "" || !isOwnedBy(p, c) {
			continue
		}
		remaining++
		if p.DeletionTimestamp == nil {
			if err := r.Client.Delete(ctx, p, client.GracePeriodSeconds(2)); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, err
			}
		}
	}
	if remaining > 0 {
		return again, nil
	}
	node := ""
	for _, is := range c.Status.InstancesStatus {
		if is.NodeName != "" {
			node = is.NodeName
			break
		}
	}
	done, err := runCleanup(ctx, r.Client, c, c.Name+"-cleanup", r.DataRoot(c), node)
	if err != nil || !done {
		return again, err
	}
	controllerutil.RemoveFinalizer(c, ClusterFinalizer)
	return reconcile.Result{}, r.Client.Update(ctx, c)
}

// runCleanup runs (once) a pod removing target on node, owned by owner, and
// reports whether it succeeded.
func runCleanup(ctx context.Context, c *client.Client, owner api.Object, name, target, node string) (bool, error) {
	pod := &corev1.Pod{}
	err := c.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, pod)
	if apierrors.IsNotFound(err) {
		pod = BuildCleanupPod(owner.GetNamespace(), name, target, node, map[string]string{"postgres.converge.dev/cleanup": owner.GetName()})
		if err := controllerutil.SetOwnerReference(owner, pod, c.Scheme()); err != nil {
			return false, err
		}
		if err := c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, fmt.Errorf("create cleanup pod: %w", err)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return pod.Status.Phase == corev1.PodSucceeded, nil
}
