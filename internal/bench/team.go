package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/pgtest"
	"github.com/hookwatch/hookwatch/internal/serveproc"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/postgres"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// TeamOptions configure the team benchmark.
type TeamOptions struct {
	// Repo is the repository root the collector is built from.
	Repo string
	// Developers is the number of simulated developers (default 50), each
	// running sessions of a main agent with subagents (demo.Big).
	Developers int
	// Duration is the length of the failover run (default 60 s); the
	// throughput runs last a quarter of it.
	Duration time.Duration
	// Rate is the events per second all developers send in the failover
	// run (default 5,000), one event per request as hooks post them.
	Rate int
	// Batch is the events per request of the throughput runs, sent as fast
	// as the collectors answer (default 100: what a spool drain posts).
	Batch int
	// ModelCacheMB is the collectors' --model-cache-mb, 0 for serve's
	// default. A team's developers each have a lineage group of their
	// sessions: all of them being worked on, the model keeps them all.
	ModelCacheMB int
	// Runs names the runs to make, of TeamRuns; empty for all of them.
	Runs []string
}

// TeamRuns are the runs of the team benchmark, in the order they run:
// sqlite and postgres are the throughput runs side by side, failover and
// forward the two failover runs.
var TeamRuns = []string{"sqlite", "postgres", "failover", "forward"}

// TeamRun is what one run of the team benchmark measured.
type TeamRun struct {
	Name string
	// Events were acknowledged or, after a failure, retried until
	// acknowledged; Stored is what the database holds after the run.
	Events, Stored int
	Duplicates     int // stored more than once: must be 0
	Missing        int // acknowledged but not stored: must be 0
	EventsPerSec   float64
	// LatencyP50 and LatencyP99 are of acknowledged requests.
	LatencyP50, LatencyP99 time.Duration
	// CPUMicros is the collectors' CPU (user + system, all of them) per
	// stored event.
	CPUMicros float64
	// CatchUpCPUMicros is the collectors' CPU per stored event from the
	// start until the model caught up after the run: what the model
	// deferred under the burst counted.
	CatchUpCPUMicros float64
	// ServerCPUMicros and SenderCPUMicros are PostgreSQL's CPU (its
	// postmaster and backends) and the benchmark's own (the developers'
	// senders, the lag probes, the stream) per stored event during the
	// run; with CPUMicros, what the run cost the machine.
	ServerCPUMicros, SenderCPUMicros float64
	// LagP99 is the model's lag on the collector computing it at the end
	// (hookwatch_model_lag_seconds: from the commit, or on a shared
	// database from the holder's read of the log, to the model stored).
	LagP99 time.Duration
	// CatchUp is how long after the last acknowledgement every session's
	// model reflected all of its events.
	CatchUp time.Duration
	// Lag is the derived lag read from the database (PostgreSQL runs):
	// from the acknowledgement of a probed event to its session's model
	// row reflecting it, before the kill, after it, and over the whole run.
	Lag [3]LagFigures
	// Takeover is how long after the kill the survivor held the lease;
	// Failover where the time after the kill went.
	Takeover time.Duration
	Failover Failover
	// StreamFrom counts, for the stream of the collector that was not
	// killed, the events it showed that each collector had acknowledged.
	StreamFrom []int
	Killed     bool
}

// Team runs the team benchmark: hookwatch for a whole team on one machine.
//
//  1. Throughput, side by side on the same load (developers posting batches
//     as fast as the collectors answer): one collector on SQLite, then two
//     collectors on one PostgreSQL database.
//  2. Failover: two collectors on one PostgreSQL database at a steady rate,
//     one event per request; halfway the first collector is killed with
//     SIGKILL and restarted 2 s later. Developers whose request fails keep
//     the events (the hook's spool) and send them again, to either
//     collector, until one acknowledges them.
//  3. The same failover with what laptops send through hookwatch forward:
//     one sender per developer posting, at the same rate in all, the
//     events that accumulated since its last post (up to forwardBatch).
//
// Afterwards every event acknowledged must be stored exactly once (read from
// the database), and the live stream of the collector that was not killed
// must have shown events that each collector acknowledged.
func Team(ctx context.Context, w io.Writer, o TeamOptions) ([]TeamRun, error) {
	if o.Developers <= 0 {
		o.Developers = 50
	}
	if o.Duration <= 0 {
		o.Duration = time.Minute
	}
	if o.Rate <= 0 {
		o.Rate = 5000
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	tmp, bin, err := buildHookwatch(ctx, o.Repo, "team")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	pg, err := pgtest.Start(ctx, pgtest.Options{Durable: true})
	if err != nil {
		return nil, err
	}
	defer pg.Stop()
	cache := "serve's default"
	if o.ModelCacheMB > 0 {
		cache = fmt.Sprintf("%d MiB", o.ModelCacheMB)
	}
	fmt.Fprintf(w, "team: %d developers (sessions of a main agent and 8 subagents), PostgreSQL on port %d (fsync on), collectors built from %s, model cache %s\n",
		o.Developers, pg.Port, o.Repo, cache)

	var runs []TeamRun
	wanted := func(name string) bool { return len(o.Runs) == 0 || slices.Contains(o.Runs, name) }
	short := o.Duration / 4
	if wanted("sqlite") {
		r, err := teamRun(ctx, w, bin, filepath.Join(tmp, "sqlite"), "", 0, 1, o, short, 0, o.Batch, false)
		if err != nil {
			return runs, fmt.Errorf("sqlite run: %w", err)
		}
		runs = append(runs, r)
	}
	var failed error
	for _, spec := range []struct {
		run, name   string
		dur         time.Duration
		rate, batch int
		kill        bool
	}{
		{"postgres", "postgres", short, 0, o.Batch, false},
		{"failover", "postgres-failover", o.Duration, o.Rate, 1, true},
		// What laptops send through hookwatch forward: batches of what
		// accumulated in the spool (forwardBatch).
		{"forward", "postgres-failover-forward", o.Duration, o.Rate, forwardBatch, true},
	} {
		if !wanted(spec.run) {
			continue
		}
		url, err := pg.CreateDatabase(ctx)
		if err != nil {
			return runs, err
		}
		r, err := teamRun(ctx, w, bin, filepath.Join(tmp, spec.name), url, pg.Pid(), 2, o, spec.dur, spec.rate, spec.batch, spec.kill)
		if spec.name == "postgres-failover-forward" {
			fmt.Fprintf(w, "    (as hookwatch forward drains a laptop's spool: one sender per developer, every batch what accumulated since the last, up to %d)\n", forwardBatch)
		}
		if err != nil {
			// Said, and the next runs go on: a run whose model never
			// caught up does not hide the others' figures.
			fmt.Fprintf(w, "  %s run: %v\n", spec.name, err)
			failed = errors.Join(failed, fmt.Errorf("%s run: %w", spec.name, err))
			if ctx.Err() != nil {
				return runs, failed
			}
			continue
		}
		r.Name = spec.name
		runs = append(runs, r)
	}
	if failed != nil || len(runs) < 2 || runs[0].Name != "sqlite" || runs[1].Name != "postgres" {
		return runs, failed
	}
	sq, pgr := runs[0], runs[1]
	fmt.Fprintf(w, "  side by side, batches of %d: PostgreSQL (2 collectors) %.0f events/s, %.1f µs CPU/event; SQLite (1 collector) %.0f events/s, %.1f µs CPU/event; CPU ratio %.2f\n",
		o.Batch, pgr.EventsPerSec, pgr.CPUMicros, sq.EventsPerSec, sq.CPUMicros, pgr.CPUMicros/sq.CPUMicros)
	return runs, nil
}

// LagFigures are the quantiles of derived lag probes.
type LagFigures struct {
	N        int
	P50, P99 time.Duration
}

func (l LagFigures) String() string {
	if l.N == 0 {
		return "no probe"
	}
	return fmt.Sprintf("p50 %v p99 %v (%d probes)", l.P50.Round(10*time.Millisecond), l.P99.Round(10*time.Millisecond), l.N)
}

// teamRun runs collectors collectors on one database (dbURL, served by the
// PostgreSQL postmaster pgPid, or a SQLite file in home when empty) for dur, the developers sending rate events/s
// in all (0: as fast as answered) in requests of batch events; at a
// steady rate, batch forwardBatch sends as hookwatch forward does.
func teamRun(ctx context.Context, w io.Writer, bin, home, dbURL string, pgPid, collectors int, o TeamOptions,
	dur time.Duration, rate, batch int, kill bool) (TeamRun, error) {
	run := TeamRun{Name: "sqlite", Killed: kill}
	dbEnv := "HOOKWATCH_DB=" + filepath.Join(home, "hookwatch.db")
	if dbURL != "" {
		dbEnv = "HOOKWATCH_DB=" + dbURL
	}
	procs := make([]*serveproc.Proc, collectors)
	env := func(i int) serveproc.Options {
		h := filepath.Join(home, fmt.Sprint("collector-", i))
		os.MkdirAll(h, 0o700)
		so := serveproc.Options{Bin: bin, Healthy: time.Minute,
			Env: append(os.Environ(), "HOOKWATCH_HOME="+h, "HOOKWATCH_TOKEN=", dbEnv)}
		if o.ModelCacheMB > 0 {
			so.Args = []string{"--model-cache-mb", fmt.Sprint(o.ModelCacheMB)}
		}
		return so
	}
	for i := range procs {
		p, err := serveproc.Start(env(i))
		if err != nil {
			return run, err
		}
		procs[i] = p
	}
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.Stop(time.Minute)
			}
		}
	}()

	// The live stream of the last collector, which is never killed.
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	streamed := &streamLog{}
	streamDone := make(chan error, 1)
	go func() { streamDone <- streamed.follow(streamCtx, procs[len(procs)-1].URL()) }()

	var (
		cpuMu   sync.Mutex
		cpuDead time.Duration // CPU of killed collectors
	)
	cpu := func() time.Duration {
		cpuMu.Lock()
		defer cpuMu.Unlock()
		total := cpuDead
		for _, p := range procs {
			if c, err := procCPU(p.Pid()); err == nil {
				total += c
			}
		}
		return total
	}
	cpu0 := cpu()
	server0, _ := serverCPU(pgPid)
	self0 := cputime.Self()

	var (
		mu        sync.Mutex
		latencies []time.Duration
		ackedBy   = make([]map[string]bool, collectors)
		acked     int
	)
	for i := range ackedBy {
		ackedBy[i] = map[string]bool{}
	}
	var urls atomic.Value
	setURLs := func() {
		u := make([]string, len(procs))
		for i, p := range procs {
			u[i] = p.URL()
		}
		urls.Store(u)
	}
	setURLs()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.Developers}}

	devs := make([]*developer, o.Developers)
	for d := range devs {
		var err error
		if devs[d], err = newDeveloper(d, time.Now()); err != nil {
			return run, err
		}
	}
	// The derived lag, read from the database while the run goes on.
	var lagProbe *lagProbes
	if dbURL != "" {
		var err error
		if lagProbe, err = startLagProbes(ctx, dbURL); err != nil {
			return run, err
		}
		defer lagProbe.stop()
	}
	start := time.Now()
	end := start.Add(dur)
	// At a steady rate every developer has hookParallel hooks in flight
	// at once, as the parallel subagents of a session do.
	senders := o.Developers
	forward := rate > 0 && batch == forwardBatch
	if rate > 0 && !forward {
		senders *= hookParallel
	}
	interval := time.Duration(0)
	if rate > 0 && !forward {
		interval = time.Duration(float64(time.Second) * float64(senders*batch) / float64(rate))
	}
	perDev := float64(rate) / float64(o.Developers) // events/s, forward
	var wg sync.WaitGroup
	for k := range senders {
		d := k % o.Developers
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := devs[d]
			var spool []byte // sent, not acknowledged
			var spooled []string
			var session string
			taken := 0 // forward: the developer's events posted so far
			next := time.Now().Add(time.Duration(k) * interval / time.Duration(senders))
			for n := 0; ctx.Err() == nil; n++ {
				if time.Now().After(end) && spool == nil {
					return
				}
				if interval > 0 {
					time.Sleep(time.Until(next))
					next = next.Add(interval)
				}
				body, ids := spool, spooled
				if body == nil {
					if time.Now().After(end) {
						return
					}
					n := batch
					if forward {
						// The hooks append as the developer works; the
						// forwarder, woken, waits forwardCoalesce and
						// posts what accumulated.
						due := int(time.Since(start).Seconds()*perDev) - taken
						if due <= 0 {
							wake := start.Add(time.Duration(float64(taken+1) / perDev * float64(time.Second)))
							time.Sleep(time.Until(wake) + forwardCoalesce)
							due = int(time.Since(start).Seconds()*perDev) - taken
						}
						n = max(1, min(due, forwardBatch))
						taken += n
					}
					body, ids, session = dev.next(n)
				}
				u := urls.Load().([]string)
				target := (k + n) % len(u) // a load balancer's round robin
				t0 := time.Now()
				if err := postBody(client, u[target], body); err != nil {
					// Kept, as the hook's spool keeps them, and sent
					// again to either collector.
					spool, spooled = body, ids
					time.Sleep(50 * time.Millisecond)
					continue
				}
				lat := time.Since(t0)
				spool, spooled = nil, nil
				if lagProbe != nil {
					lagProbe.offer(ids[len(ids)-1], session)
				}
				mu.Lock()
				latencies = append(latencies, lat)
				for _, id := range ids {
					ackedBy[target][id] = true
				}
				acked += len(ids)
				mu.Unlock()
			}
		}()
	}
	if kill {
		select {
		case <-ctx.Done():
		case <-time.After(dur / 2):
			victim := procs[0]
			c, _ := procCPU(victim.Pid())
			cpuMu.Lock()
			cpuDead += c
			syscall.Kill(victim.Pid(), syscall.SIGKILL)
			cpuMu.Unlock()
			killedAt := time.Now()
			lagProbe.killed(killedAt)
			fmt.Fprintf(w, "  %s: SIGKILL collector 1 (pid %d) at %v\n", filepath.Base(home), victim.Pid(), time.Since(start).Round(time.Millisecond))
			survivor := procs[len(procs)-1].URL()
			go func() {
				for time.Since(killedAt) < time.Minute && ctx.Err() == nil {
					if m, err := scrape(client, survivor+"/metrics"); err == nil && m["hookwatch_model_leader"] == 1 {
						mu.Lock()
						run.Takeover = time.Since(killedAt)
						mu.Unlock()
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
			victim.Stop(time.Second) // reaps it
			time.Sleep(2 * time.Second)
			o := env(0)
			o.Addr = victim.Addr
			p, err := serveproc.Start(o)
			if err != nil {
				return run, fmt.Errorf("cannot restart the collector: %w", err)
			}
			cpuMu.Lock()
			procs[0] = p
			cpuMu.Unlock()
			fmt.Fprintf(w, "  %s: collector 1 restarted (pid %d) at %v\n", filepath.Base(home), p.Pid(), time.Since(start).Round(time.Millisecond))
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuUsed := cpu() - cpu0
	server1, _ := serverCPU(pgPid)
	serverUsed, selfUsed := server1-server0, cputime.Self()-self0
	if ctx.Err() != nil {
		return run, ctx.Err()
	}

	// Every acknowledged id, once.
	all := map[string]bool{}
	for _, m := range ackedBy {
		for id := range m {
			all[id] = true
		}
	}
	run.Events = acked
	run.EventsPerSec = float64(acked) / elapsed.Seconds()
	slices.Sort(latencies)
	run.LatencyP50, run.LatencyP99 = quantile(latencies, 0.5), quantile(latencies, 0.99)

	// The model catches up, then the figures of the one computing it.
	st, err := openStore(ctx, dbURL, filepath.Join(home, "hookwatch.db"))
	if err != nil {
		return run, err
	}
	defer st.Close()
	caughtUp, err := modelCaughtUp(ctx, st, 3*time.Minute)
	if err != nil {
		return run, err
	}
	run.CatchUp = caughtUp
	cpuCaughtUp := cpu() - cpu0
	if lagProbe != nil {
		run.Lag, run.Failover = lagProbe.figures(ctx)
	}
	var modelLine strings.Builder
	for i, p := range procs {
		// The model rows are stored before the round that wrote them
		// counts its events: read the metrics once nothing is pending.
		var m map[string]float64
		for t0 := time.Now(); ; {
			var err error
			if m, err = scrape(client, p.URL()+"/metrics"); err != nil {
				return run, err
			}
			if m["hookwatch_model_pending_events"] == 0 || time.Since(t0) > 30*time.Second {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Fprintf(&modelLine, " collector %d: leader %v, %v events applied (%v read from the log), %v group loads (%v evicted), %v rounds", i+1,
			m["hookwatch_model_leader"], m["hookwatch_model_events_applied_total"], m["hookwatch_model_events_read_total"],
			m["hookwatch_model_group_loads_total"], m["hookwatch_model_group_evictions_total"], m["hookwatch_model_round_duration_seconds_count"])
		if n := m["hookwatch_model_restated_rows_total"]; n > 0 {
			fmt.Fprintf(&modelLine, ", %v rows restated at the takeover", n)
		}
		if n := m["hookwatch_model_errors_total"]; n > 0 {
			fmt.Fprintf(&modelLine, ", %v failed rounds", n)
		}
		modelLine.WriteString(";")
		if m["hookwatch_model_leader"] == 1 || collectors == 1 {
			if lag := histQuantile(m, "hookwatch_model_lag_seconds", 0.99); !math.IsNaN(lag) {
				run.LagP99 = time.Duration(lag * float64(time.Second))
			}
		}
	}

	// What the database holds, read directly.
	ids, err := storedIDs(ctx, st)
	if err != nil {
		return run, err
	}
	run.Stored = len(ids)
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for id, n := range seen {
		if n > 1 {
			run.Duplicates += n - 1
		}
		_ = id
	}
	for id := range all {
		if seen[id] == 0 {
			run.Missing++
		}
	}
	perEvent := func(d time.Duration) float64 { return d.Seconds() * 1e6 / float64(max(1, len(seen))) }
	run.CPUMicros = perEvent(cpuUsed)
	run.CatchUpCPUMicros = perEvent(cpuCaughtUp)
	run.ServerCPUMicros, run.SenderCPUMicros = perEvent(serverUsed), perEvent(selfUsed)

	// The stream of the surviving collector: what it showed of each
	// collector's acknowledgements.
	time.Sleep(time.Second)
	stopStream()
	<-streamDone
	run.StreamFrom = make([]int, collectors)
	for _, id := range streamed.ids() {
		for i, m := range ackedBy {
			if m[id] {
				run.StreamFrom[i]++
			}
		}
	}
	mode := fmt.Sprintf("%d events/s offered, 1 event per request", rate)
	if forward {
		mode = fmt.Sprintf("%d events/s offered, %.1f events per request (forwarded)", rate, float64(acked)/float64(max(1, len(latencies))))
	}
	if rate == 0 {
		mode = fmt.Sprintf("as fast as answered, %d events per request", batch)
	}
	fmt.Fprintf(w, "  %s: %d collector(s), %v, %s: %d events acknowledged, %.0f events/s; request p50 %v p99 %v; %.1f µs collector CPU/event; model lag p99 %v\n",
		dbName(dbURL), collectors, dur, mode, run.Events, run.EventsPerSec,
		run.LatencyP50.Round(10*time.Microsecond), run.LatencyP99.Round(10*time.Microsecond), run.CPUMicros, run.LagP99.Round(time.Millisecond))
	fmt.Fprintf(w, "    model: up to date %v after the last acknowledgement;%s\n", run.CatchUp.Round(10*time.Millisecond), strings.TrimSuffix(modelLine.String(), ";"))
	server := ""
	if pgPid != 0 {
		server = fmt.Sprintf(", PostgreSQL %.1f", run.ServerCPUMicros)
	}
	fmt.Fprintf(w, "    CPU µs/event during the run: collectors %.1f%s, benchmark (senders, probes, stream) %.1f, all-in %.1f; collectors until the model caught up %.1f\n",
		run.CPUMicros, server, run.SenderCPUMicros, run.CPUMicros+run.ServerCPUMicros+run.SenderCPUMicros, run.CatchUpCPUMicros)
	if lagProbe != nil {
		mu.Lock() // the takeover's watcher is done: the model caught up
		takeover := run.Takeover
		mu.Unlock()
		if kill {
			fmt.Fprintf(w, "    derived lag (acknowledged → its session's model row, read from the database): before the kill %v; after it %v; whole run %v; lease taken over %v after the kill\n",
				run.Lag[0], run.Lag[1], run.Lag[2], takeover.Round(time.Millisecond))
			f := run.Failover
			slow := fmt.Sprintf("no probe at %v or more", lagGoal)
			if f.Slow > 0 {
				slow = fmt.Sprintf("%d probes at %v or more, acknowledged %v to %v after the kill", f.Slow, lagGoal,
					f.FirstSlow.Round(time.Millisecond), f.LastSlow.Round(time.Millisecond))
			}
			fmt.Fprintf(w, "    after the kill: the new holder's first round stored %v after it; %s\n", f.FirstWrite.Round(time.Millisecond), slow)
		} else {
			fmt.Fprintf(w, "    derived lag (acknowledged → its session's model row, read from the database): %v\n", run.Lag[2])
		}
	}
	fmt.Fprintf(w, "    stored %d distinct events, %d stored twice, %d acknowledged but missing; the stream of collector %d showed %v events acknowledged by each collector\n",
		len(seen), run.Duplicates, run.Missing, collectors, run.StreamFrom)
	if run.Duplicates > 0 || run.Missing > 0 {
		return run, fmt.Errorf("not exactly once: %d duplicates, %d missing", run.Duplicates, run.Missing)
	}
	return run, nil
}

func dbName(url string) string {
	if url == "" {
		return "SQLite"
	}
	return "PostgreSQL"
}

// hookParallel is how many hooks of one developer run at once at a steady
// rate: those of a session's parallel subagents.
const hookParallel = 8

// forwardBatch and forwardCoalesce are what hookwatch forward posts at most
// at once (spool.DefaultBatch) and how long it waits after a wake-up for
// the appends of a burst (forward's coalesce).
const (
	forwardBatch    = spool.DefaultBatch
	forwardCoalesce = 20 * time.Millisecond
)

// developer is one simulated developer: a session of a main agent with
// subagents (demo.Big: real payload shapes) made once, then sent again and
// again under new session ids, from the developer's own host and user. The
// envelopes are encoded once: a request patches in fresh ids (UUIDv7, as the
// hook makes them), the session id, and, from the second session on, the
// time the hook read the payload, moved past the previous session's end, so
// that the developer's sessions follow one another in time as a real
// developer's do (the same times again would make every event of a later
// session arrive "late" for the model, into a group that already holds a
// session at those times). The benchmark's own CPU goes to sending, not to
// making sessions.
type developer struct {
	mu     sync.Mutex
	id     int
	envs   [][]byte    // encoded envelopes, the session id sessionOf(id, 0)
	times  []time.Time // each envelope's received_at
	timeAt []int       // where its received_at starts in its encoding
	// sessionAt are where the session id stands in each encoding.
	sessionAt [][]int
	span      time.Duration
	shift     time.Duration // added to the times of the current cycle
	pos       int           // next envelope
	cycle     int           // sessions sent whole so far
}

// sessionOf is the session id of a developer's cycle: the same width for
// every cycle, so that it is patched in place.
func sessionOf(dev, cycle int) string { return fmt.Sprintf("team-%03d-%06d", dev, cycle) }

func newDeveloper(id int, start time.Time) (*developer, error) {
	d := &developer{id: id}
	for _, env := range demo.Big(demo.BigSpec{
		SessionID: sessionOf(id, 0), Start: start, Events: 2000, Agents: 8,
		Project: fmt.Sprint("project-", id%10), Seed: uint64(id + 1),
	}) {
		env.ID = event.NewID(start)
		env.Host, env.User = fmt.Sprint("laptop-", id), fmt.Sprint("dev-", id)
		// In UTC with a nanosecond that is not a multiple of 10, the time
		// is encoded at one width: a later one is patched in place.
		env.ReceivedAt = env.ReceivedAt.UTC().Truncate(time.Microsecond).Add(time.Nanosecond)
		b, err := json.Marshal(env)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(b, []byte(`{"id":"`+env.ID+`"`)) {
			return nil, errors.New("an envelope does not start with its id")
		}
		at := bytes.Index(b, []byte(`"received_at":"`))
		if at < 0 || !bytes.HasPrefix(b[at+len(`"received_at":"`):], env.ReceivedAt.AppendFormat(nil, time.RFC3339Nano)) {
			return nil, errors.New("an envelope does not hold its received_at as expected")
		}
		var sessionAt []int
		for off, from := 0, []byte(sessionOf(id, 0)); ; {
			j := bytes.Index(b[off:], from)
			if j < 0 {
				break
			}
			sessionAt = append(sessionAt, off+j)
			off += j + len(from)
		}
		d.envs = append(d.envs, b)
		d.times = append(d.times, env.ReceivedAt)
		d.timeAt = append(d.timeAt, at+len(`"received_at":"`))
		d.sessionAt = append(d.sessionAt, sessionAt)
	}
	d.span = d.times[len(d.times)-1].Sub(d.times[0])
	return d, nil
}

// next returns a request body of the developer's next n events, their ids
// and the session of the last one.
func (d *developer) next(n int) ([]byte, []string, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	body := []byte(`{"envelopes":[`)
	ids := make([]string, 0, n)
	to := []byte(sessionOf(d.id, d.cycle))
	now := time.Now()
	var session string
	for i := range n {
		session = string(to)
		if i > 0 {
			body = append(body, ',')
		}
		at := len(body)
		body = append(body, d.envs[d.pos]...)
		id := event.NewID(now)
		copy(body[at+len(`{"id":"`):], id)
		ids = append(ids, id)
		if d.cycle > 0 {
			env := body[at:]
			t := d.times[d.pos].Add(d.shift).AppendFormat(nil, time.RFC3339Nano)
			copy(env[d.timeAt[d.pos]:], t)
			for _, j := range d.sessionAt[d.pos] {
				copy(env[j:], to)
			}
		}
		if d.pos++; d.pos == len(d.envs) {
			d.pos, d.cycle = 0, d.cycle+1
			to = []byte(sessionOf(d.id, d.cycle))
			// The next session starts now, or after the last one ended.
			d.shift = max(now.Sub(d.times[0]), d.shift+d.span+time.Millisecond).Truncate(time.Microsecond)
		}
	}
	return append(body, "]}"...), ids, session
}

func postBody(c *http.Client, base string, body []byte) error {
	res, err := c.Post(base+"/v1/events", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/events: %d", res.StatusCode)
	}
	return nil
}

// streamLog follows /v1/stream and keeps the ids of the events it shows.
type streamLog struct {
	mu   sync.Mutex
	seen []string
}

func (s *streamLog) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func (s *streamLog) follow(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/stream", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	model := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			model = false
		case strings.HasPrefix(line, "event: "):
			model = true
		case strings.HasPrefix(line, "data: ") && !model:
			if id := streamID(line[6:]); id != "" {
				s.mu.Lock()
				s.seen = append(s.seen, id)
				s.mu.Unlock()
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

// streamID is the id of a stream event's data: read from the front of
// {"seq":N,"id":"…", as the collector encodes a stored event, without
// decoding the envelope that follows (on this benchmark's load that decode
// would cost more than the collector's sending it); decoded otherwise.
func streamID(data string) string {
	if rest, ok := strings.CutPrefix(data, `{"seq":`); ok {
		if i := strings.IndexByte(rest, ','); i > 0 {
			if rest, ok = strings.CutPrefix(rest[i+1:], `"id":"`); ok {
				if j := strings.IndexByte(rest, '"'); j > 0 && !strings.Contains(rest[:j], `\`) {
					return rest[:j]
				}
			}
		}
	}
	var e struct {
		ID string `json:"id"`
	}
	if json.Unmarshal([]byte(data), &e) != nil {
		return ""
	}
	return e.ID
}

// openStore opens the database of a run: PostgreSQL at url, else the
// SQLite file at path.
func openStore(ctx context.Context, url, path string) (store.Store, error) {
	if url != "" {
		return postgres.Open(ctx, url)
	}
	return sqlite.Open(path)
}

// storedIDs reads the id of every stored event.
func storedIDs(ctx context.Context, st store.Store) ([]string, error) {
	var ids []string
	for cursor := ""; ; {
		p, err := st.Events(ctx, store.EventFilter{Cursor: cursor, Limit: store.MaxLimit})
		if err != nil {
			return nil, err
		}
		for _, e := range p.Events {
			ids = append(ids, e.ID)
		}
		if p.Next == "" {
			return ids, nil
		}
		cursor = p.Next
	}
}

// modelCaughtUp waits until no session's model is stale and returns how
// long that took.
func modelCaughtUp(ctx context.Context, st store.Store, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		stale, err := st.StaleModels(ctx, attribution.ModelVersion, "", 1)
		if err != nil {
			return 0, err
		}
		if len(stale) == 0 {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("the model is still stale %v after the last event (session %s)", limit, stale[0].ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serverCPU is the CPU of PostgreSQL's postmaster pid and its children
// (the backends, live or reaped); 0 for pid 0.
func serverCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, nil
	}
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	total, err := statTime(pid, f, 11, 12)
	if err != nil {
		return 0, err
	}
	// Reaped children are counted in the postmaster's cutime and cstime.
	if reaped, err := statTime(pid, f, 13, 14); err == nil {
		total += reaped
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return total, err
	}
	parent := fmt.Sprint(pid)
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, err := procStat(child); err == nil && len(f) > 1 && f[1] == parent {
			if c, err := statTime(child, f, 11, 12); err == nil {
				total += c
			}
		}
	}
	return total, nil
}
