package etcd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/framework/storage"
	"github.com/converge-dev/converge/framework/storage/storagetest"
)

// testCluster is n members on 127.0.0.1, each with its own data dir.
type testCluster struct {
	opts    []MemberOptions
	members []*Embedded
}

// startTestCluster starts n members concurrently (a new cluster needs a quorum
// before any member is ready) and closes them at test end.
func startTestCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	c := &testCluster{opts: make([]MemberOptions, n), members: make([]*Embedded, n)}
	var initial []string
	for i := range n {
		cp, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		pp, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		c.opts[i] = MemberOptions{
			Name:              fmt.Sprintf("m%d", i),
			Dir:               filepath.Join(t.TempDir(), fmt.Sprintf("m%d", i)),
			ClientURL:         fmt.Sprintf("http://127.0.0.1:%d", cp),
			PeerURL:           fmt.Sprintf("http://127.0.0.1:%d", pp),
			NoFsync:           true,
			HeartbeatInterval: 50 * time.Millisecond,
			ElectionTimeout:   500 * time.Millisecond,
			StartTimeout:      30 * time.Second,
		}
		initial = append(initial, c.opts[i].Name+"="+c.opts[i].PeerURL)
	}
	for i := range c.opts {
		c.opts[i].InitialCluster = strings.Join(initial, ",")
	}
	start := time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { c.members[i], errs[i] = StartMember(t.Context(), c.opts[i]) })
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, m := range c.members {
			if m != nil {
				if err := m.Close(); err != nil {
					t.Errorf("close member %s: %v", m.Name(), err)
				}
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("start %d-member cluster: %v", n, err)
	}
	t.Logf("%d-member cluster ready in %s", n, time.Since(start))
	return c
}

func (c *testCluster) endpoints() []string {
	var eps []string
	for _, o := range c.opts {
		eps = append(eps, o.ClientURL)
	}
	return eps
}

func (c *testCluster) leader(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for i, m := range c.members {
			if m != nil && m.IsLeader() {
				return i
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no leader after 10s")
	return -1
}

// TestMemberClusterSurvivesMemberLoss runs a 3-member cluster, stops its leader
// while writes go on through a client given all endpoints, restarts that member
// with InitialClusterState existing and checks it catches up.
func TestMemberClusterSurvivesMemberLoss(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := startTestCluster(t, 3)
	client, err := Connect(ctx, ExternalOptions{Endpoints: c.endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Connect with %d endpoints: %v", len(c.endpoints()), err)
	}
	defer client.Close()
	s := New(client)
	put := func(i int) (int64, error) {
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		defer wcancel()
		return s.Create(wctx, fmt.Sprintf("/members/k%04d", i), []byte("v"))
	}
	for i := range 50 {
		if _, err := put(i); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}

	lead := c.leader(t)
	t.Logf("stopping leader %s", c.members[lead].Name())
	stopped := time.Now()
	if err := c.members[lead].Close(); err != nil {
		t.Fatalf("close leader: %v", err)
	}
	c.members[lead] = nil
	// Writes continue once the two others elect a leader; the first ones may fail
	// (or be retried by the client) during the election.
	var firstOK time.Duration
	var lastRev int64
	for i := 50; i < 150; i++ {
		rev, err := put(i)
		for errors.Is(err, storage.ErrExists) {
			// A write retried by the client after its first attempt committed.
			err = nil
		}
		if err != nil {
			t.Fatalf("put %d with one member down: %v", i, err)
		}
		if firstOK == 0 {
			firstOK = time.Since(stopped)
		}
		lastRev = max(lastRev, rev)
	}
	t.Logf("first write after losing the leader: %s", firstOK)

	// Rejoin: same name, dir and URLs; the data dir holds the membership.
	o := c.opts[lead]
	o.InitialClusterState = ClusterStateExisting
	m, err := StartMember(ctx, o)
	if err != nil {
		t.Fatalf("restart member %s: %v", o.Name, err)
	}
	c.members[lead] = m
	// Serializable reads answer from the member's own store: it has caught up
	// when it holds the last write.
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := m.Client().Get(ctx, "/members/", clientv3.WithPrefix(), clientv3.WithSerializable(), clientv3.WithCountOnly())
		if err == nil && resp.Count == 150 && resp.Header.Revision >= lastRev {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rejoined member did not catch up: %v, %v", resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	members, err := client.MemberList(ctx)
	if err != nil || len(members.Members) != 3 {
		t.Fatalf("member list %v, %v", members, err)
	}
}

// TestConformanceThreeMembers runs the storage contract suite through a client
// given all endpoints of a 3-member cluster.
func TestConformanceThreeMembers(t *testing.T) {
	t.Parallel()
	c := startTestCluster(t, 3)
	client, err := Connect(t.Context(), ExternalOptions{Endpoints: c.endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	s := New(client)
	storagetest.RunConformance(t, func(*testing.T) storage.Interface { return s })
}

func TestMemberOptionsInvalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts MemberOptions
		want []string
	}{
		{"empty", MemberOptions{}, []string{"name is required", "dir is required", "client URL is required", "peer URL is required"}},
		{"bad urls", MemberOptions{Name: "a", Dir: "d", ClientURL: "ftp://x:1", PeerURL: "http://127.0.0.1"}, []string{"scheme must be http or https", "explicit port"}},
		{"https without cert", MemberOptions{Name: "a", Dir: "d", ClientURL: "https://127.0.0.1:1", PeerURL: "http://127.0.0.1:2"}, []string{"https needs a certificate"}},
		{"cert without key", MemberOptions{Name: "a", Dir: "d", ClientURL: "https://127.0.0.1:1", PeerURL: "http://127.0.0.1:2", ClientCertFile: "c"}, []string{"together"}},
		{"not in initial cluster", MemberOptions{Name: "a", Dir: "d", ClientURL: "http://127.0.0.1:1", PeerURL: "http://127.0.0.1:2", InitialCluster: "b=http://127.0.0.1:3"}, []string{"does not list this member"}},
		{"bad pair", MemberOptions{Name: "a", Dir: "d", ClientURL: "http://127.0.0.1:1", PeerURL: "http://127.0.0.1:2", InitialCluster: "a=http://127.0.0.1:2,b"}, []string{"not name=peerURL"}},
		{"bad state", MemberOptions{Name: "a", Dir: "d", ClientURL: "http://127.0.0.1:1", PeerURL: "http://127.0.0.1:2", InitialClusterState: "old"}, []string{`initial cluster state "old"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := StartMember(t.Context(), c.opts)
			if err == nil {
				t.Fatal("invalid options accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestSnapshotSaveRestore saves a snapshot of a live member, checks it, and
// restores it when this build has etcd's restore code.
func TestSnapshotSaveRestore(t *testing.T) {
	t.Parallel()
	e := startTestServer(t)
	s := New(e.Client())
	var lastRev int64
	for i := range 100 {
		rev, err := s.Create(t.Context(), fmt.Sprintf("/snap/k%03d", i), []byte(strings.Repeat("x", 100)))
		if err != nil {
			t.Fatal(err)
		}
		lastRev = rev
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "snap.db")
	info, err := SaveSnapshot(t.Context(), e.Client(), path)
	if err != nil {
		t.Fatalf("SaveSnapshot: %v", err)
	}
	t.Logf("snapshot: %d bytes, revision %d, sha256 %s, etcd %s, in %s", info.Size, info.Revision, info.SHA256, info.EtcdVersion, info.Took)
	if info.Revision < lastRev || info.Size == 0 || len(info.SHA256) != 64 {
		t.Fatalf("info %+v, want revision >= %d", info, lastRev)
	}
	if _, err := os.Stat(path + ".part"); !os.IsNotExist(err) {
		t.Fatalf("part file left behind: %v", err)
	}
	if err := VerifySnapshot(path); err != nil {
		t.Fatalf("VerifySnapshot: %v", err)
	}

	// A flipped byte and a truncation are both detected.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.db")
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := VerifySnapshot(bad); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("VerifySnapshot of a damaged file: %v", err)
	}
	if err := os.WriteFile(bad, b[:len(b)-4096], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := VerifySnapshot(bad); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("VerifySnapshot of a truncated file: %v", err)
	}
	if err := RestoreSnapshot(bad, filepath.Join(dir, "r0"), "converge", "http://127.0.0.1:2380"); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("RestoreSnapshot of a damaged file: %v", err)
	}
	nonEmpty := filepath.Join(dir, "full")
	if err := os.MkdirAll(filepath.Join(nonEmpty, "member"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := RestoreSnapshot(path, nonEmpty, "converge", "http://127.0.0.1:2380"); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("RestoreSnapshot into a non-empty dir: %v", err)
	}

	// Restore into a new data dir and serve it.
	pp, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", pp)
	restored := filepath.Join(dir, "restored")
	err = RestoreSnapshot(path, restored, "restored", peerURL)
	if err != nil {
		t.Fatalf("RestoreSnapshot: %v", err)
	}
	m, err := StartMember(t.Context(), MemberOptions{Name: "restored", Dir: restored, PeerURL: peerURL, ClientURL: fmt.Sprintf("http://127.0.0.1:%d", cp), NoFsync: true})
	if err != nil {
		t.Fatalf("start restored member: %v", err)
	}
	defer m.Close()
	resp, err := m.Client().Get(t.Context(), "/snap/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 100 {
		t.Fatalf("restored keys: %v, %v", resp, err)
	}
	if resp.Header.Revision < lastRev {
		t.Fatalf("restored revision %d < %d: revisions must survive a restore", resp.Header.Revision, lastRev)
	}
}
