package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/modeled"
)

// ExportOptions configures Export. Zero values take the defaults.
type ExportOptions struct {
	// Repo is the repository the hookwatch binary is built from.
	Repo string
	// Events is the size of the exported session (default 100,000).
	Events int
	// IngestEvents is the events of each ingest run (default 100,000).
	IngestEvents int
	// Rounds is the ingest runs with and without the audit directory,
	// alternated (default 3 of each).
	Rounds int
}

// Export measures the JSONL audit trail: the collector's ingest rate with
// its audit directory on and off, runs alternated in one process; and
// `hookwatch export` (the shipped binary) of one session of Events events,
// its rate and peak memory, then `hookwatch audit verify` of the result.
func Export(ctx context.Context, w io.Writer, o ExportOptions) error {
	if o.Events <= 0 {
		o.Events = 100_000
	}
	if o.IngestEvents <= 0 {
		o.IngestEvents = 100_000
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	tmp, err := os.MkdirTemp("", "hookwatch-bench-export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var off, on, cpuOff, cpuOn []float64
	for r := range o.Rounds {
		for _, audited := range []bool{false, true} {
			// Each run waits until the model (and the trail) has every
			// event, and counts the CPU the process spent until then.
			in := IngestOptions{Events: o.IngestEvents, Dir: tmp, WaitModel: true}
			label := "audit off"
			if audited {
				in.AuditDir = filepath.Join(tmp, fmt.Sprintf("trail-%d", r))
				label = "audit on "
			}
			fmt.Fprintf(w, "%s, run %d: ", label, r+1)
			cpu0, err := processCPU()
			if err != nil {
				return err
			}
			res, err := Ingest(ctx, w, in)
			if err != nil {
				return err
			}
			cpu1, err := processCPU()
			if err != nil {
				return err
			}
			cpu := float64((cpu1 - cpu0).Nanoseconds()) / 1e3 / float64(res.Events)
			fmt.Fprintf(w, "  CPU of the process per event, until the model (and trail) had every event: %.1f µs\n", cpu)
			if audited {
				on, cpuOn = append(on, res.EventsPerSec), append(cpuOn, cpu)
				os.RemoveAll(in.AuditDir)
			} else {
				off, cpuOff = append(off, res.EventsPerSec), append(cpuOff, cpu)
			}
		}
	}
	mOff, mOn := median(off), median(on)
	fmt.Fprintf(w, "ingest with the audit directory: %.0f events/s vs %.0f without (median of %d runs each): %+.1f %%\n",
		mOn, mOff, o.Rounds, (mOn/mOff-1)*100)
	cOff, cOn := median(cpuOff), median(cpuOn)
	fmt.Fprintf(w, "CPU per event until the model (and the trail) had every event: %.1f µs with the audit directory vs %.1f without: %+.1f %%\n\n",
		cOn, cOff, (cOn/cOff-1)*100)

	bin := filepath.Join(tmp, "hookwatch")
	if err := goBuild(ctx, o.Repo, bin, "./cmd/hookwatch"); err != nil {
		return err
	}
	dbPath := filepath.Join(tmp, "export.db")
	const session = "bench-export-0000000000000000000000"
	t0 := time.Now()
	if err := fillSession(ctx, dbPath, session, o.Events); err != nil {
		return err
	}
	fmt.Fprintf(w, "export: a session of %d events stored and modelled in %v\n", o.Events, time.Since(t0).Round(time.Millisecond))
	// Under a small wrapper: a child's maxrss counts what its parent (this
	// process, which held a collector) had when it started it.
	wrap, err := BuildRSSWrapper(ctx, o.Repo, tmp)
	if err != nil {
		return err
	}
	out := filepath.Join(tmp, "out")
	took, rss, stdout, err := runMeasured(ctx, wrap, bin, "export", "--session", session, "--out", out, "--db", dbPath)
	if err != nil {
		return err
	}
	size := fileSizes(filepath.Join(out, session, "events.jsonl"), filepath.Join(out, session, "tool_calls.jsonl"))
	fmt.Fprintf(w, "export --format jsonl: %s in %v: %.0f events/s, %.1f MB written, peak RSS %s\n",
		strings.TrimSpace(stdout), took.Round(time.Millisecond), float64(o.Events)/took.Seconds(), float64(size)/1e6, mib(rss))
	took, rss, stdout, err = runMeasured(ctx, wrap, bin, "audit", "verify", filepath.Join(out, session))
	if err != nil {
		return err
	}
	lines := 0
	for _, m := range regexp.MustCompile(`: (\d+) lines,`).FindAllStringSubmatch(stdout, -1) {
		n, _ := strconv.Atoi(m[1])
		lines += n
	}
	fmt.Fprintf(w, "audit verify: %d streams OK, %d lines in %v: %.0f lines/s, peak RSS %s\n",
		strings.Count(stdout, "OK "), lines, took.Round(time.Millisecond), float64(lines)/took.Seconds(), mib(rss))
	return nil
}

// runMeasured runs the binary under the RSS wrapper and returns its wall
// time, peak RSS (bytes) and standard output.
func runMeasured(ctx context.Context, wrap, bin string, args ...string) (time.Duration, int64, string, error) {
	m, err := MeasureRSS(ctx, wrap, append([]string{bin}, args...), nil, func(w *os.File) { w.Close() }, 30*time.Minute)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
	}
	if m.ExitCode != 0 {
		return 0, 0, "", fmt.Errorf("%s %s: exit status %d", filepath.Base(bin), strings.Join(args, " "), m.ExitCode)
	}
	return m.Took, m.PeakRSS, string(m.Stdout), nil
}

// fillSession stores one session of n events and its model in a new
// database at dbPath (modeled.Store): the turns of the Claude Code sample
// of the corpus played again and again under one session id, each pass
// with its own tool call and agent ids, so that the session has about n/50
// times its calls and subagents.
func fillSession(ctx context.Context, dbPath, session string, n int) error {
	// The session starts once and ends once: the passes between are its
	// turns (a SessionStart in the middle would be a new run, and
	// lineage to work out again).
	var first, sample, last [][]byte
	for _, p := range SamplePayloads() {
		if !bytes.Contains(p, []byte(`"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad"`)) {
			continue
		}
		p = bytes.ReplaceAll(p, []byte("0e2e0b5d-7136-4322-8086-c38ed16b10ad"), []byte(session))
		switch {
		case bytes.Contains(p, []byte(`"hook_event_name":"SessionStart"`)), bytes.Contains(p, []byte(`"hook_event_name":"InstructionsLoaded"`)):
			first = append(first, p)
		case bytes.Contains(p, []byte(`"hook_event_name":"SessionEnd"`)):
			last = append(last, p)
		default:
			sample = append(sample, p)
		}
	}
	start := time.Now().Add(-time.Duration(n) * time.Millisecond)
	envs := make([]event.Envelope, 0, n)
	for k := range n {
		pass := fmt.Sprintf("%06d", k/len(sample))
		p := sample[k%len(sample)]
		switch {
		case k < len(first):
			p = first[k]
		case k >= n-len(last):
			p = last[k-(n-len(last))]
		}
		p = bytes.ReplaceAll(p, []byte("toolu_"), []byte("toolu_"+pass+"_"))
		p = bytes.ReplaceAll(p, []byte("4e22d70a-"), []byte("p"+pass+"-"))
		p = bytes.ReplaceAll(p, []byte(`a43b7af849cd70f20`), []byte("a43b7af849cd70f20"+pass))
		p = bytes.ReplaceAll(p, []byte(`a0b378cebfb773646`), []byte("a0b378cebfb773646"+pass))
		at := start.Add(time.Duration(k) * time.Millisecond)
		envs = append(envs, event.Envelope{ID: event.NewID(at), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook,
			ReceivedAt: at, Host: "bench-host", User: "bench", Payload: p})
	}
	return modeled.Store(ctx, dbPath, envs, 10*time.Minute)
}
