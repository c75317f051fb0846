package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/doctor"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/atomicfile"
)

func init() {
	register(command{
		name:    "install",
		summary: "register hookwatch's hooks in Claude Code's settings (Codex's with --codex)",
		run:     runInstall,
	})
	register(command{
		name:    "uninstall",
		summary: "remove hookwatch's hooks from Claude Code's settings (Codex's with --codex)",
		run:     runUninstall,
	})
}

// executable returns the path of the running hookwatch binary; tests point
// it at a directory of their own.
var executable = os.Executable

// binaries returns the running hookwatch, resolved through symlinks, and the
// binary the hooks should run: the lean hookwatch-hook beside it when there
// is one (the hook starts once per agent event, and the lean binary starts
// faster), else hookwatch itself.
func binaries() (self, hookBin string, err error) {
	exe, err := executable()
	if err != nil {
		return "", "", fmt.Errorf("cannot find the hookwatch binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", "", fmt.Errorf("cannot find the hookwatch binary: %w", err)
	}
	sib := filepath.Join(filepath.Dir(exe), claudecode.HookBinaryName+filepath.Ext(exe))
	if fi, err := os.Stat(sib); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return exe, sib, nil
	}
	return exe, exe, nil
}

// selfName is how the user runs this hookwatch, for the commands a
// message gives to run next: "go run ./cmd/hookwatch" from a build of 'go
// run' (the README's first lines run it so, before anything is installed:
// no hookwatch is on PATH yet), else "hookwatch".
func selfName() string {
	if self, _, err := binaries(); err == nil && install.IsTemporaryBuild(self) {
		return "go run ./cmd/hookwatch"
	}
	return "hookwatch"
}

// claudeVersion is what "claude --version" says, "" when it cannot tell.
func claudeVersion(ctx context.Context) string {
	return doctor.ClaudeVersion(ctx, 3*time.Second)
}

// homeChange is what install did, or would do in a dry run, to a file it
// keeps in the home for the hooks: the token (installToken) or the
// collector's URL (keepURL).
type homeChange int

const (
	homeNone     homeChange = iota // none given, and the home keeps none
	homeKept                       // the home's file stays: none given, or the same value
	homeStored                     // the value given, where the home kept none
	homeReplaced                   // the value given, in place of another
	homeRemoved                    // the file is gone (--url local)
)

// keepInHome writes value (one line) to the home's file name, mode 0600,
// where old is what the file holds now ("" for none), and says what that
// changes; a dry run writes nothing and says what it would change. Writing
// the same value again is homeKept, and written all the same: the file is
// then 0600 whatever it was.
func keepInHome(home, name, old, value string, dryRun bool) (homeChange, error) {
	change := homeReplaced
	switch old {
	case value:
		change = homeKept
	case "":
		change = homeStored
	}
	if dryRun {
		return change, nil
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return homeNone, fmt.Errorf("cannot create %s: %w", home, err)
	}
	if err := writePrivate(home, name, []byte(value+"\n")); err != nil {
		return homeNone, err
	}
	return change, nil
}

// installToken keeps the token --token or --token-file gives in the home's
// token file (hook.TokenFile), mode 0600, where the hook reads it: a
// settings file is shared, synced and committed, a token must not be. It
// says what it did, or would do in a dry run, to the home's token, which
// install reports: a token replaced changes what the hooks send even when
// the settings file stays as it is, and the token given ("" for none).
func installToken(flagValue, file string, stdin io.Reader, dryRun bool) (homeChange, string, error) {
	home := hook.Home(os.Getenv)
	var secret string
	switch {
	case flagValue != "" && file != "":
		return homeNone, "", fmt.Errorf("%w: --token and --token-file go alone", errUsage)
	case flagValue == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, 4096))
		if err != nil {
			return homeNone, "", fmt.Errorf("cannot read the token from stdin: %w", err)
		}
		secret = string(b)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return homeNone, "", fmt.Errorf("cannot read the token: %w", err)
		}
		secret = string(b)
	default:
		secret = flagValue
	}
	secret = strings.TrimSpace(secret)
	old := hook.ReadToken(home)
	if secret == "" {
		if flagValue != "" || file != "" {
			return homeNone, "", fmt.Errorf("%w: the token is empty", errUsage)
		}
		if old == "" {
			return homeNone, "", nil
		}
		return homeKept, "", nil
	}
	if strings.ContainsAny(secret, " \t\r\n") {
		return homeNone, "", fmt.Errorf("%w: a token is one word", errUsage)
	}
	change, err := keepInHome(home, hook.TokenFile, old, secret, dryRun)
	if err != nil {
		return homeNone, "", fmt.Errorf("cannot write the token: %w", err)
	}
	return change, secret, nil
}

// tokenReport is what install says it did to the home's token: nothing
// when it stays, else a line, and for a token replaced, what a forwarder
// running on this home does about it (it reads the file before each POST,
// so it sends the new token without a restart).
func tokenReport(change homeChange, dryRun bool) []string {
	home := hook.Home(os.Getenv)
	path := filepath.Join(home, hook.TokenFile)
	switch {
	case change == homeStored && dryRun:
		return []string{"Dry run: the token would be stored in " + path + " (nothing was written)."}
	case change == homeStored:
		return []string{"Stored the token in " + path + " (mode 0600)."}
	case change == homeReplaced && dryRun:
		return []string{"Dry run: the token in " + path + " would be replaced by the one given (nothing was written)."}
	case change != homeReplaced:
		return nil
	}
	lines := []string{"Replaced the token in " + path + " by the one given."}
	if c, ok := runningCollector(home); ok && strings.HasPrefix(c.Addr, hook.ForwarderAddr("")) {
		lines = append(lines, fmt.Sprintf("The running hookwatch forward (pid %d) sends it from its next attempt on (within a second when the collector refused the old one), without a restart, with the events waiting in the spool.", c.PID))
	}
	return lines
}

// localURLFlag is the --url value that sends the hooks back to this
// machine's collector: install removes the URL it kept.
const localURLFlag = "local"

// keepURL keeps the collector URL --url gives (given: --url was on the
// command line) in the home's hook.URLFile, mode 0600 like the token's,
// where the hooks read it when HOOKWATCH_URL is not set: Claude Code or
// Codex started from an IDE, a launcher or a fresh shell then sends to
// the collector install was told, not to a local one a hook would start.
// No --url keeps what the home keeps, so that installing again does not
// switch a team machine back to local; --url local (or --url ”) removes
// it. It returns what it did, or would do in a dry run, and the URL the
// home keeps afterwards ("" for none). The caller has checked url
// (hook.CheckURL) before writing anything else.
func keepURL(url string, given, dryRun bool) (homeChange, string, error) {
	home := hook.Home(os.Getenv)
	old := hook.ReadURL(home)
	url = strings.TrimRight(strings.TrimSpace(url), "/")
	switch {
	case !given && old == "":
		return homeNone, "", nil
	case !given:
		return homeKept, old, nil
	case url == "" || url == localURLFlag:
		if old == "" {
			return homeNone, "", nil
		}
		if !dryRun {
			if err := os.Remove(filepath.Join(home, hook.URLFile)); err != nil && !os.IsNotExist(err) {
				return homeNone, old, fmt.Errorf("cannot remove the URL kept: %w", err)
			}
		}
		return homeRemoved, "", nil
	}
	change, err := keepInHome(home, hook.URLFile, old, url, dryRun)
	if err != nil {
		return homeNone, old, fmt.Errorf("cannot keep the URL: %w", err)
	}
	return change, url, nil
}

// urlReport is what install says it did to the URL the home keeps, and,
// when HOOKWATCH_URL in install's own environment names another
// collector, that it wins over the kept one where it is exported.
func urlReport(change homeChange, kept string, given, dryRun bool) []string {
	path := filepath.Join(hook.Home(os.Getenv), hook.URLFile)
	var lines []string
	switch {
	case dryRun && (change == homeStored || change == homeReplaced):
		lines = append(lines, "Dry run: the collector URL "+kept+" would be kept in "+path+" (nothing was written).")
	case dryRun && change == homeRemoved:
		lines = append(lines, "Dry run: the collector URL kept in "+path+" would be removed (nothing was written).")
	case change == homeStored || change == homeReplaced:
		lines = append(lines, "Kept the collector URL "+kept+" in "+path+" (mode 0600): the hooks send there wherever Claude Code or Codex starts, unless HOOKWATCH_URL says otherwise.")
	case change == homeRemoved:
		lines = append(lines, "Removed the collector URL kept in "+path+": the hooks send to this machine's collector ("+hook.DefaultURL+") unless HOOKWATCH_URL says otherwise.")
	case change == homeKept && !given:
		lines = append(lines, "The hooks keep sending to "+kept+", the URL kept in "+path+": 'hookwatch install --url "+localURLFlag+"' sends them to this machine's collector again.")
	}
	if change == homeReplaced && !dryRun {
		// A forwarder sends the spool to the URL it started with and
		// holds the spool: the hooks' events for the new URL would wait
		// there for it, and no forwarder to the new one could start.
		if c, ok := runningCollector(hook.Home(os.Getenv)); ok && strings.HasPrefix(c.Addr, hook.ForwarderAddr("")) && c.Addr != hook.ForwarderAddr(kept) {
			old := strings.TrimPrefix(c.Addr, hook.ForwarderAddr(""))
			then := "the next hook starts the forwarder to " + kept
			if !hook.NeedsForwarder(kept) {
				then = "else the events a hook spools while " + kept + " does not answer go to " + old
			}
			lines = append(lines, fmt.Sprintf("Note: the running hookwatch forward (pid %d) sends this home's spool to %s, not to %s: run 'hookwatch stop'; %s.", c.PID, old, kept, then))
		}
	}
	if env := os.Getenv("HOOKWATCH_URL"); env != "" && kept != "" && strings.TrimRight(env, "/") != kept {
		lines = append(lines, "Note: HOOKWATCH_URL="+env+" in this environment wins over the URL kept ("+kept+"): an agent started from here sends there; unset it to send to "+kept+".")
	}
	return lines
}

// writePrivate replaces dir/name with data, mode 0600, atomically: a reader
// sees the old file or the new one (atomicfile.Write).
func writePrivate(dir, name string, data []byte) error {
	return atomicfile.Write(filepath.Join(dir, name), data, atomicfile.Options{})
}

// readCA reads file, the PEM certificates of a team's own certificate
// authority, and checks that the forwarder can use them; nil for no file.
// It is read before install writes anything, so that a bad one leaves
// nothing behind.
func readCA(file string) ([]byte, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read the CA file: %w", err)
	}
	if _, err := forward.NewClient(file); err != nil {
		return nil, err
	}
	return b, nil
}

// installCA keeps ca (readCA's) as the home's forward.CAFileName, which the
// forwarder trusts besides the system's roots.
func installCA(ca []byte, dryRun bool) error {
	if ca == nil || dryRun {
		return nil
	}
	home := hook.Home(os.Getenv)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", home, err)
	}
	if err := writePrivate(home, forward.CAFileName, ca); err != nil {
		return fmt.Errorf("cannot install the CA file: %w", err)
	}
	return nil
}

// scopeFlags are the flags install and uninstall share.
type scopeFlags struct {
	scope, project string
	dryRun         bool
}

func (f *scopeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scope, "scope", claudecode.ScopeUser, "settings file to edit: user (~/.claude/settings.json or $CLAUDE_CONFIG_DIR), project (.claude/settings.json) or local (.claude/settings.local.json)")
	fs.StringVar(&f.project, "project", "", "project directory for the project and local scopes (default: the working directory)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the change as a diff and write nothing")
}

// resolve makes the project directory absolute and clean, taken once from
// the working directory: Codex runs in the project, where a relative path
// would name another directory, and keys the project's hooks and its trust
// in config.toml by the absolute path, which the messages then name too.
// An empty one stays empty: the working directory.
func (f *scopeFlags) resolve() error {
	if f.project == "" {
		return nil
	}
	abs, err := filepath.Abs(f.project)
	if err != nil {
		return fmt.Errorf("cannot find the project directory: %w", err)
	}
	f.project = abs
	return nil
}

const installSynopsis = `install [--scope user|project|local] [--mode command|http] [--statusline] [--dry-run] [--project DIR] [--url URL|local] [--token SECRET|-] [--token-file FILE] [--ca-file FILE]
       hookwatch install --codex [--scope user|project [--trust-project]] [--codex-bin PATH] [--dry-run] [--project DIR]

Registers hookwatch for every hook event in Claude Code's settings file of the
scope (user: ~/.claude/settings.json), beside the hooks already there, and
keeps a copy of the file as it was (<file>.hookwatch-backup). In command mode,
the default, Claude Code runs hookwatch-hook for each event, which hands it to
the collector and keeps it in the spool while the collector is down; in http
mode Claude Code posts the events to the collector itself, but for the few
events that take no http handler: an http hook cannot spool, and install
says what is lost while the collector is down and what comes back. Run again, install replaces its own entries
and keeps the mode installed unless --mode says otherwise; 'hookwatch
uninstall' removes exactly what it added. --codex does the same for OpenAI
Codex's hooks. For a team server, --token-file FILE or --token - (stdin)
keeps its token in $HOOKWATCH_HOME/token, never in the settings file (see
docs/team-server.md), and --url keeps the collector's URL in
$HOOKWATCH_HOME/url, where the hooks read it when HOOKWATCH_URL is not set
in the agent's environment: installing again without --url keeps it,
--url local sends the hooks to this machine's collector again. --token
SECRET works too, but the secret then shows in ps to every user of the
machine and stays in the shell's history.
The hooks run the binaries beside this hookwatch: install refuses to run
from a build of 'go run', which goes away (go install them first).

Examples:
  hookwatch install
  hookwatch install --scope project --dry-run
  hookwatch install --mode http
  hookwatch install --url https://hookwatch.example.com --token-file ann.token
  hookwatch install --url local
  hookwatch install --codex`

// installFlags are the values of install's flags.
type installFlags struct {
	sf                                  scopeFlags
	cf                                  codexFlags
	mode, url, token, tokenFile, caFile *string
	statusline                          *bool
}

// installFlagSet defines install's flags: the one definition runInstall
// parses and the docs' command lines are checked against.
func installFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, *installFlags) {
	fs := newFlagSet("install", installSynopsis, stdout, stderr)
	f := new(installFlags)
	f.sf.register(fs)
	f.mode = fs.String("mode", "", "command: Claude Code runs the hook binary per event (events are spooled while the collector is down); http: Claude Code posts events to the collector where it can (default: the mode already installed in this scope, else command)")
	f.statusline = fs.Bool("statusline", false, "also make hookwatch Claude Code's statusLine (wrapping the one already set)")
	f.url = fs.String("url", "", "the collector's base URL, kept in $HOOKWATCH_HOME/"+hook.URLFile+" for the hooks, which send there when HOOKWATCH_URL is not set where the agent starts; "+localURLFlag+" (or '') removes it, for this machine's collector "+install.DefaultCollectorURL+" (default: $HOOKWATCH_URL, else the URL kept, else that one; HOOKWATCH_URL, where the agent starts, wins over the URL kept)")
	f.token = fs.String("token", "", "the team server's token; - reads it from stdin, as --token-file reads a file: a secret given here shows in ps and the shell's history. Kept in $HOOKWATCH_HOME/token, mode 0600, never in the settings file")
	f.tokenFile = fs.String("token-file", "", "read the team server's token from this file instead of --token")
	f.caFile = fs.String("ca-file", "", "the PEM certificate of the authority that signed an https:// team server's certificate, when the system does not trust it: kept in $HOOKWATCH_HOME/"+forward.CAFileName+" for the forwarder and the commands that ask the server")
	f.cf.register(fs, false)
	fs.BoolVar(&f.cf.trustProject, "trust-project", false, "with --codex --scope project: also trust the project in $CODEX_HOME/config.toml (Codex loads a project's .codex/ hooks only then; it trusts all of the project's Codex configuration)")
	return fs, f
}

func runInstall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, f := installFlagSet(stdout, stderr)
	mode, statusline, url, tokenFlag, tokenFile, caFile := f.mode, f.statusline, f.url, f.token, f.tokenFile, f.caFile
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	sf, cf := f.sf, f.cf // as parsed
	// Flags that do not go together, or name no settings file, are refused
	// before anything is written or printed: refused half way, install
	// would leave the token, or hooks nothing trusts, behind.
	if set := claudeOnly(fs); cf.codex && len(set) > 0 {
		return fmt.Errorf("%w: %s", errUsage, claudeOnlyRefusal(set))
	}
	if cf.trustProject && (!cf.codex || sf.scope != claudecode.ScopeProject) {
		return fmt.Errorf("%w: --trust-project goes with --codex --scope project", errUsage)
	}
	if cf.codex {
		if err := checkCodexBin(cf.bin); err != nil {
			return err
		}
	}
	if err := sf.resolve(); err != nil {
		return err
	}
	runtime := event.RuntimeClaudeCode
	if cf.codex {
		runtime = event.RuntimeCodex
	}
	if _, err := install.SettingsPath(install.Options{Runtime: runtime, Scope: sf.scope, Mode: *mode, ProjectDir: sf.project}); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// The hooks run the binary install finds beside itself: one 'go run'
	// built goes away, and every hook event would fail from then on.
	if self, _, err := binaries(); err == nil && install.IsTemporaryBuild(self) {
		return fmt.Errorf("%s is a build of 'go run', deleted when it exits or when the build cache is trimmed, and the hooks would fail from then on: install hookwatch (go install ./cmd/hookwatch ./cmd/hookwatch-hook), then run that binary's 'hookwatch install'", self)
	}
	ca, err := readCA(*caFile)
	if err != nil {
		return err
	}
	// A --url no collector answers at is refused before anything is
	// written: the hooks would spool every event for good.
	urlGiven := flagSet(fs, "url")
	if u := strings.TrimSpace(*url); urlGiven && u != "" && u != localURLFlag {
		if err := hook.CheckURL(u); err != nil {
			return fmt.Errorf("%w: --url: %v (or --url %s for this machine's collector)", errUsage, err, localURLFlag)
		}
	}
	change, given, err := installToken(*tokenFlag, *tokenFile, stdin, sf.dryRun)
	if err != nil {
		return err
	}
	if given != "" {
		// The token the hooks will send, read as they read it: one of
		// HOOKWATCH_TOKEN comes before the file's, and the token just given
		// would never be sent.
		home := hook.Home(os.Getenv)
		if sent, src := hook.LookupToken(os.Getenv, home); src == hook.TokenFromEnv && sent != given {
			fmt.Fprintf(stderr, "hookwatch install: warning: %s is exported here with another token than the one given: the hooks send it, not the file's, as the variable comes first. Unset it in the profile Claude Code starts from, or export it from the file there: export %s=\"$(cat %s)\"\n",
				install.TokenEnv, install.TokenEnv, claudecode.ShellQuote(filepath.Join(home, hook.TokenFile)))
		}
	}
	if *tokenFlag != "" && *tokenFlag != "-" {
		// Stored all the same: the secret is out already, and refusing
		// would only make the user type it again.
		fmt.Fprintln(stderr, "hookwatch install: warning: the token given as --token's value shows in ps to every user of this machine while install runs, and stays in the shell's history: next time use --token-file FILE, or --token - to read it from stdin")
	}
	hasToken := change != homeNone
	if err := installCA(ca, sf.dryRun); err != nil {
		return err
	}
	uchange, kept, err := keepURL(*url, urlGiven, sf.dryRun)
	if err != nil {
		return err
	}
	reports := append(tokenReport(change, sf.dryRun), urlReport(uchange, kept, urlGiven, sf.dryRun)...)
	if cf.codex {
		return installCodex(ctx, sf, cf, stdout, reports...)
	}
	self, hookBin, err := binaries()
	if err != nil {
		return err
	}
	// The command hooks post where HOOKWATCH_URL, else the URL kept, says:
	// installed with one no collector answers at, they would spool every
	// event for good.
	// Read as the hooks will read it, with the URL kept as it is after
	// this install: a dry run writes none, and says what the real one
	// would.
	hookCfg, _ := hook.ConfigKeepingURL(os.Getenv, kept)
	if err := hook.CheckURL(hookCfg.URL); err != nil {
		return fmt.Errorf("%w: %s: %v: the hooks would deliver no event; fix it, or unset it for the default %s", errUsage, hookCfg.URLSource, err, hook.DefaultURL)
	}
	commandURL := hookCfg.Base()
	var notes []string
	// The hooks run the lean binary; the statusLine needs hookwatch itself.
	bin := hookBin
	// collector is the URL the http hooks post to: the one given, else
	// where the command hooks send (HOOKWATCH_URL, else the URL kept);
	// "" for the default.
	collector := ""
	if hookCfg.URLSource != hook.URLDefault {
		collector = commandURL
	}
	if urlGiven && *url != localURLFlag {
		collector = *url
	}
	o := install.Options{
		Scope:            sf.scope,
		Mode:             *mode,
		Binary:           bin,
		CollectorURL:     collector,
		TokenHeader:      hasToken,
		ProjectDir:       sf.project,
		ClaudeVersion:    claudeVersion(ctx),
		Statusline:       *statusline,
		StatuslineBinary: self,
		DryRun:           sf.dryRun,
	}
	if o.Mode == "" {
		// A re-install keeps the mode (and the URL http hooks post to).
		m, u, err := install.Installed(o)
		if err != nil {
			return err
		}
		o.Mode = cmp.Or(m, install.ModeCommand)
		if m == install.ModeHTTP && !urlGiven && u != "" {
			o.CollectorURL = u
		}
	}
	httpURL := strings.TrimRight(cmp.Or(o.CollectorURL, install.DefaultCollectorURL), "/")
	if o.Mode == install.ModeHTTP && httpURL != commandURL {
		// The events that take no http handler run the command hook, which
		// posts where HOOKWATCH_URL, else the URL kept, says: another
		// collector would get part of each session.
		notes = append(notes, strings.Join(install.CommandOnly(), ", ")+" take no http handler and run the command hook, which posts to "+commandURL+" ("+hookCfg.URLSource.String()+"): run 'hookwatch install --mode http --url "+httpURL+"' to keep that URL for it too, and unset HOOKWATCH_URL if it names another, so that their events reach the same collector")
	}
	if o.Mode == install.ModeHTTP {
		notes = append(notes, install.HTTPDownNote(install.LocalCollector(o.CollectorURL)))
	}
	if o.Mode == install.ModeHTTP && !install.LocalCollector(o.CollectorURL) {
		notes = append(notes, "the http hooks send the name of this machine from $"+claudecode.HostEnv+", which Claude Code reads from its environment: add 'export "+claudecode.HostEnv+"=\"$(hostname)\"' to the profile Claude Code starts from (unset, the collector records this machine by its address)")
	}
	if o.Mode != install.ModeHTTP && collector != "" && hook.NeedsForwarder(collector) {
		notes = append(notes, "the hook posts only plain http:// to an IP address: it hands the events for "+collector+" to 'hookwatch forward', which the first hook starts in the background (keep it running across reboots: hookwatch service install --forward; 'hookwatch doctor' says whether it runs)")
	}
	if hasToken {
		if o.Mode == install.ModeHTTP {
			notes = append(notes, "the http hooks send $HOOKWATCH_TOKEN, which Claude Code reads from its environment: add 'export HOOKWATCH_TOKEN=\"$(cat "+filepath.Join(hook.Home(os.Getenv), hook.TokenFile)+")\"' to the profile Claude Code starts from")
		} else {
			notes = append(notes, "the command hook reads the token from "+filepath.Join(hook.Home(os.Getenv), hook.TokenFile)+" when HOOKWATCH_TOKEN is not set and it sends to a collector HOOKWATCH_URL or the URL kept names")
		}
	}
	r, err := install.Install(o)
	if err != nil {
		return err // it names the file
	}
	r.Notes = append(notes, r.Notes...)
	printResult(stdout, r, "install", sf.dryRun, reports...)
	if !sf.dryRun && r.Changed {
		how := bin + " hook"
		if o.Mode == install.ModeHTTP {
			how = "POST " + o.HookURL() + " (where Claude Code allows it), else " + how
		}
		fmt.Fprintf(stdout, "Hooks run: %s\n", how)
		base := cmp.Or(o.CollectorURL, collector, install.DefaultCollectorURL)
		// Whether the hooks will hold a team server's token, read as
		// they read it, with the URL kept.
		home := hook.Home(os.Getenv)
		team := hook.ForTeamServer(hookCfg.TokenSource, hookCfg.Token, home)
		token := hookCfg.Token
		running, drains := false, false
		if install.LocalCollector(base) {
			running, drains = health(ctx, base, token, time.Second)
		}
		if running && install.CollectorOfAnotherHome(home, base, drains, team) {
			// It would take this home's events into its database.
			io.WriteString(stdout, otherHomeNote(base, home))
			return nil
		}
		st := collectorState{running: running, team: team, noAutostart: !hookCfg.Autostart}
		if c, ok := hook.AttachedElsewhere(home, base); ok && !running && !team {
			st.elsewhere = "http://" + c.Addr
		}
		io.WriteString(stdout, nextSteps(base, st))
	}
	return nil
}

// otherHomeNote is what install says when the collector at base, on this
// machine, is not the collector of home: the hooks would send their events
// into another home's database, and this home's collector cannot listen
// there.
func otherHomeNote(base, home string) string {
	return "Note: the collector answering at " + base + " is the collector of another HOOKWATCH_HOME (another user's, or a service's), not of " + home + ":\n" +
		"the hooks would send their events to it, into that home's database, and this home's collector cannot listen there.\n" +
		"Stop that collector where it runs, or run this home's elsewhere: hookwatch serve --addr 127.0.0.1:<port>, and\n" +
		"hookwatch install --url http://127.0.0.1:<port>. 'hookwatch doctor' checks it.\n"
}

// collectorState is what install found of the collector the hooks send
// to, for nextSteps.
type collectorState struct {
	// running: a collector answers at the URL.
	running bool
	// team: the hooks hold a team server's token.
	team bool
	// noAutostart: HOOKWATCH_AUTOSTART is off, so no hook starts a
	// collector or a forwarder.
	noAutostart bool
	// elsewhere is the URL of this home's collector when it runs at another
	// address than the hooks send to (hook.AttachedElsewhere), else "".
	elsewhere string
}

// nextSteps is what install says to do once the hooks send to the
// collector at base: a collector on this machine starts with the first
// hook, unless it runs already, the hooks hold a team server's token (base
// on this machine is the server's tunnel, and no hook starts a collector
// there), HOOKWATCH_AUTOSTART is off, or this home's collector runs at
// another address (no hook can start another one, and the hooks are to be
// pointed at it); a remote one's events go through a forwarder the first
// hook starts, or straight from the hook.
func nextSteps(base string, st collectorState) string {
	const doctor = "Check the setup any time with 'hookwatch doctor'"
	const service = "; keep the collector running across reboots with 'hookwatch service install'.\n"
	switch {
	case install.LocalCollector(base) && st.team:
		return "Next: open Claude Code. The hooks send the events to " + base + " with the team server's token; while nothing answers there they wait in the spool, and no collector is started on this machine.\n" +
			doctor + ".\n"
	case install.LocalCollector(base) && st.running:
		return "Next: open Claude Code. The collector runs already; the dashboard is at " + base + ".\n" + doctor + service
	case install.LocalCollector(base) && st.elsewhere != "":
		return "Note: this home's collector runs at " + st.elsewhere + ", not at " + base + " where the hooks send; no hook can start another one.\n" +
			"Next: hookwatch install --url " + st.elsewhere + ", then open Claude Code; the dashboard is at " + st.elsewhere + ".\n" +
			doctor + ".\n"
	case install.LocalCollector(base) && st.noAutostart:
		return "Next: HOOKWATCH_AUTOSTART is off, so no hook starts the collector: start it: hookwatch serve, then open Claude Code; the dashboard is at " + base + ".\n" + doctor + service
	case install.LocalCollector(base):
		return "Next: open Claude Code. The first hook starts the collector in the background; the dashboard is at " + base + ".\n" + doctor + service
	case hook.NeedsForwarder(base) && st.noAutostart:
		return "Next: HOOKWATCH_AUTOSTART is off, so no hook starts 'hookwatch forward', which sends the events to " + base + " (its dashboard): start it with 'hookwatch forward', or keep it running across reboots with 'hookwatch service install --forward'.\n" +
			doctor + ".\n"
	case hook.NeedsForwarder(base):
		return "Next: open Claude Code. The first hook starts 'hookwatch forward' in the background, which sends the events to " + base + " (its dashboard).\n" +
			doctor + "; keep the forwarder running across reboots with 'hookwatch service install --forward'.\n"
	}
	return "Next: open Claude Code. The hooks send the events to " + base + " (its dashboard).\n" + doctor + ".\n"
}

const uninstallSynopsis = `uninstall [--codex] [--scope user|project|local] [--dry-run] [--project DIR]

Removes from the settings file of the scope exactly the hooks and status line
'hookwatch install' added, and leaves everything else in it as it is. When the
file then says what it said before install, the copy install kept is written
back byte for byte and deleted; when it does not (it was edited since), the
copy stays beside it. It says when a collector still runs: 'hookwatch stop'
stops it. The recorded data in $HOOKWATCH_HOME stays: uninstall says how to
remove it.

Examples:
  hookwatch uninstall
  hookwatch uninstall --scope project --dry-run
  hookwatch uninstall --codex`

// uninstallFlagSet defines uninstall's flags: the one definition
// runUninstall parses and the docs' command lines are checked against.
func uninstallFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, *scopeFlags, *codexFlags) {
	fs := newFlagSet("uninstall", uninstallSynopsis, stdout, stderr)
	sf, cf := new(scopeFlags), new(codexFlags)
	sf.register(fs)
	cf.register(fs, true)
	return fs, sf, cf
}

func runUninstall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, sfp, cfp := uninstallFlagSet(stdout, stderr)
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	sf, cf := *sfp, *cfp // as parsed
	if err := sf.resolve(); err != nil {
		return err
	}
	uninstall := uninstallClaude
	if cf.codex {
		uninstall = uninstallCodex
	}
	if err := uninstall(sf, stdout); err != nil {
		return err
	}
	if sf.dryRun {
		return nil
	}
	home := hook.Home(os.Getenv)
	if c, ok := runningCollector(home); ok {
		// The hooks are gone, the collector is not: say so rather than
		// leave a server listening that the user believes uninstalled.
		fmt.Fprintf(stdout, "A collector is still running at http://%s%s; stop it with: hookwatch stop\n", c.Addr, pidNote(c.PID))
	}
	if fi, err := os.Stat(home); err == nil && fi.IsDir() {
		// Uninstall keeps what was recorded (another scope's hooks, or
		// Codex's, may still write there): say where it is, so that
		// removing hookwatch for good is one command away.
		fmt.Fprintf(stdout, "hookwatch's data stays in %s (the database, logs, spool and import state); once hookwatch is uninstalled everywhere and stopped, remove it with: rm -rf %s\n", home, claudecode.ShellQuote(home))
	}
	if u := hook.ReadURL(home); u != "" {
		// Kept like the token, with the data: another scope's hooks, or
		// Codex's, may still send there, and installing again goes on
		// sending to the same collector.
		fmt.Fprintf(stdout, "The collector URL the hooks send to (%s) stays with the data, in %s; 'hookwatch install --url local' removes it.\n", u, filepath.Join(home, hook.URLFile))
	}
	return nil
}

// uninstallClaude removes hookwatch from the Claude Code settings of sf.
func uninstallClaude(sf scopeFlags, stdout io.Writer) error {
	_, hookBin, err := binaries()
	if err != nil {
		return err
	}
	o := install.Options{Scope: sf.scope, Binary: hookBin, ProjectDir: sf.project, DryRun: sf.dryRun}
	if _, err := install.SettingsPath(o); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	r, err := install.Uninstall(o)
	if err != nil {
		return err // it names the file
	}
	printResult(stdout, r, "uninstall", sf.dryRun)
	return nil
}

func pidNote(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// printResult tells what Install or Uninstall did: the file, whether it
// changed (with the diff for a dry run), then done, what else the command
// did (the token it replaced: "nothing to change" only when nothing did),
// the backup and the notes.
func printResult(w io.Writer, r install.Result, verb string, dry bool, done ...string) {
	var b strings.Builder
	switch {
	case !r.Changed && verb == "install" && len(done) > 0:
		fmt.Fprintf(&b, "hookwatch is already installed in %s: its hooks stay as they are.\n", r.Path)
	case !r.Changed && verb == "install":
		fmt.Fprintf(&b, "hookwatch is already installed in %s: nothing to change.\n", r.Path)
	case !r.Changed:
		fmt.Fprintf(&b, "%s does not register hookwatch: nothing to change.\n", r.Path)
	case dry:
		fmt.Fprintf(&b, "Dry run: %s would change as follows (nothing was written):\n\n%s\n", r.Path, r.Diff)
	case r.Removed:
		fmt.Fprintf(&b, "Removed %s (hookwatch had created it).\n", r.Path)
	case r.Restored:
		fmt.Fprintf(&b, "Restored %s to its content from before hookwatch, byte for byte.\n", r.Path)
	case r.Created:
		fmt.Fprintf(&b, "Created %s (%s).\n", r.Path, diffStat(r.Diff))
	default:
		fmt.Fprintf(&b, "Updated %s (%s).\n", r.Path, diffStat(r.Diff))
	}
	for _, d := range done {
		fmt.Fprintln(&b, d)
	}
	if r.Backup != "" {
		if _, err := os.Stat(r.Backup); err != nil && dry {
			fmt.Fprintf(&b, "Backup of the file as it is: would be written to %s\n", r.Backup)
		} else {
			fmt.Fprintf(&b, "Backup of the file from before hookwatch: %s\n", r.Backup)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	io.WriteString(w, b.String())
}

// diffStat counts the added and removed lines of a unified diff.
func diffStat(diff string) string {
	add, del := 0, 0
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return fmt.Sprintf("+%d -%d lines", add, del)
}
