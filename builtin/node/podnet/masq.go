package podnet

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// masqChain is the nat chain holding the source NAT of nodeName's pods.
func masqChain(nodeName string) string { return "CNV-MASQ-" + BridgeName(nodeName)[4:] }

// ensureMasquerade makes the host masquerade what pods of cidr send outside
// it, with one jump from POSTROUTING for the whole pod CIDR to a chain of
// three rules, set once per node start. The bridge plugin's ipMasq would add
// a chain and a rule per pod, each add and delete a pass through the xtables
// lock that pod setups queue on. A jump left for another CIDR of the node
// (its pod CIDR changed) is removed.
func ensureMasquerade(nodeName, cidr string) error {
	chain := masqChain(nodeName)
	if out, err := iptables("-t", "nat", "-N", chain); err != nil && !strings.Contains(out, "exists") {
		return fmt.Errorf("create nat chain %s: %w", chain, err)
	}
	for _, args := range [][]string{
		{"-t", "nat", "-F", chain},
		{"-t", "nat", "-A", chain, "-d", cidr, "-j", "RETURN"},
		{"-t", "nat", "-A", chain, "-d", "224.0.0.0/4", "-j", "RETURN"},
		{"-t", "nat", "-A", chain, "-j", "MASQUERADE"},
	} {
		if _, err := iptables(args...); err != nil {
			return fmt.Errorf("fill nat chain %s: %w", chain, err)
		}
	}
	rules, err := iptables("-t", "nat", "-S", "POSTROUTING")
	if err != nil {
		return fmt.Errorf("list nat POSTROUTING: %w", err)
	}
	found := false
	for _, src := range jumpSources(rules, chain) {
		if src == cidr {
			found = true
			continue
		}
		if _, err := iptables(jump("-D", nodeName, src)...); err != nil {
			return fmt.Errorf("remove stale masquerade jump for %s: %w", src, err)
		}
	}
	if !found {
		if _, err := iptables(jump("-A", nodeName, cidr)...); err != nil {
			return fmt.Errorf("add masquerade jump for %s: %w", cidr, err)
		}
	}
	return nil
}

// jump is the iptables arguments that add (op -A) or delete (-D) the
// POSTROUTING jump of nodeName's pods from cidr.
func jump(op, nodeName, cidr string) []string {
	return []string{"-t", "nat", op, "POSTROUTING", "-s", cidr, "-m", "comment", "--comment", "converge pods of " + nodeName, "-j", masqChain(nodeName)}
}

// jumpSources returns the source CIDRs of the POSTROUTING jumps to chain in
// rules (iptables -S output).
func jumpSources(rules, chain string) []string {
	var out []string
	for _, rule := range strings.Split(rules, "\n") {
		f := strings.Fields(rule)
		if len(f) > 3 && f[0] == "-A" && f[1] == "POSTROUTING" && f[2] == "-s" && f[len(f)-2] == "-j" && f[len(f)-1] == chain {
			out = append(out, f[3])
		}
	}
	return out
}

// iptables runs iptables (waiting for the xtables lock) and returns its
// output; a failure's error holds the output.
func iptables(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command("iptables", append([]string{"-w"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
		}
		return out.String(), fmt.Errorf("iptables %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), nil
}

// RemoveMasquerade removes the masquerade jump and chain of nodeName's pods,
// for a node that goes for good (an agent that stops keeps them, as it keeps
// its bridge). Nothing to remove is not an error.
func RemoveMasquerade(nodeName string) error {
	chain := masqChain(nodeName)
	rules, err := iptables("-t", "nat", "-S", "POSTROUTING")
	if err != nil {
		return fmt.Errorf("list nat POSTROUTING: %w", err)
	}
	for _, src := range jumpSources(rules, chain) {
		if _, err := iptables(jump("-D", nodeName, src)...); err != nil {
			return fmt.Errorf("remove masquerade jump for %s: %w", src, err)
		}
	}
	if out, err := iptables("-t", "nat", "-F", chain); err != nil && !strings.Contains(out, "No chain") {
		return fmt.Errorf("flush nat chain %s: %w", chain, err)
	}
	if out, err := iptables("-t", "nat", "-X", chain); err != nil && !strings.Contains(out, "No chain") {
		return fmt.Errorf("delete nat chain %s: %w", chain, err)
	}
	return nil
}
