package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/install"
	"github.com/hookwatch/hookwatch/internal/demo"
)

func init() {
	register(command{
		name:    "demo",
		summary: "play a multi-agent Claude Code session into the collector, to see hookwatch work",
		run:     runDemo,
	})
}

const demoSynopsis = `demo [--speed N] [--no-start]

Plays a realistic Claude Code session into the collector the hooks send to
($HOOKWATCH_URL, else the URL 'hookwatch install --url' kept), live,
in about 20 seconds: a main agent runs three subagents in parallel, one of which
starts a chain three deep; a test run fails and passes again; a policy denies a
force push; the context is compacted. Open the dashboard link it prints and
watch the session being recorded. No Anthropic account or Claude Code needed.

The events go through the collector's ingest endpoint (POST /v1/events) exactly
as the hook sends them. When no collector answers, demo starts one in the
background, as the first hook of a real session would (stop it with
'hookwatch stop'); with --no-start or HOOKWATCH_AUTOSTART=0 it says how to
start one instead; when the collector answering is another HOOKWATCH_HOME's
(a machine homes share), it says so. Each run makes a new session in the
project "` + demo.StoryProject + `".

Flags:`

// demoFlags are the values of demo's flags.
type demoFlags struct {
	speed   *float64
	noStart *bool
}

// demoFlagSet defines demo's flags: the one definition runDemo parses and
// the docs' command lines are checked against.
func demoFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, demoFlags) {
	fs := newFlagSet("demo", demoSynopsis, stdout, stderr)
	return fs, demoFlags{
		speed:   fs.Float64("speed", 1, "play faster (2 = twice as fast) or slower (0.5)"),
		noStart: fs.Bool("no-start", false, "do not start a collector when none answers"),
	}
}

// runDemo is `hookwatch demo`.
func runDemo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, f := demoFlagSet(stdout, stderr)
	speed, noStart := f.speed, f.noStart
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	if !(*speed >= 0.01 && *speed <= 1000) { // NaN included
		// Below a hundredth the ~20 s story takes more than half an hour.
		return fmt.Errorf("%w: --speed must be from 0.01 to 1000", errUsage)
	}
	base, token, err := collectorURL()
	if err != nil {
		return err
	}
	if !healthy(ctx, base, 2*time.Second) {
		if err := errHomeCollectorElsewhere(base); err != nil {
			return err
		}
		if cfg, _ := hook.ConfigFromEnv(os.Getenv); *noStart || !cfg.Autostart {
			return fmt.Errorf("no collector answers at %s: %s (or run demo without --no-start, with HOOKWATCH_AUTOSTART on)", base, startHint(base))
		}
		if err := startCollector(ctx, hook.Home(os.Getenv), base, stdout); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "No collector answered at %s: started one in the background (stop it with: %s stop).\n", base, selfName())
	}

	// A collector that refuses the token says so before the link to a
	// session it would never record is printed.
	if _, err := apiGet(ctx, base, token, base+"/v1/sessions?limit=1"); err != nil {
		return err
	}
	// On a machine homes share, the collector answering may be another
	// home's, as install and doctor warn: the demo would go into its
	// database, and show on its dashboard.
	home := hook.Home(os.Getenv)
	tok, src := hook.LookupToken(os.Getenv, home)
	if ok, drains := health(ctx, base, tok, 2*time.Second); ok && install.CollectorOfAnotherHome(home, base, drains, hook.ForTeamServer(src, tok, home)) {
		fmt.Fprintf(stdout, "Note: the collector at %s is the collector of another HOOKWATCH_HOME, not of %s: the demo session goes into that home's database.\n"+
			"To run this home's: hookwatch serve --addr 127.0.0.1:<port>, and hookwatch install --url http://127.0.0.1:<port>.\n\n", base, home)
	}
	id := event.NewID(time.Now()) // a UUID, as Claude Code's session ids are
	envs := demo.Story(id, time.Now().Add(500*time.Millisecond), *speed)
	fmt.Fprintf(stdout, "Playing a demo session into %s. Watch it live:\n\n    %s/#/s/%s\n\n", base, base, url.PathEscape(id))
	p := &demoPlayer{base: base, token: token, out: stdout}
	for i := 0; i < len(envs); {
		if err := sleepUntil(ctx, envs[i].ReceivedAt); err != nil {
			return err
		}
		// Everything due by now goes in one batch, as a burst of parallel
		// hooks would arrive.
		j := i + 1
		for j < len(envs) && !envs[j].ReceivedAt.After(time.Now()) {
			j++
		}
		if err := p.post(ctx, envs[i:j]); err != nil {
			return err
		}
		for _, e := range envs[i:j] {
			p.narrate(e)
		}
		i = j
	}
	fmt.Fprintf(stdout, "\nDone: %d events in session %s.\nThe dashboard: %s/#/s/%s — hookwatch install, then claude, records your own sessions the same way.\n",
		len(envs), id, base, url.PathEscape(id))
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// demoPlayer sends the demo's envelopes and tells what happens.
type demoPlayer struct {
	base, token string
	out         io.Writer
	client      http.Client
}

// post sends one batch to POST /v1/events, as the hook does.
func (p *demoPlayer) post(ctx context.Context, envs []event.Envelope) error {
	return postEnvelopes(ctx, &p.client, p.base, p.token, envs, "the demo's events")
}

// postEnvelopes sends one batch of envelopes (what names them in errors)
// to the collector's POST /v1/events.
func postEnvelopes(ctx context.Context, client *http.Client, base, token string, envs []event.Envelope, what string) error {
	_, err := postBatch(ctx, client, base, token, envs, what)
	return err
}

// postBatch is postEnvelopes that returns how many of the envelopes the
// collector had already (its answer's duplicates: stored once), so that an
// import run again can say it added nothing.
func postBatch(ctx context.Context, client *http.Client, base, token string, envs []event.Envelope, what string) (duplicates int, err error) {
	// The envelopes' one encoding (what the hook sends), not json.Marshal:
	// an import posts hundreds of thousands of them.
	size := 32
	for i := range envs {
		size += len(envs[i].Payload) + len(envs[i].Decision) + 512
	}
	body := append(make([]byte, 0, size), `{"envelopes":[`...)
	for i := range envs {
		if i > 0 {
			body = append(body, ',')
		}
		body = envs[i].AppendJSON(body)
	}
	body = append(body, "]}"...)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/events", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot send %s to %s: %w", what, base, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return 0, errTokenRefused(base, msg)
	case resp.StatusCode/100 != 2:
		return 0, fmt.Errorf("the collector at %s refused %s: HTTP %d: %s", base, what, resp.StatusCode, bytes.TrimSpace(msg))
	}
	// An older collector's answer, or one cut at the limit, counts none.
	var res struct {
		Duplicates int `json:"duplicates"`
	}
	json.Unmarshal(msg, &res)
	return res.Duplicates, nil
}

// narrate prints a line for the moments worth watching.
func (p *demoPlayer) narrate(e event.Envelope) {
	var pl struct {
		Event     string          `json:"hook_event_name"`
		AgentType *string         `json:"agent_type"`
		Tool      string          `json:"tool_name"`
		Input     json.RawMessage `json:"tool_input"`
		Prompt    string          `json:"prompt"`
		Source    string          `json:"source"`
	}
	if e.Kind != event.KindHook || json.Unmarshal(e.Payload, &pl) != nil {
		return
	}
	who := "main agent"
	if pl.AgentType != nil {
		who = *pl.AgentType + " agent"
		if *pl.AgentType == "" {
			who = "compaction agent"
		}
	}
	var in struct {
		Command, Description string
	}
	_ = json.Unmarshal(pl.Input, &in)
	line := ""
	switch {
	case pl.Event == event.UserPromptSubmit:
		line = "prompt: " + pl.Prompt
	case pl.Event == event.SubagentStart:
		line = who + " starts" + p.depth(e)
	case pl.Event == event.SubagentStop && pl.AgentType != nil && *pl.AgentType != "":
		line = who + " is done"
	case pl.Event == event.PreToolUse && len(e.Decision) > 0:
		line = fmt.Sprintf("%s: %s DENIED by a policy", who, in.Command)
	case pl.Event == event.PostToolUseFailure:
		what := in.Command
		if what == "" {
			what = pl.Tool
		}
		line = fmt.Sprintf("%s: %s FAILED", who, what)
	case pl.Event == event.PostToolUse && pl.Tool == "Bash" && strings.HasPrefix(in.Command, "go test"):
		line = fmt.Sprintf("%s: %s passes", who, in.Command)
	case pl.Event == event.PreCompact:
		line = "the context is compacted"
	case pl.Event == event.Stop:
		line = "main agent: finished"
	case pl.Event == event.SessionEnd:
		line = "the session ends"
	}
	if line != "" {
		fmt.Fprintf(p.out, "  %s  %s\n", e.ReceivedAt.Local().Format("15:04:05"), line)
	}
}

// depth says how deep a subagent runs, from the sidecar the hook read.
func (p *demoPlayer) depth(e event.Envelope) string {
	if e.Subagent == nil || e.Subagent.SpawnDepth < 2 {
		return ""
	}
	return fmt.Sprintf(" (depth %d)", e.Subagent.SpawnDepth)
}
