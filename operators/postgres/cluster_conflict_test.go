package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/operators/postgres"
)

// A failover's status write can be lost to a conflict. The replica it
// promoted must stay the primary: were the old primary still current in the
// next round, that round would promote another replica and fence the first
// one, and the writes it acknowledged would be lost.
var _ = Describe("PostgresCluster whose status write naming a new primary conflicts", Ordered, func() {
	const name = "fo"

	AfterAll(func(ctx SpecContext) { deleteCluster(ctx, name) })

	It("promotes one replica once when the primary's pod vanishes", func(ctx SpecContext) {
		Expect(suite.c.Create(ctx, newCluster(name, 2))).To(Succeed())
		Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(healthy(2))
		c := getCluster(ctx, name)
		old := c.Status.CurrentPrimary
		Eventually(func() error {
			_, err := psql(ctx, name, name+"-rw", "CREATE TABLE IF NOT EXISTS t (id int primary key); INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING")
			return err
		}).WithTimeout(20 * time.Second).Should(Succeed())
		// Replication is asynchronous: the row is on the replica before the
		// primary goes.
		Eventually(func() (string, error) { return psql(ctx, name, name+"-ro", "SELECT count(*) FROM t") }).
			WithTimeout(20 * time.Second).Should(Equal("1"))

		path := clusterStatusPath(name)
		res := suite.conflicts.arm(path, func(body []byte) bool {
			var c postgres.PostgresCluster
			return json.Unmarshal(body, &c) == nil && c.Status.CurrentPrimary != "" && c.Status.CurrentPrimary != old
		}, func(ctx context.Context) error { return touch(ctx, newCluster(name, 1)) })
		// Gone at once (no grace period): the operator's next round finds no
		// pod for the primary, chooses the replica and names it current.
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = old, "default"
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(res).WithTimeout(30*time.Second).Should(Receive(Equal(conflictResult{Code: http.StatusConflict})),
			"the status write naming the new primary conflicts")
		// And so does the first write after it that is not about recording
		// the choice (the one after the promotion).
		again := suite.conflicts.arm(path, func(body []byte) bool {
			var c postgres.PostgresCluster
			return json.Unmarshal(body, &c) == nil && c.Status.CurrentPrimary != "" && c.Status.CurrentPrimary != old &&
				!strings.HasPrefix(c.Status.Phase, "Recording")
		}, func(ctx context.Context) error { return touch(ctx, newCluster(name, 1)) })

		events := func() string {
			promoted, fenced := clusterEvents(ctx, name)
			return fmt.Sprintf("promoted: %q, fenced: %q", promoted, fenced)
		}
		Eventually(func() string { return getCluster(ctx, name).Status.CurrentPrimary }).
			WithTimeout(30*time.Second).ShouldNot(Equal(old), events)
		Eventually(again).WithTimeout(30*time.Second).Should(Receive(Equal(conflictResult{Code: http.StatusConflict})),
			"the status write after the promotion conflicts")
		Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).Should(healthy(2))
		Expect(psql(ctx, name, name+"-rw", "SELECT count(*) FROM t")).To(Equal("1"))
		promoted, fenced := clusterEvents(ctx, name)
		Expect(promoted).To(HaveLen(1), "one promotion: %v", promoted)
		Expect(fenced).To(BeEmpty(), "no instance ran as a second primary")
		Expect(promoted[0]).To(Equal("promoted " + getCluster(ctx, name).Status.CurrentPrimary))
	})
})

// A switchover's intent must be stored before the old primary is stopped.
// Were the write naming the target lost (a conflict) after the old
// primary's pod was deleted, the next round would see a primary being
// deleted and no switchover, fail over to the most advanced replica, then
// switch over again: two role changes for one.
var _ = Describe("PostgresCluster whose status write recording a switchover conflicts", Ordered, func() {
	const name = "so"

	AfterAll(func(ctx SpecContext) { deleteCluster(ctx, name) })

	It("switches over once, to the instance named in spec.primary", func(ctx SpecContext) {
		createCluster(ctx, name, 3)
		c := getCluster(ctx, name)
		old := c.Status.CurrentPrimary
		// The highest ordinal: a failover among replicas that received the
		// same WAL would choose another one.
		want := postgres.InstanceName(name, 3)
		Expect(old).NotTo(Equal(want))
		Eventually(func() error {
			_, err := psql(ctx, name, name+"-rw", "CREATE TABLE IF NOT EXISTS t (id int primary key); INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING")
			return err
		}).WithTimeout(20 * time.Second).Should(Succeed())

		res := suite.conflicts.arm(clusterStatusPath(name), func(body []byte) bool {
			var c postgres.PostgresCluster
			return json.Unmarshal(body, &c) == nil && c.Status.TargetPrimary == want && strings.HasPrefix(c.Status.FailoverReason, "Switchover")
		}, func(ctx context.Context) error { return touch(ctx, newCluster(name, 1)) })
		Expect(poll(ctx, func() error {
			c := getCluster(ctx, name)
			c.Spec.Primary = want
			return suite.c.Update(ctx, c)
		})).To(Succeed())
		Eventually(res).WithTimeout(30*time.Second).Should(Receive(Equal(conflictResult{Code: http.StatusConflict})),
			"the status write naming the switchover's target conflicts")

		Eventually(func() string { return getCluster(ctx, name).Status.CurrentPrimary }).WithTimeout(60 * time.Second).Should(Equal(want))
		Eventually(clusterFn(ctx, name)).WithTimeout(90 * time.Second).Should(healthy(3))
		Expect(getCluster(ctx, name).Status.CurrentPrimary).To(Equal(want))
		Expect(psql(ctx, name, name+"-rw", "SELECT count(*) FROM t")).To(Equal("1"))
		Eventually(func() []string { return eventMessages(ctx, name, "Promoted") }).
			Should(Equal([]string{"promoted " + want}), "one promotion, of the target")
		Expect(eventMessages(ctx, name, "FailingOver")).To(BeEmpty(), "no failover")
	})
})

// clusterStatusPath is the API path of the status of cluster name in default.
func clusterStatusPath(name string) string {
	return "/apis/" + postgres.GroupVersion.Group + "/" + postgres.GroupVersion.Version + "/namespaces/default/postgresclusters/" + name + "/status"
}

// clusterEvents returns the messages of cluster's Promoted events (one per
// occurrence) and of its Fenced events about a second primary.
func clusterEvents(ctx context.Context, cluster string) (promoted, fenced []string) {
	GinkgoHelper()
	fenced = slices.DeleteFunc(eventMessages(ctx, cluster, "Fenced"), func(m string) bool { return !strings.Contains(m, "second primary") })
	return eventMessages(ctx, cluster, "Promoted"), fenced
}

// eventMessages returns the messages of cluster's events with reason, one
// per occurrence.
func eventMessages(ctx context.Context, cluster, reason string) []string {
	GinkgoHelper()
	uid := getCluster(ctx, cluster).UID
	list := &corev1.EventList{}
	Expect(suite.c.List(ctx, list, client.InNamespace("default"))).To(Succeed())
	var out []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.UID != uid || ev.Reason != reason {
			continue
		}
		for range max(ev.Count, 1) {
			out = append(out, ev.Message)
		}
	}
	return out
}
