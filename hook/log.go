package hook

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// maxLogBytes is where a log of the home (hook.log, rejected.jsonl, and
// serve.log and forward.log of the processes the hook starts) is rotated
// to <name>.1, so a broken setup that fails on every event, or a collector
// that runs for months, cannot fill the disk.
const maxLogBytes = 8 << 20

// rotateLog renames the log at path to path.1, replacing the one before,
// once it holds more than maxLogBytes. Best effort, as the logs are.
func rotateLog(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogBytes {
		_ = os.Rename(path, path+".1")
	}
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
