package v1

import (
	"fmt"
	"reflect"

	"github.com/converge-dev/converge/framework/api/field"
)

// ephemeralForbidden are the Container fields an ephemeral container may not
// set, as Kubernetes: it gets no ports, probes, lifecycle hooks, resources
// or restart policy.
var ephemeralForbidden = []string{"Ports", "LivenessProbe", "ReadinessProbe", "StartupProbe", "Lifecycle", "Resources",
	"ResizePolicy", "RestartPolicy", "RestartPolicyRules"}

// validateEphemeralContainers checks spec.ephemeralContainers at p beyond the
// checks every container gets (names, which must be unique among all the
// pod's containers, are in names already): fields ephemeral containers may
// not set, no subPath mounts, and a targetContainerName naming one of the
// pod's containers.
func validateEphemeralContainers(s *PodSpec, p *field.Path, volumes, names map[string]bool) field.ErrorList {
	if len(s.EphemeralContainers) == 0 {
		return nil
	}
	cs := make([]Container, len(s.EphemeralContainers))
	for i := range s.EphemeralContainers {
		cs[i] = Container(s.EphemeralContainers[i].EphemeralContainerCommon)
	}
	errs := validateContainers(cs, p, volumes, names)
	regular := map[string]bool{}
	for _, c := range s.Containers {
		regular[c.Name] = true
	}
	for _, c := range s.InitContainers {
		regular[c.Name] = true
	}
	for i := range s.EphemeralContainers {
		ec := &s.EphemeralContainers[i]
		ip := p.Index(i)
		v := reflect.ValueOf(ec.EphemeralContainerCommon)
		for _, name := range ephemeralForbidden {
			f := v.FieldByName(name)
			if !f.IsZero() {
				sf, _ := v.Type().FieldByName(name)
				errs = append(errs, field.Forbidden(ip.Child(jsonName(sf)), "cannot be set for an Ephemeral Container"))
			}
		}
		for j, m := range ec.VolumeMounts {
			if m.SubPath != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if m.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
		if ec.TargetContainerName != "" && !regular[ec.TargetContainerName] {
			errs = append(errs, field.NotFound(ip.Child("targetContainerName"), ec.TargetContainerName))
		}
	}
	return errs
}

func jsonName(sf reflect.StructField) string {
	name := sf.Tag.Get("json")
	for i := range len(name) {
		if name[i] == ',' {
			return name[:i]
		}
	}
	return name
}

// ValidatePodEphemeralContainersUpdate checks a write through
// pods/NAME/ephemeralcontainers, whose only change is
// spec.ephemeralContainers: the pod must stay valid, and the ephemeral
// containers already there may be neither removed nor changed (the list only
// grows). Static (mirror) pods take none.
func ValidatePodEphemeralContainersUpdate(p, old *Pod) field.ErrorList {
	path := field.NewPath("spec", "ephemeralContainers")
	if _, ok := old.Annotations[mirrorPodAnnotation]; ok && len(p.Spec.EphemeralContainers) > len(old.Spec.EphemeralContainers) {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	errs := ValidatePod(p)
	added := map[string]*EphemeralContainer{}
	for i := range p.Spec.EphemeralContainers {
		added[p.Spec.EphemeralContainers[i].Name] = &p.Spec.EphemeralContainers[i]
	}
	for i := range old.Spec.EphemeralContainers {
		o := &old.Spec.EphemeralContainers[i]
		n, ok := added[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be removed", o.Name)))
		case !reflect.DeepEqual(normalizeEphemeral(o), normalizeEphemeral(n)):
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("existing ephemeral containers %q may not be changed", o.Name)))
		}
	}
	return errs
}

// mirrorPodAnnotation marks a static pod's mirror in the API.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// normalizeEphemeral gives empty and nil collections of c the same form.
func normalizeEphemeral(c *EphemeralContainer) *EphemeralContainer {
	out, err := roundTrip(c)
	if err != nil {
		return c
	}
	return out
}
