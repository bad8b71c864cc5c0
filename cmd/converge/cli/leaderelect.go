package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/converge-dev/converge/framework/manager"
)

// leaderElectFlags are kube-controller-manager's and kube-scheduler's leader
// election flags, with their defaults.
type leaderElectFlags struct {
	enabled                                   bool
	id                                        string
	leaseDuration, renewDeadline, retryPeriod time.Duration
}

func (l *leaderElectFlags) add(f *pflag.FlagSet, what, defaultID string) {
	f.BoolVar(&l.enabled, "leader-elect", true, "hold a Lease so that only one replica "+what)
	f.StringVar(&l.id, "leader-elect-id", defaultID, "name of the Lease in kube-system")
	f.DurationVar(&l.leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long standbys wait after the last renewal they saw before taking over a Lease")
	f.DurationVar(&l.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader keeps trying to renew before it stops leading (less than the lease duration)")
	f.DurationVar(&l.retryPeriod, "leader-elect-retry-period", 2*time.Second,
		"how often candidates try to acquire or renew the Lease")
}

// apply sets the election fields of o.
func (l *leaderElectFlags) apply(o *manager.Options) {
	o.LeaderElection = l.enabled
	o.LeaderElectionID = l.id
	o.LeaderElectionNamespace = "kube-system"
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = l.leaseDuration, l.renewDeadline, l.retryPeriod
}
