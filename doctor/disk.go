package doctor

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/envflag"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/store/postgres"
)

// diskWarnBytes is the size of a SQLite database (with its write-ahead
// log) past which the disk check warns when no retention prunes it: a
// home's database grows with every session, and at this size it holds
// months of them, which nothing will ever delete.
const diskWarnBytes = 1 << 30

// serveSettings are the settings of the collector this home's hooks reach
// that decide what it deletes: the service's unit's, when one is installed
// for this home (its Environment lines), else this shell's, which a
// collector a hook starts inherits from the agent's environment.
type serveSettings struct {
	from                                   string // "the service's unit <path>" or "the environment"
	retain, retainSize, audit, auditRetain string
	service                                bool
}

func (e *env) serveSettings() serveSettings {
	getenv, from, service := e.settingsOf("serve")
	s := serveSettings{from: from, service: service}
	s.retain, s.retainSize = getenv("HOOKWATCH_RETAIN"), getenv("HOOKWATCH_RETAIN_SIZE")
	s.audit, s.auditRetain = getenv("HOOKWATCH_AUDIT_DIR"), getenv("HOOKWATCH_AUDIT_RETAIN")
	return s
}

// settingsOf returns where the settings of command (serve, forward) for
// this home are read: the service's unit when one installed for this home
// runs command (its Environment lines), else this shell's environment,
// which a process a hook starts inherits from the agent's; and how to name
// it.
func (e *env) settingsOf(command string) (getenv func(string) string, from string, service bool) {
	if u, path, ok := e.serviceUnit(); ok && u.Command == command {
		return func(k string) string { return u.Env[k] }, "the service's unit " + path, true
	}
	return e.Getenv, "the environment", false
}

// serviceUnit returns the user service's unit installed for this home,
// and its path; false when there is none, or it is another home's.
func (e *env) serviceUnit() (install.InstalledService, string, bool) {
	if rel, _ := install.ServiceUnit(runtime.GOOS, "", nil); rel != "" && e.userHome != "" {
		path := filepath.Join(e.userHome, rel)
		if b, err := regfile.ReadHead(path, install.MaxServiceUnitSize+1); err == nil {
			if u, err := install.ReadServiceUnit(runtime.GOOS, b); err == nil {
				unitEnv := func(k string) string {
					if k == "HOME" {
						return e.userHome
					}
					return u.Env[k]
				}
				if hook.Home(unitEnv) == e.home {
					return u, path, true
				}
			}
		}
	}
	return install.InstalledService{}, "", false
}

// archiveKept says how long the compaction archive is kept where the hooks
// deliver through a forwarder, which prunes it ("" elsewhere: a local
// collector's retention, which the message names, prunes it with the
// sessions it deletes).
func (e *env) archiveKept() string {
	if !hook.NeedsForwarder(e.url) {
		return ""
	}
	getenv, from, _ := e.settingsOf("forward")
	// The value as forward --archive-retain reads it: off, or an age it
	// checks itself (a forwarder refusing it does not start, which the
	// forwarder's settings check reports: checkStartSettings).
	v := strings.TrimSpace(getenv("HOOKWATCH_ARCHIVE_RETAIN"))
	switch {
	case v == "":
		return fmt.Sprintf(" (the forwarder deletes a session's once untouched for %dd, the default)", forward.DefaultArchiveRetain/(24*time.Hour))
	case envflag.Off(v):
		return fmt.Sprintf(" (kept whole: HOOKWATCH_ARCHIVE_RETAIN=%s, from %s)", v, from)
	}
	return fmt.Sprintf(" (the forwarder deletes a session's once untouched for %s, from %s)", v, from)
}

// checkDisk reports what the home holds on disk — the database and its
// write-ahead log, the compaction archive (where the hooks deliver through
// a forwarder, with the age past which it deletes a session's: no
// collector's retention prunes it there), the spool, the logs (rotated
// ones included), and the audit trail when the collector writes one — and
// warns, never fails, when the database is past diskWarnBytes and no
// retention prunes it, naming the setting that does, unless the hooks send
// to a team server (teamMachine), and no collector writes it. The audit trail is
// kept whole unless asked: it is evidence, so its size is reported, not
// judged.
func (e *env) checkDisk() Check {
	c := Check{Name: "disk", Status: OK}
	set := e.serveSettings()
	var parts []string
	var dbBytes int64
	db := e.Database
	if db != "" && !postgres.IsURL(db) && !postgres.KeywordString(db) {
		for _, p := range []string{db, db + "-wal"} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				dbBytes += fi.Size()
			}
		}
		parts = append(parts, "database "+bytesString(dbBytes))
	}
	parts = append(parts,
		"archive "+bytesString(treeBytes(filepath.Join(e.home, "archive")))+e.archiveKept(),
		"spool "+bytesString(treeBytes(filepath.Join(e.home, "spool"))))
	var logs int64
	for _, name := range []string{"hook.log", hook.ServeLog, hook.ForwardLog, hook.RejectedFile} {
		for _, p := range []string{name, name + ".1"} {
			if fi, err := os.Stat(filepath.Join(e.home, p)); err == nil && fi.Mode().IsRegular() {
				logs += fi.Size()
			}
		}
	}
	parts = append(parts, "logs "+bytesString(logs))
	if set.audit != "" {
		parts = append(parts, "audit trail "+bytesString(treeBytes(set.audit)))
	}
	c.Message = e.home + ": " + strings.Join(parts, ", ")
	switch {
	case set.retain != "" || set.retainSize != "":
		c.Message += fmt.Sprintf(" (retain %s, from %s)", strings.Trim(set.retain+" "+set.retainSize, " "), set.from)
	case dbBytes > diskWarnBytes && !e.teamMachine():
		// On a team server's developer machine the database is left
		// from before: it no longer grows, and its size is said alone.
		c.Status = Warn
		c.Details = append(c.Details, fmt.Sprintf("%s and its write-ahead log hold %s, past %s, and no retention is set (in %s): the collector keeps every session, so it only grows",
			db, bytesString(dbBytes), bytesString(diskWarnBytes), set.from))
		if set.service {
			c.Fix = "HOOKWATCH_RETAIN=90d hookwatch service install   # keeps the unit's other settings; or hookwatch prune --older-than 90d once"
		} else {
			c.Fix = "export HOOKWATCH_RETAIN=90d   # where the agents start: the collector a hook starts inherits it (or hookwatch serve --retain 90d; hookwatch prune --older-than 90d once)"
		}
	}
	if set.audit != "" && set.auditRetain == "" {
		c.Details = append(c.Details, "the audit trail in "+claudecode.ShellQuote(set.audit)+" is kept whole, as evidence: --retain leaves it alone; serve --audit-retain AGE (HOOKWATCH_AUDIT_RETAIN) prunes it")
	}
	return c
}

// treeBytes is the size of the regular files under dir (0 when it does not
// exist), symbolic links not followed.
func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable part counts for nothing; the rest still counts
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
