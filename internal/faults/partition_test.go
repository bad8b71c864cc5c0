package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
)

// TestPartition cuts the etcd leader of three off from the other two and heals
// the partition. One machine has no second network, so the isolated member runs
// in its own network namespace, joined to the host by a veth pair; taking the
// pair's link down partitions it (its packets go nowhere), bringing it up heals.
// The two other members listen on the host end of the pair. As the issue asks,
// the test is skipped (with the reason) only when not root.
func TestPartition(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("partition scenario skipped: network namespaces need root (euid %d)", os.Geteuid())
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	vn := newVethNamespace(t)

	// Members 0 and 1 on the host end, member 2 inside the namespace.
	cluster := newEtcdCluster(t, 3, 50, true)
	var initial []string
	for i := range cluster.opts {
		ip := vn.hostIP
		if i == 2 {
			ip = vn.nsIP
		}
		port := func() int { return 20000 + rand.IntN(10000) }
		cluster.opts[i].ClientURL = fmt.Sprintf("http://%s:%d", ip, port())
		cluster.opts[i].PeerURL = fmt.Sprintf("http://%s:%d", ip, port())
		if i < 2 {
			cluster.opts[i].ClientURL = "http://" + freeAddr(t, ip)
			cluster.opts[i].PeerURL = "http://" + freeAddr(t, ip)
		}
		initial = append(initial, cluster.opts[i].Name+"="+cluster.opts[i].PeerURL)
	}
	for i := range cluster.opts {
		cluster.opts[i].InitialCluster = strings.Join(initial, ",")
	}
	for i := range 2 {
		cluster.startMember(t, i, etcdstore.ClusterStateNew)
	}
	cluster.startMemberIn(t, 2, vn.name)
	for i := range cluster.opts {
		cluster.waitHealthy(ctx, t, i)
	}
	all := cluster.client(ctx, t)

	// Make the isolated-to-be member the leader, so that the partition forces
	// an election on the majority side.
	lead := cluster.leader(ctx, t, all)
	if lead != 2 {
		ids := memberIDs(ctx, t, all)
		lc := memberClient(ctx, t, cluster.opts[lead].ClientURL)
		if _, err := lc.MoveLeader(ctx, ids[cluster.opts[2].Name]); err != nil {
			t.Fatalf("move leadership to %s: %v", cluster.opts[2].Name, err)
		}
		if lead = cluster.leader(ctx, t, all); lead != 2 {
			t.Fatalf("leader is %s after MoveLeader, want %s", cluster.opts[lead].Name, cluster.opts[2].Name)
		}
	}
	if _, err := all.Put(ctx, "/partition/before", "1"); err != nil {
		t.Fatal(err)
	}

	// Partition: the majority elects a new leader and keeps taking writes.
	majority := memberClient(ctx, t, cluster.opts[0].ClientURL, cluster.opts[1].ClientURL)
	vn.setLink(t, "down")
	cut := time.Now()
	var firstWrite time.Duration
	for i := 0; i < 50; {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := majority.Put(wctx, fmt.Sprintf("/partition/during/%03d", i), "x")
		cancel()
		if err != nil {
			if time.Since(cut) > 20*time.Second {
				t.Fatalf("the majority side takes no writes %s after the partition: %v", time.Since(cut).Round(time.Millisecond), err)
			}
			continue
		}
		if i == 0 {
			firstWrite = time.Since(cut)
		}
		i++
	}
	newLead := cluster.leaderAmong(ctx, t, majority, 0, 1)
	t.Logf("FIGURE etcd partition: the majority (%s leading) accepted writes %s after the leader was cut off",
		cluster.opts[newLead].Name, firstWrite.Round(time.Millisecond))

	// Heal: the old leader rejoins as a follower and catches up.
	vn.setLink(t, "up")
	healed := time.Now()
	isolated := memberClient(ctx, t, cluster.opts[2].ClientURL)
	if err := poll(ctx, 30*time.Second, func() error {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		resp, err := isolated.Get(rctx, "/partition/during/049", clientv3.WithSerializable())
		if err != nil {
			return err
		}
		if len(resp.Kvs) != 1 {
			return fmt.Errorf("%s has not caught up", cluster.opts[2].Name)
		}
		st, err := isolated.Status(rctx, cluster.opts[2].ClientURL)
		if err != nil {
			return err
		}
		if st.Leader == st.Header.MemberId {
			return fmt.Errorf("%s still thinks it leads", cluster.opts[2].Name)
		}
		return nil
	}); err != nil {
		t.Fatalf("after healing: %v", err)
	}
	t.Logf("FIGURE etcd partition healed: %s caught up as a follower %s after the link came back",
		cluster.opts[2].Name, time.Since(healed).Round(time.Millisecond))
	resp, err := all.Get(ctx, "/partition/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 51 {
		t.Fatalf("keys after the partition: %v, %v; want 51", resp, err)
	}
}

// vethNamespace is a network namespace joined to the host by a veth pair on a
// private /30.
type vethNamespace struct {
	name, hostIf string
	hostIP, nsIP string
}

func newVethNamespace(t testing.TB) *vethNamespace {
	t.Helper()
	n := os.Getpid()%200 + 20
	v := &vethNamespace{
		name: fmt.Sprintf("cvpart%d", os.Getpid()), hostIf: fmt.Sprintf("cvph%d", os.Getpid()%100000),
		hostIP: fmt.Sprintf("10.213.%d.1", n), nsIP: fmt.Sprintf("10.213.%d.2", n),
	}
	nsIf := fmt.Sprintf("cvpn%d", os.Getpid()%100000)
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", v.hostIf).Run()
		_ = exec.Command("ip", "netns", "del", v.name).Run()
	})
	for _, step := range [][]string{
		{"ip", "netns", "add", v.name},
		{"ip", "link", "add", v.hostIf, "type", "veth", "peer", "name", nsIf},
		{"ip", "link", "set", nsIf, "netns", v.name},
		{"ip", "addr", "add", v.hostIP + "/30", "dev", v.hostIf},
		{"ip", "link", "set", v.hostIf, "up"},
		{"ip", "netns", "exec", v.name, "ip", "addr", "add", v.nsIP + "/30", "dev", nsIf},
		{"ip", "netns", "exec", v.name, "ip", "link", "set", nsIf, "up"},
		{"ip", "netns", "exec", v.name, "ip", "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command(step[0], step[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("set up the partition network: %s: %v: %s", strings.Join(step, " "), err, out)
		}
	}
	return v
}

// setLink takes the host end of the pair down (partition) or up (heal).
func (v *vethNamespace) setLink(t testing.TB, state string) {
	t.Helper()
	if out, err := exec.Command("ip", "link", "set", v.hostIf, state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s %s: %v: %s", v.hostIf, state, err, out)
	}
	if state == "up" {
		// The kernel drops the /30 route with the link: it comes back with the
		// address, which stays configured.
		_ = exec.Command("ip", "route", "replace", strings.TrimSuffix(v.hostIP, ".1")+".0/30", "dev", v.hostIf).Run()
	}
}

// startMemberIn starts member i inside the network namespace ns.
func (c *etcdCluster) startMemberIn(t testing.TB, i int, ns string) {
	t.Helper()
	o := c.opts[i]
	o.InitialClusterState = etcdstore.ClusterStateNew
	spec, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// ip netns exec execs the command: the child's PID is the member's.
	c.procs[i] = startProc(t, o.Name, []string{memberEnv + "=" + string(spec)}, "ip", "netns", "exec", ns, exe, "-test.run=^$")
}

// leaderAmong is leader restricted to the members in idx, asked through cl.
func (c *etcdCluster) leaderAmong(ctx context.Context, t testing.TB, cl *clientv3.Client, idx ...int) int {
	t.Helper()
	lead := -1
	if err := poll(ctx, 10*time.Second, func() error {
		for _, i := range idx {
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			st, err := cl.Status(sctx, c.opts[i].ClientURL)
			cancel()
			if err == nil && st.Leader == st.Header.MemberId {
				lead = i
				return nil
			}
		}
		return fmt.Errorf("none of %v leads", idx)
	}); err != nil {
		t.Fatal(err)
	}
	return lead
}

func memberIDs(ctx context.Context, t testing.TB, cl *clientv3.Client) map[string]uint64 {
	t.Helper()
	resp, err := cl.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]uint64{}
	for _, m := range resp.Members {
		ids[m.Name] = m.ID
	}
	return ids
}

func memberClient(ctx context.Context, t testing.TB, endpoints ...string) *clientv3.Client {
	t.Helper()
	cl, err := etcdstore.Connect(ctx, etcdstore.ExternalOptions{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}
