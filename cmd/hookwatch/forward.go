package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/envflag"
	"github.com/hookwatch/hookwatch/spool"
)

func init() {
	register(command{
		name:    "forward",
		summary: "deliver this machine's spooled events to an https:// collector the hook cannot reach itself",
		run:     runForward,
	})
}

const forwardSynopsis = `forward [--url URL] [--ca-file FILE] [--archive-retain AGE|off]

Attaches to the spool of this HOOKWATCH_HOME, as a local collector does, and
posts what the hooks append to it to the collector at URL, with the hook's
token (HOOKWATCH_TOKEN, else the file 'hookwatch install --token' wrote,
read again before each POST, so that a token install replaces is sent
without a restart): batched, retried with backoff while the collector cannot
take it, each envelope stored once however often it is sent. The hook itself
speaks plain HTTP to IP addresses only; for an https:// URL or a host name it
appends to the spool and starts this forwarder in the background when none
runs (HOOKWATCH_AUTOSTART=0 turns that off). It runs until SIGINT or SIGTERM
('hookwatch stop'); 'hookwatch doctor' says whether it runs.

The hooks still copy a transcript about to be compacted to
$HOOKWATCH_HOME/archive, which no collector reads on this machine: at its
start and hourly, the forwarder deletes the archive of every session whose
files were all last written longer ago than --archive-retain (30 days by
default, as long as Claude Code keeps the transcripts themselves), and its
log says what a pass deleted.

Flags:`

// forwardFlags are forward's flags, as forwardFlagSet defines them.
type forwardFlags struct {
	url, caFile   *string
	archiveRetain archiveAge
}

// forwardEnvFlags are forward's flags whose variables set their defaults
// (flagsFromEnv), as serve's do: so that the hook's autostart (the agent's
// environment) and the service (its unit's) can set them.
var forwardEnvFlags = []string{"archive-retain"}

// forwardFlagSet defines forward's flags, their defaults read from getenv:
// the one definition runForward parses and doctor checks the environment
// with (settingRefusals).
func forwardFlagSet(stdout, stderr io.Writer, getenv func(string) string) (*flag.FlagSet, *forwardFlags) {
	fs := newFlagSet("forward", forwardSynopsis, stdout, stderr)
	f := &forwardFlags{archiveRetain: archiveAge(forward.DefaultArchiveRetain)}
	home := hook.Home(getenv)
	// The hooks' URL, but for the local default, which needs no forwarder.
	hookURL, src := hook.LookupURL(getenv, home)
	if src == hook.URLDefault {
		hookURL = ""
	}
	f.url = fs.String("url", hookURL, "the collector's base URL (default $HOOKWATCH_URL, else the URL 'hookwatch install --url' kept in $HOOKWATCH_HOME/"+hook.URLFile+")")
	f.caFile = fs.String("ca-file", forward.CAFile(getenv, home), "PEM certificates to trust besides the system's, for a collector whose certificate a team's own authority signed (env HOOKWATCH_CA_FILE; default $HOOKWATCH_HOME/"+forward.CAFileName+" when it exists)")
	fs.Var(&f.archiveRetain, "archive-retain", "delete, at start and hourly, the compaction archive ($HOOKWATCH_HOME/archive) of every session whose files were all last written longer ago than this (30d, 2w, 36h; at least 1h: m is minutes), or off to keep it all")
	return fs, f
}

// check refuses what forward refuses of its flags' values once parsed,
// each refusal a *flagRefusal naming the flag it is about.
func (f *forwardFlags) check() error {
	if f.archiveRetain > 0 {
		return duration(f.archiveRetain).retention("archive-retain", "the compaction archive of every session")
	}
	return nil
}

// runForward is `hookwatch forward`.
func runForward(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, f := forwardFlagSet(stdout, stderr, os.Getenv)
	home := hook.Home(os.Getenv)
	if err := parseEnvFlags(fs, forwardEnvFlags, args, os.Getenv, f.check); err != nil {
		return err
	}
	url, caFile, archiveRetain := f.url, f.caFile, f.archiveRetain
	*url = strings.TrimRight(*url, "/")
	if *url == "" {
		return fmt.Errorf("%w: no collector URL: pass --url, set HOOKWATCH_URL, or keep one with 'hookwatch install --url'", errUsage)
	}
	if err := hook.CheckURL(*url); err != nil {
		return fmt.Errorf("%w: --url: %v", errUsage, err)
	}
	if !hook.NeedsForwarder(*url) {
		// The hooks post there themselves and never hand the forwarder
		// anything, while it would keep a local collector off the spool.
		return fmt.Errorf("%w: the hook posts to %s itself (plain http:// to an IP address): no forwarder is needed", errUsage, *url)
	}
	client, err := forward.NewClient(*caFile)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// Its log, when it is the home's (a hook or the launchd agent started
	// it), is rotated while it runs, as a collector's is.
	logCtx, stopLog := context.WithCancel(ctx)
	defer stopLog()
	go hook.RotateOwnLog(logCtx, home, hook.ForwardLog)
	getenv := func(k string) string { return forwardEnv(k, *url) }
	err = forward.Run(ctx, forward.Options{
		Home: home,
		URL:  *url,
		// Asked before each POST: a token 'hookwatch install --token-file'
		// puts in the file is sent without a restart.
		Token:         func() (string, hook.TokenSource) { return hook.LookupToken(getenv, home) },
		Client:        client,
		Logger:        log,
		ArchiveRetain: time.Duration(archiveRetain),
		Ready: func() {
			fmt.Fprintf(stdout, "hookwatch forward: forwarding %s/spool to %s\n", home, hook.ShownURL(*url))
		},
	})
	if errors.Is(err, spool.ErrAttached) {
		if c, ok := runningCollector(home); ok {
			return fmt.Errorf("cannot forward: %s is attached to the spool of %s already (pid %d)", hook.ShownURL(c.Addr), home, c.PID)
		}
	}
	return err
}

// forwardEnv is the environment the token is read from, with HOOKWATCH_URL
// set to url: a forwarder started with --url reads the token file as the
// hooks of that URL do.
func forwardEnv(key, url string) string {
	if key == "HOOKWATCH_URL" {
		return url
	}
	return os.Getenv(key)
}

// archiveAge is the value of forward's --archive-retain: an age as serve's
// --retain takes it (parseAge), or a value the HOOKWATCH_* switches read
// as off (envflag.Off: off, 0, …), 0, which keeps the archive whole.
type archiveAge time.Duration

var _ flag.Value = (*archiveAge)(nil)

// String shows a whole number of days as the flag takes it (30d), not as
// 720h0m0s.
func (a *archiveAge) String() string {
	const day = 24 * time.Hour
	switch d := time.Duration(*a); {
	case d == 0:
		return "off"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	default:
		return d.String()
	}
}

func (a *archiveAge) Set(s string) error {
	if envflag.Off(s) {
		*a = 0
		return nil
	}
	d, err := parseAge(s)
	if err != nil {
		return fmt.Errorf("%v, or off", err)
	}
	*a = archiveAge(d)
	return nil
}
