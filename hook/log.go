package hook

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxLogBytes is where a log of the home (hook.log, rejected.jsonl, and
// serve.log and forward.log of the processes the hook starts) is rotated
// to <name>.1, so a broken setup that fails on every event, or a collector
// that runs for months, cannot fill the disk.
const maxLogBytes = 8 << 20

// rotateLog renames the log at path to path.1, replacing the one before,
// once it holds more than maxLogBytes, and reports whether it did. Best
// effort, as the logs are.
func rotateLog(path string) bool {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogBytes {
		return os.Rename(path, path+".1") == nil
	}
	return false
}

// ownLogEvery is how often RotateOwnLog looks at the size of the log: one
// fstat(2) a minute, and a log grows by far less than maxLogBytes in one.
var ownLogEvery = time.Minute

// RotateOwnLog keeps the log of a process that runs for months, name in
// home (ServeLog of `hookwatch serve`, ForwardLog of `hookwatch forward`),
// rotated as rotateLog rotates the home's other logs, while the process
// runs: at once, then every ownLogEvery until ctx is done. A hook rotates
// the log only when it starts the process, and launchd never does.
//
// It acts only while the process's standard error is that very file (the
// same inode), as a hook and the launchd agent set it up: a terminal, a
// pipe, the journal or a file elsewhere is someone else's to rotate, and a
// log renamed by someone else is left to them.
func RotateOwnLog(ctx context.Context, home, name string) {
	path := filepath.Join(home, name)
	t := time.NewTicker(ownLogEvery)
	defer t.Stop()
	for {
		rotateStderr(path)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rotateStderr rotates the log at path with rotateLog when it is this
// process's standard error, then points standard error, and standard output
// when it is the log too, at a new file at path, opened for appending as
// spawnDetached opens it. It reports whether it rotated.
//
// The log is renamed, not copied and truncated: each write lands whole in
// the old file (now path.1) or in the new one, where a line written between
// a copy and a truncation would be lost, and nothing is copied.
func rotateStderr(path string) bool {
	var stderr syscall.Stat_t
	if syscall.Fstat(2, &stderr) != nil || stderr.Size <= maxLogBytes {
		return false
	}
	if !sameFile(path, stderr) {
		return false
	}
	var stdout syscall.Stat_t
	stdoutToo := syscall.Fstat(1, &stdout) == nil && stdout.Dev == stderr.Dev && stdout.Ino == stderr.Ino
	if !rotateLog(path) {
		return false
	}
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return true // the process writes on into path.1, as before
	}
	defer syscall.Close(fd)
	// dupOnto is atomic: a write is never without a file to land in.
	_ = dupOnto(fd, 2)
	if stdoutToo {
		_ = dupOnto(fd, 1)
	}
	return true
}

// sameFile reports whether the file at path is the one st describes.
func sameFile(path string, st syscall.Stat_t) bool {
	var onDisk syscall.Stat_t
	return syscall.Stat(path, &onDisk) == nil && onDisk.Dev == st.Dev && onDisk.Ino == st.Ino
}

// log appends one line describing a failed or degraded run to hook.log. It
// is best effort: the hook has nowhere else to report.
func (cfg Config) log(start time.Time, name, session string, err error) {
	path := filepath.Join(cfg.Home, "hook.log")
	rotateLog(path)
	if mkErr := os.MkdirAll(cfg.Home, 0o700); mkErr != nil {
		return
	}
	f, openErr := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if openErr != nil {
		return
	}
	defer f.Close()
	var b strings.Builder
	b.WriteString(start.UTC().Format(time.RFC3339Nano))
	b.WriteString(" event=")
	b.WriteString(strconv.Quote(name))
	b.WriteString(" session=")
	b.WriteString(strconv.Quote(session))
	b.WriteString(" took=")
	b.WriteString(time.Since(start).Round(time.Microsecond).String())
	b.WriteString(" error=")
	// One line per run: newlines inside the error (a stack) are quoted.
	b.WriteString(strconv.Quote(err.Error()))
	b.WriteByte('\n')
	_, _ = f.WriteString(b.String())
}
