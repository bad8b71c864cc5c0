package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is authentication.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}

// BoundObjectReference ties a token to an object (a Pod or Secret).
type BoundObjectReference struct {
	Kind       string `json:"kind,omitempty" protobuf:"bytes,1,opt,name=kind"`
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,2,opt,name=aPIVersion"`
	Name       string `json:"name,omitempty" protobuf:"bytes,3,opt,name=name"`
	UID        string `json:"uid,omitempty" protobuf:"bytes,4,opt,name=uID"`
}

// TokenRequestSpec asks for a token.
type TokenRequestSpec struct {
	Audiences         []string              `json:"audiences" protobuf:"bytes,1,rep,name=audiences"`
	ExpirationSeconds *int64                `json:"expirationSeconds" protobuf:"varint,4,opt,name=expirationSeconds"`
	BoundObjectRef    *BoundObjectReference `json:"boundObjectRef" protobuf:"bytes,3,opt,name=boundObjectRef"`
}

// TokenRequestStatus carries the issued token.
type TokenRequestStatus struct {
	Token               string   `json:"token" protobuf:"bytes,1,opt,name=token"`
	ExpirationTimestamp api.Time `json:"expirationTimestamp" protobuf:"bytes,2,opt,name=expirationTimestamp"`
}

// TokenRequest requests a token for a ServiceAccount (POST
// /api/v1/namespaces/NS/serviceaccounts/NAME/token; kubectl create token).
type TokenRequest struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           TokenRequestSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         TokenRequestStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// UserInfo describes an authenticated user.
type UserInfo struct {
	Username string              `json:"username,omitempty" protobuf:"bytes,1,opt,name=username"`
	UID      string              `json:"uid,omitempty" protobuf:"bytes,2,opt,name=uid"`
	Groups   []string            `json:"groups,omitempty" protobuf:"bytes,3,rep,name=groups"`
	Extra    map[string][]string `json:"extra,omitempty" protobuf:"bytes,4,rep,name=extra"`
}

// TokenReviewSpec holds the token to check.
type TokenReviewSpec struct {
	Token     string   `json:"token,omitempty" protobuf:"bytes,1,opt,name=token"`
	Audiences []string `json:"audiences,omitempty" protobuf:"bytes,2,rep,name=audiences"`
}

// TokenReviewStatus is the answer.
type TokenReviewStatus struct {
	Authenticated bool     `json:"authenticated,omitempty" protobuf:"varint,1,opt,name=authenticated"`
	User          UserInfo `json:"user,omitempty" protobuf:"bytes,2,opt,name=user"`
	Audiences     []string `json:"audiences,omitempty" protobuf:"bytes,4,rep,name=audiences"`
	Error         string   `json:"error,omitempty" protobuf:"bytes,3,opt,name=error"`
}

// TokenReview asks the server to authenticate a token.
type TokenReview struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           TokenReviewSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         TokenReviewStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// SelfSubjectReviewStatus holds the caller's user information.
type SelfSubjectReviewStatus struct {
	UserInfo UserInfo `json:"userInfo,omitempty" protobuf:"bytes,1,opt,name=userInfo"`
}

// SelfSubjectReview asks the server who the caller is (kubectl auth whoami):
// the answer's status.userInfo is the user the request authenticated as.
type SelfSubjectReview struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Status         SelfSubjectReviewStatus `json:"status,omitempty" protobuf:"bytes,2,opt,name=status"`
}
