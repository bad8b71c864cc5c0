// Package imagelocality is the ImageLocality score: nodes that already have
// the pod's container images score higher, weighted by image size and by how
// widely the image is spread (to avoid piling pods on one node).
package imagelocality
