package install

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/codex"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Modes name the kind of handler Install registers.
const (
	// ModeCommand runs the hookwatch binary ("hookwatch hook") per event: it
	// spools events while the collector is down.
	ModeCommand = "command"
	// ModeHTTP has Claude Code POST events straight to the collector where
	// the event allows http handlers; the rest still get command handlers.
	ModeHTTP = "http"
)

// TokenEnv is the environment variable that holds the collector's token,
// for the hook and for Claude Code's http handlers.
const TokenEnv = "HOOKWATCH_TOKEN"

// DefaultCollectorURL is the collector base URL of --mode http when
// Options.CollectorURL is empty (the HOOKWATCH_URL default).
const DefaultCollectorURL = "http://127.0.0.1:7421"

// BackupSuffix is appended to the settings file's name for the copy Install
// keeps of the file as it was before hookwatch was added.
const BackupSuffix = ".hookwatch-backup"

// Options says which settings file to edit and what to put in it.
type Options struct {
	// Scope is claudecode.ScopeUser (the default), ScopeProject or
	// ScopeLocal; the managed settings are the administrator's.
	Scope string
	// Mode is ModeCommand (the default) or ModeHTTP.
	Mode string
	// Binary is the absolute path of the hookwatch binary, written into
	// command handlers and the statusLine. Install requires it in both
	// modes (some events accept no http handler); Uninstall uses it only
	// to recognise entries whose binary is not named hookwatch or
	// hookwatch-hook (claudecode.Handler.Kind).
	Binary string
	// CollectorURL is the collector's base URL for ModeHTTP; default
	// DefaultCollectorURL.
	CollectorURL string
	// TokenHeader makes ModeHTTP's handlers send "Authorization: Bearer
	// $HOOKWATCH_TOKEN", which Claude Code fills in from its environment
	// (allowedEnvVars): the token itself is never written into the
	// settings file.
	TokenHeader bool
	// ProjectDir is the project root for ScopeProject and ScopeLocal;
	// default the working directory.
	ProjectDir string
	// Home is the user's home directory; default os.UserHomeDir().
	Home string
	// ConfigDir is Claude Code's configuration directory for ScopeUser;
	// default $CLAUDE_CONFIG_DIR, then Home/.claude.
	ConfigDir string
	// ClaudeVersion, when set (the output of "claude --version" will
	// do), leaves out the events that version does not know yet (see
	// Event.Since) and removes hookwatch's groups for them.
	ClaudeVersion string
	// Statusline also registers hookwatch as the statusLine command,
	// wrapping the one already configured. Uninstall always removes
	// hookwatch's statusLine, whatever this says.
	Statusline bool
	// StatuslineBinary is the binary the statusLine runs; default Binary.
	// The hooks may run the lean hookwatch-hook, which has no statusline
	// subcommand, while the statusLine needs hookwatch itself.
	StatuslineBinary string
	// DryRun computes the Result, diff included, without touching any file.
	DryRun bool
	// Runtime is the agent whose hooks file is edited: Claude Code ("" or
	// event.RuntimeClaudeCode) or Codex (event.RuntimeCodex: its hooks.json
	// of the user scope, in ConfigDir, default codex.Home, or of the
	// project scope, <ProjectDir>/.codex/hooks.json; Mode, the statusLine
	// and ClaudeVersion do not apply).
	Runtime string

	version Version // ClaudeVersion, parsed
}

// Result reports what Install or Uninstall did (or, with DryRun, would do).
type Result struct {
	// Path is the settings file.
	Path string
	// Changed reports whether the file's content changed.
	Changed bool
	// Created reports that the file did not exist and Install created it.
	Created bool
	// Removed reports that the call deleted the file: Uninstall, because
	// Install had created it and nothing else was added since;
	// UntrustCodex, because nothing but the trust it took out was in it.
	Removed bool
	// Restored reports that Uninstall wrote the backup back byte for byte.
	Restored bool
	// Backup is the backup of the file as it was before hookwatch was
	// added, when one exists after the call; "" otherwise.
	Backup string
	// Diff is a unified diff from the old content to the new; "" when
	// nothing changed.
	Diff string
	// Notes are things the user should know, one sentence each.
	Notes []string
}

// SettingsPath returns the settings file of o's scope.
func SettingsPath(o Options) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	return o.path()
}

func (o Options) path() (string, error) {
	if o.codex() {
		switch o.Scope {
		case claudecode.ScopeUser:
			return filepath.Join(o.ConfigDir, codex.HooksFileName), nil
		case claudecode.ScopeProject:
			return filepath.Join(o.ProjectDir, codex.ProjectDirName, codex.HooksFileName), nil
		}
		return "", fmt.Errorf("unknown Codex scope %q: want %s or %s", o.Scope, claudecode.ScopeUser, claudecode.ScopeProject)
	}
	if o.Scope == claudecode.ScopeManaged {
		return "", fmt.Errorf("the %s settings are the administrator's: hookwatch does not edit them", o.Scope)
	}
	return claudecode.SettingsPath(o.Scope, o.ConfigDir, o.ProjectDir)
}

// codex reports whether o edits Codex's hooks file.
func (o Options) codex() bool { return o.Runtime == event.RuntimeCodex }

// events are the events o registers for.
func (o Options) events() []Event {
	if o.codex() {
		return codexEvents
	}
	return eventsFor(o.version)
}

// withDefaults fills the empty fields of o and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.Scope == "" {
		o.Scope = claudecode.ScopeUser
	}
	if o.Mode == "" {
		o.Mode = ModeCommand
	}
	if o.Mode != ModeCommand && o.Mode != ModeHTTP {
		return o, fmt.Errorf("unknown mode %q: want %s or %s", o.Mode, ModeCommand, ModeHTTP)
	}
	if o.ClaudeVersion != "" {
		v, err := ParseVersion(o.ClaudeVersion)
		if err != nil {
			return o, fmt.Errorf("cannot use the Claude Code version: %w", err)
		}
		o.version = v
	}
	if o.CollectorURL == "" {
		o.CollectorURL = DefaultCollectorURL
	}
	switch o.Scope {
	case claudecode.ScopeUser:
		if o.ConfigDir == "" && o.codex() {
			d, err := codex.Home(os.Getenv)
			if err != nil {
				return o, err
			}
			o.ConfigDir = d
		}
		if o.ConfigDir == "" {
			d, err := claudecode.UserConfigDir(os.Getenv, o.Home)
			if err != nil {
				return o, err
			}
			o.ConfigDir = d
		}
	case claudecode.ScopeProject, claudecode.ScopeLocal:
		if o.ProjectDir == "" {
			wd, err := os.Getwd()
			if err != nil {
				return o, fmt.Errorf("cannot find the project directory: %w", err)
			}
			o.ProjectDir = wd
		}
	}
	_, err := o.path()
	return o, err
}

// checkInstall checks what only Install needs.
func (o Options) checkInstall() error {
	if o.Binary == "" {
		return errors.New("the path of the hookwatch binary is required")
	}
	if !filepath.IsAbs(o.Binary) {
		// Exec-form handlers resolve a relative command on PATH at every
		// event, and the statusLine runs from an arbitrary directory.
		return fmt.Errorf("the hookwatch binary path %q is not absolute", o.Binary)
	}
	if o.StatuslineBinary != "" && !filepath.IsAbs(o.StatuslineBinary) {
		return fmt.Errorf("the hookwatch binary path %q is not absolute", o.StatuslineBinary)
	}
	if o.codex() && (o.Mode == ModeHTTP || o.Statusline) {
		return errors.New("Codex runs command hooks only, and has no statusLine")
	}
	if o.Mode == ModeHTTP {
		if o.version != nil && o.version.Compare(HTTPSince) < 0 {
			return fmt.Errorf("http handlers need Claude Code %s or later, not %s", HTTPSince, o.ClaudeVersion)
		}
		// Claude Code posts there itself, as a forwarder would: the
		// same rule, whose owner is the hook.
		if err := hook.CheckURL(o.CollectorURL); err != nil {
			return fmt.Errorf("the http hooks' collector URL: %w", err)
		}
	}
	if o.Scope != claudecode.ScopeUser {
		if fi, err := os.Stat(o.ProjectDir); err != nil || !fi.IsDir() {
			return fmt.Errorf("the project directory %s does not exist", o.ProjectDir)
		}
	}
	return nil
}

// HookURL is the URL the http handlers of --mode http post to: the
// collector's (DefaultCollectorURL when unset) hook endpoint.
func (o Options) HookURL() string {
	return strings.TrimRight(cmp.Or(o.CollectorURL, DefaultCollectorURL), "/") + claudecode.HookPath
}

// LocalCollector reports whether the collector at url (the default when
// "") is on this machine: a loopback address or localhost.
func LocalCollector(collectorURL string) bool {
	if collectorURL == "" {
		collectorURL = DefaultCollectorURL
	}
	u, err := url.Parse(collectorURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().IsLoopback()
	}
	return h == "localhost"
}

// ListensAt reports whether a collector listening on addr, a host:port
// (serve's --addr, HOOKWATCH_ADDR), answers at want, a host:port: the same
// one, or the same port on every address (":7421", "0.0.0.0:7421").
func ListensAt(addr, want string) bool {
	if addr == want {
		return true
	}
	host, port, err := net.SplitHostPort(addr)
	_, wantPort, err2 := net.SplitHostPort(want)
	if err != nil || err2 != nil || port != wantPort {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// CollectorOfAnotherHome reports whether the collector answering at
// collectorURL is the collector of another HOOKWATCH_HOME than home (another
// user's, a service's): one on this machine (LocalCollector) that drains a
// spool (drainsSpool: its /healthz, asked with the hooks' token, reports
// one) which is not home's (hook.SpoolDelivers). home's hooks would post
// their events to it, into that home's database, and home's own collector
// cannot listen there. A collector that reports no spool is not known to be
// any home's, and is not called another's; nor is the collector at a URL
// for which home's hooks hold a team server's token (team: a tunnel to the
// team's server, not a home's collector).
func CollectorOfAnotherHome(home, collectorURL string, drainsSpool, team bool) bool {
	return drainsSpool && !team && LocalCollector(collectorURL) && !hook.SpoolDelivers(home, collectorURL)
}

// group is the matcher group hookwatch registers for e: no matcher (every
// occurrence), one handler.
func (o Options) group(e Event) obj {
	if o.codex() {
		// Codex runs the command through a shell, and matches the tool
		// events' groups against the tool name.
		h := obj{{"type", "command"}, {"command", claudecode.ShellHookCommand(o.Binary)}, {"timeout", e.Timeout}}
		if codex.Matched(e.Name) {
			return obj{{"matcher", "*"}, {"hooks", []any{h}}}
		}
		return obj{{"hooks", []any{h}}}
	}
	var h obj
	if o.Mode == ModeHTTP && e.HTTP {
		h = obj{{"type", "http"}, {"url", o.HookURL()}, {"timeout", e.Timeout}}
		var headers obj
		var env []string
		if !LocalCollector(o.CollectorURL) {
			// A remote collector records the machine Claude Code names
			// from its environment; unset, it names the sender by its
			// address. A local one is the machine.
			headers, env = append(headers, kv{claudecode.HostHeader, "$" + claudecode.HostEnv}), append(env, claudecode.HostEnv)
		}
		if o.TokenHeader {
			headers, env = append(headers, kv{"Authorization", "Bearer $" + TokenEnv}), append(env, TokenEnv)
		}
		if len(headers) > 0 {
			h = append(h, kv{"headers", headers}, kv{"allowedEnvVars", env})
		}
	} else if o.version != nil && o.version.Compare(ExecFormSince) < 0 {
		// Older clients ignore "args" and would run the bare binary through
		// sh: a usage error, exit 2, which blocks every tool call.
		h = obj{{"type", "command"}, {"command", claudecode.ShellHookCommand(o.Binary)}}
	} else {
		h = obj{{"type", "command"}, {"command", o.Binary}, {"args", []string{"hook"}}}
	}
	if h[0].v == "command" {
		if e.Async {
			h = append(h, kv{"async", true})
		}
		h = append(h, kv{"timeout", e.Timeout})
	}
	return obj{{"hooks", []any{h}}}
}

// Install adds hookwatch's hooks (and, with o.Statusline, its statusLine) to
// the settings file of o.Scope. Running it again changes nothing; running it
// with other options (another mode or binary) updates hookwatch's entries in
// place. Before the first change it copies the file to
// <file>.hookwatch-backup, unless the file already held hookwatch entries (the
// backup then already shows the file without them).
func Install(o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if err := o.checkInstall(); err != nil {
		return Result{}, err
	}
	path, _ := o.path()
	old, existed, err := readFile(path)
	if err != nil {
		return Result{Path: path}, err
	}
	s, err := parse(old, path)
	if err != nil {
		return Result{Path: path}, err
	}
	var notes []string
	nw, err := s.install(o, &notes)
	if err != nil {
		return Result{Path: path}, fmt.Errorf("cannot install into %s: %w", path, err)
	}
	after := s.bytes(nw)
	if bytes.Equal(nw, s.body) {
		after = old // a blank file stays as it is
	}
	r := Result{Path: path, Notes: notes, Created: !existed}
	if o.Scope == claudecode.ScopeProject && !o.codex() {
		r.Notes = append(r.Notes, fmt.Sprintf("%s is shared with everyone on the project, but the path %s is this machine's: consider the local scope", path, o.Binary))
	}
	backup := path + BackupSuffix
	needBackup := existed && !s.hasHookwatch(o)
	if _, err := os.Stat(backup); err == nil && !existed {
		r.Notes = append(r.Notes, fmt.Sprintf("the backup %s is older than the file Install creates now; it was left as it is", backup))
	}
	return commit(r, old, existed, after, false, backup, needBackup, o.DryRun)
}

// Uninstall removes what Install added to the settings file of o.Scope:
// hookwatch's matcher groups, event arrays and the "hooks" object that
// became empty and did not exist before, and hookwatch's statusLine (putting
// back the command it wrapped). When the file then says exactly what the
// backup says (whitespace aside), the backup is written back byte for byte
// and deleted; when Install created the file and nothing else was added, the
// file is deleted.
func Uninstall(o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	path, _ := o.path()
	backup := path + BackupSuffix
	r := Result{Path: path}
	old, existed, err := readFile(path)
	if err != nil {
		return r, err
	}
	if !existed {
		if _, err := os.Stat(backup); err == nil {
			r.Backup = backup
		}
		return r, nil
	}
	s, err := parse(old, path)
	if err != nil {
		return r, err
	}
	orig, haveBackup, err := readFile(backup)
	if err != nil {
		return r, err
	}
	var before *settings // the backup, when it is usable
	if haveBackup {
		if b, err := parse(orig, backup); err == nil {
			before = b
		} else {
			r.Notes = append(r.Notes, fmt.Sprintf("ignored the backup %s: %v", backup, err))
		}
	}
	nw, err := s.uninstall(o, before, &r.Notes)
	if err != nil {
		return r, fmt.Errorf("cannot uninstall from %s: %w", path, err)
	}
	after := s.bytes(nw)
	if bytes.Equal(nw, s.body) {
		after = old // a blank file stays as it is
	}
	remove := false
	switch {
	case bytes.Equal(after, old):
		// Nothing of hookwatch's here: leave the file and its backup alone.
	case before != nil && ugly(nw) == ugly(before.body):
		after, r.Restored = orig, true
	case before == nil && ugly(nw) == "{}":
		remove = true
	}
	r, err = commit(r, old, true, after, remove, backup, false, o.DryRun)
	if err == nil && r.Removed && !o.DryRun && o.Scope != claudecode.ScopeUser {
		// The directory install made for a project's file (its .claude,
		// its .codex) goes with it when nothing else is in it: os.Remove
		// leaves a directory that is not empty. A user's configuration
		// directory is the client's, and stays.
		_ = os.Remove(filepath.Dir(path))
	}
	return r, err
}

// readFile reads path; a missing file is not an error
// (claudecode.ReadConfigFile).
func readFile(path string) (b []byte, exists bool, err error) {
	return claudecode.ReadConfigFile(path)
}

// settings is a parsed settings file.
type settings struct {
	bom  []byte
	body []byte // the JSON text without the BOM; "{}\n" for a blank file
	st   style
}

// parse checks b (the content of the file name) and reads its style.
func parse(b []byte, name string) (*settings, error) {
	s := &settings{}
	if bytes.HasPrefix(b, utf8BOM) {
		s.bom, b = utf8BOM, b[len(utf8BOM):]
	}
	if len(bytes.TrimSpace(b)) == 0 {
		// A blank file is an empty object to Claude Code; what is written
		// back is a fresh file.
		b = []byte("{}\n")
	}
	if err := validate(b); err != nil {
		return nil, fmt.Errorf("cannot parse %s: %w", name, err)
	}
	root := parseRoot(b)
	if k, dup := duplicateKey(root); dup {
		return nil, fmt.Errorf("cannot parse %s: the key %q occurs twice at the top level", name, k)
	}
	if h, ok := member(root, "hooks"); ok && h.value.IsObject() {
		if k, dup := duplicateKey(h.value); dup {
			return nil, fmt.Errorf("cannot parse %s: the key %q occurs twice under \"hooks\"", name, k)
		}
	}
	s.body = b
	s.st = detectStyle(b)
	return s, nil
}

// bytes returns the file content for the edited body b.
func (s *settings) bytes(b []byte) []byte {
	return append(append([]byte(nil), s.bom...), b...)
}

// isOurHandler reports whether the handler h is one hookwatch registers
// (claudecode.Installed): doctor reads handlers by the same rule.
func isOurHandler(h gjson.Result, binary string) bool {
	hd, ok := claudecode.ParseHandler([]byte(h.Raw))
	return ok && hd.Kind(binary) == claudecode.Installed
}

// isOurGroup reports whether the matcher group g holds hookwatch handlers
// only. A group that mixes in a handler of the user's is the user's.
func isOurGroup(g gjson.Result, binary string) bool {
	hs := g.Get("hooks")
	if !g.IsObject() || !hs.IsArray() {
		return false
	}
	n := 0
	for _, h := range hs.Array() {
		if !isOurHandler(h, binary) {
			return false
		}
		n++
	}
	return n > 0
}

// hasMixedGroup reports whether a group of the event array a holds a
// hookwatch handler next to handlers of the user's.
func hasMixedGroup(a gjson.Result, binary string) bool {
	for _, it := range items(a) {
		if isOurGroup(it.value, binary) {
			continue
		}
		for _, h := range it.value.Get("hooks").Array() {
			if isOurHandler(h, binary) {
				return true
			}
		}
	}
	return false
}

// ourGroups returns the indexes of hookwatch's groups in the event array a.
func ourGroups(a gjson.Result, binary string) []int {
	var out []int
	for i, it := range items(a) {
		if isOurGroup(it.value, binary) {
			out = append(out, i)
		}
	}
	return out
}

// hasHookwatch reports whether the file holds any hookwatch entry.
func (s *settings) hasHookwatch(o Options) bool {
	root := parseRoot(s.body)
	if h, ok := member(root, "hooks"); ok && h.value.IsObject() {
		for _, ev := range items(h.value) {
			if ev.value.IsArray() && len(ourGroups(ev.value, o.Binary)) > 0 {
				return true
			}
		}
	}
	if sl, ok := member(root, "statusLine"); ok {
		k, _ := claudecode.ClassifyStatusLine(sl.value.Get("command").String(), o.Binary)
		return k == claudecode.StatusPlain || k == claudecode.StatusWrap
	}
	return false
}

// hooksObject returns the "hooks" member of b's root, checking its type.
func hooksObject(b []byte) (item, bool, error) {
	h, ok := member(parseRoot(b), "hooks")
	if ok && !h.value.IsObject() {
		return h, ok, fmt.Errorf(`"hooks" is not an object`)
	}
	return h, ok, nil
}

// install returns the body with hookwatch's entries as o wants them.
func (s *settings) install(o Options, notes *[]string) ([]byte, error) {
	b := s.body
	h, ok, err := hooksObject(b)
	if err != nil {
		return nil, err
	}
	if !ok {
		var all obj
		for _, e := range o.events() {
			all = append(all, kv{e.Name, []any{o.group(e)}})
		}
		key := "hooks"
		b = appendItem(b, s.st, parseRoot(b), &key, all)
	} else {
		var present []string
		for _, ev := range items(h.value) {
			present = append(present, ev.key)
		}
		for _, name := range present {
			if b, err = s.installEvent(b, o, name); err != nil {
				return nil, err
			}
			if ev, _ := eventArray(b, name); ev.value.IsArray() && hasMixedGroup(ev.value, o.Binary) {
				*notes = append(*notes, fmt.Sprintf("a matcher group of hooks.%s runs hookwatch next to other handlers: left as it is, so hookwatch may see those events twice", name))
			}
		}
		for _, e := range o.events() {
			if slices.Contains(present, e.Name) {
				continue
			}
			h, _, _ := hooksObject(b)
			key := e.Name
			b = appendItem(b, s.st, h.value, &key, []any{o.group(e)})
		}
	}
	if o.Statusline {
		return s.installStatus(b, o, notes)
	}
	return b, nil
}

// eventArray returns the array of the event name under "hooks" in b.
func eventArray(b []byte, name string) (item, bool) {
	h, ok, _ := hooksObject(b)
	if !ok {
		return item{}, false
	}
	return member(h.value, name)
}

// installEvent brings the event array name to exactly one hookwatch group
// where the table lists the event, and to none elsewhere.
func (s *settings) installEvent(b []byte, o Options, name string) ([]byte, error) {
	e, want := lookup(o.events(), name)
	ev, _ := eventArray(b, name)
	if !ev.value.IsArray() {
		if want {
			return nil, fmt.Errorf(`"hooks.%s" is not an array`, name)
		}
		return b, nil // not ours to judge
	}
	ours := ourGroups(ev.value, o.Binary)
	keep := -1
	if want && len(ours) > 0 {
		keep, ours = ours[0], ours[1:]
	}
	// Back to front, so the indexes still to remove stay valid.
	for _, i := range slices.Backward(ours) {
		ev, _ = eventArray(b, name)
		b = removeItem(b, ev.value, i)
	}
	if !want {
		// An array that held only hookwatch's groups goes with them, as
		// Uninstall would take it.
		if len(ours) > 0 {
			if ev, _ = eventArray(b, name); len(items(ev.value)) == 0 {
				h, _, _ := hooksObject(b)
				b = removeItem(b, h.value, slices.IndexFunc(items(h.value), func(it item) bool { return it.key == name }))
			}
		}
		return b, nil
	}
	g := o.group(e)
	ev, _ = eventArray(b, name)
	if keep < 0 {
		return appendItem(b, s.st, ev.value, nil, g), nil
	}
	it := items(ev.value)[keep]
	if sameJSON([]byte(it.value.Raw), []byte(s.st.render(g, "", false))) {
		return b, nil
	}
	return replaceValue(b, s.st, it, g), nil
}

// installStatus points the statusLine at hookwatch, wrapping the user's own:
//
//	'<bin>' statusline --wrap '<their command>'
//
// and Uninstall puts their command back.
func (s *settings) installStatus(b []byte, o Options, notes *[]string) ([]byte, error) {
	if o.StatuslineBinary != "" {
		o.Binary = o.StatuslineBinary
	}
	root := parseRoot(b)
	sl, ok := member(root, "statusLine")
	if !ok {
		key := "statusLine"
		v := obj{{"type", "command"}, {"command", claudecode.StatusLineCommand(o.Binary, "", false)}}
		return appendItem(b, s.st, root, &key, v), nil
	}
	cmd := sl.value.Get("command")
	if !sl.value.IsObject() || cmd.Type != gjson.String || cmd.Str == "" {
		return nil, errors.New(`cannot wrap the existing "statusLine": it has no command`)
	}
	var want string
	switch kind, wrapped := claudecode.ClassifyStatusLine(cmd.Str, o.Binary); kind {
	case claudecode.StatusPlain:
		want = claudecode.StatusLineCommand(o.Binary, "", false)
	case claudecode.StatusWrap:
		want = claudecode.StatusLineCommand(o.Binary, wrapped, true)
	case claudecode.StatusCustom:
		*notes = append(*notes, "the statusLine already runs hookwatch statusline with options of its own: left as it is")
		return b, nil
	default:
		want = claudecode.StatusLineCommand(o.Binary, cmd.Str, true)
		*notes = append(*notes, fmt.Sprintf("the statusLine command %q now runs inside hookwatch statusline --wrap", cmd.Str))
	}
	if want == cmd.Str {
		return b, nil
	}
	return sjson.SetRawBytes(b, "statusLine.command", []byte(quote(want)))
}

// uninstall returns the body without hookwatch's entries. before is the
// backup, if any: event arrays and the "hooks" object that end up empty are
// kept when the backup has them.
func (s *settings) uninstall(o Options, before *settings, notes *[]string) ([]byte, error) {
	b := s.body
	had := func(path ...string) bool {
		if before == nil {
			return false
		}
		c := parseRoot(before.body)
		for _, p := range path {
			it, ok := member(c, p)
			if !ok {
				return false
			}
			c = it.value
		}
		return true
	}
	h, ok, err := hooksObject(b)
	if err != nil {
		return nil, err
	}
	if ok {
		var names []string
		for _, ev := range items(h.value) {
			names = append(names, ev.key)
		}
		emptied := false
		for _, name := range names {
			ev, _ := eventArray(b, name)
			if !ev.value.IsArray() {
				continue
			}
			ours := ourGroups(ev.value, o.Binary)
			if len(ours) == 0 {
				continue
			}
			for _, i := range slices.Backward(ours) {
				ev, _ = eventArray(b, name)
				b = removeItem(b, ev.value, i)
			}
			ev, _ = eventArray(b, name)
			if len(items(ev.value)) == 0 && !had("hooks", name) {
				h, _, _ := hooksObject(b)
				b = removeItem(b, h.value, slices.IndexFunc(items(h.value), func(it item) bool { return it.key == name }))
				emptied = true
			}
		}
		h, _, _ = hooksObject(b)
		if emptied && len(items(h.value)) == 0 && !had("hooks") {
			root := parseRoot(b)
			b = removeItem(b, root, slices.IndexFunc(items(root), func(it item) bool { return it.key == "hooks" }))
		}
	}
	return s.uninstallStatus(b, o, before, notes)
}

// uninstallStatus removes hookwatch's statusLine, or unwraps the user's.
func (s *settings) uninstallStatus(b []byte, o Options, before *settings, notes *[]string) ([]byte, error) {
	root := parseRoot(b)
	sl, ok := member(root, "statusLine")
	if !ok {
		return b, nil
	}
	cmd := sl.value.Get("command").String()
	switch kind, wrapped := claudecode.ClassifyStatusLine(cmd, o.Binary); kind {
	case claudecode.StatusPlain:
		return removeItem(b, root, slices.IndexFunc(items(root), func(it item) bool { return it.key == "statusLine" })), nil
	case claudecode.StatusWrap:
		// Prefer the backup's bytes for the command: the same string may
		// have been written with other escapes.
		if before != nil {
			if c := gjson.GetBytes(before.body, "statusLine.command"); c.Type == gjson.String && c.Str == wrapped {
				return sjson.SetRawBytes(b, "statusLine.command", []byte(c.Raw))
			}
		}
		return sjson.SetRawBytes(b, "statusLine.command", []byte(quote(wrapped)))
	case claudecode.StatusCustom:
		*notes = append(*notes, "the statusLine runs hookwatch statusline with options of its own: left as it is")
	}
	return b, nil
}
