package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/e2e"
	"github.com/hookwatch/hookwatch/internal/fakeclaude"
	"github.com/hookwatch/hookwatch/internal/serveproc"
)

// SessionOptions configures the session benchmark.
type SessionOptions struct {
	Repo string // repository root, to build the binaries from
	// Claude is the Claude Code binary; "" means the oldest client
	// e2e.FindClients finds ($HOOKWATCH_CLAUDE_BIN, else what
	// scripts/install-claude.sh installed).
	Claude string
	// Rounds is how many times each variant plays the session (default 5),
	// after one unmeasured warm-up round.
	Rounds int
	// Variants, when not empty, names the variants to play by their keys
	// (SessionVariants); "no hooks" and "/bin/true", the reference of every
	// ratio, are always played.
	Variants []string
}

// SessionVariants are the keys of the session benchmark's variants, in
// the order they are printed.
var SessionVariants = []string{"none", "true", "floor", "httpfloor", "command", "http"}

// A sessionVariant is one way of hooking the client.
type sessionVariant struct {
	key, name string
	env       *e2e.Env
	// stored says whether the variant's events reach the collector, whose
	// counts are then checked after every run.
	stored bool
	runs   []sessionRun
}

// sessionRun is what one play of the session cost.
type sessionRun struct {
	// elapsed is the client's wall time, start to exit.
	elapsed time.Duration
	// tools is the time the client spent between the model's answers and
	// its next requests, running tools and hooks (see toolTime).
	tools time.Duration
	// cpu is the CPU time of the client, of the processes it waited for
	// (hooks, tools) and of the collector while it stored the session;
	// collector is the collector's part.
	cpu, collector time.Duration
	// counts are the stored events by name, for a stored variant.
	counts map[string]int
}

// median returns the median of one measure of v's runs, in seconds.
func (v *sessionVariant) median(of func(sessionRun) time.Duration) float64 {
	s := make([]float64, len(v.runs))
	for i, r := range v.runs {
		s[i] = of(r).Seconds()
	}
	return median(s)
}

// noHooks is the settings of the variant without hooks: only what every
// variant shares.
const noHooks = `{"skipWebFetchPreflight": true}` + "\n"

// Session plays e2e.ToolSession — e2e.SessionToolCalls tool calls, some in
// two parallel subagents — with the real Claude Code client and the
// scripted model six ways: without hooks; with /bin/true, then the floor
// program (a Go program that reads stdin), registered exactly where
// `hookwatch install` registers the hook; the floor of http hooks (a server
// that answers at once, registered where --mode http registers http
// handlers, /bin/true for the events that take commands only); and with
// hookwatch installed by `hookwatch install` in command and in http mode,
// both sending to one `hookwatch serve` (o.Variants may leave some out). It prints, per variant, the medians of the session's
// wall time, of the client's time running tools and hooks (toolTime) and of
// the CPU time of the client, its children and the collector, and what each
// adds per tool call over no hooks, as a multiple of what /bin/true adds.
//
// The variants run interleaved, in a rotating order, round after round.
// After each hookwatch run the collector must hold every event of the
// session, and the next run waits until it has modelled them, so that one
// run's work does not land on the next; every run of both modes must store
// the same events, a PreToolUse and a PostToolUse per call.
func Session(ctx context.Context, w io.Writer, o SessionOptions) error {
	if o.Rounds <= 0 {
		o.Rounds = 5
	}
	claude, err := claudeBin(o)
	if err != nil {
		return err
	}
	b, err := buildAll(ctx, o.Repo)
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	// No symlinks in the project's path: the client names the transcript
	// directory after it.
	tmp, err := filepath.EvalSymlinks(b.tmp)
	if err != nil {
		return err
	}
	home := filepath.Join(tmp, "serve-home")
	serveLog, err := os.Create(filepath.Join(tmp, "serve.log"))
	if err != nil {
		return err
	}
	defer serveLog.Close()
	p, err := serveproc.Start(serveproc.Options{
		Bin: b.full, Stderr: serveLog, Healthy: 15 * time.Second,
		Env: append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_TOKEN="),
	})
	if err != nil {
		return err
	}
	defer p.Stop(time.Minute)
	url := p.URL()

	// The hooks share the collector's home, as on a developer's machine:
	// command hooks hand their events over through its spool.
	vars := []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + url, "HOOKWATCH_TOKEN="}
	// The floor of http hooks: a server that answers every request at once
	// with an empty body (no opinion), registered where `hookwatch install
	// --mode http` registers http handlers; the events that take only
	// command handlers get /bin/true.
	httpFloor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	defer httpFloor.Close()
	all := []*sessionVariant{
		{key: "none", name: "no hooks"}, {key: "true", name: "/bin/true"}, {key: "floor", name: "floor (reads stdin)"},
		{key: "httpfloor", name: "http floor (answers at once)"},
		{key: "command", name: "hookwatch, command", stored: true}, {key: "http", name: "hookwatch, http", stored: true},
	}
	var variants []*sessionVariant
	for _, v := range all {
		if v.key == "none" || v.key == "true" || len(o.Variants) == 0 || slices.Contains(o.Variants, v.key) {
			variants = append(variants, v)
		}
	}
	for i, v := range variants {
		root := filepath.Join(tmp, fmt.Sprint("client-", i))
		if err := os.MkdirAll(root, 0o700); err != nil {
			return err
		}
		if v.env, err = e2e.Setup(claude, root, []byte(noHooks), vars...); err != nil {
			return err
		}
		defer v.env.Close()
		v.env.Model.SetScript(e2e.ToolSession(v.env.Project).Script)
		switch v.key {
		case "true":
			err = installInstead(ctx, b.full, v.env, "command", url, "/bin/true")
		case "floor":
			err = installInstead(ctx, b.full, v.env, "command", url, b.floor)
		case "httpfloor":
			err = installInstead(ctx, b.full, v.env, "http", httpFloor.URL, "/bin/true")
		case "command", "http":
			err = installHooks(ctx, b.full, v.env, v.key, url)
		}
		if err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "session: the real client (%s) plays %d tool calls, in parallel batches and two parallel subagents, %d rounds, variants interleaved\n",
		filepath.Base(claude), e2e.SessionToolCalls, o.Rounds)
	client := &http.Client{Timeout: 10 * time.Second}
	for round := 0; round <= o.Rounds; round++ {
		for k := range variants {
			v := variants[(round+k)%len(variants)]
			r, err := playSession(ctx, client, p, v)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if round > 0 { // round 0 warms up: caches, the collector's first session
				v.runs = append(v.runs, r)
			}
		}
		if round > 0 {
			fmt.Fprintf(w, "  round %d (session / tools / CPU):", round)
			for _, v := range variants {
				r := v.runs[round-1]
				fmt.Fprintf(w, " %s %v / %v / %v;", v.name, r.elapsed.Round(time.Millisecond), r.tools.Round(time.Millisecond), r.cpu.Round(time.Millisecond))
			}
			fmt.Fprintln(w)
		}
	}

	// The tool calls whose hooks toolTime covers: all but the two that
	// spawn the subagents.
	const calls = e2e.SessionToolCalls - 2
	none, truth := variants[0], variants[1]
	elapsed := func(r sessionRun) time.Duration { return r.elapsed }
	tools := func(r sessionRun) time.Duration { return r.tools }
	cpu := func(r sessionRun) time.Duration { return r.cpu }
	collectorCPU := func(r sessionRun) time.Duration { return r.collector }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tsession\ttools\tadded per call\t/ /bin/true's\tCPU\tcollector's\tadded per call\t/ /bin/true's\t")
	for _, v := range variants {
		addedTools := v.median(tools) - none.median(tools)
		addedCPU := v.median(cpu) - none.median(cpu)
		fmt.Fprintf(tw, "%s\t%.0f ms\t%.0f ms\t%+.2f ms\t%.2f×\t%.0f ms\t%.0f ms\t%+.2f ms\t%.2f×\t\n", v.name,
			1000*v.median(elapsed), 1000*v.median(tools), 1000*addedTools/calls, addedTools/(truth.median(tools)-none.median(tools)),
			1000*v.median(cpu), 1000*v.median(collectorCPU), 1000*addedCPU/e2e.SessionToolCalls, addedCPU/(truth.median(cpu)-none.median(cpu)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(medians of %d rounds; tools: the client's wall time between the model's answer and its next request, per call over the %d calls not spawning a subagent; CPU: the client's, its children's and the collector's over the whole session, per call over all %d)\n",
		o.Rounds, calls, e2e.SessionToolCalls)
	// The same ratios read round by round: the variants of a round play
	// one after the other, so a round in which the client itself ran slow
	// (its CPU per call swings by more than what the hooks add) weighs on
	// all of them, and a ratio of one round's differences leaves it out.
	fmt.Fprintf(w, "round by round (median over the %d rounds of each round's added / /bin/true's added): ", o.Rounds)
	for i, v := range variants[2:] {
		if i > 0 {
			fmt.Fprint(w, "; ")
		}
		fmt.Fprintf(w, "%s tools %.2f×, CPU %.2f×", v.name, pairedRatio(v, none, truth, tools), pairedRatio(v, none, truth, cpu))
	}
	fmt.Fprintln(w)
	byKey := map[string]*sessionVariant{}
	for _, v := range variants {
		byKey[v.key] = v
	}
	decompose(w, none, truth, byKey["floor"], byKey["command"], "command hooks", "the Go runtime's start")
	decompose(w, none, truth, byKey["httpfloor"], byKey["http"], "http hooks", "the client's HTTP handler")
	var stored []*sessionVariant
	for _, v := range variants {
		if v.stored {
			stored = append(stored, v)
		}
	}
	if len(stored) == 0 {
		return nil
	}
	return checkCounts(w, stored)
}

// pairedRatio is the median over the rounds of what v added over no
// hooks in a round, as a multiple of what /bin/true (truth) added in the
// same round, of one measure; rounds where /bin/true added nothing are
// left out.
func pairedRatio(v, none, truth *sessionVariant, of func(sessionRun) time.Duration) float64 {
	var ratios []float64
	for i := range v.runs {
		if d := of(truth.runs[i]) - of(none.runs[i]); d > 0 {
			ratios = append(ratios, float64(of(v.runs[i])-of(none.runs[i]))/float64(d))
		}
	}
	return median(ratios)
}

// decompose prints what hookwatch's variant adds per tool call over
// /bin/true's as two factors: its floor's over /bin/true's (what any hook
// of that kind costs: floorIs) and hookwatch's over its floor's (the hook
// processes' own work and the collector's), in CPU and in the client's
// wall time running tools. It prints nothing when a variant was not played.
func decompose(w io.Writer, none, truth, floor, hw *sessionVariant, what, floorIs string) {
	if floor == nil || hw == nil {
		return
	}
	cpu := func(r sessionRun) time.Duration { return r.cpu }
	tools := func(r sessionRun) time.Duration { return r.tools }
	collector := func(r sessionRun) time.Duration { return r.collector }
	added := func(v *sessionVariant, of func(sessionRun) time.Duration) float64 {
		return v.median(of) - none.median(of)
	}
	for _, m := range []struct {
		name  string
		of    func(sessionRun) time.Duration
		calls int
	}{{"CPU", cpu, e2e.SessionToolCalls}, {"tools (wall)", tools, e2e.SessionToolCalls - 2}} {
		t, f, h := added(truth, m.of), added(floor, m.of), added(hw, m.of)
		per := func(x float64) float64 { return 1000 * x / float64(m.calls) }
		fmt.Fprintf(w, "%s, %s added per call: %+.2f ms = /bin/true's %+.2f ms × %.2f (the floor: %s) × %.2f (hookwatch over the floor: %+.2f ms per call",
			what, m.name, per(h), per(t), f/t, floorIs, h/f, per(h-f))
		if m.name == "CPU" {
			fmt.Fprintf(w, ", of which the collector %.2f ms", per(hw.median(collector)))
		}
		fmt.Fprintln(w, ")")
	}
}

// claudeBin finds the client as the end-to-end tests do (e2e.FindClients),
// for a program: o.Claude, else the oldest client of the matrix, the one
// docs/benchmarks.md measures.
func claudeBin(o SessionOptions) (string, error) {
	if o.Claude != "" {
		if st, err := os.Stat(o.Claude); err != nil || st.IsDir() {
			return "", fmt.Errorf("no Claude Code binary at %s", o.Claude)
		}
		return filepath.Abs(o.Claude)
	}
	clients, err := e2e.FindClients()
	if err != nil {
		return "", err
	}
	return filepath.Abs(clients[0].Bin)
}

// installHooks runs `hookwatch install --scope user --mode mode` into env's
// settings, as a user would.
func installHooks(ctx context.Context, bin string, env *e2e.Env, mode, url string) error {
	cmd := exec.CommandContext(ctx, bin, "install", "--scope", "user", "--mode", mode, "--url", url)
	cmd.Env = env.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cannot install the hooks (%s mode): %w\n%s", mode, err, out)
	}
	return nil
}

// installInstead installs the hooks in mode, then registers bin instead
// of every command handler (registerInstead).
func installInstead(ctx context.Context, full string, env *e2e.Env, mode, url, bin string) error {
	if err := installHooks(ctx, full, env, mode, url); err != nil {
		return err
	}
	return registerInstead(env.Settings, bin)
}

// registerInstead replaces the command of every command handler of the
// settings file with bin: the same events, the same async flags, the same
// exec form as the installed hook, for a process that does (next to)
// nothing.
func registerInstead(settings, bin string) error {
	b, err := os.ReadFile(settings)
	if err != nil {
		return err
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("cannot read %s: %w", settings, err)
	}
	n := 0
	for _, groups := range doc.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h["type"] == "command" {
					h["command"], n = bin, n+1
				}
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("%s registers no command hook", settings)
	}
	out, err := json.MarshalIndent(map[string]any{"hooks": doc.Hooks, "skipWebFetchPreflight": true}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(settings, out, 0o600)
}

// playSession plays the session once with v and measures it. For a variant
// whose events are stored, it returns once the collector holds and has
// modelled all of them, so that the next run's work does not land on this
// one's.
func playSession(ctx context.Context, client *http.Client, collector *serveproc.Proc, v *sessionVariant) (sessionRun, error) {
	// A fresh project state: the Write calls create their files, as in
	// the first run (Write refuses to overwrite a file not read first).
	if err := os.RemoveAll(filepath.Join(v.env.Project, "notes")); err != nil {
		return sessionRun{}, err
	}
	v.env.Model.Reset()
	before, err := procCPU(collector.Pid())
	if err != nil {
		return sessionRun{}, err
	}
	res, err := v.env.RunContext(ctx, e2e.ToolSession(v.env.Project).Prompt)
	if err != nil {
		return sessionRun{}, err
	}
	if res.IsError || res.Text != e2e.SessionText {
		return sessionRun{}, fmt.Errorf("the session ended with %s", res.JSON)
	}
	r := sessionRun{elapsed: res.Elapsed, tools: toolTime(v.env.Model.Requests())}
	// The collector's CPU is taken after a quiet second, long enough for it
	// to store and model what the hooks handed over (it gathers hand-offs
	// for a quarter of a second, then holds events 40 ms for the model),
	// and before the check below reads the session back: those reads are
	// the benchmark's, not the session's, and a read has the collector store
	// what is pending at once.
	time.Sleep(time.Second)
	after, err := procCPU(collector.Pid())
	if err != nil {
		return r, err
	}
	r.collector = after - before
	r.cpu = res.CPU + r.collector
	if v.stored {
		if r.counts, err = storedEvents(ctx, client, collector.URL(), res.SessionID); err != nil {
			return r, err
		}
	}
	return r, nil
}

// toolTime sums, over every scripted conversation, the time from the
// model's answer calling tools to the client's next request: the client
// running the tools and their hooks (PreToolUse, PostToolUse,
// PostToolBatch), without the client's start, its model calls or its
// exit. A turn that spawned subagents is left out: the wait for it holds
// the subagents' whole conversations, whose turns are counted themselves.
func toolTime(reqs []fakeclaude.Request) time.Duration {
	type key struct {
		conv string
		turn int
	}
	turns := map[key]fakeclaude.Request{}
	for _, r := range reqs {
		if r.Kind != fakeclaude.KindTurn {
			continue
		}
		k := key{r.Conversation, r.Turn}
		if _, seen := turns[k]; !seen { // a retry answers the same turn again
			turns[k] = r
		}
	}
	var sum time.Duration
	for k, next := range turns {
		prev, ok := turns[key{k.conv, k.turn - 1}]
		if !ok || prev.Answered.IsZero() || spawns(prev.Reply) {
			continue
		}
		sum += next.Received.Sub(prev.Answered)
	}
	return sum
}

// spawns reports whether a reply calls the subagent tool.
func spawns(reply []fakeclaude.Block) bool {
	return slices.ContainsFunc(reply, func(b fakeclaude.Block) bool { return b.Tool == "Agent" || b.Tool == "Task" })
}

// storedEvents waits until the collector holds the session's last event
// (SessionEnd) and has modelled everything it holds, then counts its events
// by name through the API.
func storedEvents(ctx context.Context, client *http.Client, base, id string) (map[string]int, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		var v collector.SessionView
		err := getJSON(client, base+"/v1/sessions/"+url.PathEscape(id), &v)
		if err == nil && v.DerivedSeq >= v.LastSeq {
			counts, err := countEvents(client, base, id)
			if err != nil {
				return nil, err
			}
			if counts["SessionEnd"] > 0 {
				return counts, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("session %s: not all events stored and modelled within a minute (last error: %v)", id, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// countEvents pages through the session's events and counts them by name.
func countEvents(client *http.Client, base, id string) (map[string]int, error) {
	counts := map[string]int{}
	cursor := ""
	for range 1000 {
		var page collector.EventsResponse
		err := getJSON(client, base+"/v1/sessions/"+url.PathEscape(id)+"/events?limit=1000&cursor="+url.QueryEscape(cursor), &page)
		if err != nil {
			return nil, err
		}
		for _, ev := range page.Events {
			counts[ev.Event]++
		}
		if cursor = page.NextCursor; cursor == "" {
			return counts, nil
		}
	}
	return nil, errors.New("event paging never ended")
}

// checkCounts prints the events stored per run and fails unless every run
// of every stored variant stored the same events, with a PreToolUse and a
// PostToolUse for each tool call.
func checkCounts(w io.Writer, variants []*sessionVariant) error {
	want := variants[0].runs[0].counts
	total := 0
	for _, n := range want {
		total += n
	}
	names := slices.Sorted(maps.Keys(want))
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, " %s %d", name, want[name])
	}
	fmt.Fprintf(w, "events stored per session: %d (%s)\n", total, strings.TrimSpace(b.String()))
	for _, name := range []string{"PreToolUse", "PostToolUse"} {
		if want[name] != e2e.SessionToolCalls {
			return fmt.Errorf("%d %s events stored, want one per tool call (%d)", want[name], name, e2e.SessionToolCalls)
		}
	}
	for _, v := range variants {
		for i, r := range v.runs {
			if got := r.counts; !maps.Equal(got, want) {
				return fmt.Errorf("%s, round %d: stored %v, want %v (as the first round of %s)", v.name, i+1, got, want, variants[0].name)
			}
		}
	}
	fmt.Fprintf(w, "every run of %d stored every event\n", len(variants)*len(variants[0].runs))
	return nil
}
