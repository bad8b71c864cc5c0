package v1_test

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/api"
)

// The storage API kinds (core/v1 persistentvolumes and the storage.k8s.io/v1
// group) through the real API server: create (with defaults), list, merge
// patch, status patch where the kind has a status subresource, delete, and a
// 422 for an invalid object.
var _ = Describe("Storage API kinds", func() {
	type kind struct {
		base     string // collection path
		name     string
		body     string // a valid object
		defaults map[string]any
		status   string // merge patch for /status, "" when there is none
		invalid  string // an invalid object
		badField string // the field the invalid object's error names
	}
	DescribeTable("create, list, patch, delete",
		func(ctx SpecContext, k kind) {
			code, out := send(ctx, http.MethodPost, k.base, k.body)
			Expect(code).To(Equal(http.StatusCreated), "%v", out)
			for path, want := range k.defaults {
				got, _ := api.NestedField(out, strings.Split(path, ".")...)
				Expect(got).To(Equal(want), path)
			}
			code, out = send(ctx, http.MethodGet, k.base+"?labelSelector=app%3Dstorageapi", "")
			Expect(code).To(Equal(http.StatusOK), "%v", out)
			Expect(api.NestedSlice(out, "items")).To(HaveLen(1))

			obj := k.base + "/" + k.name
			code, out = sendAs(ctx, http.MethodPatch, obj, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"patched":"true"}}}`))
			Expect(code).To(Equal(http.StatusOK), "%v", out)
			Expect(api.NestedString(out, "metadata", "labels", "patched")).To(Equal("true"))
			if k.status != "" {
				code, out = sendAs(ctx, http.MethodPatch, obj+"/status", "application/merge-patch+json", []byte(k.status))
				Expect(code).To(Equal(http.StatusOK), "%v", out)
				code, got := send(ctx, http.MethodGet, obj+"/status", "")
				Expect(code).To(Equal(http.StatusOK), "%v", got)
				Expect(got["status"]).To(Equal(out["status"]))
			}

			code, out = send(ctx, http.MethodPost, k.base, k.invalid)
			Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
			Expect(out["reason"]).To(Equal("Invalid"))
			Expect(api.NestedSlice(out, "details", "causes")).To(ContainElement(HaveKeyWithValue("field", k.badField)))

			code, out = send(ctx, http.MethodDelete, obj, "")
			Expect(code).To(Equal(http.StatusOK), "%v", out)
			code, _ = send(ctx, http.MethodGet, obj, "")
			Expect(code).To(Equal(http.StatusNotFound))
		},
		Entry("PersistentVolume", kind{
			base: "/api/v1/persistentvolumes", name: "pv-api",
			body: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-api","labels":{"app":"storageapi"}},
				"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"storageClassName":"manual",
				"csi":{"driver":"csi.example.com","volumeHandle":"h1"}}}`,
			defaults: map[string]any{"spec.persistentVolumeReclaimPolicy": "Retain", "spec.volumeMode": "Filesystem", "status.phase": "Pending"},
			status:   `{"status":{"message":"StatusPatched","reason":"E2E patchStatus"}}`,
			invalid: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-bad"},
				"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp/x"},"nfs":{"server":"s","path":"/x"}}}`,
			badField: "spec",
		}),
		Entry("StorageClass", kind{
			base: "/apis/storage.k8s.io/v1/storageclasses", name: "sc-api",
			body:     `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"sc-api","labels":{"app":"storageapi"}},"provisioner":"kubernetes.io/no-provisioner"}`,
			defaults: map[string]any{"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
			invalid:  `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"sc-bad"},"provisioner":"p","reclaimPolicy":"Recycle"}`,
			badField: "reclaimPolicy",
		}),
		Entry("CSIDriver", kind{
			base: "/apis/storage.k8s.io/v1/csidrivers", name: "csi.example.com",
			body:     `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"csi.example.com","labels":{"app":"storageapi"}},"spec":{}}`,
			defaults: map[string]any{"spec.attachRequired": true, "spec.fsGroupPolicy": "ReadWriteOnceWithFSType", "spec.volumeLifecycleModes": []any{"Persistent"}},
			invalid:  `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"csi2.example.com"},"spec":{"volumeLifecycleModes":["Sometimes"]}}`,
			badField: "spec.volumeLifecycleModes",
		}),
		Entry("CSINode", kind{
			base: "/apis/storage.k8s.io/v1/csinodes", name: "node-api",
			body:     `{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"node-api","labels":{"app":"storageapi"}},"spec":{"drivers":[{"name":"d","nodeID":"n"}]}}`,
			invalid:  `{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"node-bad"},"spec":{"drivers":[{"name":"d"}]}}`,
			badField: "spec.drivers[0].nodeID",
		}),
		Entry("CSIStorageCapacity", kind{
			base: "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities", name: "csc-api",
			body:     `{"apiVersion":"storage.k8s.io/v1","kind":"CSIStorageCapacity","metadata":{"name":"csc-api","labels":{"app":"storageapi"}},"storageClassName":"sc","capacity":"1Gi"}`,
			invalid:  `{"apiVersion":"storage.k8s.io/v1","kind":"CSIStorageCapacity","metadata":{"name":"csc-bad"}}`,
			badField: "storageClassName",
		}),
		Entry("VolumeAttachment", kind{
			base: "/apis/storage.k8s.io/v1/volumeattachments", name: "va-api",
			body: `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","metadata":{"name":"va-api","labels":{"app":"storageapi"}},
				"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{"persistentVolumeName":"pv1"}}}`,
			status:   `{"status":{"attached":true}}`,
			invalid:  `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","metadata":{"name":"va-bad"},"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{}}}`,
			badField: "spec.source",
		}),
		Entry("VolumeAttributesClass", kind{
			base: "/apis/storage.k8s.io/v1/volumeattributesclasses", name: "vac-api",
			body:     `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttributesClass","metadata":{"name":"vac-api","labels":{"app":"storageapi"}},"driverName":"csi.example.com","parameters":{"iops":"100"}}`,
			invalid:  `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttributesClass","metadata":{"name":"vac-bad"},"driverName":"csi.example.com"}`,
			badField: "parameters",
		}),
	)

	It("keeps a VolumeAttachment's spec immutable and ignores status on the main endpoint", func(ctx SpecContext) {
		code, out := send(ctx, http.MethodPost, "/apis/storage.k8s.io/v1/volumeattachments",
			`{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","metadata":{"name":"va-imm"},
			"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{"persistentVolumeName":"pv1"}},"status":{"attached":true}}`)
		Expect(code).To(Equal(http.StatusCreated), "%v", out)
		attached, _ := api.NestedField(out, "status", "attached")
		Expect(attached).NotTo(Equal(true))
		code, out = sendAs(ctx, http.MethodPatch, "/apis/storage.k8s.io/v1/volumeattachments/va-imm", "application/merge-patch+json",
			[]byte(`{"spec":{"nodeName":"n2"}}`))
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
	})
})
