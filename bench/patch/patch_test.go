package patch

import (
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/converge-dev/converge/framework/patch"
)

// A Deployment as the API server stores it (about 1.7 KiB of JSON).
const deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deployment.kubernetes.io/revision":"3"},"creationTimestamp":"2026-12-01T10:00:00Z","generation":3,"labels":{"app":"web","tier":"frontend"},"name":"web","namespace":"default","resourceVersion":"123456","uid":"5f0c7f7e-7c1a-4c37-9a53-1f7f2b0f4e11"},"spec":{"progressDeadlineSeconds":600,"replicas":3,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"web"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"args":["--port=8080","--log-level=info"],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"image":"nginx:1.25","imagePullPolicy":"IfNotPresent","name":"web","ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"100m","memory":"64Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","volumeMounts":[{"mountPath":"/cache","name":"cache"}]}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30,"volumes":[{"emptyDir":{},"name":"cache"}]}}},"status":{"availableReplicas":3,"conditions":[{"lastTransitionTime":"2026-12-01T10:00:05Z","lastUpdateTime":"2026-12-01T10:00:05Z","message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"}],"observedGeneration":3,"readyReplicas":3,"replicas":3,"updatedReplicas":3}}`

var cases = []struct {
	name        string
	doc         string
	json, merge string
}{
	{
		name: "deployment",
		doc:  deployment,
		// kubectl patch --type=json / an admission webhook's patch.
		json: `[{"op":"test","path":"/metadata/name","value":"web"},{"op":"add","path":"/metadata/labels/version","value":"v2"},{"op":"replace","path":"/spec/replicas","value":5},{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"C","value":"3"}},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.27"}]`,
		// kubectl patch --type=merge / a controller's merge patch.
		merge: `{"metadata":{"labels":{"version":"v2","tier":null},"annotations":{"example.com/owner":"team-a"}},"spec":{"replicas":5,"template":{"spec":{"nodeSelector":{"disk":"ssd"}}}}}`,
	},
	{
		name:  "scale",
		doc:   deployment,
		json:  `[{"op":"replace","path":"/spec/replicas","value":5}]`,
		merge: `{"spec":{"replicas":5}}`,
	},
}

type peer struct {
	name  string
	json  func(doc, p []byte) ([]byte, error)
	merge func(doc, p []byte) ([]byte, error)
}

var peers = []peer{
	{"converge", patch.JSONPatch, patch.MergePatch},
	{"evanphx", func(doc, p []byte) ([]byte, error) {
		// As k8s.io/apiserver's patch handler does: decode, then apply.
		ops, err := jsonpatch.DecodePatch(p)
		if err != nil {
			return nil, err
		}
		return ops.Apply(doc)
	}, jsonpatch.MergePatch},
}

func BenchmarkJSONPatch(b *testing.B) {
	for _, c := range cases {
		for _, p := range peers {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				run(b, p.json, c.doc, c.json)
			})
		}
	}
}

func BenchmarkMergePatch(b *testing.B) {
	for _, c := range cases {
		for _, p := range peers {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				run(b, p.merge, c.doc, c.merge)
			})
		}
	}
}

func run(b *testing.B, apply func(doc, p []byte) ([]byte, error), doc, p string) {
	d, pb := []byte(doc), []byte(p)
	b.ReportAllocs()
	b.SetBytes(int64(len(d)))
	for b.Loop() {
		if _, err := apply(d, pb); err != nil {
			b.Fatal(err)
		}
	}
}
