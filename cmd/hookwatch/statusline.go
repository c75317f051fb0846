package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/tidwall/gjson"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
)

func init() {
	register(command{
		name:    "statusline",
		summary: "Claude Code's statusLine command: record the snapshot, print one line",
		run:     runStatusline,
	})
}

// Bounds of the statusline command. Claude Code runs it after every
// assistant message and cancels a run still going when the next starts, so
// every step is short.
const (
	statuslineMaxInput   = 4 << 20
	statuslineBudget     = 500 * time.Millisecond // delivery to the collector, else the spool
	statuslineAgentsWait = 100 * time.Millisecond // the optional running-agents count
	statuslineWrapWait   = 10 * time.Second       // the wrapped command
	statuslineModelChars = 40
)

const statuslineSynopsis = `statusline [--wrap 'CMD'] < statusline.json

Claude Code's statusLine command: Claude Code runs it after each assistant
message with the session's state as JSON on stdin. It sends that snapshot
to the collector (the context window and cost curves of the dashboard) and
prints one line: ctx 42% · $0.31 · 3 agents running. Like the hook, it
never breaks the agent: whatever its input, it prints at most that line
and exits 0; a bad flag is ignored, without an error. Run at a terminal,
it says on stderr what it waits for. 'hookwatch install --statusline'
registers it, wrapping the statusLine command already set.

Flags:`

// statuslineExamples ends statusline --help.
const statuslineExamples = `
Example, in ~/.claude/settings.json (--wrap keeps the status line you had):
  "statusLine": {"type": "command", "command": "hookwatch statusline --wrap '~/bin/status.sh'"}
`

// statuslineFlagSet defines statusline's flag, --wrap: the one definition
// runStatusline parses and the docs' command lines are checked against.
func statuslineFlagSet(stdout, stderr io.Writer) (fs *flag.FlagSet, wrap *string) {
	fs = newFlagSet("statusline", statuslineSynopsis, stdout, stderr)
	wrap = fs.String("wrap", "", "run this statusLine command (with sh -c, on the same input) and print its output above hookwatch's line")
	usageTrailer(fs, statuslineExamples)
	return fs, wrap
}

// runStatusline is `hookwatch statusline`. Like the hook, it never breaks
// the agent: whatever the input, it prints at most a line and exits 0.
func runStatusline(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, wrap := statuslineFlagSet(stdout, stderr)
	// A bad flag in the settings must not print errors into the status bar:
	// flag errors stay quiet, and only --help prints.
	quietFlagErrors(fs)
	if err := parseFlags(fs, args); errors.Is(err, flag.ErrHelp) {
		return err
	}
	if isTerminal(stdin) {
		// Run by hand: Claude Code pipes its JSON in, a person sees a
		// command that seems to hang.
		fmt.Fprintln(stderr, "hookwatch statusline reads the JSON Claude Code gives a statusLine command on stdin: paste one and end it with Ctrl-D (see 'hookwatch statusline --help').")
	}
	data, _ := io.ReadAll(io.LimitReader(stdin, statuslineMaxInput))
	valid := gjson.ValidBytes(data) && gjson.ParseBytes(data).IsObject()

	var wg sync.WaitGroup
	var wrapped []byte
	if *wrap != "" {
		wg.Go(func() { wrapped = runWrapped(ctx, *wrap, data, stderr) })
	}
	agents := -1
	if valid {
		if p, err := event.Decode(data); err == nil && p.Name() == event.StatusLine {
			wg.Go(func() { recordStatusline(ctx, data) })
		}
		if id := gjson.GetBytes(data, "session_id").String(); id != "" {
			wg.Go(func() { agents = runningAgents(ctx, id) })
		}
	}
	wg.Wait()

	var out bytes.Buffer
	if len(wrapped) > 0 {
		out.Write(bytes.TrimRight(wrapped, "\n"))
		out.WriteByte('\n')
	}
	line := ""
	if valid {
		line = statusLine(gjson.ParseBytes(data), agents)
	}
	if line != "" || out.Len() == 0 {
		out.WriteString(line)
		out.WriteByte('\n')
	}
	_, _ = stdout.Write(out.Bytes())
	return nil
}

// runWrapped runs the user's own statusLine command on the same input and
// returns its standard output; its failures only cost its output.
func runWrapped(ctx context.Context, command string, input []byte, stderr io.Writer) []byte {
	ctx, cancel := context.WithTimeout(ctx, statuslineWrapWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stderr = stderr
	cmd.WaitDelay = 100 * time.Millisecond
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run() // a failing command may still have printed its line
	return out.Bytes()
}

// recordStatusline delivers the snapshot as a statusline envelope the way
// the hook delivers events: POST to the collector, else the spool.
func recordStatusline(ctx context.Context, data []byte) {
	cfg, _ := hook.ConfigFromEnv(os.Getenv)
	cfg.Version = version
	cfg.Budget = min(cfg.Budget, statuslineBudget)
	_ = hook.Run(ctx, cfg, bytes.NewReader(data)) // failures are in hook.log
}

// runningAgents asks the collector how many subagents of the session have
// started and not stopped; -1 when it cannot tell quickly.
func runningAgents(ctx context.Context, session string) int {
	base, token, err := collectorURL()
	if err != nil {
		return -1
	}
	ctx, cancel := context.WithTimeout(ctx, statuslineAgentsWait)
	defer cancel()
	body, err := apiGet(ctx, base, token, base+"/v1/sessions/"+url.PathEscape(session)+"/agents")
	if err != nil || !gjson.ValidBytes(body) {
		return -1
	}
	list := gjson.GetBytes(body, "agents")
	if !list.IsArray() {
		return -1
	}
	n := 0
	for _, a := range list.Array() {
		if a.Get("agent_id").String() == "" {
			continue // the main agent
		}
		if s := a.Get("stopped_at"); !s.Exists() || s.Type == gjson.Null || s.String() == "" {
			n++
		}
	}
	return n
}

// statusLine renders the compact line: context used, cost, model and
// running subagents, each left out when the payload lacks it.
func statusLine(p gjson.Result, agents int) string {
	var parts []string
	if pct, ok := contextPercent(p.Get("context_window")); ok {
		parts = append(parts, fmt.Sprintf("ctx %d%%", pct))
	}
	if c := p.Get("cost.total_cost_usd"); c.Type == gjson.Number && c.Float() >= 0 && !math.IsInf(c.Float(), 0) {
		parts = append(parts, fmt.Sprintf("$%.2f", c.Float()))
	}
	if m := modelName(p.Get("model")); m != "" {
		parts = append(parts, m)
	}
	switch {
	case agents == 1:
		parts = append(parts, "1 agent running")
	case agents > 1:
		parts = append(parts, fmt.Sprintf("%d agents running", agents))
	}
	return strings.Join(parts, " · ")
}

// contextPercent is the share of the context window in use: the client's
// used_percentage, else the last call's input tokens over the window size
// (the same input-only formula).
func contextPercent(cw gjson.Result) (int, bool) {
	if u := cw.Get("used_percentage"); u.Type == gjson.Number {
		return clampPercent(u.Float())
	}
	size := cw.Get("context_window_size").Float()
	cu := cw.Get("current_usage")
	if size <= 0 || !cu.IsObject() {
		return 0, false
	}
	used := cu.Get("input_tokens").Float() + cu.Get("cache_creation_input_tokens").Float() + cu.Get("cache_read_input_tokens").Float()
	return clampPercent(100 * used / size)
}

func clampPercent(f float64) (int, bool) {
	if math.IsNaN(f) || f < 0 {
		return 0, false
	}
	return int(math.Round(min(f, 100))), true
}

// modelName is the model's display name without its context-size suffix
// ("Opus 5 (1M context)" → "Opus 5"), with control characters (a terminal
// escape in a hostile payload) removed.
func modelName(m gjson.Result) string {
	s := m.Get("display_name").String()
	if s == "" {
		s = m.Get("id").String()
	}
	if s == "" && m.Type == gjson.String {
		s = m.Str
	}
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > statuslineModelChars {
		s = string(r[:statuslineModelChars-1]) + "…"
	}
	return s
}
