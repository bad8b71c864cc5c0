package v1

import (
	"bytes"
	"context"
	"github.com/converge-dev/converge/internal/shared"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

var manifestDir = shared.Path("conformance", "manifests")

// defaultedFields are the JSON names that defaulting may add to an object.
var defaultedFields = []string{
	"restartPolicy", "dnsPolicy", "schedulerName", "terminationGracePeriodSeconds", "securityContext",
	"enableServiceLinks", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "protocol",
	"timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold", "scheme", "path", "defaultMode",
	"apiVersion", "priority", "preemptionPolicy", "tolerations", "type", "sessionAffinity", "targetPort",
	"internalTrafficPolicy", "ipFamilyPolicy", "ipFamilies", "requests", "status", "creationTimestamp",
	"kubernetes.io/metadata.name", "finalizers", "phase", "hostPort", "resources", "metadata", "spec",
}

func manifestDocs(t *testing.T) map[string][]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestDir, "*"))
	if err != nil || len(files) == 0 {
		t.Skipf("no manifests in %s: %v", manifestDir, err)
	}
	out := map[string][]map[string]any{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(raw, []byte("\n---")) {
			if len(bytes.TrimSpace(bytes.TrimPrefix(doc, []byte("---")))) == 0 {
				continue
			}
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			m, err := api.DecodeMap(js)
			if err != nil || m == nil {
				continue
			}
			out[filepath.Base(f)] = append(out[filepath.Base(f)], m)
		}
	}
	return out
}

func resourceByKind(kind string) *registry.Resource {
	for _, r := range Resources() {
		if r.Kind == kind {
			return r
		}
	}
	return nil
}

// subset reports the first path where in is not contained in out.
func subset(in, out any, path string) string {
	switch iv := in.(type) {
	case map[string]any:
		om, ok := out.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range iv {
			if p := subset(v, om[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		os, ok := out.([]any)
		if !ok || len(os) != len(iv) {
			return path
		}
		for i := range iv {
			if p := subset(iv[i], os[i], path+"[]"); p != "" {
				return p
			}
		}
		return ""
	}
	if !reflect.DeepEqual(in, out) {
		return path
	}
	return ""
}

// added lists the keys of out that in lacks (the topmost missing key of each subtree).
func added(in, out any, path string, acc *[]string) {
	switch ov := out.(type) {
	case map[string]any:
		im, _ := in.(map[string]any)
		for k, v := range ov {
			iv, ok := im[k]
			if !ok {
				*acc = append(*acc, path+"."+k)
				continue
			}
			added(iv, v, path+"."+k, acc)
		}
	case []any:
		is, _ := in.([]any)
		for i := range ov {
			var iv any
			if i < len(is) {
				iv = is[i]
			}
			added(iv, ov[i], path+"[]", acc)
		}
	}
}

func lastKey(p string) string {
	p = strings.TrimSuffix(p, "[]")
	if strings.HasSuffix(p, "."+LabelMetadataName) {
		return LabelMetadataName
	}
	return p[strings.LastIndex(p, ".")+1:]
}

func TestManifestsRoundTrip(t *testing.T) {
	ctx := context.Background()
	seen := map[string]bool{}
	for file, docs := range manifestDocs(t) {
		for _, in := range docs {
			kind, _ := in["kind"].(string)
			if in["apiVersion"] != "v1" {
				// Workload kinds: their pod template must be fully known to PodTemplateSpec.
				tmpl := api.NestedMap(in, "spec", "template")
				if tmpl == nil {
					tmpl = api.NestedMap(in, "spec", "jobTemplate", "spec", "template")
				}
				if tmpl == nil {
					continue
				}
				if u := registry.UnknownFields(tmpl, reflect.TypeFor[PodTemplateSpec]()); len(u) > 0 {
					t.Errorf("%s %s: unknown template fields %v", file, kind, u)
				}
				continue
			}
			res := resourceByKind(kind)
			if res == nil {
				t.Errorf("%s: no resource for kind %q", file, kind)
				continue
			}
			seen[kind] = true
			out, unknown, errs := res.Strategy.Canonicalize(api.DeepCopyJSON(in))
			if len(unknown) > 0 || len(errs) > 0 {
				t.Errorf("%s %s: unknown %v, errs %v", file, kind, unknown, errs)
				continue
			}
			if p := subset(in, out, ""); p != "" {
				t.Errorf("%s %s: input changed at %s", file, kind, p)
			}
			var adds []string
			added(in, out, "", &adds)
			for _, a := range adds {
				if !slices.Contains(defaultedFields, lastKey(a)) {
					t.Errorf("%s %s: unexpected added field %s", file, kind, a)
				}
			}
			if errs := res.Strategy.ValidateCreate(ctx, out); len(errs) > 0 {
				t.Errorf("%s %s: validation: %v", file, kind, errs.ToError())
			}
		}
	}
	for _, k := range []string{"Pod", "Service", "ConfigMap", "Secret"} {
		if !seen[k] {
			t.Logf("no %s manifest found", k)
		}
	}
}

// TestSyntheticRoundTrip covers kinds the shared manifests lack, with fields of
// every part of the types.
func TestSyntheticRoundTrip(t *testing.T) {
	tests := []struct {
		kind string
		in   string
	}{
		{"Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev","labels":{"team":"a"}}}`},
		{"ServiceAccount", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"build","namespace":"ci"},"secrets":[{"name":"tok"}],"imagePullSecrets":[{"name":"reg"}],"automountServiceAccountToken":false}`},
		{"Event", `{"apiVersion":"v1","kind":"Event","metadata":{"name":"p.1","namespace":"default"},"involvedObject":{"kind":"Pod","namespace":"default","name":"p","uid":"u1","apiVersion":"v1","resourceVersion":"5","fieldPath":"spec.containers{c}"},"reason":"Pulled","message":"pulled","source":{"component":"kubelet","host":"n1"},"firstTimestamp":"2024-01-01T00:00:00Z","lastTimestamp":"2024-01-01T00:01:00Z","count":2,"type":"Normal","eventTime":"2024-01-01T00:00:00.000001Z","series":{"count":3,"lastObservedTime":"2024-01-01T00:02:00.000000Z"},"action":"Pull","related":{"kind":"Node","name":"n1"},"reportingComponent":"kubelet","reportingInstance":"n1"}`},
		{"Node", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"node-role.kubernetes.io/control-plane":""}},"spec":{"podCIDR":"10.0.0.0/24","podCIDRs":["10.0.0.0/24"],"providerID":"kind://n1","unschedulable":true,"taints":[{"key":"k","value":"v","effect":"NoSchedule","timeAdded":"2024-01-01T00:00:00Z"}]},"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"3800m"},"phase":"Running","conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2024-01-01T00:00:00Z","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"KubeletReady","message":"ok"}],"addresses":[{"type":"InternalIP","address":"172.18.0.2"},{"type":"Hostname","address":"n1"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"m","systemUUID":"s","bootID":"b","kernelVersion":"6.1","osImage":"Debian","containerRuntimeVersion":"containerd://1.7","kubeletVersion":"v1.32.0","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"},"images":[{"names":["nginx:1.27"],"sizeBytes":1000}],"volumesInUse":["v"],"volumesAttached":[{"name":"v","devicePath":"/dev/x"}],"runtimeHandlers":[{"name":"runc","features":{"recursiveReadOnlyMounts":true,"userNamespaces":true}}],"features":{"supplementalGroupsPolicy":true}}}`},
		{"Endpoints", `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web","namespace":"default"},"subsets":[{"addresses":[{"ip":"10.0.0.1","nodeName":"n1","targetRef":{"kind":"Pod","name":"p","namespace":"default"}}],"notReadyAddresses":[{"ip":"10.0.0.2"}],"ports":[{"name":"http","port":80,"protocol":"TCP"}]}]}`},
		{"ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{"a":"b"},"binaryData":{"bin":"AAEC"},"immutable":true}`},
		{"Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"},"type":"kubernetes.io/tls","data":{"tls.crt":"Y3J0","tls.key":"a2V5"},"immutable":false}`},
		{"PersistentVolumeClaim", `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"default","annotations":{"volume.kubernetes.io/selected-node":"n1"}},
			"spec":{"accessModes":["ReadWriteOnce"],"selector":{"matchLabels":{"tier":"db"}},"resources":{"requests":{"storage":"10Gi"},"limits":{"storage":"20Gi"}},"volumeName":"pv-1","storageClassName":"standard","volumeMode":"Filesystem",
			  "dataSource":{"apiGroup":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","name":"snap"},"dataSourceRef":{"apiGroup":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","name":"snap","namespace":"default"},"volumeAttributesClassName":"gold"},
			"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"10Gi"},"conditions":[{"type":"Resizing","status":"True","lastProbeTime":"2024-01-01T00:00:00Z","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"r","message":"m"}],
			  "allocatedResources":{"storage":"10Gi"},"allocatedResourceStatuses":{"storage":"ControllerResizeInProgress"},"currentVolumeAttributesClassName":"silver","modifyVolumeStatus":{"targetVolumeAttributesClassName":"gold","status":"InProgress"}}}`},
		{"Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"full","namespace":"default"},"spec":{
			"volumes":[{"name":"e","emptyDir":{"medium":"Memory","sizeLimit":"1Gi"}},{"name":"h","hostPath":{"path":"/x","type":"Directory"}},
			  {"name":"p","projected":{"sources":[{"serviceAccountToken":{"audience":"a","expirationSeconds":600,"path":"t"}},{"clusterTrustBundle":{"signerName":"x/y","labelSelector":{"matchLabels":{"a":"b"}},"optional":true,"path":"b"}},{"downwardAPI":{"items":[{"path":"n","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}]}}],"defaultMode":420}},
			  {"name":"eph","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"std","volumeMode":"Filesystem"}}}},
			  {"name":"csi","csi":{"driver":"d","volumeAttributes":{"a":"b"},"nodePublishSecretRef":{"name":"s"}}},
			  {"name":"nfs","nfs":{"server":"s","path":"/p","readOnly":true}},{"name":"img","image":{"reference":"busybox:1","pullPolicy":"IfNotPresent"}},
			  {"name":"aws","awsElasticBlockStore":{"volumeID":"v","fsType":"ext4"}},{"name":"rbd","rbd":{"monitors":["m"],"image":"i","pool":"rbd","user":"admin","keyring":"/etc/ceph/keyring"}}],
			"containers":[{"name":"c","image":"nginx:1.27","imagePullPolicy":"IfNotPresent","ports":[{"name":"http","containerPort":80,"protocol":"TCP"}],
			  "env":[{"name":"A","value":"1"},{"name":"N","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}}],
			  "resources":{"limits":{"cpu":"1"},"requests":{"cpu":"500m"},"claims":[{"name":"gpu"}]},"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"}],
			  "livenessProbe":{"grpc":{"port":9000,"service":"s"},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
			  "readinessProbe":{"httpGet":{"path":"/","port":"http","scheme":"HTTP","httpHeaders":[{"name":"X","value":"y"}]},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},
			  "lifecycle":{"preStop":{"sleep":{"seconds":5}},"postStart":{"exec":{"command":["true"]}}},
			  "securityContext":{"runAsUser":1000,"capabilities":{"drop":["ALL"]},"seccompProfile":{"type":"RuntimeDefault"},"allowPrivilegeEscalation":false},
			  "volumeMounts":[{"name":"e","mountPath":"/e"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],
			"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler","enableServiceLinks":true,
			"securityContext":{"fsGroup":2000,"sysctls":[{"name":"a","value":"b"}]},"priority":0,"preemptionPolicy":"PreemptLowerPriority",
			"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In","values":["v"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]},"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{"matchExpressions":[{"key":"k","operator":"Exists"}]}}]},
			  "podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{"labelSelector":{"matchLabels":{"a":"b"}},"topologyKey":"kubernetes.io/hostname","namespaceSelector":{},"matchLabelKeys":["pod-template-hash"]}}]}},
			"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],
			"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"a":"b"}},"minDomains":2,"nodeAffinityPolicy":"Honor"}],
			"schedulingGates":[{"name":"example.com/gate"}],"readinessGates":[{"conditionType":"example.com/ready"}],"dnsConfig":{"nameservers":["1.1.1.1"],"options":[{"name":"ndots","value":"2"}]},
			"hostAliases":[{"ip":"127.0.0.1","hostnames":["foo"]}],"overhead":{"cpu":"10m"},"os":{"name":"linux"},"resourceClaims":[{"name":"gpu","resourceClaimName":"gpu-claim"}],
			"runtimeClassName":"runc","serviceAccountName":"default","automountServiceAccountToken":false,"nodeSelector":{"disk":"ssd"},"hostname":"h","subdomain":"s","setHostnameAsFQDN":false,"hostUsers":true,"shareProcessNamespace":false},
		  "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2024-01-01T00:00:00Z"}],"hostIP":"172.18.0.2","hostIPs":[{"ip":"172.18.0.2"}],"podIP":"10.244.0.5","podIPs":[{"ip":"10.244.0.5"}],"startTime":"2024-01-01T00:00:00Z","qosClass":"Burstable",
		    "containerStatuses":[{"name":"c","state":{"running":{"startedAt":"2024-01-01T00:00:01Z"}},"lastState":{"terminated":{"exitCode":1,"reason":"Error","startedAt":"2024-01-01T00:00:00Z","finishedAt":"2024-01-01T00:00:01Z","containerID":"containerd://x"}},"ready":true,"restartCount":1,"image":"nginx:1.27","imageID":"sha256:x","containerID":"containerd://y","started":true,"allocatedResources":{"cpu":"500m"},"resources":{"requests":{"cpu":"500m"}},"volumeMounts":[{"name":"e","mountPath":"/e"}],"user":{"linux":{"uid":0,"gid":0,"supplementalGroups":[0]}}}],
		    "resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"gpu-claim"}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			in, err := api.DecodeMap([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			res := resourceByKind(tt.kind)
			out, unknown, errs := res.Strategy.Canonicalize(api.DeepCopyJSON(in))
			if len(unknown) > 0 || len(errs) > 0 {
				t.Fatalf("unknown %v, errs %v", unknown, errs)
			}
			if p := subset(in, out, ""); p != "" {
				t.Errorf("input changed at %s", p)
			}
			var adds []string
			added(in, out, "", &adds)
			for _, a := range adds {
				if !slices.Contains(defaultedFields, lastKey(a)) {
					t.Errorf("unexpected added field %s", a)
				}
			}
			if errs := res.Strategy.ValidateCreate(context.Background(), out); len(errs) > 0 {
				t.Errorf("validation: %v", errs.ToError())
			}
		})
	}
}
