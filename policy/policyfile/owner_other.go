//go:build !unix

package policyfile

// Foreign is the check of owner_unix.go, which needs Unix file ownership:
// elsewhere every project file may apply.
func Foreign(path string) string { return "" }
