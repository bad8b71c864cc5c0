package node

import (
	"slices"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
)

func TestPullPolicy(t *testing.T) {
	for _, c := range []struct {
		image string
		set   corev1.PullPolicy
		want  corev1.PullPolicy
	}{
		{"busybox", "", corev1.PullAlways},
		{"busybox:latest", "", corev1.PullAlways},
		{"busybox:1.36", "", corev1.PullIfNotPresent},
		{"127.0.0.1:5000/a/b", "", corev1.PullAlways},
		{"127.0.0.1:5000/a/b:v1", "", corev1.PullIfNotPresent},
		{"busybox@sha256:abc", "", corev1.PullIfNotPresent},
		{"busybox", corev1.PullNever, corev1.PullNever},
	} {
		if got := pullPolicy(corev1.Container{Image: c.image, ImagePullPolicy: c.set}); got != c.want {
			t.Errorf("pullPolicy(%q, %q) = %q, want %q", c.image, c.set, got, c.want)
		}
	}
}

func TestDockerCredentials(t *testing.T) {
	for _, c := range []struct {
		name    string
		secret  corev1.Secret
		want    []cri.Credential
		wantErr bool
	}{
		{"dockerconfigjson with auth", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
			".dockerconfigjson": []byte(`{"auths":{"127.0.0.1:5000":{"auth":"YWxpY2U6czNjcmV0"},"https://index.docker.io/v1/":{"username":"bob","password":"pw"}}}`)}},
			[]cri.Credential{{Host: "127.0.0.1:5000", Username: "alice", Password: "s3cret"}, {Host: "https://index.docker.io/v1/", Username: "bob", Password: "pw"}}, false},
		{"dockercfg", corev1.Secret{Type: corev1.SecretTypeDockercfg, Data: map[string][]byte{
			".dockercfg": []byte(`{"registry.example.com":{"username":"u","password":"p","email":"u@example.com"}}`)}},
			[]cri.Credential{{Host: "registry.example.com", Username: "u", Password: "p"}}, false},
		{"identity token", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
			".dockerconfigjson": []byte(`{"auths":{"r.example.com":{"identitytoken":"tok"}}}`)}},
			[]cri.Credential{{Host: "r.example.com", IdentityToken: "tok"}}, false},
		{"opaque", corev1.Secret{Type: corev1.SecretTypeOpaque}, nil, true},
		{"bad json", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("{")}}, nil, true},
		{"bad auth", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
			".dockerconfigjson": []byte(`{"auths":{"h":{"auth":"!!"}}}`)}}, nil, true},
	} {
		got, err := dockerCredentials(&c.secret)
		if (err != nil) != c.wantErr || !slices.Equal(got, c.want) {
			t.Errorf("%s: dockerCredentials = %+v, %v; want %+v (error %v)", c.name, got, err, c.want, c.wantErr)
		}
	}
}
