package hook

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hookwatch/hookwatch/event"
)

// Main is the whole hook command: flags, configuration, Run, and the output
// contract. It returns the process exit code, which is 0 unless a policy
// decided otherwise. The only thing it ever writes to stderr is --help.
// A run that outlives twice its budget past its payload however
// (armLastResort) ends the process itself, with exit code 0 and nothing on
// stdout. SIGTERM does not end a run: it stores the event it read all the
// same (ignoreTermination).
//
// decide evaluates policies in process: the full binary passes
// policy.Answer; the lean hook binary passes nil (see Config.Decide).
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, version string, decide DecideFunc) int {
	growStack()
	cfg, warnings := ConfigFromEnv(getenv)
	cfg.Version = version
	cfg.Decide = decide
	if len(args) > 0 && args[0] == "hook" {
		// `hookwatch-hook hook …`: the full binary's command line, which
		// names the subcommand; flags follow it.
		args = args[1:]
	}
	runtime, help, showVersion, err := parseArgs(args)
	if help {
		fmt.Fprint(stderr, helpText)
		return 0
	}
	if showVersion {
		// A person asking, not an agent: no payload to wait for, nothing
		// for hook.log.
		fmt.Fprintf(stdout, "hookwatch %s\n", version)
		return 0
	}
	if err != nil {
		// A bad flag in the agent's settings must not break the agent.
		warnings = append(warnings, fmt.Sprintf("ignoring bad hook arguments %q: %v", args, err))
	}
	if runtime != "" && runtime != event.RuntimeClaudeCode && runtime != event.RuntimeCodex {
		// Stored as said, a slip (--runtime claude) would keep the
		// runtime's policy rules from applying: detected instead.
		warnings = append(warnings, fmt.Sprintf("ignoring --runtime %q (want claude-code or codex): the runtime is detected from the payload", runtime))
		runtime = ""
	}
	cfg.Runtime = runtime
	ignoreTermination()
	lr := cfg.armLastResort(cfg.now())
	cfg.payloadRead = lr.payloadRead
	res := Run(ctx, cfg, stdin)
	for _, w := range warnings {
		cfg.log(cfg.now(), "", "", fmt.Errorf("configuration: %s", w))
	}
	if !lr.disarm() {
		return 0 // the last resort is ending the process: say nothing
	}
	if len(res.Stdout) > 0 {
		_, _ = stdout.Write(res.Stdout)
	}
	return res.ExitCode
}

// parseArgs reads the hook's flags, --runtime and --version, and -h/--help,
// as package flag would: one or two dashes, the value after "=" or as the
// next argument (a boolean's only after "="), flags ending at "--" or at
// the first argument that is not one (the rest is ignored). Not package
// flag itself: its package init and first use are work every hook run
// would pay for two flags.
func parseArgs(args []string) (runtime string, help, version bool, err error) {
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' {
			break
		}
		args = args[1:]
		if a == "--" {
			break
		}
		name := a[1:]
		if name[0] == '-' {
			name = name[1:]
		}
		if name == "" || name[0] == '-' || name[0] == '=' {
			return runtime, false, version, fmt.Errorf("bad flag syntax: %s", a)
		}
		name, value, hasValue := strings.Cut(name, "=")
		switch name {
		case "h", "help":
			return "", true, false, nil
		case "version":
			if !hasValue {
				version = true
				break
			}
			b, perr := strconv.ParseBool(value)
			if perr != nil {
				return runtime, false, version, fmt.Errorf("invalid boolean value %q for -%s: parse error", value, name)
			}
			version = b
		case "runtime":
			if !hasValue {
				if len(args) == 0 {
					return runtime, false, version, fmt.Errorf("flag needs an argument: -%s", name)
				}
				value, args = args[0], args[1:]
			}
			runtime = value
		default:
			return runtime, false, version, fmt.Errorf("flag provided but not defined: -%s", name)
		}
	}
	return runtime, false, version, nil
}

const helpText = `Usage: hookwatch hook [--runtime claude-code|codex] < payload.json

Reads one agent hook payload (Claude Code or Codex) from stdin, records it
with the collector at $HOOKWATCH_URL (else the URL 'hookwatch install
--url' kept in $HOOKWATCH_HOME/url, else http://127.0.0.1:7421) and
exits 0. Stdout is empty unless a policy rule answers the event (a deny
with its reason, context for the model…): then it holds that answer, in
the JSON the runtime reads; 'hookwatch policy explain' lists the rules in
force. When the collector is down or slow, the event is spooled under
$HOOKWATCH_HOME/spool and delivered later. Failures are logged to
$HOOKWATCH_HOME/hook.log; they never break the agent.

Environment:
  HOOKWATCH_HOME         data directory (default ~/.hookwatch)
  HOOKWATCH_URL          collector base URL: http:// with an IP or localhost
                         is posted to (on loopback, a collector is started
                         when none answers); https:// or a host name (a team
                         server) is spooled for hookwatch forward, which is
                         started when none runs; unset, the URL kept in
                         $HOOKWATCH_HOME/url by 'hookwatch install --url'
  HOOKWATCH_TOKEN        bearer token for the collector
  HOOKWATCH_HOOK_BUDGET  wall time the hook may take once its payload is read
                         (default 1s; it waits five times as long for the payload)
  HOOKWATCH_SPOOL_MAX    bytes the spool may hold (default 256 MiB)
  HOOKWATCH_CAPTURE      tool output kept: none, preview (default) or full
  HOOKWATCH_REDACT       0 to store secrets unredacted (default: redact)
  HOOKWATCH_STALE_GUARD  0: record no file states, and say nothing at a resume
                         about files changed since the session read them
  HOOKWATCH_STALE_MAX_LISTED, HOOKWATCH_STALE_FRESH_ABOVE
                         changed files named at most (20); above how many the
                         context recommends starting fresh (10)

Flags:
  -runtime string
    	agent runtime that runs this hook: claude-code or codex (default: detected from the payload)
  -version
    	print the version and exit, reading no payload
`
