package postgres

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
)

func TestChooseCandidate(t *testing.T) {
	t.Parallel()
	rep := func(name string, lsn uint64) View {
		return View{Name: name, PodExists: true, Ready: true, Queried: true, InRecovery: true, LSN: lsn}
	}
	notReady := rep("pg-4", 99)
	notReady.Ready = false
	lostNode := rep("pg-5", 200)
	lostNode.NodeNotReady = true
	primary := rep("pg-1", 100)
	primary.InRecovery = false
	for _, tc := range []struct {
		name  string
		views []View
		want  string
	}{
		{"highest LSN wins", []View{primary, rep("pg-2", 10), rep("pg-3", 20)}, "pg-3"},
		{"tie goes to the lowest ordinal", []View{rep("pg-3", 20), rep("pg-2", 20)}, "pg-2"},
		{"unready and non-recovering instances are skipped", []View{primary, notReady, rep("pg-2", 1)}, "pg-2"},
		{"a replica on a node that is not ready is skipped", []View{lostNode, rep("pg-2", 1)}, "pg-2"},
		{"the excluded old primary is skipped", []View{rep("pg-1", 500), rep("pg-2", 1)}, "pg-2"},
		{"none", []View{primary, notReady}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ChooseCandidate("pg", tc.views, "pg-1"); got != tc.want {
				t.Errorf("ChooseCandidate = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPrimaryFailure(t *testing.T) {
	t.Parallel()
	now := time.Now()
	ok := View{Name: "pg-1", PodExists: true, Ready: true, RestartCount: 0}
	known := &InstanceStatus{Name: "pg-1", Ready: true}
	restarted := ok
	restarted.RestartCount = 1
	unready := ok
	unready.Ready, unready.NotReadySince = false, now.Add(-3*time.Second)
	deleting := ok
	deleting.Deleting = true
	// The node went silent: its agent no longer updates the pod, which still
	// looks ready and running.
	nodeLost := ok
	nodeLost.NodeName, nodeLost.NodeNotReady, nodeLost.NodeNotReadySince = "n1", true, now.Add(-3*time.Second)
	for _, tc := range []struct {
		name  string
		v     View
		known *InstanceStatus
		delay time.Duration
		fail  bool
	}{
		{"healthy", ok, known, 0, false},
		{"not created yet", View{Name: "pg-1"}, nil, 0, false},
		{"pod gone", View{Name: "pg-1"}, known, 0, true},
		{"pod deleting", deleting, known, 0, true},
		{"process exited", restarted, known, 0, true},
		{"unready past the delay", unready, known, 2 * time.Second, true},
		{"unready within the delay", unready, known, 10 * time.Second, false},
		{"never was ready", unready, &InstanceStatus{Name: "pg-1"}, 0, false},
		{"node not ready past the delay", nodeLost, known, 2 * time.Second, true},
		{"node not ready within the delay", nodeLost, known, 10 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := PrimaryFailure(tc.v, tc.known, tc.delay, now); (got != "") != tc.fail {
				t.Errorf("PrimaryFailure = %q, want failure %v", got, tc.fail)
			}
		})
	}
}

func TestNextSwitchoverStep(t *testing.T) {
	t.Parallel()
	old := View{Name: "pg-1", PodExists: true, Ready: true, Queried: true}
	stopping := old
	stopping.Deleting = true
	// The old primary's instance back as a replica (pg_rewind), or starting.
	rejoined := old
	rejoined.InRecovery = true
	starting := View{Name: "pg-1", PodExists: true}
	target := View{Name: "pg-3", PodExists: true, Ready: true, Queried: true, InRecovery: true}
	unready := target
	unready.Ready = false
	promoted := target
	promoted.InRecovery = false
	gone := View{Name: "pg-3"}
	for _, tc := range []struct {
		name     string
		recorded string
		old, tv  View
		want     SwitchoverStep
	}{
		{"chosen in this round: recorded first", "pg-1", old, target, SwitchoverRecord},
		{"a lost write recording it: recorded again", "", old, target, SwitchoverRecord},
		{"recorded: the old primary is stopped", "pg-3", old, target, SwitchoverFence},
		{"recorded, the old primary stopping: wait", "pg-3", stopping, target, SwitchoverWait},
		{"the old primary stopping goes on when the target fails", "pg-3", stopping, unready, SwitchoverWait},
		{"an unready target before the old primary stops: abort", "pg-3", old, unready, SwitchoverAbort},
		{"a target gone before the old primary stops: abort", "pg-3", old, gone, SwitchoverAbort},
		{"the old primary back as a replica, target promoted: stopped", "pg-3", rejoined, promoted, SwitchoverStopped},
		{"the old primary back as a replica, target not promoted yet: stopped", "pg-3", rejoined, target, SwitchoverStopped},
		{"the old primary's new pod starting: fenced again, never aborted", "pg-3", starting, promoted, SwitchoverFence},
		{"the old primary not answering: fenced", "pg-3", starting, target, SwitchoverFence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NextSwitchoverStep("pg-3", tc.recorded, tc.old, tc.tv); got != tc.want {
				t.Errorf("NextSwitchoverStep = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestLSN(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0/0", "16/B374D848", "FFFFFFFF/FFFFFFFF"} {
		v, err := ParseLSN(s)
		if err != nil || FormatLSN(v) != s {
			t.Errorf("round trip %s: %v %v", s, FormatLSN(v), err)
		}
	}
	a, _ := ParseLSN("1/0")
	b, _ := ParseLSN("0/FFFFFFFF")
	if a <= b {
		t.Errorf("1/0 must be after 0/FFFFFFFF")
	}
	if _, err := ParseLSN("nope"); err == nil {
		t.Error("ParseLSN accepted garbage")
	}
}

func TestDesiredInstances(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		primary string
		n       int
		want    []string
	}{
		{"pg-1", 3, []string{"pg-1", "pg-2", "pg-3"}},
		{"pg-3", 1, []string{"pg-3"}},
		{"pg-3", 2, []string{"pg-1", "pg-3"}},
		{"", 2, []string{"pg-1", "pg-2"}},
	} {
		if got := DesiredInstances("pg", tc.primary, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("DesiredInstances(%s, %d) = %v, want %v", tc.primary, tc.n, got, tc.want)
		}
	}
}

func TestRenderParameters(t *testing.T) {
	t.Parallel()
	args := RenderParameters(map[string]string{"shared_buffers": "64MB", "work_mem": "8MB"}, "pg-2", "127.96.0.7", "/d/pg-2/pgpass")
	got := map[string]string{}
	for i := 0; i < len(args); i += 2 {
		if args[i] != "-c" {
			t.Fatalf("args[%d] = %q, want -c", i, args[i])
		}
		k, v, _ := strings.Cut(args[i+1], "=")
		got[k] = v
	}
	want := map[string]string{
		"shared_buffers": "64MB", "work_mem": "8MB", "listen_addresses": "$(POD_IP)", "port": "5432",
		"unix_socket_directories": "", "cluster_name": "pg-2",
		"primary_conninfo": "host=127.96.0.7 port=5432 user=streaming_replica passfile=/d/pg-2/pgpass application_name=pg-2",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got["wal_level"] != "replica" || got["wal_log_hints"] != "on" {
		t.Errorf("defaults missing: %v", got)
	}
	keys := make([]string, 0, len(args)/2)
	for i := 1; i < len(args); i += 2 {
		keys = append(keys, strings.SplitN(args[i], "=", 2)[0])
	}
	if !slices.IsSorted(keys) {
		t.Errorf("parameters not sorted: %v", keys)
	}
}

func TestConfigHashAndSync(t *testing.T) {
	t.Parallel()
	a := &ClusterSpec{Instances: 3, Parameters: map[string]string{"work_mem": "4MB"}}
	b := &ClusterSpec{Instances: 1, Parameters: map[string]string{"work_mem": "4MB"}}
	if ConfigHash(a) != ConfigHash(b) {
		t.Error("scaling must not change the config hash")
	}
	b.Parameters["work_mem"] = "8MB"
	if ConfigHash(a) == ConfigHash(b) {
		t.Error("a parameter change must change the config hash")
	}
	a.SynchronousReplication = true
	if got := SynchronousStandbyNames(a); got != "ANY 1 (*)" {
		t.Errorf("sync on, 3 instances: %q", got)
	}
	a.Instances = 1
	if got := SynchronousStandbyNames(a); got != "" {
		t.Errorf("sync on, 1 instance: %q", got)
	}
}

func TestBuildInstancePod(t *testing.T) {
	t.Parallel()
	c := &PostgresCluster{Spec: ClusterSpec{Instances: 3, Parameters: map[string]string{"work_mem": "8MB"}}}
	c.Name, c.Namespace = "pg", "db"
	pod := BuildInstancePod(InstancePod{Cluster: c, Instance: "pg-2", Role: RoleReplica, RWHost: "127.96.0.9",
		DataRoot: "/base/data/db/pg", BinDir: "/usr/lib/postgresql/15/bin", UID: 101, ConfigHash: "h", NodeName: "n1", Fresh: true})
	if pod.Name != "pg-2" || pod.Namespace != "db" || pod.Spec.NodeName != "n1" {
		t.Fatalf("meta: %s/%s on %s", pod.Namespace, pod.Name, pod.Spec.NodeName)
	}
	if diff := cmp.Diff(map[string]string{LabelCluster: "pg", LabelInstance: "pg-2", LabelRole: RoleReplica}, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if len(pod.Spec.InitContainers) != 2 || *pod.Spec.InitContainers[0].SecurityContext.RunAsUser != 0 ||
		*pod.Spec.InitContainers[1].SecurityContext.RunAsUser != 101 {
		t.Errorf("init containers: prepare as root, bootstrap as 101")
	}
	if a := pod.Spec.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" ||
		a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels[LabelCluster] != "pg" ||
		len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Errorf("instances prefer (only prefer) distinct nodes: %+v", pod.Spec.Affinity)
	}
	main := pod.Spec.Containers[0]
	if *main.SecurityContext.RunAsUser != 101 {
		t.Errorf("postgres must run as 101")
	}
	if want := []string{"/usr/lib/postgresql/15/bin/postgres", "-D", "/base/data/db/pg/pg-2/pgdata"}; !slices.Equal(main.Command[:3], want) {
		t.Errorf("command = %v", main.Command[:3])
	}
	if !slices.Contains(main.Command, "listen_addresses=$(POD_IP)") || !slices.Contains(main.Command, "work_mem=8MB") {
		t.Errorf("command lacks settings: %v", main.Command)
	}
	if main.Env[0].Name != "POD_IP" || main.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("POD_IP must come from status.podIP")
	}
	if main.ReadinessProbe == nil || main.ReadinessProbe.Exec == nil || !strings.Contains(main.ReadinessProbe.Exec.Command[2], "pg_isready") {
		t.Errorf("readiness probe must run pg_isready")
	}
	hp := pod.Spec.Volumes[0].HostPath
	if hp == nil || hp.Path != "/base/data/db/pg/pg-2" || pod.Spec.InitContainers[0].VolumeMounts[0].MountPath != hp.Path {
		t.Errorf("data volume: %+v", pod.Spec.Volumes[0])
	}
	env := map[string]string{}
	for _, e := range pod.Spec.InitContainers[1].Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "pg-credentials" {
			t.Errorf("%s from secret %s", e.Name, e.ValueFrom.SecretKeyRef.Name)
		}
	}
	if env["ROLE"] != RoleReplica || env["RW_HOST"] != "127.96.0.9" || env["FRESH"] != "1" || env["BOOTSTRAP"] != "initdb" || env["APP_DB"] != "app" {
		t.Errorf("bootstrap env: %v", env)
	}
}

func TestBuildServices(t *testing.T) {
	t.Parallel()
	c := &PostgresCluster{}
	c.Name, c.Namespace = "pg", "db"
	svcs := BuildServices(c)
	got := map[string]map[string]string{}
	for _, s := range svcs {
		got[s.Name] = s.Spec.Selector
	}
	want := map[string]map[string]string{
		"pg-rw": {LabelCluster: "pg", LabelRole: RolePrimary},
		"pg-ro": {LabelCluster: "pg", LabelRole: RoleReplica},
		"pg-r":  {LabelCluster: "pg"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selectors (-want +got):\n%s", diff)
	}
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 3, 14, 10, 7, 30, 0, time.UTC)
	for _, tc := range []struct {
		spec string
		want time.Time
	}{
		{"@every 90s", base.Add(90 * time.Second)},
		{"*/15 * * * *", time.Date(2025, 3, 14, 10, 15, 0, 0, time.UTC)},
		{"0 2 * * *", time.Date(2025, 3, 15, 2, 0, 0, 0, time.UTC)},
		{"30 9-11 * * 1-5", time.Date(2025, 3, 14, 10, 30, 0, 0, time.UTC)},
		{"0 0 1 * *", time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)},
		{"@daily", time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)},
		// Day of month and day of week both restricted: either matches (Monday the 17th first).
		{"0 0 20 * 1", time.Date(2025, 3, 17, 0, 0, 0, 0, time.UTC)},
		{"0 0 * * 1", time.Date(2025, 3, 17, 0, 0, 0, 0, time.UTC)},
	} {
		s, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := s.Next(base); !got.Equal(tc.want) {
			t.Errorf("%s: Next = %s, want %s", tc.spec, got, tc.want)
		}
	}
	for _, bad := range []string{"", "* * *", "61 * * * *", "@every 0s", "*/0 * * * *", "0 0 30 2 *"} {
		if _, err := ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q) accepted", bad)
		}
	}
}

func TestParseRetention(t *testing.T) {
	t.Parallel()
	if d, err := ParseRetention("7d"); err != nil || d != 7*24*time.Hour {
		t.Errorf("7d = %v %v", d, err)
	}
	if _, err := ParseRetention("7m"); err == nil {
		t.Error("7m accepted")
	}
}

func TestExpiredBackups(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	mk := func(name, kind, phase string, age time.Duration) *PostgresBackup {
		b := &PostgresBackup{Status: BackupStatus{Phase: phase}}
		b.Name, b.Labels = name, map[string]string{LabelBackupKind: kind}
		if phase == BackupCompleted || phase == BackupFailed {
			b.Status.CompletedAt = &api.Time{Time: now.Add(-age)}
		}
		return b
	}
	deleting := mk("deleting", BackupKindScheduled, BackupCompleted, 48*time.Hour)
	deleting.DeletionTimestamp = &api.Time{Time: now}
	for _, tc := range []struct {
		name    string
		backups []*PostgresBackup
		want    []string
	}{
		{"nothing old", []*PostgresBackup{mk("a", BackupKindScheduled, BackupCompleted, time.Hour)}, nil},
		{"old scheduled ones go, the newest completed stays", []*PostgresBackup{
			mk("a", BackupKindScheduled, BackupCompleted, 72*time.Hour),
			mk("b", BackupKindScheduled, BackupCompleted, 48*time.Hour),
			mk("c", BackupKindScheduled, BackupCompleted, 25*time.Hour),
		}, []string{"a", "b"}},
		{"young ones stay", []*PostgresBackup{
			mk("a", BackupKindScheduled, BackupCompleted, 72*time.Hour),
			mk("b", BackupKindScheduled, BackupCompleted, 2*time.Hour),
		}, []string{"a"}},
		{"failed ones expire too and never count as the newest", []*PostgresBackup{
			mk("a", BackupKindScheduled, BackupCompleted, 72*time.Hour),
			mk("b", BackupKindScheduled, BackupFailed, 48*time.Hour),
		}, []string{"b"}},
		{"on-demand, final, running and deleting backups are left alone", []*PostgresBackup{
			mk("manual", "", BackupCompleted, 72*time.Hour),
			mk("final", BackupKindFinal, BackupCompleted, 72*time.Hour),
			mk("running", BackupKindScheduled, BackupRunning, 0),
			deleting,
			mk("new", BackupKindScheduled, BackupCompleted, time.Minute),
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, b := range ExpiredBackups(tc.backups, 24*time.Hour, now) {
				got = append(got, b.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ExpiredBackups = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOptionsFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{EnvBaseDir: "/srv/pg", EnvPollInterval: "750ms"}
	o := OptionsFromEnv(func(k string) string { return env[k] })
	o.complete()
	if o.BaseDir != "/srv/pg" || o.BinDir != "/usr/lib/postgresql/15/bin" || o.PollInterval != 750*time.Millisecond {
		t.Errorf("OptionsFromEnv = %+v", o)
	}
	env[EnvPollInterval] = "soon"
	if o := OptionsFromEnv(func(k string) string { return env[k] }); o.PollInterval != 0 {
		t.Errorf("malformed poll interval gave %s, want the default", o.PollInterval)
	}
}
