package hook

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// maxLogBytes is where hook.log is rotated to hook.log.1, so a broken setup
// that fails on every event cannot fill the disk.
const maxLogBytes = 8 << 20

// log appends one line describing a failed or degraded run to hook.log. It
// is best effort: the hook has nowhere else to report.
func (cfg Config) log(start time.Time, name, session string, err error) {
	path := filepath.Join(cfg.Home, "hook.log")
	if fi, statErr := os.Stat(path); statErr == nil && fi.Size() > maxLogBytes {
		_ = os.Rename(path, path+".1")
	}
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
