// Package nodeaffinity is the NodeAffinity plugin: Filter enforces
// spec.nodeSelector and required node affinity (matchExpressions and
// matchFields); PreFilter narrows the nodes when every term pins
// metadata.name; Score sums the weights of the matching preferred terms,
// normalised to [0, 100].
package nodeaffinity
