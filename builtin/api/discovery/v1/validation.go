package v1

import (
	"net/netip"
	"slices"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

const (
	maxAddresses = 100
	maxPorts     = 20000
	maxEndpoints = 1000
	maxZoneHints = 8
)

// ValidateEndpointSlice checks a slice (metadata excluded).
func ValidateEndpointSlice(s *EndpointSlice) field.ErrorList {
	var errs field.ErrorList
	switch s.AddressType {
	case "":
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	case AddressTypeIPv4, AddressTypeIPv6, AddressTypeFQDN:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), string(s.AddressType),
			[]string{string(AddressTypeFQDN), string(AddressTypeIPv4), string(AddressTypeIPv6)}))
	}
	errs = append(errs, validateEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	errs = append(errs, validatePorts(s.Ports, field.NewPath("ports"))...)
	return errs
}

// ValidateEndpointSliceUpdate checks an update: addressType is immutable.
func ValidateEndpointSliceUpdate(s, old *EndpointSlice) field.ErrorList {
	errs := ValidateEndpointSlice(s)
	if s.AddressType != old.AddressType {
		errs = append(errs, field.Invalid(field.NewPath("addressType"), string(s.AddressType), "field is immutable"))
	}
	return errs
}

func validateDNS1123Label(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func validateEndpoints(eps []Endpoint, addrType AddressType, fldPath *field.Path) field.ErrorList {
	if len(eps) > maxEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(eps), maxEndpoints)}
	}
	var errs field.ErrorList
	for i, ep := range eps {
		idx := fldPath.Index(i)
		ap := idx.Child("addresses")
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(ap, "must contain at least 1 address"))
		} else if len(ep.Addresses) > maxAddresses {
			errs = append(errs, field.TooMany(ap, len(ep.Addresses), maxAddresses))
		}
		for j, a := range ep.Addresses {
			ip, err := netip.ParseAddr(a)
			switch addrType {
			case AddressTypeIPv4:
				if err != nil || !ip.Is4() {
					errs = append(errs, field.Invalid(ap.Index(j), a, "must be a valid IPv4 address"))
				}
			case AddressTypeIPv6:
				if err != nil || !ip.Is6() || ip.Is4In6() {
					errs = append(errs, field.Invalid(ap.Index(j), a, "must be a valid IPv6 address"))
				}
			}
		}
		if ep.Hostname != nil {
			errs = append(errs, validateDNS1123Label(*ep.Hostname, idx.Child("hostname"))...)
		}
		if ep.Hints != nil {
			fz := idx.Child("hints", "forZones")
			if len(ep.Hints.ForZones) > maxZoneHints {
				errs = append(errs, field.TooMany(fz, len(ep.Hints.ForZones), maxZoneHints))
				continue
			}
			var seen []string
			for k, z := range ep.Hints.ForZones {
				if slices.Contains(seen, z.Name) {
					errs = append(errs, field.Duplicate(fz.Index(k).Child("name"), z.Name))
				}
				seen = append(seen, z.Name)
			}
		}
	}
	return errs
}

func validatePorts(ports []EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), maxPorts)}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, p := range ports {
		idx := fldPath.Index(i)
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			errs = append(errs, validateDNS1123Label(name, idx.Child("name"))...)
		}
		if seen[name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), name))
		}
		seen[name] = true
		switch {
		case p.Protocol == nil:
			errs = append(errs, field.Required(idx.Child("protocol"), ""))
		case *p.Protocol != "TCP" && *p.Protocol != "UDP" && *p.Protocol != "SCTP":
			errs = append(errs, field.NotSupported(idx.Child("protocol"), string(*p.Protocol), []string{"SCTP", "TCP", "UDP"}))
		}
	}
	return errs
}
