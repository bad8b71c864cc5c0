// Package nodename is the NodeName filter: a pod that names a node in
// spec.nodeName only fits that node.
package nodename
