package bench

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hookwatch/hookwatch/claudecode"
	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/internal/serveproc"
)

//go:embed testdata/pretooluse.json
var preToolUsePayload []byte

// projectDirEnv is what Claude Code sets for every hook: the session's
// project directory, which is the payload's cwd (a PreToolUse in the
// project's root, as most are). Policy files are looked for from cwd up to
// it; without it the search would climb to the root, as no real hook does.
func projectDirEnv() string {
	var p struct{ CWD string }
	_ = json.Unmarshal(preToolUsePayload, &p)
	return "CLAUDE_PROJECT_DIR=" + p.CWD
}

// floorSource is the floor the hook is measured against: a Go program that
// reads stdin and exits. Nothing can be faster than the process start.
const floorSource = `package main

import (
	"io"
	"os"
)

func main() { io.Copy(io.Discard, os.Stdin) }
`

// nodeHookSource is what a peer's Node.js hook does at the least: read
// stdin, wrap it, POST it to the collector and wait for the answer.
const nodeHookSource = `const http = require('http');
let chunks = [];
process.stdin.on('data', c => chunks.push(c));
process.stdin.on('end', () => {
  const payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const id = require('crypto').randomUUID();
  const body = JSON.stringify({envelopes: [{id, runtime: 'claude-code', kind: 'hook', received_at: new Date().toISOString(), payload}]});
  const req = http.request(process.env.HOOKWATCH_URL + '/v1/events', {method: 'POST', headers: {'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body)}}, res => { res.resume(); res.on('end', () => process.exit(0)); });
  req.on('error', () => process.exit(0));
  req.end(body);
});
`

// HookOptions configures the hook latency benchmark.
type HookOptions struct {
	Repo   string // repository root, to build the binaries from
	Runs   int    // runs per command and round (default 200)
	Warmup int    // unmeasured runs per command before each round (default 10)
	// Rounds repeats the interleaved measurement (default 1); with more
	// than one, the verdicts use the median of the rounds' medians.
	Rounds int
}

// The hook's goals, as multiples of the floor program's median: with the
// local collector up, and with no collector (the event spooled); and the
// least a Node.js hook (read stdin, POST to the collector) should take, as a
// multiple of hookwatch-hook with the local collector.
const (
	HookGoalUp   = 1.3
	HookGoalDown = 1.5
	NodeGoal     = 30
)

// Hook measures the wall time of the hook binary on a real PreToolUse
// payload against the floor program, with a live collector (hookwatch serve
// on a temporary SQLite database) and with the collector down (spooling),
// and against an equivalent Node.js hook when node is installed. All
// commands run interleaved in one run, so noise hits them alike.
func Hook(ctx context.Context, w io.Writer, o HookOptions) error {
	if o.Runs <= 0 {
		o.Runs = 200
	}
	if o.Warmup <= 0 {
		o.Warmup = 10
	}
	b, err := buildAll(ctx, o.Repo)
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	tmp, floor, hookBin, serveBin := b.tmp, b.floor, b.hook, b.full
	serveHome := filepath.Join(tmp, "serve-home")
	url, stop, err := startCollector(serveBin, serveHome)
	if err != nil {
		return err
	}
	defer stop()

	dead, err := deadport.Open()
	if err != nil {
		return err
	}
	defer dead.Close()
	down := dead.URL()
	// A hook sharing the collector's home finds it attached to its spool
	// and hands the event over there (the default on one machine); a hook
	// with another home posts each event and waits for the commit, as with
	// a collector on another machine.
	home := filepath.Join(tmp, "home")
	cmds := []Command{
		{Name: "floor (Go, reads stdin)", Argv: []string{floor}},
		{Name: "hookwatch-hook, local collector", Argv: []string{hookBin}, Env: []string{"HOOKWATCH_HOME=" + serveHome, "HOOKWATCH_URL=" + url, projectDirEnv()}},
		{Name: "hookwatch-hook, posting", Argv: []string{hookBin}, Env: []string{"HOOKWATCH_HOME=" + home, "HOOKWATCH_URL=" + url, projectDirEnv()}},
		{Name: "hookwatch-hook, collector down", Argv: []string{hookBin}, Env: []string{"HOOKWATCH_HOME=" + home + "-down", "HOOKWATCH_URL=" + down, "HOOKWATCH_AUTOSTART=0", projectDirEnv()}},
		{Name: "hookwatch hook (full binary), local", Argv: []string{serveBin, "hook"}, Env: []string{"HOOKWATCH_HOME=" + serveHome, "HOOKWATCH_URL=" + url, projectDirEnv()}},
	}
	if node, err := exec.LookPath("node"); err == nil {
		script := filepath.Join(tmp, "hook.js")
		if err := os.WriteFile(script, []byte(nodeHookSource), 0o644); err != nil {
			return err
		}
		cmds = append(cmds, Command{Name: "Node.js hook, posting", Argv: []string{node, script}, Env: []string{"HOOKWATCH_URL=" + url}})
	}
	fmt.Fprintf(w, "hook latency: PreToolUse payload of %d bytes, %d runs each, interleaved, %d round%s\n",
		len(preToolUsePayload), o.Runs, max(o.Rounds, 1), map[bool]string{true: "s"}[o.Rounds > 1])
	m, err := RunRounds(ctx, w, cmds, preToolUsePayload, o.Runs, o.Warmup, o.Rounds, func(tw io.Writer, ts []Timing) {
		if len(ts) == 6 {
			fmt.Fprintf(tw, "Node.js hook / hookwatch-hook, both posting\t\t\t%.1f×\t\n", ratio(ts[5].Median(), ts[2].Median()))
		}
	})
	if err != nil {
		return err
	}
	if o.Rounds > 1 {
		fmt.Fprintf(w, "median of %d rounds:", o.Rounds)
		for i, c := range cmds[1:] {
			fmt.Fprintf(w, " %s %.2f×;", c.Name, ratio(m[i+1], m[0]))
		}
		fmt.Fprintln(w)
	}
	verdict := func(ok bool) string { return map[bool]string{true: "met", false: "MISSED"}[ok] }
	upRatio, downRatio := ratio(m[1], m[0]), ratio(m[3], m[0])
	fmt.Fprintf(w, "goal: local collector ≤ %.1f× the floor: %s (%.2f×); collector down ≤ %.1f×: %s (%.2f×)",
		HookGoalUp, verdict(upRatio <= HookGoalUp), upRatio, HookGoalDown, verdict(downRatio <= HookGoalDown), downRatio)
	if len(m) == 6 {
		// What an agent waits for: the Node.js hook against ours as
		// installed (local collector); the posting row is the same work.
		node := ratio(m[5], m[1])
		fmt.Fprintf(w, "; Node.js ≥ %d× hookwatch-hook: %s (%.1f×; %.1f× against it posting)", NodeGoal, verdict(node >= NodeGoal), node, ratio(m[5], m[2]))
	}
	fmt.Fprintln(w)
	return nil
}

// binaries are the programs a latency benchmark compares, built into tmp.
type binaries struct {
	tmp, floor, hook, full string
}

// buildAll builds the floor program, hookwatch-hook and hookwatch (side by
// side, as installed) into a new temporary directory; the caller removes
// b.tmp.
func buildAll(ctx context.Context, repo string) (b binaries, err error) {
	if b.tmp, err = os.MkdirTemp("", "hookwatch-bench-"); err != nil {
		return b, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(b.tmp)
		}
	}()
	if b.floor, err = buildFloor(ctx, repo, b.tmp); err != nil {
		return b, err
	}
	b.hook, b.full = filepath.Join(b.tmp, claudecode.HookBinaryName), filepath.Join(b.tmp, claudecode.BinaryName)
	if err = goBuild(ctx, repo, b.hook, "./cmd/hookwatch-hook"); err != nil {
		return b, err
	}
	err = goBuild(ctx, repo, b.full, "./cmd/hookwatch")
	return b, err
}

// buildFloor builds the floor program into dir and returns its path.
func buildFloor(ctx context.Context, repo, dir string) (string, error) {
	return buildSource(ctx, repo, dir, "floor", floorSource)
}

// buildSource builds a one-file Go program into dir/name and returns its
// path.
func buildSource(ctx context.Context, repo, dir, name, source string) (string, error) {
	bin := filepath.Join(dir, name)
	if err := os.WriteFile(bin+".go", []byte(source), 0o644); err != nil {
		return "", err
	}
	if err := goBuild(ctx, repo, bin, bin+".go"); err != nil {
		return "", err
	}
	return bin, nil
}

// buildHookwatch builds the hookwatch binary from repo into a new temporary
// directory (named after the benchmark), which the caller removes.
func buildHookwatch(ctx context.Context, repo, benchmark string) (dir, bin string, err error) {
	if dir, err = os.MkdirTemp("", "hookwatch-bench-"+benchmark+"-"); err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, claudecode.BinaryName)
	if err := goBuild(ctx, repo, bin, "./cmd/hookwatch"); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return dir, bin, nil
}

// goBuild builds a static binary, as the release and install do.
func goBuild(ctx context.Context, dir, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cannot build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// startCollector runs `hookwatch serve` with HOOKWATCH_HOME=home on a free
// loopback port and waits until it answers /healthz. Its log stays out of
// the benchmark's output (startLogged); a stop that finds it exited badly
// says so on stderr, naming the log.
func startCollector(bin, home string) (url string, stop func(), err error) {
	p, err := startLogged(serveproc.Options{
		Bin: bin, Healthy: 15 * time.Second,
		Env: append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_TOKEN="),
	})
	if err != nil {
		return "", nil, err
	}
	return p.URL(), func() {
		if err := p.Stop(time.Minute); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		}
	}, nil
}

// loggedProc is a collector whose output goes to a file of its own, Log.
type loggedProc struct {
	*serveproc.Proc
	Log string
	f   *os.File
}

// startLogged starts a collector as serveproc.Start does, its stdout and
// stderr (its log: what it listens on, errors, its shutdown) written to a
// new temporary file rather than among the benchmark's figures. An error
// names the file, which is kept to be read.
func startLogged(o serveproc.Options) (*loggedProc, error) {
	f, err := os.CreateTemp("", "hookwatch-bench-serve-*.log")
	if err != nil {
		return nil, err
	}
	o.Stdout, o.Stderr = f, f
	p, err := serveproc.Start(o)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (its log: %s)", err, f.Name())
	}
	return &loggedProc{Proc: p, Log: f.Name(), f: f}, nil
}

// Stop stops the collector as serveproc.Proc.Stop does. After a clean exit
// the log is removed; otherwise it is kept, and the error names it.
func (p *loggedProc) Stop(wait time.Duration) error {
	err := p.Proc.Stop(wait)
	p.f.Close()
	if err != nil {
		return fmt.Errorf("%w (its log: %s)", err, p.Log)
	}
	os.Remove(p.Log)
	return nil
}
