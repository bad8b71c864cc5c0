package v1

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"reflect"
	"strings"

	"github.com/converge-dev/converge/framework/api/field"
)

var knownUsages = func() map[KeyUsage]bool {
	m := map[KeyUsage]bool{}
	for _, u := range []KeyUsage{UsageSigning, UsageDigitalSignature, UsageContentCommitment, UsageKeyEncipherment,
		UsageKeyAgreement, UsageDataEncipherment, UsageCertSign, UsageCRLSign, UsageEncipherOnly, UsageDecipherOnly,
		UsageAny, UsageServerAuth, UsageClientAuth, UsageCodeSigning, UsageEmailProtection, UsageSMIME,
		UsageIPsecEndSystem, UsageIPsecTunnel, UsageIPsecUser, UsageTimestamping, UsageOCSPSigning,
		UsageMicrosoftSGC, UsageNetscapeSGC} {
		m[u] = true
	}
	return m
}()

// ParseRequest decodes a PEM PKCS#10 request and checks its signature.
func ParseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errNotPEM
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, err
	}
	return csr, nil
}

type constError string

func (e constError) Error() string { return string(e) }

const errNotPEM = constError(`PEM block type must be CERTIFICATE REQUEST`)

// ValidateCertificateSigningRequest checks a new request.
func ValidateCertificateSigningRequest(c *CertificateSigningRequest) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if len(c.Spec.Request) == 0 {
		errs = append(errs, field.Required(spec.Child("request"), ""))
	} else if _, err := ParseRequest(c.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), "<request>", err.Error()))
	}
	if c.Spec.SignerName == "" {
		errs = append(errs, field.Required(spec.Child("signerName"), ""))
	} else if domain, path, ok := strings.Cut(c.Spec.SignerName, "/"); !ok || domain == "" || path == "" || strings.Contains(domain, " ") {
		errs = append(errs, field.Invalid(spec.Child("signerName"), c.Spec.SignerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"))
	}
	if c.Spec.ExpirationSeconds != nil && *c.Spec.ExpirationSeconds < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *c.Spec.ExpirationSeconds, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	if len(c.Spec.Usages) == 0 {
		errs = append(errs, field.Required(spec.Child("usages"), ""))
	}
	seen := map[KeyUsage]bool{}
	for i, u := range c.Spec.Usages {
		switch {
		case !knownUsages[u]:
			valid := make([]string, 0, len(knownUsages))
			for k := range knownUsages {
				valid = append(valid, string(k))
			}
			errs = append(errs, field.NotSupported(spec.Child("usages").Index(i), u, valid))
		case seen[u]:
			errs = append(errs, field.Duplicate(spec.Child("usages").Index(i), u))
		}
		seen[u] = true
	}
	return append(errs, validateStatus(c)...)
}

func validateStatus(c *CertificateSigningRequest) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "conditions")
	seen := map[RequestConditionType]bool{}
	for i, cond := range c.Status.Conditions {
		switch {
		case cond.Type == "":
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		case seen[cond.Type] && (cond.Type == CertificateApproved || cond.Type == CertificateDenied || cond.Type == CertificateFailed):
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), cond.Type))
		}
		seen[cond.Type] = true
		switch cond.Status {
		case ConditionTrue, ConditionFalse, ConditionUnknown:
		case "":
			errs = append(errs, field.Required(p.Index(i).Child("status"), ""))
		default:
			errs = append(errs, field.NotSupported(p.Index(i).Child("status"), cond.Status, []string{"True", "False", "Unknown"}))
		}
	}
	if seen[CertificateApproved] && seen[CertificateDenied] {
		errs = append(errs, field.Invalid(p, "", "Approved and Denied conditions are mutually exclusive"))
	}
	if len(c.Status.Certificate) > 0 {
		if !seen[CertificateApproved] {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", "certificate can only be set on approved requests"))
		} else if block, _ := pem.Decode(c.Status.Certificate); block == nil || block.Type != "CERTIFICATE" {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", "must contain at least one CERTIFICATE PEM block"))
		}
	}
	return errs
}

// ValidateCertificateSigningRequestUpdate checks an update: the spec is
// immutable, Approved and Denied conditions stay, the certificate once issued
// does not change.
func ValidateCertificateSigningRequestUpdate(c, old *CertificateSigningRequest) field.ErrorList {
	errs := validateStatus(c)
	if !reflect.DeepEqual(normalizedSpec(c.Spec), normalizedSpec(old.Spec)) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "field is immutable"))
	}
	for _, t := range []RequestConditionType{CertificateApproved, CertificateDenied, CertificateFailed} {
		if old.Condition(t) != nil && c.Condition(t) == nil {
			errs = append(errs, field.Forbidden(field.NewPath("status", "conditions"), "updates may not remove a condition of type \""+string(t)+"\""))
		}
	}
	if len(old.Status.Certificate) > 0 && !bytes.Equal(old.Status.Certificate, c.Status.Certificate) {
		errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
	}
	return errs
}

func normalizedSpec(s CertificateSigningRequestSpec) CertificateSigningRequestSpec {
	if len(s.Groups) == 0 {
		s.Groups = nil
	}
	if len(s.Extra) == 0 {
		s.Extra = nil
	}
	if len(s.Usages) == 0 {
		s.Usages = nil
	}
	return s
}
