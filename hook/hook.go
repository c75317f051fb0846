// Package hook is what runs for every agent hook event: it reads the payload
// from stdin, wraps it in an envelope, delivers it to the collector and, when
// the collector cannot take it, spools it for later delivery.
//
// The hook rule: Run never breaks the agent. Bad input, a dead or hung
// collector, a full disk, a panic: the exit code is 0 and nothing is written
// to stdout (unless a policy decided something), the run ends within its
// budget, and the failure is logged as one line to $HOOKWATCH_HOME/hook.log.
package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/internal/envflag"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/stale"
)

// Defaults of the hook's configuration.
const (
	DefaultURL    = "http://127.0.0.1:7421"
	DefaultBudget = time.Second
	// drainMax is how many spooled envelopes one hook run delivers at most,
	// so a large backlog never makes one agent event slow.
	drainMax = 500
)

// Config is the hook's configuration, read from the environment.
type Config struct {
	Home     string        // HOOKWATCH_HOME: hook.log and spool/ live here
	URL      string        // HOOKWATCH_URL, else the home's URLFile, else DefaultURL: collector base URL
	Token    string        // HOOKWATCH_TOKEN, else the home's TokenFile: bearer token for the collector
	Budget   time.Duration // HOOKWATCH_HOOK_BUDGET: wall time the hook may take once its payload is read (which it waits StdinWaitFactor budgets for)
	SpoolMax int64         // HOOKWATCH_SPOOL_MAX: bytes the spool may hold
	Runtime  string        // forced runtime; "" detects it from the payload
	// URLSource is where URL came from (LookupURL).
	URLSource URLSource
	// TokenSource is where Token came from (LookupToken), which says what
	// to do when the collector refuses it (RefusedToken).
	TokenSource TokenSource
	// ProjectDir is CLAUDE_PROJECT_DIR, where project policies are found
	// when cwd has moved away from the project.
	ProjectDir string
	// Traceparent is TRACEPARENT: the agent's trace context, when its own
	// telemetry is on, recorded in the envelope.
	Traceparent string
	Privacy     privacy.Options
	Version     string
	// Decide evaluates policies in process; nil in the lean hook binary,
	// which asks the attached collector or the full binary instead.
	Decide DecideFunc
	// Autostart lets a hook that finds no collector on its loopback URL
	// start one in the background (HOOKWATCH_AUTOSTART=0 turns it off).
	Autostart bool
	// ArchiveDir is where PreCompact archives the transcript it compacts
	// (ingest.Pipeline.ArchiveDir): <home>/archive, "" when
	// HOOKWATCH_ARCHIVE=0.
	ArchiveDir string
	// Stale configures the stale-context guard (package stale): the
	// state of the files tools read and write is recorded, and checked at
	// SessionStart(resume|compact), unless HOOKWATCH_STALE_GUARD=0.
	Stale stale.Config

	// Now returns the current time; tests may replace it.
	Now func() time.Time

	// payloadRead, when set, is told once the payload is read (Main's
	// last resort: lastResort.payloadRead).
	payloadRead func()
}

// Base is URL without a trailing slash, for joining the API's paths to it.
func (cfg Config) Base() string { return strings.TrimRight(cfg.URL, "/") }

// ConfigFromEnv reads the configuration from getenv. Bad values fall back to
// defaults and are reported as warnings, because the hook must run anyway.
func ConfigFromEnv(getenv func(string) string) (Config, []string) {
	return configFrom(getenv, ReadURL)
}

// ConfigKeepingURL is ConfigFromEnv as it reads once the home's URLFile
// keeps kept ("" for none), whatever the file keeps now: what 'hookwatch
// install --url', whose dry run writes nothing, says the hooks will do.
func ConfigKeepingURL(getenv func(string) string, kept string) (Config, []string) {
	return configFrom(getenv, func(string) string { return kept })
}

// configFrom is ConfigFromEnv with readURL, the URL a home keeps.
func configFrom(getenv func(string) string, readURL func(home string) string) (Config, []string) {
	var warn []string
	c := Config{
		Home:        Home(getenv),
		ProjectDir:  getenv("CLAUDE_PROJECT_DIR"),
		Traceparent: getenv("TRACEPARENT"),
		Autostart:   !envflag.Off(getenv("HOOKWATCH_AUTOSTART")),
		Budget:      DefaultBudget,
		Now:         time.Now,
		ArchiveDir:  filepath.Join(Home(getenv), "archive"),
	}
	c.URL, c.URLSource = lookupURL(getenv, c.Home, readURL)
	c.Token, c.TokenSource = lookupToken(getenv, c.Home, c.URLSource)
	if envflag.Off(getenv("HOOKWATCH_ARCHIVE")) {
		c.ArchiveDir = ""
	}
	if s := getenv("HOOKWATCH_HOOK_BUDGET"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			warn = append(warn, fmt.Sprintf("ignoring HOOKWATCH_HOOK_BUDGET=%q: want a positive duration like 800ms", s))
		} else {
			c.Budget = d
		}
	}
	if s := getenv("HOOKWATCH_SPOOL_MAX"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			warn = append(warn, fmt.Sprintf("ignoring HOOKWATCH_SPOOL_MAX=%q: want a number of bytes", s))
		} else {
			c.SpoolMax = n
		}
	}
	p, err := privacy.OptionsFromEnv(getenv)
	if err != nil {
		warn = append(warn, err.Error())
	}
	c.Privacy = p
	sc, sw := stale.ConfigFromEnv(getenv)
	c.Stale, warn = sc, append(warn, sw...)
	return c, warn
}

// URLFile is the file in the home that keeps the collector's base URL
// 'hookwatch install --url' was given, one line, mode 0600, for the hooks
// of an agent started where HOOKWATCH_URL is not exported (an IDE, a
// desktop launcher, a fresh shell).
const URLFile = "url"

// URLSource is where LookupURL finds the collector's URL.
type URLSource uint8

const (
	// URLDefault: neither HOOKWATCH_URL nor the home's URLFile names a
	// collector, so the hooks send to DefaultURL, this machine's.
	URLDefault URLSource = iota
	// URLFromEnv: HOOKWATCH_URL, which wins over the file.
	URLFromEnv
	// URLFromFile: the home's URLFile, which 'hookwatch install --url'
	// wrote.
	URLFromFile
)

// String names the source as doctor, install's notes and the errors of
// the commands that ask the collector show it.
func (s URLSource) String() string {
	switch s {
	case URLFromEnv:
		return "HOOKWATCH_URL"
	case URLFromFile:
		return "the URL kept by 'hookwatch install --url'"
	}
	return "the default URL"
}

// LookupURL returns the collector's base URL the hooks send to, as given,
// and where it found it: HOOKWATCH_URL, else the URL 'hookwatch install
// --url' kept in home's URLFile (read only when HOOKWATCH_URL is unset),
// else DefaultURL. It is the one reading of where the events go: the hook,
// the forwarder, doctor, the status line and the commands that ask the
// collector all call it (through ConfigFromEnv or directly).
func LookupURL(getenv func(string) string, home string) (string, URLSource) {
	return lookupURL(getenv, home, ReadURL)
}

// lookupURL is LookupURL with readURL, the URL home keeps.
func lookupURL(getenv func(string) string, home string, readURL func(home string) string) (string, URLSource) {
	if u := getenv("HOOKWATCH_URL"); u != "" {
		return u, URLFromEnv
	}
	if u := readURL(home); u != "" {
		return u, URLFromFile
	}
	return DefaultURL, URLDefault
}

// ReadURL returns the URL of URLFile in home, "" when there is none.
func ReadURL(home string) string {
	b, err := os.ReadFile(filepath.Join(home, URLFile))
	if err != nil || len(b) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// TokenFile is the file in the home that holds the collector's token when
// HOOKWATCH_TOKEN is not set, mode 0600.
const TokenFile = "token"

// TokenSource is where LookupToken finds the collector's token.
type TokenSource uint8

const (
	// TokenNone: HOOKWATCH_TOKEN is unset and neither HOOKWATCH_URL nor
	// the URL file names a collector, so the local default collector is
	// sent no token.
	TokenNone TokenSource = iota
	// TokenFromEnv: HOOKWATCH_TOKEN, which cannot change under a running
	// process.
	TokenFromEnv
	// TokenFromFile: home's TokenFile, which 'hookwatch install --token'
	// replaces under a running process; the token is "" while the file
	// holds none.
	TokenFromFile
)

// LookupToken returns the collector's token and where it found it:
// HOOKWATCH_TOKEN, else, when HOOKWATCH_URL or the home's URLFile names a
// collector (a team server: LookupURL), the token that 'hookwatch install
// --token' left in home's TokenFile, since the settings file must never
// hold it. The local default reads no file. It is the one reading of where the token comes from: a
// process that runs for long (hookwatch forward) calls it again to see a
// token file replaced since.
func LookupToken(getenv func(string) string, home string) (string, TokenSource) {
	if t := getenv("HOOKWATCH_TOKEN"); t != "" {
		return t, TokenFromEnv
	}
	_, src := LookupURL(getenv, home)
	return lookupToken(getenv, home, src)
}

// lookupToken is LookupToken with the URL's source known already, so that
// ConfigFromEnv reads the URL file once.
func lookupToken(getenv func(string) string, home string, url URLSource) (string, TokenSource) {
	if t := getenv("HOOKWATCH_TOKEN"); t != "" {
		return t, TokenFromEnv
	}
	if url == URLDefault {
		return "", TokenNone
	}
	return ReadToken(home), TokenFromFile
}

// RefusedToken words a collector's refusal of the token (HTTP 401) for
// whoever sent it, LookupToken's token and source in home, and why the
// collector refused it (Refusal of its answer; "" when not read): what it
// refused, named by where the token came from, and what gives it one it
// takes. A token from the environment is exported anew; when revoked
// (Revoked), a new one from the collector's admin, exported or installed
// once HOOKWATCH_TOKEN no longer overrides the token file. One from the token file is
// a team server user's, revoked or never the collector's: its admin makes
// a new one ('hookwatch token create'), which install puts in its place;
// the same goes when the file holds none. With no token at all, on the
// local default collector, HOOKWATCH_TOKEN gives one, since no file is
// read there. It is the one wording of a refused token, for the commands
// that ask a collector, the forwarder and doctor alike.
//
// what completes "the collector at URL …" and, but for the file's path,
// has neither colon nor parenthesis, so that the caller adds the HTTP
// status after it; fix is what to do, a command at its end.
func RefusedToken(src TokenSource, token, home, why string) (what, fix string) {
	const export = "export HOOKWATCH_TOKEN=<the token hookwatch serve runs with, or one of 'hookwatch token create'>, in the environment Claude Code starts from too"
	const install = " ('hookwatch token create --user NAME') and install it: hookwatch install --token-file FILE"
	file := filepath.Join(home, TokenFile)
	switch {
	case src == TokenFromEnv && Revoked(why):
		return "refuses HOOKWATCH_TOKEN", "ask the collector's admin for a new token ('hookwatch token create --user NAME', where the collector runs), then export HOOKWATCH_TOKEN=<the new token> in the environment Claude Code starts from too, or unset HOOKWATCH_TOKEN and install it: hookwatch install --token-file FILE"
	case src == TokenFromEnv:
		return "refuses HOOKWATCH_TOKEN", export
	case src == TokenFromFile && token != "":
		return "refuses the token in " + file, "ask the collector's admin for a new token" + install
	case src == TokenFromFile:
		return "requires a token, and none was given, neither HOOKWATCH_TOKEN nor " + file + " holding one", "ask the collector's admin for a token" + install
	}
	return "requires a token, and none was given, HOOKWATCH_TOKEN being unset", export
}

// ReadToken returns the token of TokenFile in home, "" when there is none.
func ReadToken(home string) string {
	b, err := os.ReadFile(filepath.Join(home, TokenFile))
	if err != nil || len(b) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Home returns hookwatch's data directory: $HOOKWATCH_HOME, else
// ~/.hookwatch, else a per-user directory under the temp dir.
func Home(getenv func(string) string) string {
	if h := getenv("HOOKWATCH_HOME"); h != "" {
		return h
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".hookwatch")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".hookwatch")
	}
	return filepath.Join(os.TempDir(), "hookwatch-"+strconv.Itoa(os.Getuid()))
}

// Result is what one hook run decided, for the caller to turn into the
// process's exit status and output.
type Result struct {
	ExitCode int
	Stdout   []byte
	// Delivered reports whether the envelope reached the collector now;
	// Spooled whether it went to the spool instead.
	Delivered, Spooled bool
	// Err is the failure that was logged, if any.
	Err error
}

// Run handles one hook invocation: it reads the payload from stdin and runs
// it through the ingest pipeline, with the policies answered as
// Config.Decide, the attached collector or the full binary can, and the
// envelope delivered to the collector or the spool. It recovers from panics
// and never returns a non-zero exit code on its own failure.
func Run(ctx context.Context, cfg Config, stdin io.Reader) (res Result) {
	start := cfg.now()
	var name, session string
	var oddities []string // the payload was read, but something about it is off
	var q *question
	defer func() {
		if r := recover(); r != nil {
			res = Result{Err: fmt.Errorf("panic: %v\n%s", r, debug.Stack())}
		}
		q.close()
		q.logProblems(start, name, session)
		if len(oddities) > 0 {
			res.Err = errors.Join(res.Err, fmt.Errorf("odd payload: %s", strings.Join(oddities, "; ")))
		}
		if res.Err != nil {
			cfg.log(start, name, session, res.Err)
		}
	}()

	data, err := readPayload(stdin, start.Add(cfg.stdinWait()))
	if err != nil {
		return Result{Err: err}
	}
	// The budget counts from the payload: what a slow writer took is not
	// taken from the delivery.
	deadline := cfg.now().Add(cfg.budget())
	if cfg.payloadRead != nil {
		cfg.payloadRead()
	}
	var attached string // the collector that answered the policies, if one did
	pl := ingest.Pipeline{
		Origin:      cfg.origin(),
		Privacy:     cfg.Privacy,
		Now:         func() time.Time { return start },
		Traceparent: cfg.Traceparent,
		ArchiveDir:  cfg.ArchiveDir,
		RecordFiles: !cfg.Stale.Off,
		Decide: func(ctx context.Context, p *event.Payload, data []byte) func() (ingest.Verdict, error) {
			q = cfg.ask(p, data, deadline)
			return func() (ingest.Verdict, error) {
				v, collector, err := q.answer(ctx)
				attached = collector
				return v, err
			}
		},
		Deliver: func(ctx context.Context, env *event.Envelope) error {
			rec := env.AppendJSON(make([]byte, 0, len(env.Payload)+512))
			res = cfg.deliver(ctx, rec, deadline, attached)
			return nil // res says what became of it
		},
	}
	out, err := pl.Run(ctx, data)
	if p := out.Payload; p != nil {
		name, session = p.Name(), p.SessionID
	}
	oddities = out.Oddities
	if err != nil {
		return Result{Err: err}
	}
	switch {
	case out.Verdict.Recorded:
		// The full binary answered, and recorded the event.
		res = Result{Delivered: true, Err: out.DecideErr}
	case out.DecideErr != nil:
		oddities = append(oddities, out.DecideErr.Error())
	}
	var gerr error
	res.Stdout, res.ExitCode, gerr = cfg.guardStale(out, deadline)
	if gerr != nil {
		oddities = append(oddities, gerr.Error())
	}
	return res
}

// origin is what the hook stamps on its envelopes.
func (cfg Config) origin() ingest.Origin {
	o := ingest.LocalOrigin(cfg.Version)
	o.Runtime = cfg.Runtime
	return o
}

// SpoolDelivers reports whether the hook of home hands its events for the
// collector at url to the home's spool, which that collector drains as it
// is written (it is attached at url's address, ListenAddr): such events
// need no token and no request. So for an https:// URL too: the hook
// appends its events to the spool for a forwarder, and a collector
// serving TLS attached there takes them instead.
func SpoolDelivers(home, url string) bool {
	addr, ok := ListenAddr(url)
	return ok && spool.AttachedTo(filepath.Join(home, "spool"), addr)
}

// ListenAddr is the address a collector at url names itself by in the
// consumer lock of the spool it attaches to, its listen address: url's IP
// address (localhost's is 127.0.0.1) and port, 80 by default for http://
// and 443 for https://, whether it serves plain HTTP or TLS. ok is false
// for a URL that names its host otherwise, or is not http(s)://.
func ListenAddr(url string) (addr string, ok bool) {
	scheme, rest, found := strings.Cut(url, "://")
	switch {
	case !found:
		return "", false
	case strings.EqualFold(scheme, "https"):
		authority := urlAuthority(rest)
		host := strings.TrimSuffix(authority, ":")
		if i := strings.LastIndexByte(host, ']'); !strings.Contains(host[i+1:], ":") {
			rest = host + ":443" + rest[len(authority):]
		}
	case !strings.EqualFold(scheme, "http"):
		return "", false
	}
	ep, err := parseEndpoint("http://" + rest)
	if err != nil {
		return "", false
	}
	return ep.addr.String(), true
}

// AttachedElsewhere returns the collector attached to the spool of home
// when it listens at another address than url, a URL the hook posts to
// itself, names (serve --addr given, and neither HOOKWATCH_URL nor the URL
// 'hookwatch install --url' kept names that address): the hook's events
// still reach it, through the spool it drains, but only after each hook has
// tried url (deliver), and the commands that ask the collector at the URL
// LookupURL finds, and http hooks, miss it. A forwarder
// attached to the spool is no such collector.
func AttachedElsewhere(home, url string) (spool.ConsumerInfo, bool) {
	addr, ok := ListenAddr(url)
	if !ok {
		return spool.ConsumerInfo{}, false
	}
	c, ok := spool.Consumer(filepath.Join(home, "spool"))
	if !ok || c.Addr == addr || strings.HasPrefix(c.Addr, ForwarderAddr("")) {
		return spool.ConsumerInfo{}, false
	}
	return c, true
}

// drainedBy reports whether the collector at ep is attached to the spool
// in dir.
func drainedBy(dir string, ep endpoint) bool { return spool.AttachedTo(dir, ep.addr.String()) }

// deliver posts one envelope, spooling it when the collector cannot take it,
// and opportunistically drains the spool after a successful post. attached
// is the address of the collector attached to this home's spool when the
// run has learnt it already (it answered the policies), else "".
func (cfg Config) deliver(ctx context.Context, rec []byte, deadline time.Time, attached string) Result {
	spoolDir := filepath.Join(cfg.Home, "spool")
	sp, spErr := spool.Open(spoolDir, spool.Options{MaxBytes: cfg.SpoolMax})
	ep, err := parseEndpoint(cfg.URL)
	if errors.Is(err, errUnsupportedURL) && spErr == nil && Forwardable(cfg.URL) {
		return cfg.forward(sp, spoolDir, rec, err)
	}
	if err == nil && spErr == nil && (attached == ep.addr.String() || drainedBy(spoolDir, ep)) {
		// The fast path: the collector at our URL drains this spool as it
		// is written, so appending to it is delivery — durable at once, and
		// no round trip through the collector's commit for the agent to
		// wait on.
		if err := sp.Offer(rec); err == nil {
			return Result{Delivered: true}
		}
		// A full or failing spool: try the collector directly. Offer did
		// not count the record as dropped: it is lost only if that fails
		// too and the Append below refuses it as well.
	}
	if err == nil {
		// Keep a slice of the budget for spooling if the post fails.
		err = postBatch(ep, cfg.Token, [][]byte{rec}, deadline.Add(-cfg.budget()/10))
	}
	if err == nil {
		if spErr == nil {
			cfg.drain(ctx, sp, ep, deadline)
		}
		return Result{Delivered: true}
	}
	if Permanent(err) {
		return Result{Err: cfg.reject([][]byte{rec}, err)}
	}
	if errors.Is(err, syscall.ECONNREFUSED) && spErr == nil {
		if _, ok := AttachedElsewhere(cfg.Home, cfg.URL); ok {
			// This home's collector drains the spool from another address
			// than the URL (serve --addr, and no HOOKWATCH_URL or URL kept
			// by install --url to match): appending is delivery to it, no
			// second collector may start for the home, and doctor says how
			// to point the hooks at it.
			if serr := sp.Append(rec); serr == nil {
				return Result{Spooled: true}
			}
		}
	}
	comingUp := false // another hook of the burst started the collector
	if errors.Is(err, syscall.ECONNREFUSED) {
		aerr := cfg.autostart(ep)
		comingUp = isComingUp(aerr)
		if aerr == nil {
			// Wait, within the budget, for the new collector to listen: the
			// events after this one may come from http hooks, which cannot
			// spool, so the collector should be up when this hook returns.
			for err != nil && errors.Is(err, syscall.ECONNREFUSED) && time.Until(deadline) > cfg.budget()/5 {
				time.Sleep(20 * time.Millisecond)
				err = postBatch(ep, cfg.Token, [][]byte{rec}, deadline.Add(-cfg.budget()/10))
			}
			if err == nil {
				// Not an error: how a collector normally comes up. Its
				// start is in serve.log.
				return Result{Delivered: true}
			}
			err = fmt.Errorf("%w; started a collector in the background", err)
		}
	}
	if spErr != nil {
		return Result{Err: fmt.Errorf("%v; and cannot open spool, event lost: %w", err, spErr)}
	}
	if serr := sp.Append(rec); serr != nil {
		return Result{Err: fmt.Errorf("%v; and cannot spool, event lost: %w", err, serr)}
	}
	if comingUp {
		// Not an error: the collector another hook started moments ago
		// attaches to this spool as it comes up, and takes the event
		// (one that could not start is said by the hooks after it).
		return Result{Spooled: true}
	}
	if se := (StatusError{}); errors.As(err, &se) && se.Code == http401 {
		// hook.log is where a developer whose token was revoked looks
		// first: it names the token refused, where it came from, and
		// where the collector's reason and the fix are told.
		what, _ := RefusedToken(cfg.TokenSource, cfg.Token, cfg.Home, "")
		err = fmt.Errorf("%w: the collector %s; the events wait in the spool until it takes a token ('hookwatch doctor' says why, and what gives it one)", err, what)
	}
	return Result{Spooled: true, Err: fmt.Errorf("spooled: %w", err)}
}

// http401 is HTTP's Unauthorized: the hook links no net/http.
const http401 = 401

// forward delivers rec to a collector the hook cannot reach itself (an
// https:// URL, a host name) through the forwarder attached to this home's
// spool (hookwatch forward): appending to the spool is delivery then, as
// with an attached collector. Without a forwarder the envelope is spooled
// and one is started in the background (autostartForward), which drains
// what waits; only a forwarder that cannot start is an error, not one
// another hook started moments ago.
func (cfg Config) forward(sp *spool.Spool, spoolDir string, rec []byte, why error) Result {
	if spool.AttachedTo(spoolDir, ForwarderAddr(cfg.URL)) {
		if err := sp.Offer(rec); err == nil {
			return Result{Delivered: true}
		}
	}
	if err := sp.Append(rec); err != nil {
		return Result{Err: fmt.Errorf("%v; and cannot spool, event lost: %w", why, err)}
	}
	if err := cfg.autostartForward(); err != nil && !isComingUp(err) {
		return Result{Spooled: true, Err: fmt.Errorf("spooled: %w; and no forwarder runs: %v", why, err)}
	}
	// Not an error: how a forwarder normally comes up (forward.log), the
	// events of its first moments waiting in the spool it attaches to —
	// started by this hook, or by another one of the same burst.
	return Result{Spooled: true}
}

// ForwarderAddr is the address a forwarder to the collector at url names
// in the spool's consumer lock, and the hook looks for: "forward " and the
// URL without trailing slashes, which no collector's listen address is.
func ForwarderAddr(url string) string { return "forward " + trimSlash(url) }

// NeedsForwarder reports whether the hook hands its events for the
// collector at url to a forwarder (hookwatch forward): an http:// or
// https:// URL it cannot post to itself, such as any https:// one or one
// naming a host.
func NeedsForwarder(url string) bool {
	_, err := parseEndpoint(url)
	return errors.Is(err, errUnsupportedURL) && Forwardable(url)
}

// Forwardable reports whether a forwarder (hookwatch forward) can deliver to
// the collector at url: CheckURL finds nothing wrong with it.
func Forwardable(url string) bool { return CheckURL(url) == nil }

// CheckURL says what is wrong with url as a collector URL, nil when
// nothing is: an http:// or https:// URL (the scheme in any case) with a
// host, no control character, when a port is written, a decimal one up to
// 65535, and a path that is not the events endpoint. It is the one rule: the hook hands such a URL's events to a
// forwarder when it cannot post to it itself, the forwarder and its
// service accept no other, install accepts no other for Claude Code's
// http handlers, which post there as a forwarder would, and the commands
// that ask the collector refuse any other URL LookupURL finds
// (HOOKWATCH_URL or the one install --url kept). Written without
// net/url, which the hook does not link (see endpoint.go).
func CheckURL(url string) error {
	scheme, rest, ok := strings.Cut(url, "://")
	authority := urlAuthority(rest)
	path := rest[len(authority):]
	shown := ShownURL(url) // quoted whole in the error but for its user info
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	bad := func(why string) error {
		return fmt.Errorf("%q is not a collector URL: %s (want http://HOST:PORT or https://HOST, like %s)", shown, why, DefaultURL)
	}
	switch {
	case url == "":
		return bad("it is empty")
	case !ok:
		return bad("it has no scheme")
	case !strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "http"):
		return bad("its scheme is not http or https")
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c < ' ' || c == 0x7f {
			return bad("it holds a control character")
		}
	}
	host, port := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && i > strings.LastIndexByte(authority, ']') {
		host, port = authority[:i], authority[i+1:]
	}
	if _, ok := parsePort(port); !ok {
		return bad(fmt.Sprintf("its port %q is not a number up to 65535", port))
	}
	if host == "" || host == "[]" {
		return bad("it has no host")
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if base, ok := strings.CutSuffix(strings.TrimRight(path, "/"), eventsPath); ok {
		// The endpoint pasted for the URL: every post would go to
		// …/v1/events/v1/events and be refused.
		return bad(fmt.Sprintf("it ends with %s, which hookwatch adds itself: give the collector's own URL, %s://%s%s",
			eventsPath, scheme, authority, base))
	}
	return nil
}

// eventsPath is the collector's endpoint for events, below its URL.
const eventsPath = "/v1/events"

// ShownURL returns the collector URL url as messages and logs show it:
// without its user info, which may hold a password, and otherwise as it is.
func ShownURL(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	if i := strings.LastIndexByte(urlAuthority(rest), '@'); i >= 0 {
		return scheme + "://" + rest[i+1:]
	}
	return url
}

// urlAuthority returns the authority (user info, host and port) that
// starts rest, a URL after its "scheme://".
func urlAuthority(rest string) string {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return rest[:i]
	}
	return rest
}

// drain delivers spooled envelopes while budget is left. Its failures are not
// the current event's: they leave the spool as it was for the next run.
func (cfg Config) drain(ctx context.Context, sp *spool.Spool, ep endpoint, deadline time.Time) {
	st, err := sp.Stats()
	if err != nil || st.PendingBytes == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	_, _ = sp.Drain(ctx, drainMax, func(recs [][]byte) error {
		// One bad envelope must not wedge the spool; on a transient failure
		// the whole batch stays spooled (the collector dedups by id).
		return SendSpooled(recs, func(recs [][]byte, refuse func([]byte, error)) error {
			send := func(recs [][]byte) error { return postBatch(ep, cfg.Token, recs, deadline) }
			if err := send(recs); !Permanent(err) {
				return err
			}
			_, err := SendEach(recs, send, refuse)
			return err
		}, func(rec []byte, err error) {
			cfg.log(cfg.now(), "", "", cfg.reject([][]byte{rec}, err))
		})
	})
}

// SendSpooled delivers recs, a batch a spool handed over, with send, which
// posts all of them (in as many requests as it takes: parts that fit a
// body, SendEach after a refusal) and hands each envelope the collector
// refused on its own to refuse. Those envelopes go to setAside only once
// send returned nil, every envelope of the batch delivered or refused.
// When send fails, SendSpooled returns its error and the batch stays
// spooled, the envelopes refused so far with it: the batch's next delivery
// refuses them again, and sets them aside then — each once, where setting
// them aside at once would set them aside again at every retry.
//
// Waiting costs nothing: a retry sends the refused envelopes again anyway
// (the batch that holds them is refused whole, then sent one envelope at a
// time), and nothing needs remembering — not across hook processes, which
// drain the same spool, nor by reading back rejected.jsonl, which is
// rotated away. An envelope stays spooled until it is set aside; only a
// process killed between the two sets it aside twice.
func SendSpooled(recs [][]byte, send func(recs [][]byte, refuse func(rec []byte, refusal error)) error, setAside func(rec []byte, refusal error)) error {
	type refusal struct {
		rec []byte
		err error
	}
	var refused []refusal
	err := send(recs, func(rec []byte, err error) { refused = append(refused, refusal{rec, err}) })
	if err != nil {
		return err
	}
	for _, r := range refused {
		setAside(r.rec, r.err)
	}
	return nil
}

// SendEach sends recs again one envelope at a time, after the collector
// refused them as one batch for what it is (Permanent): one bad envelope
// must not take the good ones with it. send posts a batch; an envelope
// refused on its own is handed to reject, with the refusal, and the others
// are delivered. At the first other failure SendEach stops and returns it
// with the envelopes not yet delivered nor refused, the one that failed
// first. One at a time rather than by halves: refusals are rare (a
// malformed envelope, another user's session), a batch is at most a few
// hundred envelopes, and every refused envelope costs the same one request.
func SendEach(recs [][]byte, send func([][]byte) error, reject func(rec []byte, refusal error)) (left [][]byte, err error) {
	for i := range recs {
		err := send(recs[i : i+1])
		if Permanent(err) {
			reject(recs[i], err)
		} else if err != nil {
			return recs[i:], err
		}
	}
	return nil, nil
}

// Permanent reports whether err is the collector's refusal of a batch for
// what it is (a StatusError whose code is Refused), so that sending it
// again can never succeed.
func Permanent(err error) bool {
	var se StatusError
	return errors.As(err, &se) && Refused(se.Code)
}

// Refused reports whether a collector answering POST /v1/events with the
// HTTP status code refused the batch for what it is (malformed, too large,
// invalid, or writing into another user's session: 403), so that sending it
// again can never succeed: such a batch must not stay spooled, where it
// would block the ones behind it.
func Refused(code int) bool { return code == 400 || code == 403 || code == 413 || code == 422 }

// ServeLog and ForwardLog are the files of the home that take the output of
// the collector and of the forwarder a hook starts (and of the launchd
// agent that runs either), appended to; rotated to <name>.1 past
// maxLogBytes at each start by a hook, and while the process runs by the
// process itself (RotateOwnLog).
const (
	ServeLog   = "serve.log"
	ForwardLog = "forward.log"
)

// RejectedFile is the file of the home that keeps the envelopes a collector
// refused (rotated to RejectedFile+".1" past 8 MiB).
const RejectedFile = "rejected.jsonl"

// ErrNotKept is in the error of Reject when the envelopes could not be
// kept either: they are lost, and the caller counts them so.
var ErrNotKept = errors.New("cannot keep the rejected event")

// reject keeps envelopes the collector refused in rejected.jsonl, for a human
// to inspect: nothing is dropped silently. Past maxLogBytes the file is
// rotated to rejected.jsonl.1 first, as hook.log is, replacing the one
// before: a collector that refuses every event for months keeps the last
// 16 MiB of them at most, not the disk's worth.
func (cfg Config) reject(recs [][]byte, cause error) error {
	path := filepath.Join(cfg.Home, RejectedFile)
	rotateLog(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("%v; and %w: %w", cause, ErrNotKept, err)
	}
	defer f.Close()
	var b bytes.Buffer
	for _, r := range recs {
		b.Write(r)
		b.WriteByte('\n')
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("%v; and %w: %w", cause, ErrNotKept, err)
	}
	return fmt.Errorf("collector refused the event, kept in %s: %w", path, cause)
}

// Reject keeps envelopes a collector refused in home's rejected.jsonl, as
// a hook does, and returns the error that says where; one that wraps
// ErrNotKept when they could not be kept.
func Reject(home string, recs [][]byte, cause error) error {
	return Config{Home: home}.reject(recs, cause)
}

// postBatch sends envelopes to POST /v1/events.
func postBatch(ep endpoint, token string, recs [][]byte, deadline time.Time) error {
	body := BatchBody(recs)
	code, err := post(ep, eventsPath, token, body, deadline)
	if err != nil {
		return err
	}
	if code < 200 || code > 299 {
		return StatusError{code}
	}
	return nil
}

// BatchBody frames encoded envelopes as the body of POST /v1/events.
func BatchBody(recs [][]byte) []byte {
	n := 16
	for _, r := range recs {
		n += len(r) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"envelopes":[`...)
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, "]}"...)
}

// BatchFit is how many of recs, one at least, one POST /v1/events carries
// when a batch holds at most maxRecs envelopes and its body (BatchBody) at most
// maxBytes: the bound a collector enforces on a body (its MaxBodyBytes, on
// the Content-Length) is on those bytes, the framing and the commas
// included. A record larger than maxBytes on its own is a batch of one, for
// the collector to refuse (413).
func BatchFit(recs [][]byte, maxRecs, maxBytes int) int {
	size := len(`{"envelopes":[]}`)
	for i, r := range recs {
		if i > 0 {
			size++ // the comma before r
		}
		size += len(r)
		if i > 0 && (i == maxRecs || size > maxBytes) {
			return i
		}
	}
	return len(recs)
}

func (cfg Config) now() time.Time {
	if cfg.Now != nil {
		return cfg.Now()
	}
	return time.Now()
}

func (cfg Config) budget() time.Duration {
	if cfg.Budget > 0 {
		return cfg.Budget
	}
	return DefaultBudget
}

// stdinWait is how long the hook waits for its payload: StdinWaitFactor
// times its budget. A client on a loaded machine can be late to write it
// (seen: Claude Code's SessionStart more than a second after the hook
// started, on two cores running five times their load), and a payload not
// read is an event lost; a stdin that never closes
// (`sleep 60 | hookwatch-hook`) is not a client's, and costs this, not
// more.
func (cfg Config) stdinWait() time.Duration { return StdinWaitFactor * cfg.budget() }

// StdinWaitFactor is how many budgets the hook waits for its payload.
const StdinWaitFactor = 5
