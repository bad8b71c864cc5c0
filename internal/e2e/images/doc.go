// Package images is the end-to-end acceptance of real images on the bundled
// control plane: `converge up --runtime containerd` (its own supervised
// containerd, CNI pod networking, cluster DNS) against real registries
// (Debian's Distribution registry on loopback, plain and behind htpasswd), with
// images built by `converge image build` and pushed by `converge image push`,
// driven by the real kubectl as a user would: create deployment, expose, curl
// through the ClusterIP and the NodePort (also at the node's InternalIP, with a
// hostPort, from the host and from a pod), set image (a rollout that pulls), a
// pull secret, ImagePullBackOff with the registry's words, DNS and pod-to-pod
// traffic from inside busybox pods.
package images
