// Package balancedallocation is the NodeResourcesBalancedAllocation score:
// it favours nodes whose cpu and memory utilisation would be balanced after
// placing the pod (score = (1 − standard deviation of the utilisation
// fractions) · 100).
package balancedallocation
