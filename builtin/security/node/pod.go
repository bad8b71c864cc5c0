package node

// Pod is the part of a pod the Node authorizer and NodeRestriction read.
type Pod struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		UID         string            `json:"uid"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec podSpec `json:"spec"`
}

type ref struct {
	Name string `json:"name"`
}

type container struct {
	Env []struct {
		ValueFrom *struct {
			SecretKeyRef    *ref `json:"secretKeyRef"`
			ConfigMapKeyRef *ref `json:"configMapKeyRef"`
		} `json:"valueFrom"`
	} `json:"env"`
	EnvFrom []struct {
		SecretRef    *ref `json:"secretRef"`
		ConfigMapRef *ref `json:"configMapRef"`
	} `json:"envFrom"`
}

type podSpec struct {
	NodeName            string      `json:"nodeName"`
	ServiceAccountName  string      `json:"serviceAccountName"`
	ImagePullSecrets    []ref       `json:"imagePullSecrets"`
	Containers          []container `json:"containers"`
	InitContainers      []container `json:"initContainers"`
	EphemeralContainers []container `json:"ephemeralContainers"`
	Volumes             []struct {
		Secret *struct {
			SecretName string `json:"secretName"`
		} `json:"secret"`
		ConfigMap             *ref `json:"configMap"`
		PersistentVolumeClaim *struct {
			ClaimName string `json:"claimName"`
		} `json:"persistentVolumeClaim"`
		Projected *struct {
			Sources []struct {
				Secret    *ref `json:"secret"`
				ConfigMap *ref `json:"configMap"`
			} `json:"sources"`
		} `json:"projected"`
	} `json:"volumes"`
}

// references returns the names of the objects of resource (secrets,
// configmaps, persistentvolumeclaims, serviceaccounts) the pod uses.
func (p *Pod) references(resource string) []string {
	var out []string
	add := func(r *ref) {
		if r != nil && r.Name != "" {
			out = append(out, r.Name)
		}
	}
	s := &p.Spec
	switch resource {
	case "serviceaccounts":
		name := s.ServiceAccountName
		if name == "" {
			name = "default"
		}
		return []string{name}
	case "secrets":
		for i := range s.ImagePullSecrets {
			add(&s.ImagePullSecrets[i])
		}
	}
	for _, cs := range [][]container{s.Containers, s.InitContainers, s.EphemeralContainers} {
		for _, c := range cs {
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					continue
				}
				switch resource {
				case "secrets":
					add(e.ValueFrom.SecretKeyRef)
				case "configmaps":
					add(e.ValueFrom.ConfigMapKeyRef)
				}
			}
			for _, e := range c.EnvFrom {
				switch resource {
				case "secrets":
					add(e.SecretRef)
				case "configmaps":
					add(e.ConfigMapRef)
				}
			}
		}
	}
	for _, v := range s.Volumes {
		switch {
		case resource == "secrets" && v.Secret != nil:
			add(&ref{Name: v.Secret.SecretName})
		case resource == "configmaps":
			add(v.ConfigMap)
		case resource == "persistentvolumeclaims" && v.PersistentVolumeClaim != nil:
			add(&ref{Name: v.PersistentVolumeClaim.ClaimName})
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				switch resource {
				case "secrets":
					add(src.Secret)
				case "configmaps":
					add(src.ConfigMap)
				}
			}
		}
	}
	return out
}
