//go:build unix

package policyfile

import (
	"fmt"
	"os"
	"syscall"
)

// Foreign says why the project policy file at path must not apply: it is
// owned by a user other than this process's (or root). A project file
// steers every agent run below its directory — it may allow calls and
// rewrite their input — so one that another user could have put in a
// shared directory (/tmp, a checkout someone else owns) is not taken, as
// git refuses a repository another user owns. "" when it may apply, or
// cannot be read (the reader says so).
func Foreign(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if uid := os.Getuid(); int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Sprintf("owned by uid %d, not by this user (uid %d) or root: not applied, as git refuses a repository another user owns (chown it, or move its rules to a file of yours)", st.Uid, uid)
	}
	return ""
}
