// Package helm installs, upgrades and rolls back Helm charts against a default,
// secure Converge control plane with Helm 4's Go SDK (helm.sh/helm/v4, built in
// the bench module only), as `helm install` does by default: server-side apply
// under the field manager "helm". Its tests are part of `make compat`:
//
//	cd bench && go test -count=1 -v ./helm/
package helm
