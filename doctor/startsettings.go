package doctor

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/regfile"
	"github.com/hookwatch/hookwatch/spool"
)

// Refusal is a variable whose value a command refuses to start on: a
// flag's default it sets (serve's HOOKWATCH_RETAIN, forward's
// HOOKWATCH_ARCHIVE_RETAIN …), refused as the flag refuses it.
type Refusal struct {
	Var, Value string
	// Says is the line the command prints as it exits: into serve.log or
	// forward.log when a hook or the launchd agent started it.
	Says string
	// Example is a value the command takes for Var, "" when there is
	// none to give (a file of the user's).
	Example string
}

// refusalPrefix begins the line a command prints as it exits on a
// variable it refuses (Refusal.Says), and refusalMark is in that line
// after the variable and its value.
const refusalPrefix, refusalMark = "hookwatch: usage error: HOOKWATCH_", ", the default of --"

// starter is a process that reads its settings from an environment:
// the collector or forwarder the hooks start, with the agent's, or the
// one the user service runs, with its unit's.
type starter struct {
	command string // serve or forward
	args    []string
	getenv  func(string) string
	who     string // "the collector this home's hooks start" …
	unit    string // the unit's path, for the service's
}

// checkStartSettings checks the settings serve and forward read from the
// environment as their flags' defaults, with their own reading of them
// (Options.CheckSettings), in the environments they start with: this
// shell's, which the agent's, from which the hooks start them, is
// usually like, and the user service's unit's when one is installed for
// this home. A value they refuse is a failure: the process does not
// start, and the events wait in the spool. Then, when no process takes
// the spool, the last line of serve.log and forward.log: a start that
// failed on a setting, in an environment doctor may not see (the agent's).
func (e *env) checkStartSettings() []Check {
	if e.CheckSettings == nil {
		return nil
	}
	var starters []starter
	// Through a tunnel to a team server no hook starts a collector here,
	// and none is to be started by hand: nothing of serve's to check.
	local := e.localURL() && !hook.NeedsForwarder(e.url) && !e.tunnel()
	switch {
	case hook.NeedsForwarder(e.url):
		who := "the forwarder this home's hooks start (with the agent's environment)"
		if !e.autostartOn() {
			who = "hookwatch forward started from this environment"
		}
		starters = append(starters, starter{command: "forward", args: []string{"--url", e.url}, getenv: e.Getenv, who: who})
	case local:
		who := "the collector this home's hooks start (with the agent's environment)"
		if !e.autostarts() {
			who = "hookwatch serve started from this environment"
		}
		starters = append(starters, starter{command: "serve", args: e.hookServeArgs(), getenv: e.Getenv, who: who})
	}
	if u, path, ok := e.serviceUnit(); ok && (u.Command == "serve" || u.Command == "forward") {
		// The unit runs the command with no flag: its environment sets them all.
		starters = append(starters, starter{command: u.Command, getenv: func(k string) string { return u.Env[k] },
			who: "the user service (" + path + ", hookwatch " + u.Command + ")", unit: path})
	}
	var out []Check
	said := map[string]bool{}
	for _, s := range starters {
		refusals := e.CheckSettings(s.command, s.args, s.getenv)
		for _, r := range refusals {
			said[r.Says] = true
			out = append(out, e.refusalCheck(s, r))
		}
		if len(refusals) == 0 {
			from := "this environment"
			if s.unit != "" {
				from = "its unit"
			}
			out = append(out, Check{Name: s.name(), Status: OK,
				Message: fmt.Sprintf("%s takes the HOOKWATCH_* settings of %s", s.who, from)})
		}
	}
	if _, attached := spool.Consumer(filepath.Join(e.home, "spool")); !attached {
		for _, l := range []struct{ command, log, name string }{{"serve", hook.ServeLog, "collector's last start"}, {"forward", hook.ForwardLog, "forwarder's last start"}} {
			path := filepath.Join(e.home, l.log)
			line := lastLine(path)
			if !strings.HasPrefix(line, refusalPrefix) || !strings.Contains(line, refusalMark) || said[line] {
				continue
			}
			variable, _, _ := strings.Cut(strings.TrimPrefix(line, "hookwatch: usage error: "), "=")
			out = append(out, Check{Name: l.name, Status: Fail,
				Message: fmt.Sprintf("the last start of hookwatch %s refused its setting %s (%s), in the environment it was started with (the agent's, or the service's): none runs now, and the events wait in the spool", l.command, variable, path),
				Details: []string{l.command + " said: " + line},
				Fix:     fmt.Sprintf("unset %s where the agents start, or set a value it takes (hookwatch %s --help); doctor run there checks that environment", variable, l.command),
			})
		}
	}
	return out
}

// hookServeArgs are the arguments a hook starts serve with for e.url
// (hook.StartServe).
func (e *env) hookServeArgs() []string {
	if u, err := url.Parse(e.url); err == nil && u.Port() != "" {
		return []string{"--addr", u.Host}
	}
	return nil
}

// autostartRefused reports whether the collector the next hook starts
// would refuse a setting of this environment (checkStartSettings says
// which).
func (e *env) autostartRefused() bool {
	return e.CheckSettings != nil && len(e.CheckSettings("serve", e.hookServeArgs(), e.Getenv)) > 0
}

// settingsName is the name of the check of command's settings.
func settingsName(command string) string {
	if command == "forward" {
		return "forwarder settings"
	}
	return "collector settings"
}

// name is the name of the check of s's settings: the service's apart
// from those of the process the hooks start.
func (s starter) name() string {
	if s.unit != "" {
		return "service settings"
	}
	return settingsName(s.command)
}

// refusalCheck is the failure of r, a setting s refuses to start on.
func (e *env) refusalCheck(s starter, r Refusal) Check {
	c := Check{Name: s.name(), Status: Fail}
	from := "in this environment"
	if s.unit != "" {
		from = "in the service's unit"
	}
	c.Message = fmt.Sprintf("%s=%q %s: %s refuses to start on it, and the events wait in the spool", r.Var, r.Value, from, s.who)
	c.Details = []string{s.command + " says: " + r.Says}
	valid := ""
	if r.Example != "" {
		valid = ", or set a value it takes, such as " + r.Var + "=" + claudecode.ShellQuote(r.Example)
	}
	switch {
	case s.unit != "" && r.Example != "":
		c.Fix = fmt.Sprintf("%s=%s hookwatch service install   # or %s= hookwatch service install, which drops it from the unit", r.Var, claudecode.ShellQuote(r.Example), r.Var)
	case s.unit != "":
		c.Fix = r.Var + "= hookwatch service install   # drops it from the unit"
	default:
		c.Fix = "unset " + r.Var + valid + ", where the agents start (their profile too)"
	}
	return c
}

// lastLine is the last line of the file at path that holds more than
// spaces, read from its last 4 KiB; "" when there is none, or the file is
// no regular file (regfile.Open: a FIFO would block).
func lastLine(path string) string {
	f, fi, err := regfile.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4 << 10
	off := max(fi.Size()-tail, 0)
	b := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(b, off)
	lines := strings.Split(string(b[:n]), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	return ""
}
