// Package kubeconfig builds a rest.Config from the places Kubernetes clients look:
// a kubeconfig file, the KUBECONFIG environment variable, the in-cluster service
// account, and ~/.kube/config.
//
// LoadKubeconfig parses one kubeconfig file (clusters, users, contexts,
// current-context; base64 *-data fields; relative file paths resolved against the
// file's directory). FromEnvironment applies the usual precedence:
//
//	--kubeconfig flag > $KUBECONFIG > in-cluster service account > ~/.kube/config
//
// When $KUBECONFIG lists several files, they are merged the way kubectl does: the
// first file to define a cluster, user, context or current-context wins.
//
// A cluster may list more API servers than its server in the
// servers.converge.dev extension (see ServersExtension); they become
// rest.Config.Hosts, the client's failover list.
//
// Errors say what to fix: the file that failed, the context, cluster or user that
// is missing, and the contexts that do exist. Nothing here reads process-global
// state except through the Environment passed in (DefaultEnvironment for the real
// process).
package kubeconfig
