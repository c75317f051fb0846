package doctor

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/patherr"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// lookPath finds a program on PATH; a variable so that the launcher
// resolution reads like the launcher.
var lookPath = exec.LookPath

// checkPlugin reports whether a hookwatch plugin is enabled and which binary
// its launcher would run.
func (e *env) checkPlugin() Check {
	c := Check{Name: "plugin"}
	roots := findPluginRoots(filepath.Join(e.configDir, "plugins"))
	if len(e.plugins) == 0 {
		c.Status = Info
		c.Message = "the hookwatch plugin is not enabled"
		if len(roots) > 0 {
			c.Message = "the hookwatch plugin is installed (" + roots[0] + ") but not enabled"
		}
		return c
	}
	bin := e.pluginBinary(roots)
	if bin == "" {
		c.Status = Fail
		c.Message = fmt.Sprintf("%s is enabled but its launcher finds no hookwatch binary: its hooks do nothing", strings.Join(e.plugins, ", "))
		c.Fix = "go install github.com/hookwatch/hookwatch/cmd/hookwatch@latest"
		return c
	}
	c.Status = OK
	c.Message = fmt.Sprintf("%s is enabled; its hooks run %s", strings.Join(e.plugins, ", "), bin)
	return c
}

// pluginBinary resolves claudecode.PluginLauncher: the plugin's bin/hookwatch,
// hookwatch on PATH, then $GOBIN or ~/go/bin.
func (e *env) pluginBinary(roots []string) string {
	var cands []string
	for _, r := range roots {
		cands = append(cands, filepath.Join(r, "bin", claudecode.BinaryName))
	}
	if p, err := lookPath(claudecode.BinaryName); err == nil {
		cands = append(cands, p)
	}
	gobin := e.Getenv("GOBIN")
	if gobin == "" {
		gobin = filepath.Join(e.userHome, "go", "bin")
	}
	cands = append(cands, filepath.Join(gobin, claudecode.BinaryName))
	for _, p := range cands {
		if _, err := resolveBinary(p); err == nil {
			return p
		}
	}
	return ""
}

// findPluginRoots returns the directories under dir holding a
// .claude-plugin/plugin.json named hookwatch. The walk is bounded: plugin
// caches can hold whole repositories.
func findPluginRoots(dir string) []string {
	var roots []string
	seen := 0
	base := strings.Count(filepath.Clean(dir), string(filepath.Separator))
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > 20000 {
			return filepath.SkipAll
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case "node_modules", ".git":
			return filepath.SkipDir
		}
		if strings.Count(p, string(filepath.Separator))-base > 6 {
			return filepath.SkipDir
		}
		if claudecode.PluginName(p) == claudecode.Plugin {
			roots = append(roots, p)
			return filepath.SkipDir
		}
		return nil
	})
	return roots
}

// checkSpool reports the spool's backlog and counters. A home that is not
// a directory is the home's fault, not the spool's, and the fix says so:
// the hook can spool nothing while the collector is down.
func (e *env) checkSpool() Check {
	c := Check{Name: "spool", Status: OK}
	dir := filepath.Join(e.home, "spool")
	if fi, err := os.Stat(e.home); err == nil && !fi.IsDir() {
		c.Status, c.Message = Fail, e.home+" (HOOKWATCH_HOME) is a file, not a directory: the hook has nowhere to spool events while the collector is down"
		c.Fix = "move it away, or export HOOKWATCH_HOME=<a directory> in the shell Claude Code starts from"
		return c
	}
	if _, err := os.Stat(dir); err != nil {
		// The first event spooled makes it: it must be able to.
		if probe, perr := probeDir(dir); perr != nil {
			c.Status = Fail
			c.Message = fmt.Sprintf("%s cannot be created (%s: %v): the hook has nowhere to spool events while the collector is down", dir, probe, patherr.Strip(perr, probe))
			c.Fix = "export HOOKWATCH_HOME=<a directory you can write>   # in the shell Claude Code starts from"
			return c
		}
		if errors.Is(err, fs.ErrNotExist) {
			c.Message = dir + " is empty"
			return c
		}
	}
	sp, err := spool.Open(dir, spool.Options{})
	var st spool.Stats
	if err == nil {
		st, err = sp.Stats()
	}
	if err != nil {
		c.Status, c.Message = Fail, fmt.Sprintf("cannot read the spool: %v", err)
		c.Fix = "ls -la " + claudecode.ShellQuote(dir)
		return c
	}
	c.Message = fmt.Sprintf("%s: %s pending, %d dropped, %d corrupt", dir, bytesString(st.PendingBytes), st.Dropped, st.Corrupt)
	if st.PendingBytes > 0 {
		c.Status = Warn
		switch {
		case e.collector:
			c.Details = append(c.Details, "the next hook event delivers the backlog")
		case e.tokenRefused:
			// Up, so "once it is up" would send the user looking for a
			// collector that runs already.
			c.Details = append(c.Details, "the backlog is delivered once the collector takes the hook's token (see the collector check)")
		default:
			c.Details = append(c.Details, "the backlog is delivered once the collector is up")
		}
	}
	if lost := st.Unacknowledged(); lost > 0 {
		// Only the losses since the last acknowledgement: a loss the user
		// has seen must not keep the setup degraded for ever.
		c.Status = Warn
		c.Message += fmt.Sprintf(": degraded, %d lost event%s not acknowledged", lost, plural(int(lost)))
		if st.Dropped > 0 {
			c.Details = append(c.Details, fmt.Sprintf("dropped: events that could not be spooled (the spool was full or unwritable) are lost; HOOKWATCH_SPOOL_MAX raises the cap (%s)", bytesString(e.spoolMax())))
		}
		if st.Corrupt > 0 {
			c.Details = append(c.Details, "corrupt: lines of the spool that could not be read (torn writes) were skipped")
		}
		c.Fix = ackLossesFix + "   # once you have taken note"
	} else if st.Dropped+st.Corrupt > 0 {
		c.Message += " (acknowledged)"
	}
	return c
}

// ackLossesFix acknowledges the losses counted so far.
const ackLossesFix = "hookwatch doctor --ack-losses"

// spoolMax is the spool's cap as the hook reads it.
func (e *env) spoolMax() int64 {
	if cfg, _ := hook.ConfigFromEnv(e.Getenv); cfg.SpoolMax > 0 {
		return cfg.SpoolMax
	}
	return spool.DefaultMaxBytes
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkHookLog shows the hook's failures of the last day that came after
// the last delivery of the spool's consumer (spool.LastDelivered), if there
// was one: the errors from before a problem was fixed are followed by the
// events delivered since, and warn no more. A run logs its error once it
// has handed its event on, and the consumer may take that very event some
// time later: only an error that ended fixedAfter (ten budgets of the hook)
// before the delivery counts as followed by it, so an error every run logs
// still warns.
func (e *env) checkHookLog() Check {
	c := Check{Name: "hook log", Status: OK}
	path := filepath.Join(e.home, "hook.log")
	since := e.Now().Add(-24 * time.Hour)
	var lines []string
	for _, l := range recentLogLines(path, since) {
		// Older hooks logged a successful autostart as an error: it is how
		// a collector normally comes up.
		if !strings.HasSuffix(l, ` error="started a collector in the background"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		c.Message = "no hook errors in the last 24 hours"
		return c
	}
	before := 0
	delivered, ok := spool.LastDelivered(filepath.Join(e.home, "spool"))
	if ok && delivered.After(since) {
		cfg, _ := hook.ConfigFromEnv(e.Getenv)
		fixedAfter := 10 * cmp.Or(cfg.Budget, hook.DefaultBudget)
		for before < len(lines) && logLineEnd(lines[before]).Add(fixedAfter).Before(delivered) {
			before++
		}
	}
	if before == len(lines) {
		c.Message = fmt.Sprintf("no hook errors since the last event delivered, at %s (%d in the last 24 hours before it, in %s)", delivered.Local().Format("15:04:05"), before, path)
		return c
	}
	lines = lines[before:]
	c.Status = Warn
	c.Message = fmt.Sprintf("%d hook error%s in the last 24 hours in %s; the latest:", len(lines), plural(len(lines)), path)
	if before > 0 {
		c.Message = fmt.Sprintf("%d hook error%s since the last event delivered, at %s, in %s; the latest:", len(lines), plural(len(lines)), delivered.Local().Format("15:04:05"), path)
	}
	c.Details = lines[max(0, len(lines)-3):]
	return c
}

// checkRejected reports the envelopes a collector refused for what they
// are, which the hook, the forwarder and the collector set aside in
// rejected.jsonl (rotated to rejected.jsonl.1) rather than deliver: they are
// not in the store. Those set aside in the last day warn, naming the file
// to read; older ones are only counted, so that a refusal the user has
// dealt with does not keep the setup degraded.
func (e *env) checkRejected() Check {
	c := Check{Name: "rejected", Status: OK}
	path := filepath.Join(e.home, hook.RejectedFile)
	var n int
	var last time.Time
	var files []string
	for _, p := range []string{path + ".1", path} {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(p) // at most 8 MiB: rotated past it
		if err != nil {
			continue
		}
		n += bytes.Count(b, []byte("\n"))
		last = fi.ModTime()
		files = append(files, p)
	}
	if n == 0 {
		c.Message = "no envelope refused by the collector"
		return c
	}
	c.Message = fmt.Sprintf("%d envelope%s refused by the collector, set aside in %s, the last at %s", n, plural(n), strings.Join(files, " and "), last.Local().Format(time.DateTime))
	if last.After(e.Now().Add(-24 * time.Hour)) {
		c.Status = Warn
		c.Details = append(c.Details, "they are not stored: read why in the collector's log (serve.log), and the envelopes with jq")
		c.Fix = "jq -c '{id, received_at, session: .payload.session_id, event: .payload.hook_event_name}' " + claudecode.ShellQuote(path)
	}
	return c
}

// logLineEnd returns when the run a hook.log line tells of ended: the time
// it starts with, plus its took= duration when it has one.
func logLineEnd(line string) time.Time {
	ts, rest, _ := strings.Cut(line, " ")
	t, _ := time.Parse(time.RFC3339Nano, ts)
	if _, after, ok := strings.Cut(rest, " took="); ok {
		d, _, _ := strings.Cut(after, " ")
		if took, err := time.ParseDuration(d); err == nil && took > 0 {
			t = t.Add(took)
		}
	}
	return t
}

// teamMachine reports whether the hooks send the events to a team server
// with its token, so that no collector of this machine writes the local
// database: a URL beyond this machine (localURL), HOOKWATCH_URL's or the
// one install --url kept, with the token the hooks send, installed by
// install --token (which the command hooks read) or exported in
// HOOKWATCH_TOKEN (which http hooks send, from the profile install tells
// to export it from the token file); or a URL on this machine for which
// the hooks hold a team server's token (hook.ForTeamServer, the rule the
// hook's autostart and install follow): a tunnel to the server (ssh -L),
// at which no hook starts a collector.
func (e *env) teamMachine() bool {
	return (!e.localURL() && e.token != "") || e.forTeamServer()
}

// forTeamServer reports whether the hooks hold a team server's token
// (hook.ForTeamServer): at a URL on this machine, it is a tunnel to the
// server, not this home's collector.
func (e *env) forTeamServer() bool { return hook.ForTeamServer(e.tokenSource, e.token, e.home) }

// checkDatabase checks that the collector could open and write its SQLite
// database (Options.Database). On a machine whose hooks send to a team
// server (teamMachine) it checks nothing: the events go to the server's
// database, and no collector of this machine opens the local one.
func (e *env) checkDatabase(ctx context.Context) Check {
	c := Check{Name: "database", Status: OK}
	path := e.Database
	switch {
	case path == "":
		c.Status, c.Message = Info, "not checked"
		return c
	case e.teamMachine():
		c.Status, c.Message = Info, "not checked: the hooks send the events to the team server at "+e.url+", into its database, not into this machine's"
		return c
	case postgres.IsURL(path):
		c.Status, c.Message = Info, "PostgreSQL: not checked here; hookwatch serve reports connection errors"
		return c
	}
	if postgres.KeywordString(path) {
		c.Status = Fail
		c.Message = "HOOKWATCH_DB is a PostgreSQL key=value connection string: hookwatch serve refuses it; it names PostgreSQL by a postgres:// URL"
		c.Fix = "export HOOKWATCH_DB='postgres://USER:PASSWORD@HOST:PORT/DATABASE'"
		return c
	}
	if scheme, ok := postgres.OtherURL(path); ok {
		c.Status = Fail
		c.Message = "HOOKWATCH_DB is a " + scheme + ":// URL: hookwatch serve refuses it; it stores in SQLite, named by a file path, or in PostgreSQL, named by a postgres:// URL"
		c.Fix = "export HOOKWATCH_DB=<a writable path>.db (or a postgres:// URL; unset, it is hookwatch.db in HOOKWATCH_HOME)"
		return c
	}
	dir := filepath.Dir(path)
	fixDir := "export HOOKWATCH_DB=<a writable path>.db"
	// The default database is in the home: one that cannot be made there
	// is the home's to fix (the spool check says so too).
	defaultDB := e.Getenv("HOOKWATCH_DB") == "" && within(path, e.home)
	const fixHome = "export HOOKWATCH_HOME=<a directory you can write>   # in the shell Claude Code starts from"
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			c.Status, c.Message, c.Fix = Fail, path+" is a directory, not a database", fixDir
			return c
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			c.Status, c.Message = Fail, fmt.Sprintf("cannot open %s for writing: %v", path, err)
			c.Fix = "chmod u+w " + claudecode.ShellQuote(path)
			return c
		}
		f.Close()
		if err := sqlite.Readable(ctx, path); err != nil {
			// serve cannot start on it: say so before a hook tries.
			aside := claudecode.ShellQuote(path + ".damaged")
			c.Status, c.Message = Fail, err.Error()+": hookwatch serve cannot open it"
			c.Fix = "move it aside with its -wal and -shm files, and the next collector makes a new database: mkdir " + aside + " && mv " +
				claudecode.ShellQuote(path) + " " + claudecode.ShellQuote(path+"-wal") + " " + claudecode.ShellQuote(path+"-shm") + " " + aside + "/ 2>/dev/null (sqlite3's .recover may save what it held)"
			return c
		}
	}
	// The nearest existing directory decides: serve creates the rest.
	probe, err := probeDir(dir)
	switch {
	case errors.Is(err, errNotDir):
		// The database's directory is under a file: when that file is
		// the home, the home is what to fix (the spool check says so
		// too), not the database.
		c.Status, c.Message = Fail, fmt.Sprintf("%s is a file, not a directory: %s cannot be created under it", probe, path)
		switch {
		case probe == e.home:
			c.Message = fmt.Sprintf("%s (HOOKWATCH_HOME) is a file, not a directory: the database %s cannot be created in it", probe, path)
			c.Fix = "move it away, or export HOOKWATCH_HOME=<a directory>"
		case defaultDB:
			c.Fix = fixHome
		default:
			c.Fix = fixDir
		}
		return c
	case err != nil:
		c.Status, c.Message = Fail, fmt.Sprintf("cannot write in %s: %v", probe, patherr.Strip(err, probe))
		c.Fix = fixDir
		if defaultDB {
			c.Fix = fixHome
		}
		return c
	}
	c.Message = path + " is writable"
	if probe != dir {
		c.Message = path + " can be created"
	}
	return c
}

// errNotDir is probeDir's error for a path under a file.
var errNotDir = errors.New("a file, not a directory")

// probeDir returns the nearest directory at or above path that exists, and
// whether a file can be made in it: a program that creates path would have
// to. It makes a file there and removes it; errNotDir when the nearest
// path that exists is a file.
func probeDir(path string) (probe string, err error) {
	probe = path
	for {
		if _, err := os.Stat(probe); err == nil || filepath.Dir(probe) == probe {
			break
		}
		probe = filepath.Dir(probe)
	}
	if fi, err := os.Stat(probe); err == nil && !fi.IsDir() {
		return probe, errNotDir
	}
	f, err := os.CreateTemp(probe, ".hookwatch-doctor-*")
	if err != nil {
		return probe, err
	}
	f.Close()
	os.Remove(f.Name())
	return probe, nil
}

// within reports whether path is dir or under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkPolicy validates the policy files that exist.
func (e *env) checkPolicy() Check {
	c := Check{Name: "policy", Status: OK}
	var files []string
	for _, f := range e.PolicyFiles {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	switch {
	case len(files) == 0:
		c.Status, c.Message = Info, "no policy files"
		return c
	case e.CheckPolicy == nil:
		c.Status, c.Message = Info, "policy files not checked: "+strings.Join(files, ", ")
		return c
	}
	var out bytes.Buffer
	err := e.CheckPolicy(&out, files...)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err == nil {
		c.Message = strings.Join(lines, "; ")
		e.policyAnswerer(&c)
		return c
	}
	c.Status = Fail
	c.Message = err.Error() + ": hookwatch skips the broken rules"
	c.Details = lines
	bad := files[0]
	for _, f := range files {
		if strings.Contains(out.String(), f+":") && !strings.Contains(out.String(), f+": ok") {
			bad = f
			break
		}
	}
	c.Fix = "$EDITOR " + claudecode.ShellQuote(bad)
	return c
}

// policyAnswerer says who answers the lean hook's policy questions: the
// collector attached to this home, on its socket, or — none answering — a
// `hookwatch hook` process started for every event a policy covers. The
// question it asks has no payload, so no rule sees it and no quota counts.
func (e *env) policyAnswerer(c *Check) {
	sock := hooksock.Path(e.home)
	r, err := hooksock.Ask(sock, hooksock.Request{}, time.Now().Add(e.Timeout))
	if err == nil {
		c.Details = append(c.Details, fmt.Sprintf("answered by the collector at %s on %s, with the rules kept compiled", r.Addr, sock))
		return
	}
	if e.tunnel() {
		// The hooks send to a team server through a tunnel: a collector
		// of this home would drain the spool into this machine's database
		// instead of the server's, so none is asked for.
		c.Details = append(c.Details, fmt.Sprintf("no collector answers on %s: each event a policy covers starts `hookwatch hook` for its answer, as the hooks send to a team server through a tunnel and no collector of this home is to run", sock))
		return
	}
	c.Status = Warn
	c.Details = append(c.Details, fmt.Sprintf("no collector answers on %s (%v): each event a policy covers starts `hookwatch hook` for its answer, several milliseconds instead of under one", sock, err))
	c.Fix = e.serveCmd() + "   # or keep it running: hookwatch service install"
}

// hookCommand is the registered hook the round trip runs.
type hookCommand struct {
	bin   string
	args  []string
	shell string // a shell-form command line, run with sh -c
	scope string // where it is registered; "" for none
}

// roundTripCommand picks the hook to run: one of this hookwatch's
// registered handlers, else any registered command handler, else the
// plugin's, else the binary install would register.
func (e *env) roundTripCommand() hookCommand {
	var first *hookCommand
	for _, s := range e.settings {
		for _, h := range s.Handlers {
			if h.Type != "command" {
				continue
			}
			hc := hookCommand{bin: h.Binary, args: h.Args, scope: s.Scope}
			if h.Shell {
				hc = hookCommand{shell: h.Command, bin: h.Binary, scope: s.Scope}
			}
			if e.ours(h.Binary) {
				return hc
			}
			if first == nil {
				first = &hc
			}
		}
	}
	if first != nil {
		return *first
	}
	if len(e.plugins) > 0 {
		if b := e.pluginBinary(findPluginRoots(filepath.Join(e.configDir, "plugins"))); b != "" {
			return hookCommand{bin: b, args: []string{"hook"}, scope: "plugin"}
		}
	}
	return hookCommand{bin: e.HookBinary, args: []string{"hook"}}
}

// probe returns a synthetic Notification for a round trip, and the session
// it names: a new one, whose id starts with event.ProbeSessionPrefix.
func (e *env) probe() (session string, payload []byte) {
	session = event.ProbeSessionPrefix + event.NewID(e.Now())
	payload, _ = json.Marshal(map[string]string{
		"session_id":        session,
		"transcript_path":   "",
		"cwd":               e.WorkDir,
		"hook_event_name":   "Notification",
		"message":           "hookwatch doctor: round trip",
		"notification_type": "hookwatch_doctor",
	})
	return session, payload
}

// checkRoundTrip runs the registered hook with a synthetic Notification and
// looks for it in the collector.
func (e *env) checkRoundTrip(ctx context.Context) Check {
	c := Check{Name: "round trip"}
	hc := e.roundTripCommand()
	reinstall := e.fix("install", hc.scope)
	if hc.bin == "" {
		c.Status, c.Message = Info, "no hook to run"
		return c
	}
	session, payload := e.probe()
	rctx, cancel := context.WithTimeout(ctx, e.Timeout+5*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if hc.shell != "" {
		cmd = exec.CommandContext(rctx, "sh", "-c", hc.shell)
	} else {
		cmd = exec.CommandContext(rctx, hc.bin, hc.args...)
	}
	// The check starts nothing: a hook that finds no collector would start
	// one (doctor --start does, when asked).
	cmd.Env = append(slices.Clip(e.Environ), "HOOKWATCH_AUTOSTART=0")
	// Where the hooks deliver through a forwarder, none running, the
	// event would wait in the spool for the one the next hook starts (the
	// forwarder check says so), and hook.log would keep its failure to be
	// delivered, as for a collector down.
	unforwarded := hook.NeedsForwarder(e.url) && !e.forwarderRuns()
	if !e.collector || unforwarded {
		// Nothing would take the event: it would stay in the spool, and
		// its failure to be delivered in hook.log. A scratch home keeps
		// both; the hook's behaviour is the same.
		scratch, err := os.MkdirTemp("", "hookwatch-doctor-")
		if err != nil {
			c.Status, c.Message = Fail, fmt.Sprintf("cannot make a scratch home: %v", err)
			c.Fix = "export TMPDIR=<a writable directory>"
			return c
		}
		defer os.RemoveAll(scratch)
		cmd.Env = append(cmd.Env, "HOOKWATCH_HOME="+scratch)
	}
	cmd.Dir = e.WorkDir
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		c.Status = Fail
		c.Message = fmt.Sprintf("%s exited with status %d after %v: the agent sees a failing hook", hc.bin, ee.ExitCode(), took.Round(time.Millisecond))
		if ee.ExitCode() == 2 {
			c.Message = fmt.Sprintf("%s exited with status 2 after %v: that blocks the agent's tool calls", hc.bin, took.Round(time.Millisecond))
		}
		if s := strings.TrimSpace(stderr.String()); s != "" {
			c.Details = append(c.Details, "stderr: "+firstLine(s))
		}
		c.Fix = reinstall
		return c
	case err != nil:
		c.Status = Fail
		c.Message = fmt.Sprintf("cannot run %s: %v", hc.bin, patherr.Strip(err, hc.bin))
		c.Fix = reinstall
		return c
	}
	c.Status = OK
	c.Message = fmt.Sprintf("%s took %v", hc.bin, took.Round(100*time.Microsecond))
	if s := strings.TrimSpace(stdout.String()); s != "" {
		c.Status = Warn
		c.Details = append(c.Details, "a policy answered the Notification: "+firstLine(s))
	}
	switch {
	case e.tokenRefused:
		c.Message += "; the collector refuses the token, so the hook spooled the event (in a scratch home)"
		return c
	case !e.collector:
		c.Message += "; the collector is down, so the hook spooled the event (in a scratch home)"
		return c
	case unforwarded:
		c.Message += "; no forwarder runs to deliver it, so the hook spooled the event (in a scratch home): the forwarder check says what starts one"
		return c
	}
	if e.storedSession(ctx, session) {
		c.Message += "; the collector stored session " + session
		return c
	}
	c.Status = Fail
	c.Message += "; but the collector did not store session " + session
	c.Details = append(c.Details, e.logLinesFor(session)...)
	c.Fix = e.pointFix(e.url) + "   # for the environment Claude Code runs hooks with"
	return c
}

// httpHandler returns the first of hookwatch's http handlers the settings
// register, which posts to a collector's HookPath, and its scope.
func (e *env) httpHandler() (h Handler, scope string, ok bool) {
	for _, s := range e.settings {
		for _, h := range s.Handlers {
			if h.Type == "http" && h.Collector != "" {
				return h, s.Scope, true
			}
		}
	}
	return Handler{}, "", false
}

// checkHTTPRoundTrip posts a synthetic Notification where the http handler
// h posts, with the headers Claude Code would send from this environment
// (its token among them), and looks for it in the collector. An http hook
// cannot spool: what this finds wrong loses events, not delays them.
func (e *env) checkHTTPRoundTrip(ctx context.Context, h Handler, scope string) Check {
	c := Check{Name: "round trip (http)"}
	session, payload := e.probe()
	rctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, h.URL, bytes.NewReader(payload))
	if err != nil {
		c.Status, c.Message = Fail, fmt.Sprintf("the http hooks post to %s, which is no URL: %v", h.URL, err)
		c.Fix = e.fix("install", scope, "--mode", "http")
		return c
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.http.HTTPHeaders(e.Getenv) {
		req.Header.Set(k, v)
	}
	_, sent, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	if e.clientErr != nil {
		c.Status, c.Message = Fail, e.clientErr.Error()
		return c
	}
	start := time.Now()
	resp, err := e.client.Do(req)
	took := time.Since(start)
	if err != nil {
		c.Status = Fail
		c.Message = fmt.Sprintf("POST %s: %v: the http hooks' events are lost while it does not answer (an http hook cannot spool), but for what the transcripts hold (the settings check says what comes back)", h.URL, shortErr(err))
		c.Fix = e.serveCmd() + "   # or keep it running: hookwatch service install"
		if e.elsewhere() {
			c.Fix = e.elsewhereFix()
		}
		return c
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	c.Message = fmt.Sprintf("POST %s answered HTTP %d in %v", h.URL, resp.StatusCode, took.Round(100*time.Microsecond))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		c.Status = Fail
		c.Message += ": the collector refuses the token the http hooks send (Authorization: Bearer $" + install.TokenEnv + "), so it drops their events"
		if why := hook.Refusal(body, sent); why != "" {
			c.Message += `; the collector says: "` + why + `"`
		}
		c.Fix = "export " + install.TokenEnv + "=\"$(cat " + claudecode.ShellQuote(filepath.Join(e.home, hook.TokenFile)) + ")\"   # in the profile Claude Code starts from"
		if sent != "" && sent == hook.ReadToken(e.home) {
			// The token file's token is the one refused: exporting it
			// again changes nothing; a new one must replace it.
			_, c.Fix = hook.RefusedToken(hook.TokenFromFile, sent, e.home, hook.Refusal(body, sent))
		}
		return c
	case resp.StatusCode/100 != 2:
		c.Status = Fail
		if s := strings.TrimSpace(string(body)); s != "" {
			c.Details = append(c.Details, "answer: "+firstLine(s))
		}
		c.Message += ": the http hooks' events are not stored"
		c.Fix = e.fix("install", scope, "--mode", "http")
		return c
	}
	c.Status = OK
	if strings.TrimRight(h.Collector, "/") != e.url || !e.collector || e.tokenRefused {
		return c // not HOOKWATCH_URL's collector, which doctor can ask
	}
	if e.storedSession(ctx, session) {
		c.Message += "; the collector stored session " + session
		return c
	}
	c.Status = Fail
	c.Message += "; but the collector did not store session " + session
	return c
}

// storedSession polls the collector for the session for up to the timeout:
// it may store asynchronously.
func (e *env) storedSession(ctx context.Context, id string) bool {
	deadline := time.Now().Add(e.Timeout)
	for {
		resp, _, err := e.get(ctx, "/v1/sessions/"+url.PathEscape(id))
		if err == nil && resp.StatusCode == http.StatusOK {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logLinesFor returns hook.log lines about session.
func (e *env) logLinesFor(session string) []string {
	var out []string
	for _, l := range recentLogLines(filepath.Join(e.home, "hook.log"), e.Now().Add(-time.Hour)) {
		if strings.Contains(l, strconv.Quote(session)) {
			out = append(out, l)
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// checkClaude reports the Claude Code version, what the support rule
// (install.ClientSupport) says of it, and whether the registered handlers
// suit it. An unsupported version is a warning: hookwatch may miss what
// the client does not send, but it records what it gets.
func (e *env) checkClaude(ctx context.Context) Check {
	c := Check{Name: "claude", Status: Info}
	v := ClaudeVersion(ctx, e.Timeout)
	if v == "" {
		c.Message = "claude is not on PATH (or did not tell its version within " + e.Timeout.String() + ")"
		return c
	}
	ver, _ := install.ParseVersion(v) // unknown: nothing is reported missing
	support := install.ClientSupport(ver)
	c.Status, c.Message = OK, "Claude Code "+ver.String()+", "+support.String()
	c.Details = append(c.Details, support.Explain(ver))
	if support == install.Unsupported {
		c.Status, c.Fix = Warn, "claude update"
	}
	for _, s := range e.settings {
		for _, h := range s.Handlers {
			switch {
			case h.Type == "command" && !h.Shell && ver.Before(install.ExecFormSince):
				c.Status = Fail
				c.Details = appendNew(c.Details, fmt.Sprintf("the %s settings use exec-form handlers (\"args\"), which Claude Code runs only from %s on", s.Scope, install.ExecFormSince))
				c.Fix = e.fix("install", s.Scope)
			case h.Type == "http" && ver.Before(install.HTTPSince):
				c.Status = Fail
				c.Details = appendNew(c.Details, fmt.Sprintf("the %s settings use http handlers, which Claude Code runs only from %s on", s.Scope, install.HTTPSince))
				c.Fix = e.fix("install", s.Scope, "--mode", "command")
			}
		}
	}
	if need, _ := install.ParseVersion(install.PluginMinClaudeVersion); len(e.plugins) > 0 && ver.Before(need) {
		c.Status = Fail
		c.Details = append(c.Details, "the hookwatch plugin needs Claude Code "+install.PluginMinClaudeVersion+" or later")
		c.Fix = "claude update"
	}
	return c
}

// ClaudeVersion runs "claude --version" and returns its first line, or ""
// when claude is not on PATH, fails or takes longer than timeout.
func ClaudeVersion(ctx context.Context, timeout time.Duration) string {
	p, err := lookPath("claude")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "--version")
	cmd.WaitDelay = 100 * time.Millisecond // a child keeping the pipe open must not hang us
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(firstLine(string(out)))
	if !strings.ContainsAny(s, "0123456789") {
		return ""
	}
	return s
}
