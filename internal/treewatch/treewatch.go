// Package treewatch tells which files of a directory tree were written or
// created, so that a follower of growing files (the collector's, of Codex's
// rollouts and Claude Code's transcripts) looks only at those instead of
// walking the whole tree at each look. On Linux it watches every directory
// of the tree with inotify; elsewhere New fails and the caller polls.
package treewatch

import "errors"

// ErrUnsupported is New's error where the platform offers no notification.
var ErrUnsupported = errors.New("treewatch: no file notification on this platform")

// Changes are what was written or created in the tree since the last Take.
type Changes struct {
	// Paths are the files written or created, and the directories created
	// (whose files may predate their watch: walk them).
	Paths []string
	// Overflow is true when notifications were lost (the kernel's queue
	// overflowed): walk the whole tree.
	Overflow bool
}
