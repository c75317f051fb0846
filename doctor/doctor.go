// Package doctor checks a hookwatch setup end to end and explains what is
// wrong: which Claude Code settings files register hookwatch and whether the
// binaries they name exist, duplicate registrations (events arriving twice),
// the collector, a HOOKWATCH_ADDR that is not the address of the hooks'
// URL, the settings serve and forward read from the environment
// (this shell's and the service's unit's) and would refuse to start on, the
// spool backlog, recent hook failures, the database
// directory, policy files, a live hook round trip and the Claude Code version
// with what the support rule (install.ClientSupport) says of it; and Codex's
// hooks files: present, pointing at this hookwatch, trusted.
//
// Every check yields a Check; a failed one carries the command that fixes it.
// Checks change nothing. The round trip sends one synthetic Notification
// through the registered hook with the hook's autostart off; its session id
// starts with event.ProbeSessionPrefix, so the collector stores it (the check
// looks for it) but leaves it out of the session list. With no collector to
// take it, the hook runs in a scratch HOOKWATCH_HOME, so that neither the
// spool nor hook.log keeps a trace of it. With http hooks installed, a
// second round trip posts one where they post, with the headers Claude Code
// would send from this environment (the token among them).
package doctor

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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
	"github.com/hookwatch/hookwatch/spool"
)

// Status is the verdict of one check.
type Status string

// Verdicts, from good to bad. Only Fail makes a setup broken.
const (
	OK   Status = "ok"   // checked and fine
	Info Status = "info" // nothing to judge: a file that does not exist, a check that does not apply
	Warn Status = "warn" // works, but worth knowing
	Fail Status = "fail" // broken: hookwatch does not record, or breaks the agent
)

// Check is the outcome of one check.
type Check struct {
	// Name says what was checked ("collector", "settings (user)" …).
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Message is one sentence of what was found.
	Message string `json:"message"`
	// Details are further lines (log lines, policy problems …).
	Details []string `json:"details,omitempty"`
	// Fix is the command that fixes a problem, when there is one.
	Fix string `json:"fix,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Checks []Check `json:"checks"`
	// Problems counts the failed checks, Warnings the warnings.
	Problems int `json:"problems"`
	Warnings int `json:"warnings"`
}

// OK reports whether no check failed.
func (r *Report) OK() bool { return r.Problems == 0 }

func (r *Report) add(c Check) {
	switch c.Status {
	case Fail:
		r.Problems++
	case Warn:
		r.Warnings++
	}
	r.Checks = append(r.Checks, c)
}

// Options configures Run. Zero fields take the defaults documented on them.
type Options struct {
	// Getenv reads the environment (HOME, CLAUDE_CONFIG_DIR, HOOKWATCH_*);
	// default os.Getenv.
	Getenv func(string) string
	// Environ is the environment of the hook round trip; default os.Environ().
	Environ []string
	// WorkDir is the project directory whose project and local settings and
	// .hookwatch/policy.yaml are checked; default the working directory. A
	// relative one is taken from the working directory.
	WorkDir string
	// Self is the running hookwatch binary, resolved through symlinks.
	Self string
	// HookBinary is the binary install registers: Self's lean
	// hookwatch-hook sibling when there is one, else Self.
	HookBinary string
	// Version is the running hookwatch's version.
	Version string
	// Database is the database hookwatch serve would open, as the caller
	// resolves it for serve (HOOKWATCH_DB, else hookwatch.db in
	// HOOKWATCH_HOME): a postgres:// URL, or a SQLite file's path. The
	// database check reads no setting itself; "" skips it.
	Database string
	// RoundTrip runs the registered hook once with a synthetic event.
	RoundTrip bool
	// ManagedSettings is the organisation's managed settings file; default
	// claudecode.ManagedSettingsPath().
	ManagedSettings string
	// PolicyFiles are the policy files to check when they exist; default
	// $HOOKWATCH_HOME/policy.yaml, <WorkDir>/.hookwatch/policy.yaml and
	// /etc/hookwatch/policy.yaml.
	PolicyFiles []string
	// CheckPolicy validates policy files, writing one line per problem to
	// w; nil skips the policy check. policy.Check fits.
	CheckPolicy func(w io.Writer, files ...string) error
	// CheckSettings returns the variables of getenv that command (serve,
	// forward), started with args, refuses to start on, read as the
	// command reads them; nil skips the check of the settings serve and
	// forward read from the environment (checkStartSettings).
	CheckSettings func(command string, args []string, getenv func(string) string) []Refusal
	// Timeout bounds each network request and command; default 3 s.
	Timeout time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// env is the resolved environment of a run.
type env struct {
	Options
	home string // HOOKWATCH_HOME
	// codexInstalled: a Codex hooks file registers hookwatch.
	codexInstalled bool
	userHome       string
	configDir      string
	url            string
	urlSource      hook.URLSource // where url came from: HOOKWATCH_URL, the URL install kept, the default
	token          string
	tokenSource    hook.TokenSource // where token came from, which says what fixes a refused one
	settings       []*Settings
	plugins        []string // enabled hookwatch plugins, from all settings files
	collector      bool     // the collector answered /healthz and takes the token
	tokenRefused   bool     // the collector is up but refuses the token
	claudeVers     string
	// client asks the collector, built once per run (the CA file read once,
	// and one connection kept alive across the checks); clientErr is why it
	// could not be built, which every request then reports.
	client    *http.Client
	clientErr error
	// projectFlag is what a fix on a project's settings adds to name
	// the project (" --project DIR"): "" for the working directory's.
	projectFlag string
}

// Run runs every check and returns the report. It never fails: a check that
// cannot run says so in its Check.
func Run(ctx context.Context, o Options) *Report {
	e := &env{Options: o}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.Environ == nil {
		e.Environ = os.Environ()
	}
	// Absolute, as Codex keys a project's hooks (and runs in the project,
	// where a relative path names another directory), and as a hook's
	// payload names its cwd. "" is the working directory.
	if d, err := filepath.Abs(e.WorkDir); err == nil {
		e.WorkDir = d
	}
	// A fix run from the shell doctor ran in acts on the project there:
	// for another one it names the project, as it was named to doctor.
	if wd, err := os.Getwd(); err == nil && wd != e.WorkDir {
		e.projectFlag = " --project " + claudecode.ShellQuote(e.WorkDir)
	}
	if e.Timeout <= 0 {
		e.Timeout = 3 * time.Second
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.ManagedSettings == "" {
		e.ManagedSettings = claudecode.ManagedSettingsPath()
	}
	// The collector, home and token the hook would use, read as it reads
	// them.
	cfg, _ := hook.ConfigFromEnv(e.Getenv)
	e.home, e.url, e.urlSource, e.token, e.tokenSource = cfg.Home, cfg.Base(), cfg.URLSource, cfg.Token, cfg.TokenSource
	e.userHome = e.Getenv("HOME")
	if e.userHome == "" {
		e.userHome, _ = os.UserHomeDir()
	}
	e.configDir, _ = claudecode.UserConfigDir(e.Getenv, e.userHome)
	e.client, e.clientErr = forward.NewClient(forward.CAFile(e.Getenv, e.home))
	if e.client != nil {
		defer e.client.CloseIdleConnections()
	}
	if e.PolicyFiles == nil {
		e.PolicyFiles = []string{
			filepath.Join(e.home, "policy.yaml"),
			filepath.Join(e.WorkDir, ".hookwatch", "policy.yaml"),
			"/etc/hookwatch/policy.yaml",
		}
	}

	r := &Report{}
	r.add(e.checkBinary())
	for _, c := range e.checkSettings() {
		r.add(c)
	}
	r.add(e.checkPlugin())
	for _, c := range e.checkCodex(ctx) {
		r.add(c)
	}
	r.add(e.checkRegistration())
	r.add(e.checkHookURL())
	if c, ok := e.checkServeAddr(); ok {
		r.add(c)
	}
	r.add(e.checkCollector(ctx))
	if c, ok := e.checkTeamURL(); ok {
		r.add(c)
	}
	if hook.NeedsForwarder(e.url) {
		r.add(e.checkForwarder())
	}
	for _, c := range e.checkStartSettings() {
		r.add(c)
	}
	r.add(e.checkSpool())
	r.add(e.checkHookLog())
	r.add(e.checkRejected())
	if c, ok := e.checkImportState(); ok {
		r.add(c)
	}
	r.add(e.checkDatabase(ctx))
	r.add(e.checkDisk())
	r.add(e.checkPolicy())
	if e.RoundTrip {
		r.add(e.checkRoundTrip(ctx))
		if h, scope, ok := e.httpHandler(); ok {
			r.add(e.checkHTTPRoundTrip(ctx, h, scope))
		}
	}
	r.add(e.checkClaude(ctx))
	return r
}

// WriteText writes r for a person: one line per check, its details and fix
// indented below it, and a summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	label := map[Status]string{OK: "ok", Info: "--", Warn: "WARN", Fail: "FAIL"}
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%-4s  %-*s  %s\n", label[c.Status], width, c.Name, c.Message)
		pad := strings.Repeat(" ", 6+width+2)
		for _, d := range c.Details {
			fmt.Fprintf(&b, "%s%s\n", pad, d)
		}
		if c.Fix != "" {
			fmt.Fprintf(&b, "%sfix: %s\n", pad, c.Fix)
		}
	}
	switch {
	case r.Problems == 0 && r.Warnings == 0:
		b.WriteString("\nNo problems found.\n")
	default:
		fmt.Fprintf(&b, "\n%d problem%s, %d warning%s.\n", r.Problems, plural(r.Problems), r.Warnings, plural(r.Warnings))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes r as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(struct {
		OK bool `json:"ok"`
		*Report
	}{r.OK(), r}, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode the report: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// checkBinary names the running binary and the one the hooks should run.
func (e *env) checkBinary() Check {
	c := Check{Name: "hookwatch", Status: OK}
	switch {
	case e.Self == "":
		c.Message = fmt.Sprintf("version %s", e.Version)
	case e.HookBinary != "" && e.HookBinary != e.Self:
		c.Message = fmt.Sprintf("version %s at %s, with %s beside it for the hooks", e.Version, e.Self, filepath.Base(e.HookBinary))
	default:
		c.Message = fmt.Sprintf("version %s at %s; no %s beside it, so hooks run hookwatch itself (slower to start)", e.Version, e.Self, claudecode.HookBinaryName)
	}
	return c
}

// fix returns the command that runs `hookwatch <verb>` on the settings file
// of scope, with flags after the scope's. The managed settings are the
// administrator's, which hookwatch does not edit: the fix is an editor on
// the file.
func (e *env) fix(verb, scope string, flags ...string) string {
	if scope == claudecode.ScopeManaged {
		return e.editFix(scope, e.ManagedSettings)
	}
	s := "hookwatch " + verb
	if scope != claudecode.ScopeUser && scope != "" && scope != "plugin" {
		s += " --scope " + scope + e.projectFlag
	}
	for _, f := range flags {
		s += " " + f
	}
	return s
}

// ours reports whether bin is the running hookwatch or its lean sibling.
func (e *env) ours(bin string) bool {
	return bin != "" && (bin == e.Self || bin == e.HookBinary ||
		(e.Self != "" && bin == filepath.Join(filepath.Dir(e.Self), claudecode.HookBinaryName)))
}

// checkSettings reads the settings files and checks what each registers:
// the managed one when it exists (first, as it is the one to keep when
// another scope registers hookwatch again), then the user's, the
// project's and the local one.
func (e *env) checkSettings() []Check {
	var out []Check
	for _, scope := range []string{claudecode.ScopeManaged, claudecode.ScopeUser, claudecode.ScopeProject, claudecode.ScopeLocal} {
		name := "settings (" + scope + ")"
		path, err := claudecode.SettingsPath(scope, e.configDir, e.WorkDir)
		if scope == claudecode.ScopeManaged {
			path = e.ManagedSettings
			if _, err := os.Stat(path); err != nil {
				continue // most machines have none: not worth a line
			}
		}
		if err != nil {
			out = append(out, Check{Name: name, Status: Fail, Message: err.Error()})
			continue
		}
		if scope == claudecode.ScopeProject && e.userSettingsFile(path) {
			// Run from the home, the project's settings file is the
			// user's: one file, checked once, whose handlers registered
			// twice would be a duplicate that is not there.
			out = append(out, Check{Name: name, Status: Info,
				Message: path + " is the user settings file (the working directory is the home): checked as the user's"})
			continue
		}
		s, err := ReadSettings(scope, path)
		if err != nil {
			out = append(out, Check{Name: name, Status: Fail,
				Message: fmt.Sprintf("%v: Claude Code cannot read this file's hooks either", err),
				Fix:     e.editFix(scope, path)})
			continue
		}
		e.settings = append(e.settings, s)
		e.plugins = appendNew(e.plugins, s.Plugins...)
		out = append(out, e.checkOneSettings(s))
	}
	return out
}

// userSettingsFile reports whether path is the user scope's settings file,
// by name or as the same file.
func (e *env) userSettingsFile(path string) bool {
	user, err := claudecode.SettingsPath(claudecode.ScopeUser, e.configDir, e.WorkDir)
	if err != nil {
		return false
	}
	if filepath.Clean(user) == filepath.Clean(path) {
		return true
	}
	a, errA := os.Stat(user)
	b, errB := os.Stat(path)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

func (e *env) checkOneSettings(s *Settings) Check {
	c := Check{Name: "settings (" + s.Scope + ")", Status: OK}
	reinstall := e.fix("install", s.Scope)
	switch {
	case !s.Exists:
		c.Status, c.Message = Info, s.Path+" does not exist"
		return c
	case len(s.Handlers) == 0 && s.Statusline == "":
		c.Status, c.Message = Info, s.Path+" does not register hookwatch"
		return c
	}
	events := map[string]bool{}
	for _, h := range s.Handlers {
		events[h.Event] = true
	}
	var what []string
	for _, b := range s.Binaries() {
		what = append(what, b)
	}
	for _, h := range s.Handlers {
		if h.Type == "http" {
			what = appendNew(what, h.URL)
		}
		if h.Launcher {
			what = appendNew(what, "the plugin launcher")
		}
	}
	c.Message = fmt.Sprintf("%s registers %s for %d event%s", s.Path, strings.Join(what, " and "), len(events), plural(len(events)))
	if s.Statusline != "" {
		c.Message += " and the statusLine"
	}
	fail := func(msg, fix string) {
		c.Status = Fail
		c.Details = append(c.Details, msg)
		if c.Fix == "" {
			c.Fix = fix
		}
	}
	for _, b := range s.Binaries() {
		path, err := resolveBinary(b)
		switch {
		case err != nil:
			fail(fmt.Sprintf("%s: %v; every hook event fails", b, err), reinstall)
		case !e.ours(path) && !e.ours(b):
			if c.Status == OK {
				c.Status = Warn
			}
			c.Details = append(c.Details, fmt.Sprintf("%s is not this hookwatch (%s)", b, e.Self))
			if c.Fix == "" {
				c.Fix = reinstall
			}
		}
	}
	if s.Statusline != "" {
		if w, ok := claudecode.ShellWords(s.Statusline); ok {
			if _, err := resolveBinary(w[0]); err != nil {
				fail(fmt.Sprintf("the statusLine runs %s: %v", w[0], err), e.fix("install", s.Scope, "--statusline"))
			}
		}
	}
	// The events that take no http handler run the command hook, which
	// posts to HOOKWATCH_URL: another collector than the http hooks' gets
	// part of every session.
	var byCommand []string
	httpTo := ""
	for _, h := range s.Handlers {
		switch {
		case h.Type == "http" && h.Collector != "":
			httpTo = h.Collector
		case h.Type == "command":
			byCommand = appendNew(byCommand, h.Event)
		}
	}
	if httpTo != "" {
		c.Details = append(c.Details, install.HTTPDownNote(install.LocalCollector(httpTo)))
	}
	if httpTo != "" && len(byCommand) > 0 && strings.TrimRight(httpTo, "/") != strings.TrimRight(e.url, "/") {
		if c.Status == OK {
			c.Status = Warn
		}
		c.Details = append(c.Details, fmt.Sprintf("the http hooks post to %s, but %s run the command hook, which posts to %s (%s): each session is split between the two", httpTo, strings.Join(byCommand, ", "), e.url, e.urlSource))
		if c.Fix == "" {
			c.Fix = e.pointFix(strings.TrimRight(httpTo, "/"))
		}
	}
	if d := s.Duplicates(); len(d) > 0 {
		// Install keeps one hookwatch group per event and removes the rest.
		fail(fmt.Sprintf("hookwatch is registered more than once for %s: those events arrive twice", strings.Join(d, ", ")), reinstall)
	}
	return c
}

// resolveBinary checks that the program name exists and is executable: an
// absolute path as is, a bare name on PATH.
func resolveBinary(name string) (string, error) {
	if !strings.ContainsAny(name, `/\`) {
		p, err := lookPath(name)
		if err != nil {
			return "", fmt.Errorf("not found on PATH")
		}
		return p, nil
	}
	fi, err := os.Stat(name)
	switch {
	case err != nil:
		return "", fmt.Errorf("does not exist")
	case fi.IsDir():
		return "", fmt.Errorf("is a directory")
	case fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("is not executable")
	}
	return name, nil
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, x := range list {
			if x == it {
				found = true
				break
			}
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}

// checkRegistration looks at all sources together: nothing registered, or
// several sources that would each run the hook for the same event.
func (e *env) checkRegistration() Check {
	c := Check{Name: "registration", Status: OK}
	var scopes []string
	ids := map[string]map[string][]string{} // event → identity → scopes
	for _, s := range e.settings {
		if len(s.Handlers) == 0 {
			continue
		}
		scopes = append(scopes, s.Scope)
		for _, h := range s.Handlers {
			if ids[h.Event] == nil {
				ids[h.Event] = map[string][]string{}
			}
			ids[h.Event][h.Identity()] = appendNew(ids[h.Event][h.Identity()], s.Scope)
		}
	}
	plugin := len(e.plugins) > 0
	switch {
	case len(scopes) == 0 && !plugin && e.codexInstalled:
		c.Status = Info
		// Nothing is wrong for someone who uses only Codex: the fix is
		// for watching Claude Code as well.
		c.Message = "no settings file registers hookwatch and its plugin is not enabled: only Codex runs it, Claude Code does not"
		c.Fix = "hookwatch install   # only to watch Claude Code too"
		return c
	case len(scopes) == 0 && !plugin:
		c.Status = Fail
		c.Message = "no settings file registers hookwatch and its plugin is not enabled: Claude Code does not run it"
		c.Fix = "hookwatch install"
		return c
	case plugin && len(scopes) > 0:
		c.Status = Fail
		c.Message = fmt.Sprintf("both the plugin (%s) and the %s settings register hookwatch: every event arrives twice",
			strings.Join(e.plugins, ", "), strings.Join(scopes, " and "))
		c.Fix = e.uninstallAll(scopes)
		return c
	case plugin:
		c.Message = "hookwatch runs through its plugin (" + strings.Join(e.plugins, ", ") + ")"
		return c
	}
	// Claude Code runs a handler defined identically in several settings
	// files once; handlers that differ run once each.
	twice, same := map[string]bool{}, false
	for _, byID := range ids {
		if len(byID) > 1 {
			for _, sc := range byID {
				for _, s := range sc {
					twice[s] = true
				}
			}
		}
		for _, sc := range byID {
			if len(sc) > 1 {
				same = true
			}
		}
	}
	switch {
	case len(twice) > 0:
		c.Status = Fail
		c.Message = fmt.Sprintf("the %s settings register different hookwatch handlers: every event arrives once per handler", strings.Join(scopes, " and "))
		var extra []string
		for _, s := range scopes[1:] {
			if twice[s] {
				extra = append(extra, s)
			}
		}
		if len(extra) == 0 {
			extra = scopes[1:]
		}
		c.Fix = e.uninstallAll(extra)
		if len(extra) == 0 {
			// One file registers the different handlers: install keeps one
			// hookwatch group per event and removes the rest.
			c.Fix = e.fix("install", scopes[0])
		}
	case same:
		c.Status = Warn
		c.Message = fmt.Sprintf("the %s settings register the same hookwatch handler; Claude Code runs it once, but uninstalling one scope leaves the other", strings.Join(scopes, " and "))
	default:
		c.Message = "hookwatch is registered in the " + strings.Join(scopes, " and ") + " settings"
	}
	return c
}

// editFix is the command that opens the settings file path of scope in an
// editor; the managed one belongs to root.
func (e *env) editFix(scope, path string) string {
	fix := "$EDITOR " + claudecode.ShellQuote(path)
	if scope == claudecode.ScopeManaged {
		return "sudo " + fix
	}
	return fix
}

func (e *env) uninstallAll(scopes []string) string {
	var cmds []string
	for _, s := range scopes {
		cmds = append(cmds, e.fix("uninstall", s))
	}
	return strings.Join(cmds, " && ")
}

// get performs a GET against the collector with the token and the timeout.
func (e *env) get(ctx context.Context, path string) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
	if err != nil {
		return nil, nil, err
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	if e.clientErr != nil {
		return nil, nil, e.clientErr
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, body, err
}

// autostarts reports whether a hook that finds no collector at e.url starts
// one: on by default, for a loopback URL, with HOOKWATCH_AUTOSTART not off,
// unless the hook sends to a team server (forTeamServer).
func (e *env) autostarts() bool {
	if !e.autostartOn() || e.forTeamServer() {
		return false
	}
	return e.localURL()
}

// attachedElsewhere is the URL of this home's collector when it runs at
// another address than e.url (hook.AttachedElsewhere), else "": with
// e.url's scheme, https:// for hooks that send to a collector serving TLS,
// since the spool's lock names the address alone.
func (e *env) attachedElsewhere() string {
	if c, ok := hook.AttachedElsewhere(e.home, e.url); ok {
		return e.scheme() + "://" + c.Addr
	}
	return ""
}

// scheme is the scheme of e.url, lower case: "https" for a collector that
// serves TLS (serve --tls-cert) or a team server behind a proxy that does,
// else "http".
func (e *env) scheme() string {
	if u, err := url.Parse(e.url); err == nil && u.Scheme == "https" {
		return "https"
	}
	return "http"
}

// runElsewhereFix is the fix that runs this home's collector at another
// address of this machine and points the hooks at it, serving TLS as the
// collector at e.url does when its URL is https://.
func (e *env) runElsewhereFix() string {
	if e.scheme() == "https" {
		return "hookwatch serve --addr 127.0.0.1:<port> --tls-cert <cert.pem> --tls-key <key.pem>, and " + e.pointFix("https://127.0.0.1:<port>")
	}
	return "hookwatch serve --addr 127.0.0.1:<port>, and " + e.pointFix("http://127.0.0.1:<port>")
}

// tunnel reports whether the hooks send to a team server through a URL on
// this machine, a tunnel to it (ssh -L): the collector answering there, or
// not, is the server, not this home's, and no fix starts one here.
func (e *env) tunnel() bool { return e.localURL() && e.forTeamServer() }

// elsewhere reports whether the collector the hooks send to is none this
// machine runs: one at a URL on another machine, or a team server reached
// through a tunnel. No fix starts, stops or restarts it here.
func (e *env) elsewhere() bool { return !e.localURL() || e.forTeamServer() }

// elsewhereFix is the fix for a collector elsewhere (env.elsewhere) the
// hooks cannot deliver to: another machine's, or a team server's.
func (e *env) elsewhereFix() string {
	return "check " + e.urlSource.String() + " (and the tunnel to the server, if it goes through one), or ask the server's admin whether it runs"
}

// localURL reports whether the collector URL is on this machine, as
// install and the hook's autostart read it (install.LocalCollector).
func (e *env) localURL() bool { return install.LocalCollector(e.url) }

// autostartOn reports whether HOOKWATCH_AUTOSTART lets hooks start a
// collector or a forwarder: on unless set off.
func (e *env) autostartOn() bool { return !envflag.Off(e.Getenv("HOOKWATCH_AUTOSTART")) }

// Health is what a collector's GET /healthz answers, as far as the
// commands that ask it read it. A caller its token does not admit (on a
// collector that requires one) is told the status and version alone.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
	DB      string `json:"db"`
	// Spool is set by a collector that drains the spool of a home.
	Spool *struct {
		Unacknowledged int64 `json:"unacknowledged"`
	} `json:"spool"`
}

// DrainsSpool reports whether the collector said it drains a home's spool
// (install.CollectorOfAnotherHome tells whose).
func (h Health) DrainsSpool() bool { return h.Spool != nil }

// checkCollector asks the collector for /healthz.
func (e *env) checkCollector(ctx context.Context) Check {
	c := Check{Name: "collector"}
	if err := hook.CheckURL(e.url); err != nil {
		c.Status, c.Message = Fail, fmt.Sprintf("%s: %v: every event is spooled and never delivered", e.urlSource, err)
		c.Fix = "export HOOKWATCH_URL=" + hook.DefaultURL + "   # or unset it, for that default"
		if e.urlSource == hook.URLFromFile {
			c.Fix = "hookwatch install --url <the collector's URL>   # or --url local, for " + hook.DefaultURL
		}
		return c
	}
	resp, body, err := e.get(ctx, "/healthz")
	switch {
	case err != nil && e.attachedElsewhere() != "" && !e.tunnel():
		// This home's collector runs, at another address: it drains the
		// spool the hooks fall back on, and no collector of this home can
		// start at e.url beside it.
		addr := e.attachedElsewhere()
		c.Status = Warn
		c.Message = fmt.Sprintf("%s is not reachable (%v), but this home's collector runs at %s: the command hooks' events reach it through the spool, after trying %s (hook.log says so each time); http hooks and the commands that ask the collector at %s (%s) miss it", e.url, shortErr(err), addr, e.url, e.url, e.urlSource)
		c.Fix = e.pointFix(addr) + "   # or 'hookwatch stop', and start it at " + e.url
		return c
	case err != nil && e.autostarts() && e.autostartRefused():
		c.Status = Fail
		c.Message = fmt.Sprintf("%s is not running (%v), and the collector the next hook event starts refuses a setting of this environment (collector settings says which): events wait in the spool", e.url, shortErr(err))
		c.Fix = "mend the setting collector settings names, then: " + e.serveCmd() + "   # or let the next hook event start it"
		return c
	case err != nil && e.autostarts():
		// Not a problem: the next hook starts it (hook.Config.Autostart).
		c.Status = Warn
		c.Message = fmt.Sprintf("%s is not running (%v); the next hook event starts it in the background", e.url, shortErr(err))
		c.Fix = e.serveCmd() + "   # to start it now, or keep it running: hookwatch service install"
		return c
	case err != nil && e.elsewhere():
		// Another machine's, or a team server's: a collector started here
		// would not be it.
		server := "the collector"
		if e.forTeamServer() {
			server = "the team server"
		}
		c.Status = Fail
		c.Message = fmt.Sprintf("%s at %s is not reachable (%v): the hook's events wait in the spool and go to it once it answers", server, e.url, shortErr(err))
		c.Fix = e.elsewhereFix()
		return c
	case err != nil:
		c.Status = Fail
		c.Message = fmt.Sprintf("%s is not reachable (%v): events wait in the spool", e.url, shortErr(err))
		c.Fix = e.serveCmd() + "   # or keep it running: hookwatch service install"
		return c
	}
	var h Health
	_ = json.Unmarshal(body, &h)
	if resp.StatusCode != http.StatusOK {
		c.Status = Fail
		c.Message = fmt.Sprintf("%s/healthz answered HTTP %d", e.url, resp.StatusCode)
		switch {
		case h.Status == "" && e.tunnel():
			// The tunnel's address, held by another program than the
			// tunnel to the server: no collector of this home belongs there.
			c.Message += ", which is not a hookwatch collector's answer: another program than the tunnel to the team server listens there"
			c.Fix = e.elsewhereFix()
			return c
		case h.Status == "" && e.elsewhere():
			// Another machine's answer, a proxy's in front of a server
			// that is down, say: nothing to start here.
			c.Message += ", which is not a hookwatch collector's answer: a proxy in front of the collector, or another program, answers there; the hook's events wait in the spool"
			c.Fix = e.elsewhereFix()
			return c
		}
		if h.Status == "" {
			// Not hookwatch's answer: another program holds the address.
			c.Message += ", which is not a hookwatch collector's answer: another program listens there"
			c.Fix = "run the collector elsewhere and point the hooks at it: " + e.runElsewhereFix()
			return c
		}
		if h.DB != "" && h.DB != "ok" {
			c.Message += ": database: " + h.DB
		}
		if e.elsewhere() {
			// The server's own trouble, for its admin to mend.
			c.Message += ": the server's trouble; the hook's events wait in the spool"
			c.Fix = "ask the server's admin: its log says why"
			return c
		}
		c.Fix = "read why in the collector's log (" + claudecode.ShellQuote(filepath.Join(e.home, hook.ServeLog)) + " when a hook or the launchd agent started it), then restart it: hookwatch stop; " + e.serveCmd()
		return c
	}
	e.collector = true
	// /healthz is open; the rest needs the token the hook sends.
	if resp, body, err := e.get(ctx, "/v1/sessions?limit=1"); err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		// Named by where the token came from, with the fix that fits it: a
		// team server's user installs a new token, not HOOKWATCH_TOKEN.
		why := hook.Refusal(body, e.token)
		what, fix := hook.RefusedToken(e.tokenSource, e.token, e.home, why)
		c.Status = Fail
		c.Message = fmt.Sprintf("%s is up but %s (HTTP %d): the hook's events are refused and stay in the spool", e.url, what, resp.StatusCode)
		if why != "" {
			c.Details = append(c.Details, `the collector says: "`+why+`"`)
		}
		c.Fix = fix
		if hook.SpoolDelivers(e.home, e.url) {
			// The command hook's events reach it through the spool; only
			// the API, and http hooks, need the token.
			c.Status = Warn
			c.Message = fmt.Sprintf("%s is up but its API %s (HTTP %d): the command hook's events reach it through the spool, but http hooks, hookwatch sessions and the other commands that ask it are refused", e.url, what, resp.StatusCode)
		}
		e.collector, e.tokenRefused = false, true
		return c
	}
	c.Status = OK
	c.Message = e.url + " is up"
	if h.Version != "" {
		c.Message += ", version " + h.Version
		if e.Version != "" && h.Version != e.Version {
			c.Status = Warn
			c.Message += fmt.Sprintf(" (this hookwatch is %s)", e.Version)
		}
	}
	if install.CollectorOfAnotherHome(e.home, e.url, h.DrainsSpool(), e.forTeamServer()) {
		// The hooks post their events to it, into a database that is not
		// this home's, and its dashboard shows that home's sessions.
		c.Status = Warn
		c.Message = fmt.Sprintf("%s is up, but it is the collector of another HOOKWATCH_HOME, not of %s: this home's hooks send their events to it, into that home's database, and a collector of this home cannot listen there", e.url, e.home)
		c.Fix = "if that is not meant: stop that collector where it runs ('hookwatch stop' with its HOOKWATCH_HOME), or run this home's elsewhere: " + e.runElsewhereFix()
		return c
	}
	// The spool's lock names the collector draining it by its address, with
	// no scheme: it is the one at e.url, http:// or https://, when it listens
	// at e.url's (a forwarder's replaced binary is the forwarder check's).
	if info, attached := spool.Consumer(filepath.Join(e.home, "spool")); attached && hook.SpoolDelivers(e.home, e.url) {
		if exe, replaced := replacedBinary(info.PID); replaced {
			// An upgrade replaced the binary; the collector a hook started
			// before it still runs the old one, and this home's hooks ask it
			// for their policies' answers.
			c.Status = Warn
			msg, fix := replacedMessage(info.PID, exe)
			c.Message += msg
			c.Fix = fix
		}
	}
	if h.Status == "degraded" {
		c.Status = Warn
		c.Message += ", degraded"
		if h.Spool != nil && h.Spool.Unacknowledged > 0 {
			n := h.Spool.Unacknowledged
			c.Message += fmt.Sprintf(": %d event%s lost that nobody acknowledged (see spool)", n, plural(int(n)))
			c.Fix = ackLossesFix
		}
	}
	return c
}

// checkTeamURL fails, and is reported (ok), when the home holds a team
// server's token (install --token) but neither HOOKWATCH_URL nor a URL
// install kept names a collector: the hooks then send the events to the
// local default collector, which a hook starts, into this machine's
// database, and read no token (hook.LookupToken), so the team server
// never sees them.
func (e *env) checkTeamURL() (Check, bool) {
	if e.tokenSource != hook.TokenNone || hook.ReadToken(e.home) == "" {
		return Check{}, false
	}
	return Check{
		Name:   "team server",
		Status: Fail,
		Message: fmt.Sprintf("a team server's token is installed (%s), but no collector URL is kept (%s) nor set in HOOKWATCH_URL: the hooks send the events to %s, the collector of this machine, not to the team server",
			filepath.Join(e.home, hook.TokenFile), filepath.Join(e.home, hook.URLFile), hook.DefaultURL),
		Fix: "hookwatch install --url <the team server's URL>, then start Claude Code again",
	}, true
}

// checkHookURL says where the hooks send the events and why: the URL
// HOOKWATCH_URL gives in doctor's environment, else the one install kept
// (hook.LookupURL), else the local default. It warns when HOOKWATCH_URL
// here names another collector than the one kept: an agent started from
// this environment sends to the first, one started from an IDE, a launcher
// or another shell to the second.
func (e *env) checkHookURL() Check {
	c := Check{Name: "hook URL", Status: OK}
	file := filepath.Join(e.home, hook.URLFile)
	kept := hook.ReadURL(e.home)
	switch e.urlSource {
	case hook.URLFromFile:
		c.Message = fmt.Sprintf("the hooks send the events to %s, kept in %s by 'hookwatch install --url'", e.url, file)
	case hook.URLFromEnv:
		c.Message = fmt.Sprintf("the hooks send the events to %s, from HOOKWATCH_URL here", e.url)
	default:
		c.Message = fmt.Sprintf("the hooks send the events to %s, this machine's collector (the default: no URL kept, HOOKWATCH_URL unset)", e.url)
	}
	if e.urlSource == hook.URLFromEnv && kept != "" && strings.TrimRight(kept, "/") != e.url {
		c.Status = Warn
		c.Message += fmt.Sprintf(", not to %s, the URL kept in %s: an agent started where HOOKWATCH_URL is not set (an IDE, a launcher, another shell) sends there", kept, file)
		c.Fix = "unset HOOKWATCH_URL where the agent starts, or keep it for every agent: hookwatch install --url " + e.url
	}
	return c
}

// serveCmd is the command that starts, from this environment, the
// collector the hooks send to: 'hookwatch serve', with --addr their URL's
// address where serve would listen elsewhere without it (HOOKWATCH_ADDR
// set to another address, or a URL not at serve's default address), and
// for an https:// URL on this machine, which no hook starts a collector
// for, with its address and the certificate it serves TLS with.
func (e *env) serveCmd() string {
	if e.scheme() == "https" && e.localURL() {
		addr := "<host:port>"
		if u, err := url.Parse(e.url); err == nil {
			addr = net.JoinHostPort(u.Hostname(), cmp.Or(u.Port(), "443"))
		}
		return "hookwatch serve --addr " + addr + " --tls-cert <cert.pem> --tls-key <key.pem>"
	}
	args := e.hookServeArgs()
	if len(args) == 0 || !e.localURL() {
		return "hookwatch serve"
	}
	own := e.Getenv("HOOKWATCH_ADDR")
	if own == "" {
		own = strings.TrimPrefix(hook.DefaultURL, "http://") // serve's default address
	}
	if own == args[1] {
		return "hookwatch serve"
	}
	return "hookwatch serve " + strings.Join(args, " ")
}

// checkServeAddr warns, and is reported (ok), when HOOKWATCH_ADDR is set
// to another address than the hooks' URL's, a collector on this machine's
// (a loopback host; an https:// URL without a port is at 443), unless it
// is a tunnel to a team server (tunnel), where no collector of this
// machine runs. HOOKWATCH_ADDR is the address of 'hookwatch serve' run
// without --addr. For an http:// URL the collector a hook, demo, import or
// doctor --start starts for the hooks listens where they send, whatever
// it says: a serve started by hand there gets no events from the hooks,
// and the collector the hooks start is not where the user looks for it.
// For an https:// URL no hook starts one (serveCmd): the serve the user
// starts by hand with --tls-cert and --tls-key, without --addr, listens at
// HOOKWATCH_ADDR, where the hooks do not send.
func (e *env) checkServeAddr() (Check, bool) {
	set := e.Getenv("HOOKWATCH_ADDR")
	u, err := url.Parse(e.url)
	if set == "" || err != nil || !e.localURL() || e.tunnel() {
		return Check{}, false
	}
	var host string
	switch {
	case u.Scheme == "http" && u.Port() != "":
		host = u.Host
	case u.Scheme == "https":
		host = net.JoinHostPort(u.Hostname(), cmp.Or(u.Port(), "443"))
	default:
		return Check{}, false
	}
	if install.ListensAt(set, host) {
		return Check{}, false
	}
	c := Check{
		Name:   "HOOKWATCH_ADDR",
		Status: Warn,
		Message: fmt.Sprintf("HOOKWATCH_ADDR=%s here, but the hooks send to %s (%s): the collector a hook, demo, import or doctor --start starts listens on %s; HOOKWATCH_ADDR sets only where 'hookwatch serve' run without --addr listens, where the hooks do not send",
			set, e.url, e.urlSource, host),
		Fix: e.pointFix(u.Scheme+"://"+set) + "   # or unset HOOKWATCH_ADDR",
	}
	if u.Scheme == "https" {
		c.Message = fmt.Sprintf("HOOKWATCH_ADDR=%s here, but the hooks send to %s (%s): no hook starts a collector serving TLS, and 'hookwatch serve --tls-cert … --tls-key …' run by hand without --addr listens at HOOKWATCH_ADDR, where the hooks do not send",
			set, e.url, e.urlSource)
		// Unset, serve listens at its default address: a way out only
		// when the hooks send there.
		or := "   # or point the hooks there: "
		if install.ListensAt(strings.TrimPrefix(hook.DefaultURL, "http://"), host) {
			or = "   # or unset HOOKWATCH_ADDR, or point the hooks there: "
		}
		c.Fix = "hookwatch serve --addr " + host + " --tls-cert <cert.pem> --tls-key <key.pem>" + or + e.pointFix("https://"+set)
	}
	return c, true
}

// pointFix is the fix that makes the hooks send to url: install keeps it
// for every agent, wherever it starts, but HOOKWATCH_URL set here wins
// over it and is unset first.
func (e *env) pointFix(url string) string { return PointFix(e.urlSource, url) }

// PointFix is the command that points the hooks, and the commands that ask
// the collector, at the collector at url, where the URL they use now came
// from src: 'hookwatch install --url' keeps it, but a HOOKWATCH_URL, which
// wins over the URL kept, must be unset first.
func PointFix(src hook.URLSource, url string) string {
	fix := "hookwatch install --url " + url
	if src == hook.URLFromEnv {
		fix = "unset HOOKWATCH_URL (in the profile Claude Code starts from too), then " + fix
	}
	return fix
}

// forwarderRuns reports whether the consumer attached to the home's spool
// is the forwarder to e.url, the one the hook hands its events to.
func (e *env) forwarderRuns() bool {
	info, attached := spool.Consumer(filepath.Join(e.home, "spool"))
	return attached && info.Addr == hook.ForwarderAddr(e.url)
}

// checkForwarder says whether a forwarder delivers the spool to e.url, one
// the hook cannot post to itself (an https:// URL, a host name): without
// one, the events wait in the spool.
func (e *env) checkForwarder() Check {
	c := Check{Name: "forwarder"}
	dir := filepath.Join(e.home, "spool")
	info, attached := spool.Consumer(dir)
	switch {
	case e.forwarderRuns():
		c.Status = OK
		c.Message = fmt.Sprintf("hookwatch forward (pid %d) delivers the hooks' events to %s", info.PID, e.url)
		if exe, replaced := replacedBinary(info.PID); replaced {
			// An upgrade replaced the binary: the forwarder still runs the
			// old one, and delivers as the old version did.
			c.Status = Warn
			c.Message += fmt.Sprintf(", but it runs a hookwatch binary replaced since it started (%s): it delivers as the old version did", exe)
			c.Fix = "hookwatch stop   # the next hook starts the new one (or: hookwatch forward; a service: hookwatch service install --forward again)"
		}
	case attached:
		c.Status = Fail
		c.Message = fmt.Sprintf("%s is attached to %s: the hooks' events for %s wait there, and it takes them", info.Addr, dir, e.url)
		c.Fix = "hookwatch stop && hookwatch forward"
	case e.autostartOn():
		c.Status = Warn
		c.Message = fmt.Sprintf("no forwarder runs: the hook cannot post to %s itself; the next hook event starts 'hookwatch forward' in the background", e.url)
		c.Fix = "hookwatch forward   # to start it now, or keep it running: hookwatch service install --forward"
	default:
		c.Status = Fail
		c.Message = fmt.Sprintf("no forwarder runs and HOOKWATCH_AUTOSTART is off: the hook cannot post to %s itself, so its events wait in the spool", e.url)
		c.Fix = "hookwatch forward   # or keep it running: hookwatch service install --forward"
	}
	return c
}

// shortErr drops the "Get \"url\": " prefix net/http puts on its errors.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "Get ") {
		return s[i+2:]
	}
	return s
}

// recentLogLines returns the lines of hook.log (tail only) written since
// since, oldest first.
func recentLogLines(path string, since time.Time) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const tail = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		_, _ = f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, tail))
	var out []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		s := string(bytes.TrimSpace(line))
		ts, _, ok := strings.Cut(s, " ")
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || t.Before(since) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// replacedBinary reports whether process pid runs an executable that was
// replaced (deleted or renamed over) since it started, as an upgrade
// does, or the removal of a build of 'go run': Linux names it "…
// (deleted)". exe is the path it ran from. Elsewhere, or without a pid,
// false.
func replacedBinary(pid int) (exe string, replaced bool) {
	if pid <= 0 || runtime.GOOS != "linux" {
		return "", false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || !strings.HasSuffix(exe, " (deleted)") {
		return "", false
	}
	return strings.TrimSuffix(exe, " (deleted)"), true
}

// replacedMessage is what the collector check adds, and its fix, for the
// collector pid whose binary exe is gone since it started. A build of 'go
// run' (README's first 'go run ./cmd/hookwatch demo' starts one in the
// background) was removed, not upgraded: said so, since nothing was
// installed over it.
func replacedMessage(pid int, exe string) (msg, fix string) {
	if install.IsTemporaryBuild(exe) {
		return fmt.Sprintf("; it (pid %d) runs a build of 'go run' that is gone (%s), started by a 'go run ./cmd/hookwatch' demo or serve: not the hookwatch installed here", pid, exe),
			"hookwatch stop   # the next hook starts the installed one (or: hookwatch serve)"
	}
	return fmt.Sprintf("; it (pid %d) runs a hookwatch binary replaced since it started: its policies, model and schema are the old version's", pid),
		"hookwatch stop   # the next hook starts the new one (or: hookwatch serve; a service: hookwatch service install again)"
}
