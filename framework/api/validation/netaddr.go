package validation

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/converge-dev/converge/framework/api/field"
)

// IsValidIP checks an IP address field that takes the strict form, as
// Kubernetes' newer fields do (IPAddress names, ServiceCIDRs): a parseable
// address, no leading zeros, no IPv4-mapped IPv6, in canonical form.
func IsValidIP(path *field.Path, value string) field.ErrorList {
	addr, err := netip.ParseAddr(value)
	if err != nil {
		if _, ok := withoutLeadingZeros(value); ok {
			return field.ErrorList{field.Invalid(path, value, "must not have leading 0s")}
		}
		return field.ErrorList{field.Invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")}
	}
	if addr.Zone() != "" {
		return field.ErrorList{field.Invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")}
	}
	if addr.Is4In6() {
		return field.ErrorList{field.Invalid(path, value, "must not be an IPv4-mapped IPv6 address")}
	}
	if c := addr.String(); c != value {
		return field.ErrorList{field.Invalid(path, value, fmt.Sprintf("must be in canonical form (%q)", c))}
	}
	return nil
}

// IsValidCIDR checks a CIDR field that takes the strict form: parseable, no
// leading zeros, no IPv4-mapped IPv6 address, no bits set beyond the prefix
// length, in canonical form.
func IsValidCIDR(path *field.Path, value string) field.ErrorList {
	prefix, err := netip.ParsePrefix(value)
	if err != nil {
		if _, ok := withoutLeadingZeros(value); ok {
			return field.ErrorList{field.Invalid(path, value, "must not have leading 0s in IP or prefix length")}
		}
		return field.ErrorList{field.Invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")}
	}
	switch {
	case prefix.Addr().Is4In6():
		return field.ErrorList{field.Invalid(path, value, "must not have an IPv4-mapped IPv6 address")}
	case prefix.Addr() != prefix.Masked().Addr():
		return field.ErrorList{field.Invalid(path, value, "must not have bits set beyond the prefix length")}
	}
	if c := prefix.String(); c != value {
		return field.ErrorList{field.Invalid(path, value, fmt.Sprintf("must be in canonical form (%q)", c))}
	}
	return nil
}

// withoutLeadingZeros reports whether value parses as an IPv4 address or
// prefix once the leading zeros of its numbers are dropped (the old,
// lenient parsers accepted "010.0.0.1").
func withoutLeadingZeros(value string) (string, bool) {
	ip, bits, hasBits := strings.Cut(value, "/")
	parts := strings.Split(ip, ".")
	if len(parts) != 4 {
		return "", false
	}
	trim := func(s string) string {
		t := strings.TrimLeft(s, "0")
		if t == "" && s != "" {
			return "0"
		}
		return t
	}
	for i, p := range parts {
		parts[i] = trim(p)
	}
	out := strings.Join(parts, ".")
	if hasBits {
		out += "/" + trim(bits)
		_, err := netip.ParsePrefix(out)
		return out, err == nil
	}
	_, err := netip.ParseAddr(out)
	return out, err == nil
}

const httpPathFmt = `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`

var httpPathRegexp = regexp.MustCompile("^" + httpPathFmt + "$")

// IsDomainPrefixedPath checks a value of the form "example.com/path" (e.g.
// IngressClass spec.controller).
func IsDomainPrefixedPath(path *field.Path, value string) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	host, rest, ok := strings.Cut(value, "/")
	if !ok || host == "" || rest == "" {
		return field.ErrorList{field.Invalid(path, value, `must be a domain-prefixed path (such as "acme.io/foo")`)}
	}
	var errs field.ErrorList
	for _, msg := range IsDNS1123Subdomain(host) {
		errs = append(errs, field.Invalid(path, host, msg))
	}
	if !httpPathRegexp.MatchString(rest) {
		errs = append(errs, field.Invalid(path, rest, RegexError("Invalid path", httpPathFmt)))
	}
	return errs
}

// IsValidPathSegmentName checks that name can be one segment of a URL path:
// not "." or "..", no "/" or "%".
func IsValidPathSegmentName(name string) []string {
	if name == "." || name == ".." {
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	var msgs []string
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			msgs = append(msgs, fmt.Sprintf("may not contain '%s'", bad))
		}
	}
	return msgs
}
