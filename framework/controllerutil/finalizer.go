package controllerutil

import (
	"slices"

	"github.com/converge-dev/converge/framework/api"
)

// AddFinalizer adds finalizer to obj unless present and reports whether it did.
func AddFinalizer(obj api.Object, finalizer string) bool {
	fs := obj.GetFinalizers()
	if slices.Contains(fs, finalizer) {
		return false
	}
	obj.SetFinalizers(append(slices.Clone(fs), finalizer))
	return true
}

// RemoveFinalizer removes every occurrence of finalizer from obj and reports
// whether there was one.
func RemoveFinalizer(obj api.Object, finalizer string) bool {
	fs := obj.GetFinalizers()
	if !slices.Contains(fs, finalizer) {
		return false
	}
	kept := slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == finalizer })
	if len(kept) == 0 {
		kept = nil
	}
	obj.SetFinalizers(kept)
	return true
}

// ContainsFinalizer reports whether obj has finalizer.
func ContainsFinalizer(obj api.Object, finalizer string) bool {
	return slices.Contains(obj.GetFinalizers(), finalizer)
}
