package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is certificates.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "certificates.k8s.io", Version: "v1"}

// Well-known signers.
const (
	// KubeAPIServerClientSignerName signs client certificates the API server
	// honours (approved manually).
	KubeAPIServerClientSignerName = "kubernetes.io/kube-apiserver-client"
	// KubeAPIServerClientKubeletSignerName signs node agents' client
	// certificates (system:node:NAME in system:nodes; auto-approved for
	// bootstrap tokens and for nodes renewing their own).
	KubeAPIServerClientKubeletSignerName = "kubernetes.io/kube-apiserver-client-kubelet"
	// KubeletServingSignerName signs node agents' serving certificates.
	KubeletServingSignerName = "kubernetes.io/kubelet-serving"
)

// CertificateSigningRequest asks a signer for a certificate.
type CertificateSigningRequest struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           CertificateSigningRequestSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         CertificateSigningRequestStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// CertificateSigningRequestSpec is the request; it is immutable.
type CertificateSigningRequestSpec struct {
	// Request is a PEM "CERTIFICATE REQUEST" (PKCS#10).
	Request []byte `json:"request" protobuf:"bytes,1,opt,name=request"`
	// SignerName names the signer (e.g. kubernetes.io/kube-apiserver-client-kubelet).
	SignerName string `json:"signerName" protobuf:"bytes,7,opt,name=signerName"`
	// ExpirationSeconds asks for a validity (at least 600).
	ExpirationSeconds *int32 `json:"expirationSeconds,omitempty" protobuf:"varint,8,opt,name=expirationSeconds"`
	// Usages are the requested key usages.
	Usages []KeyUsage `json:"usages,omitempty" protobuf:"bytes,5,opt,name=usages"`
	// Username, UID, Groups and Extra are the requester, set by the API server.
	Username string   `json:"username,omitempty" protobuf:"bytes,2,opt,name=username"`
	UID      string   `json:"uid,omitempty" protobuf:"bytes,3,opt,name=uid"`
	Groups   []string `json:"groups,omitempty" protobuf:"bytes,4,rep,name=groups"`
	// Extra is JSON-only here (its protobuf form is a map of wrapper
	// messages); the API server sets it anyway.
	Extra map[string][]string `json:"extra,omitempty"`
}

// CertificateSigningRequestStatus holds the decision and the certificate.
type CertificateSigningRequestStatus struct {
	Conditions []CertificateSigningRequestCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`
	// Certificate is the issued PEM certificate (chain), set by the signer.
	Certificate []byte `json:"certificate,omitempty" protobuf:"bytes,2,opt,name=certificate"`
}

// RequestConditionType is the type of a condition.
type RequestConditionType string

// Condition types.
const (
	CertificateApproved RequestConditionType = "Approved"
	CertificateDenied   RequestConditionType = "Denied"
	CertificateFailed   RequestConditionType = "Failed"
)

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

// Condition statuses.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// CertificateSigningRequestCondition is one condition.
type CertificateSigningRequestCondition struct {
	Type               RequestConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=RequestConditionType"`
	Status             ConditionStatus      `json:"status" protobuf:"bytes,6,opt,name=status,casttype=ConditionStatus"`
	Reason             string               `json:"reason,omitempty" protobuf:"bytes,2,opt,name=reason"`
	Message            string               `json:"message,omitempty" protobuf:"bytes,3,opt,name=message"`
	LastUpdateTime     api.Time             `json:"lastUpdateTime,omitempty" protobuf:"bytes,4,opt,name=lastUpdateTime"`
	LastTransitionTime api.Time             `json:"lastTransitionTime,omitempty" protobuf:"bytes,5,opt,name=lastTransitionTime"`
}

// KeyUsage is a requested key usage ("client auth", "digital signature", ...).
type KeyUsage string

// Key usages.
const (
	UsageSigning           KeyUsage = "signing"
	UsageDigitalSignature  KeyUsage = "digital signature"
	UsageContentCommitment KeyUsage = "content commitment"
	UsageKeyEncipherment   KeyUsage = "key encipherment"
	UsageKeyAgreement      KeyUsage = "key agreement"
	UsageDataEncipherment  KeyUsage = "data encipherment"
	UsageCertSign          KeyUsage = "cert sign"
	UsageCRLSign           KeyUsage = "crl sign"
	UsageEncipherOnly      KeyUsage = "encipher only"
	UsageDecipherOnly      KeyUsage = "decipher only"
	UsageAny               KeyUsage = "any"
	UsageServerAuth        KeyUsage = "server auth"
	UsageClientAuth        KeyUsage = "client auth"
	UsageCodeSigning       KeyUsage = "code signing"
	UsageEmailProtection   KeyUsage = "email protection"
	UsageSMIME             KeyUsage = "s/mime"
	UsageIPsecEndSystem    KeyUsage = "ipsec end system"
	UsageIPsecTunnel       KeyUsage = "ipsec tunnel"
	UsageIPsecUser         KeyUsage = "ipsec user"
	UsageTimestamping      KeyUsage = "timestamping"
	UsageOCSPSigning       KeyUsage = "ocsp signing"
	UsageMicrosoftSGC      KeyUsage = "microsoft sgc"
	UsageNetscapeSGC       KeyUsage = "netscape sgc"
)

// CertificateSigningRequestList is a list of requests.
type CertificateSigningRequestList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []CertificateSigningRequest `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Condition returns the condition of type t, nil if absent.
func (c *CertificateSigningRequest) Condition(t RequestConditionType) *CertificateSigningRequestCondition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == t {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

// IsApproved reports an Approved condition (and no Denied one).
func (c *CertificateSigningRequest) IsApproved() bool {
	return c.Condition(CertificateApproved) != nil && c.Condition(CertificateDenied) == nil
}

// IsFinished reports a Denied or Failed condition or an issued certificate.
func (c *CertificateSigningRequest) IsFinished() bool {
	return c.Condition(CertificateDenied) != nil || c.Condition(CertificateFailed) != nil || len(c.Status.Certificate) > 0
}
