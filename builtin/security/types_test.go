package security_test

import (
	"reflect"
	"testing"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// TestProtobufSchemas checks that the protobuf decoder accepts the struct tags
// of every kind this issue added (typed clients send protobuf).
func TestProtobufSchemas(t *testing.T) {
	t.Parallel()
	var rs []*registry.Resource
	rs = append(rs, rbacv1.Resources()...)
	rs = append(rs, authorizationv1.Resources()...)
	rs = append(rs, admissionregistrationv1.Resources()...)
	rs = append(rs, authenticationv1.Resources()...)
	types := []reflect.Type{reflect.TypeFor[authenticationv1.TokenRequest]()}
	for _, r := range rs {
		types = append(types, r.Type)
	}
	dec := &protobuf.Decoder{}
	for _, typ := range types {
		if err := dec.DecodeInto(nil, reflect.New(typ).Interface()); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	s := scheme.New()
	for _, add := range []func(*scheme.Scheme) error{rbacv1.AddToScheme, authorizationv1.AddToScheme, admissionregistrationv1.AddToScheme, authenticationv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Error(err)
		}
	}
}
