package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestValidateAPIService(t *testing.T) {
	t.Parallel()
	port := int32(443)
	local := func(name, group, version string) *APIService {
		return &APIService{ObjectMeta: api.ObjectMeta{Name: name},
			Spec: APIServiceSpec{Group: group, Version: version, GroupPriorityMinimum: 100, VersionPriority: 10}}
	}
	for _, tc := range []struct {
		name   string
		s      *APIService
		errors []string
	}{
		{"local core", local("v1.", "", "v1"), nil},
		{"local group", local("v1.apps", "apps", "v1"), nil},
		{"name mismatch", local("v1.apps", "apps", "v2"), []string{`metadata.name: Invalid value: "v1.apps"`}},
		{"empty group needs v1", local("v2.", "", "v2"), []string{"spec.group: Required value"}},
		{"bad version", local("V1.apps", "apps", "V1"), []string{"spec.version: Invalid value"}},
		{"priorities", func() *APIService {
			s := local("v1.apps", "apps", "v1")
			s.Spec.GroupPriorityMinimum, s.Spec.VersionPriority = 0, 1001
			return s
		}(), []string{"spec.groupPriorityMinimum: Invalid value: 0", "spec.versionPriority: Invalid value: 1001"}},
		{"local with a CA", func() *APIService {
			s := local("v1.apps", "apps", "v1")
			s.Spec.CABundle = []byte("x")
			return s
		}(), []string{"spec.caBundle: Invalid value"}},
		{"service", func() *APIService {
			s := local("v1beta1.metrics.k8s.io", "metrics.k8s.io", "v1beta1")
			s.Spec.Service = &ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: &port}
			s.Spec.InsecureSkipTLSVerify = true
			return s
		}(), nil},
		{"service without a name, CA and insecure", func() *APIService {
			s := local("v1beta1.metrics.k8s.io", "metrics.k8s.io", "v1beta1")
			s.Spec.Service = &ServiceReference{Namespace: "kube-system"}
			s.Spec.InsecureSkipTLSVerify, s.Spec.CABundle = true, []byte("x")
			return s
		}(), []string{"spec.service.name: Required value", "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateAPIService(tc.s)
			if len(errs) != len(tc.errors) {
				t.Fatalf("errors %v, want %d: %v", errs, len(tc.errors), tc.errors)
			}
			for i, want := range tc.errors {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), want)
				}
			}
		})
	}
	if msgs := validateName("v1.", false); msgs != nil {
		t.Errorf("validateName(v1.) = %v", msgs)
	}
	if msgs := validateName("bad_name", false); msgs == nil {
		t.Error("validateName(bad_name) accepted it")
	}
}
