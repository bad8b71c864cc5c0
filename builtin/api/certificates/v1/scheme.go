package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers CertificateSigningRequest and its list in s under
// certificates.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&CertificateSigningRequest{},
		&CertificateSigningRequestList{},
	)
}
