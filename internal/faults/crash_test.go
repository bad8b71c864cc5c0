package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client/rest"
	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
)

// TestKillAPIServerDuringWrites kills `converge up` (embedded etcd, fsync on, all
// controllers) with SIGKILL while 32 goroutines create 1,000 ConfigMaps, restarts
// it on the same data dir, and checks: every acknowledged create is there with
// the uid it was acknowledged with; every object decodes and has uid and
// creationTimestamp (through the API and raw in etcd); a watcher resumes from its
// last resourceVersion or gets 410 and relists; a Deployment created before the
// crash ends with exactly one ReplicaSet and its replicas.
func TestKillAPIServerDuringWrites(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	const (
		ns      = "faults"
		total   = 1000
		workers = 32
		killAt  = 500 // acknowledged creates before the kill
	)
	dataDir := filepath.Join(t.TempDir(), "data")
	srv := startAPIServer(ctx, t, "converge-up", "127.0.0.2", dataDir, nil)
	c := apiClient(t, srv)
	createNamespace(ctx, t, c, ns)

	// A watcher from the list's resourceVersion, recording the last one it saw.
	l := list(ctx, t, c, "/api/v1/namespaces/"+ns+"/configmaps")
	var lastRV atomic.Int64
	rv0, _ := strconv.ParseInt(l.Metadata.ResourceVersion, 10, 64)
	lastRV.Store(rv0)
	watchDone := make(chan error, 1)
	go func() {
		_, err := watch(ctx, c, ns, l.Metadata.ResourceVersion, func(typ string, o object) bool {
			rv, _ := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
			lastRV.Store(rv)
			return true
		})
		watchDone <- err
	}()

	// 32 writers; the server is killed once killAt creates were acknowledged.
	acked := make([]string, total) // uid of each acknowledged create
	var nAcked, nFailed atomic.Int32
	killed := make(chan struct{})
	var killOnce sync.Once
	kill := func() {
		killOnce.Do(func() {
			srv.proc.kill(t)
			close(killed)
		})
	}
	// The Deployment is created just before the storm, so its controllers are at
	// work when the process dies.
	createDeployment(ctx, t, c, ns, "web", 3)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < total; i += workers {
				uid, err := createConfigMap(ctx, c, ns, fmt.Sprintf("cm-%04d", i), i)
				if err != nil {
					nFailed.Add(1)
					continue
				}
				acked[i] = uid
				if nAcked.Add(1) == killAt {
					go kill()
				}
			}
		})
	}
	wg.Wait()
	kill() // in case the writes were too fast
	<-killed
	t.Logf("writes: %d acknowledged, %d failed, in %s; server killed with SIGKILL",
		nAcked.Load(), nFailed.Load(), time.Since(start).Round(time.Millisecond))
	select {
	case err := <-watchDone:
		t.Logf("watch ended at resourceVersion %d: %v", lastRV.Load(), err)
	case <-time.After(15 * time.Second):
		t.Fatal("watch did not end after the server was killed")
	}

	srv.start(ctx, t, "converge-up-restarted")

	// Every acknowledged create is present, with its uid; every object decodes
	// and carries its data; unacknowledged creates are all or nothing.
	after := list(ctx, t, c, "/api/v1/namespaces/"+ns+"/configmaps")
	byName := map[string]object{}
	for _, o := range after.Items {
		if o.Metadata.Name == "kube-root-ca.crt" {
			continue // published in every namespace by the root CA publisher
		}
		byName[o.Metadata.Name] = o
		if o.Metadata.UID == "" || o.Metadata.CreationTimestamp == "" || o.Metadata.ResourceVersion == "" {
			t.Errorf("%s: incomplete metadata %+v", o.Metadata.Name, o.Metadata)
		}
		i, err := strconv.Atoi(o.Data["i"])
		if err != nil || fmt.Sprintf("cm-%04d", i) != o.Metadata.Name || len(o.Data["payload"]) != 256 {
			t.Errorf("%s: data %v does not match what was sent", o.Metadata.Name, o.Data)
		}
	}
	var unackedPresent int
	for i, uid := range acked {
		name := fmt.Sprintf("cm-%04d", i)
		o, ok := byName[name]
		switch {
		case uid != "" && !ok:
			t.Errorf("acknowledged create %s is lost", name)
		case uid != "" && o.Metadata.UID != uid:
			t.Errorf("%s: uid %s, acknowledged with %s", name, o.Metadata.UID, uid)
		case uid == "" && ok:
			unackedPresent++
		}
	}
	t.Logf("after restart: %d objects (%d acknowledged, %d committed without an answer)", len(after.Items), nAcked.Load(), unackedPresent)

	// The watcher resumes from its last resourceVersion: either it continues
	// with exactly the events after it, or it is told 410 Gone and relists.
	resumeWatch(ctx, t, c, ns, lastRV.Load(), after)

	checkDeploymentConverges(ctx, t, c, ns, "web", 3, 2*time.Second)

	// Raw check of every stored value, with the server stopped.
	srv.proc.kill(t)
	e, err := etcdstore.StartEmbedded(ctx, etcdstore.EmbeddedOptions{Dir: filepath.Join(dataDir, "etcd"), NoFsync: true})
	if err != nil {
		t.Fatalf("reopen etcd data: %v", err)
	}
	defer e.Close()
	n := scanEtcd(ctx, t, e.Client())
	t.Logf("etcd holds %d objects under /registry/, all decode with uid and creationTimestamp", n)
}

// watch streams watch events of ConfigMaps in ns from rv to f until f returns
// false, the stream ends (returns the stream's error) or an ERROR event arrives
// (returned as a *StatusError).
func watch(ctx context.Context, c *rest.Client, ns, rv string, f func(typ string, o object) bool) (int, error) {
	q := url.Values{"watch": {"1"}, "resourceVersion": {rv}}
	body, err := c.Stream(ctx, rest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/" + ns + "/configmaps", Query: q})
	if err != nil {
		return 0, err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	n := 0
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return n, io.EOF
			}
			return n, err
		}
		if ev.Type == "ERROR" {
			return n, rest.ErrorFromResponse(http.MethodGet, http.StatusOK, nil, ev.Object)
		}
		var o object
		if err := json.Unmarshal(ev.Object, &o); err != nil {
			return n, fmt.Errorf("decode %s event: %w", ev.Type, err)
		}
		n++
		if !f(ev.Type, o) {
			return n, nil
		}
	}
}

// resumeWatch watches from lastRV after a restart and asserts one of the two
// allowed outcomes: the events after lastRV (every object of after with a
// larger resourceVersion, in order, nothing at or before lastRV), or 410 Gone
// followed by a relist that matches after.
func resumeWatch(ctx context.Context, t *testing.T, c *rest.Client, ns string, lastRV int64, after objectList) {
	t.Helper()
	want := map[string]bool{}
	for _, o := range after.Items {
		if rv, _ := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64); rv > lastRV {
			want[o.Metadata.Name] = true
		}
	}
	// When every object is at or before lastRV (the watcher saw the last
	// commit before the kill), the resumed watch has nothing to deliver: it
	// must stay open without an error, which a few seconds show.
	nothingLater := len(want) == 0
	timeout := 20 * time.Second
	if nothingLater {
		timeout = 3 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var prev int64 = lastRV
	var orderErr error
	_, err := watch(wctx, c, ns, strconv.FormatInt(lastRV, 10), func(typ string, o object) bool {
		rv, _ := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
		if rv <= prev {
			orderErr = fmt.Errorf("event %s %s at resourceVersion %d after %d", typ, o.Metadata.Name, rv, prev)
			return false
		}
		prev = rv
		delete(want, o.Metadata.Name)
		return len(want) > 0
	})
	if orderErr != nil {
		t.Fatalf("resumed watch: %v", orderErr)
	}
	switch {
	case apierrors.IsGone(err) || apierrors.IsResourceExpired(err):
		relist := list(ctx, t, c, "/api/v1/namespaces/"+ns+"/configmaps")
		if len(relist.Items) != len(after.Items) {
			t.Fatalf("relist after 410: %d objects, want %d", len(relist.Items), len(after.Items))
		}
		t.Logf("resumed watch from resourceVersion %d: 410 Gone (%v); relisted %d objects", lastRV, err, len(relist.Items))
	case err == nil && len(want) == 0:
		t.Logf("resumed watch from resourceVersion %d: continued with every later event", lastRV)
	case nothingLater && wctx.Err() != nil && ctx.Err() == nil:
		t.Logf("resumed watch from resourceVersion %d: open, no later event to deliver, for %s", lastRV, timeout)
	default:
		t.Fatalf("resumed watch from resourceVersion %d: neither continued (%d events missing) nor 410: %v", lastRV, len(want), err)
	}
}

// TestEtcdMemberLossAndFullRestart runs `converge up` against a 3-member etcd
// cluster (member processes on 127.0.0.11-13, --etcd-servers with all three),
// kills the etcd leader with SIGKILL while writes go on through the API, checks
// that writes continue and that the member rejoins (restarted with
// InitialClusterState existing) and catches up; then kills every process and
// restarts them all, and checks that the state is identical.
func TestEtcdMemberLossAndFullRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	const ns = "faults"
	cluster := newEtcdCluster(t, 3, 10, false)
	start := time.Now()
	cluster.start(ctx, t, etcdstore.ClusterStateNew)
	t.Logf("3 etcd member processes healthy in %s", time.Since(start).Round(time.Millisecond))
	etcd := cluster.client(ctx, t)
	dataDir := filepath.Join(t.TempDir(), "data")
	srv := startAPIServer(ctx, t, "converge-up", "127.0.0.3", dataDir, cluster.endpoints())
	c := apiClient(t, srv)
	createNamespace(ctx, t, c, ns)
	createDeployment(ctx, t, c, ns, "web", 2)

	// (a) Writers run throughout; the leader is killed after a first batch.
	var mu sync.Mutex
	acked := map[string]string{}
	var seq, failed atomic.Int32
	var okAfterKill atomic.Int32
	var killedAt atomic.Int64
	stopWrites := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stopWrites:
					return
				default:
				}
				i := int(seq.Add(1))
				name := fmt.Sprintf("cm-%05d", i)
				uid, err := createConfigMap(ctx, c, ns, name, i)
				if err != nil {
					failed.Add(1)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				mu.Lock()
				acked[name] = uid
				mu.Unlock()
				if killedAt.Load() != 0 {
					okAfterKill.Add(1)
				}
			}
		})
	}
	if err := poll(ctx, 20*time.Second, func() error {
		if mu.Lock(); len(acked) < 200 {
			mu.Unlock()
			return errors.New("fewer than 200 writes")
		}
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lead := cluster.leader(ctx, t, etcd)
	t.Logf("killing etcd leader %s (pid %d) with SIGKILL", cluster.opts[lead].Name, cluster.procs[lead].cmd.Process.Pid)
	cluster.procs[lead].kill(t)
	killedAt.Store(time.Now().UnixNano())
	failedAtKill := failed.Load()
	if err := poll(ctx, 30*time.Second, func() error {
		if n := okAfterKill.Load(); n < 200 {
			return fmt.Errorf("%d writes acknowledged since the kill", n)
		}
		return nil
	}); err != nil {
		t.Fatalf("writes did not continue with one member down: %v", err)
	}
	t.Logf("200 writes acknowledged %s after the leader died (%d failed meanwhile)",
		time.Since(time.Unix(0, killedAt.Load())).Round(time.Millisecond), failed.Load()-failedAtKill)

	// The member rejoins from its data dir and catches up while writes go on.
	rejoin := time.Now()
	cluster.startMember(t, lead, etcdstore.ClusterStateExisting)
	cluster.waitHealthy(ctx, t, lead)
	close(stopWrites)
	wg.Wait()
	if err := poll(ctx, 30*time.Second, func() error {
		var idx [3]uint64
		for i, o := range cluster.opts {
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			st, err := etcd.Status(sctx, o.ClientURL)
			cancel()
			if err != nil {
				return err
			}
			idx[i] = st.RaftAppliedIndex
		}
		if idx[lead] < max(idx[0], idx[1], idx[2]) {
			return fmt.Errorf("applied indexes %v", idx)
		}
		return nil
	}); err != nil {
		t.Fatalf("member %s did not catch up: %v", cluster.opts[lead].Name, err)
	}
	t.Logf("member %s rejoined and caught up in %s", cluster.opts[lead].Name, time.Since(rejoin).Round(time.Millisecond))
	members, err := etcd.MemberList(ctx)
	if err != nil || len(members.Members) != 3 {
		t.Fatalf("member list after rejoin: %v, %v", members, err)
	}
	before := snapshotState(ctx, t, c, ns)
	for name, uid := range acked {
		if got, ok := before[name]; !ok || got[:len(uid)] != uid {
			t.Errorf("acknowledged %s: %q, want uid %s", name, got, uid)
		}
	}
	t.Logf("(a) %d acknowledged creates all present (%d failed attempts)", len(acked), failed.Load())
	checkDeploymentConverges(ctx, t, c, ns, "web", 2, 0)
	if t.Failed() {
		return
	}

	// (c) Kill everything, restart everything: identical state.
	srv.proc.kill(t)
	for _, p := range cluster.procs {
		p.kill(t)
	}
	restart := time.Now()
	cluster.start(ctx, t, etcdstore.ClusterStateExisting)
	srv.start(ctx, t, "converge-up-restarted")
	t.Logf("(c) everything restarted in %s", time.Since(restart).Round(time.Millisecond))
	after := snapshotState(ctx, t, c, ns)
	if len(after) != len(before) {
		t.Errorf("%d ConfigMaps after the restart, %d before", len(after), len(before))
	}
	for name, v := range before {
		if after[name] != v {
			t.Errorf("%s: %q after the restart, %q before", name, after[name], v)
		}
	}
	checkDeploymentConverges(ctx, t, c, ns, "web", 2, 2*time.Second)
	etcd2 := cluster.client(ctx, t)
	n := scanEtcd(ctx, t, etcd2)
	t.Logf("(c) state intact: %d ConfigMaps, %d objects in etcd", len(after), n)
}
