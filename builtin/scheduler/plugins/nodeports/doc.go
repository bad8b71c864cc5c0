// Package nodeports is the NodePorts filter: a pod's host ports must be free
// on the node (0.0.0.0 conflicts with every address).
package nodeports
