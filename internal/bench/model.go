package bench

import (
	"bufio"
	"bytes"
	"cmp"
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
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/forward"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/cputime"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/serveproc"
	"github.com/hookwatch/hookwatch/spool"
	"github.com/hookwatch/hookwatch/toolhook"
)

// ModelOptions configure the session model benchmark.
type ModelOptions struct {
	// Repo is the repository root the collector is built from.
	Repo string
	// Sessions are the numbers of concurrent sessions to run, one run each
	// (default 1 and 3).
	Sessions []int
	// Events is the number of events of each session (default 100,000).
	Events int
	// Rate is the total events per second sent (default 5,000).
	Rate int
	// Slice is the number of events per CPU figure (default 10,000).
	Slice int
	// Via are the ways the events reach the collector, one run each per
	// number of sessions (default ViaSpool, ViaForward and ViaPost).
	Via []Via
	// WarmMiB is how much memory is written and given back right before
	// each run (0: none). On a virtual machine whose host backs the
	// guest's memory when it is first touched and takes back what the
	// guest frees (see Pages), a page the guest has not used lately costs
	// several times one it has: without a warm-up, how the collector's
	// late slices compare with its first depends on what ran on the
	// machine before, not on the collector. The run then grows into pages
	// used lately, as a collector does on a machine in use.
	WarmMiB int
	// Rounds is how many times each run is made (default 1), every run
	// of a round before the next round: with more than one, each slice's
	// median over the rounds is printed too, and measured as one run is.
	Rounds int
	// CPUProfile, when not "", is the file the collector writes its CPU
	// profile to (serve's HOOKWATCH_CPU_PROFILE), from its start to its
	// stop; with several runs, the last run's.
	CPUProfile string
}

// Via is how the model benchmark hands its events to the collector.
type Via string

const (
	// ViaSpool appends each event alone to the collector's spool, as a
	// hook on the collector's machine hands it over (command and http
	// hooks alike: hook.SpoolDelivers, collector.ClaudeHookConfig.Spool);
	// the collector drains what gathered (collector.DrainSpool).
	ViaSpool Via = "spool"
	// ViaPost POSTs each session's events to /v1/events in batches as
	// the SDK's sender gathers them (toolhook.ForwardOptions: BatchSize,
	// Linger).
	ViaPost Via = "post"
	// ViaForward appends each event alone to a spool of the session's
	// own, as hooks on another machine do, which a forwarder of its own
	// (package forward, what `hookwatch forward` runs) posts to the
	// collector: batches as the forwarder gathers them.
	ViaForward Via = "forward"
)

// how says how the events of a run reached the collector.
func (v Via) how() string {
	switch v {
	case ViaSpool:
		return "each appended to the spool, as hooks hand them over"
	case ViaForward:
		return "each appended to a spool per session that a forwarder per session posts from, as from other machines"
	}
	return "POSTed to /v1/events in batches as the SDK gathers them"
}

// ParseVia reads a comma-separated list of ways (spool, post, forward).
func ParseVia(list string) ([]Via, error) {
	var out []Via
	for _, f := range strings.Split(list, ",") {
		switch v := Via(strings.TrimSpace(f)); v {
		case ViaSpool, ViaPost, ViaForward:
			out = append(out, v)
		default:
			return nil, fmt.Errorf("unknown way %q (want spool, post or forward)", f)
		}
	}
	return out, nil
}

// ModelRun is what one run of the model benchmark measured.
type ModelRun struct {
	Sessions, Events int
	// WarmFault is the median system time per page fault, in µs, of the
	// warm-up before the run (ModelOptions.WarmMiB; 0 without one): how
	// cold the machine's memory was.
	WarmFault float64
	// Via is how the events reached the collector.
	Via Via
	// SliceMicros is the collector's CPU per event, in µs, for each slice
	// of Slice events sent (all sessions together).
	SliceMicros []float64
	// SliceGC is the CPU per event, in µs, of the collector's garbage
	// collections that ended in each slice (its go_gc_cpu_seconds_total,
	// read just after the slice's end), and SliceGCCycles how many ended
	// in it: a collection marks the whole live heap, mostly the model's
	// groups, and lands in one slice or another.
	SliceGC       []float64
	SliceGCCycles []float64
	// SliceKernel is the collector's system CPU per event, in µs (from
	// /proc, in 10 ms ticks), and SliceFaults its page faults per event,
	// for each slice: a heap that grows into memory the process never
	// touched costs a fault and the zeroing of a page at each first
	// write, which counts as the collector's CPU.
	SliceKernel, SliceFaults []float64
	// LagP50 and LagP99 are the time from commit to the model stored.
	LagP50, LagP99 time.Duration
	// Rebuilds and Loads count the groups rebuilt and read from the store.
	Rebuilds, Loads float64
	// RoundP50 and RoundP99 are how long the model's rounds took.
	RoundP50, RoundP99 time.Duration
	// GCCycles, GCMicros, AllocBytes and AllocObjects are the collector's
	// garbage collections, their CPU per event (µs) and the bytes and
	// objects allocated per event, over the whole run; PeakRSS is its peak
	// resident set (VmHWM).
	GCCycles, GCMicros, AllocBytes, AllocObjects float64
	PeakRSS                                      int64
	// LiveHeap is the heap the collector's latest collection found
	// reachable (mostly the model's groups), in bytes.
	LiveHeap float64
	// FirstPage is the median time of GET …/tool-calls (the first page) on
	// the first session once modelled.
	FirstPage time.Duration
	// Calls is how many calls that session has.
	Calls int
	// Switches and Voluntary are the collector's context switches per
	// event while the events were sent, all of them and those where a
	// thread waited (a futex, a sleep, the network poller): the hand-offs
	// between its goroutines and threads, counted rather than timed.
	Switches, Voluntary float64
	// Faults are the collector's page faults per event while the events
	// were sent: mostly its heap growing into memory it never touched,
	// which the kernel zeroes at the first write.
	Faults float64
	// Commits is how many transactions stored the events, and
	// EventsPerCommit their mean size: the writer commits what queued
	// while its previous commit ran, so sessions that post apart pay a
	// commit each, and a commit costs pages of its own (the session's
	// summary row and its indexes, the tables' right edges) whatever it
	// holds.
	Commits         float64
	EventsPerCommit float64
}

// Model streams synthetic sessions (demo.Big: real payload shapes, 50
// subagents in parallel waves, parallel calls, failures, denials, a
// compaction) into a real `hookwatch serve` at a steady rate, once by each
// way of o.Via for each number of sessions, and measures
// the collector's CPU per event for each slice of events (from
// /proc/<pid>/stat), the lag from commit to model (the collector's
// hookwatch_model_lag_seconds histogram) and the first page of a session's
// tool calls once everything is modelled. Through the spool the events
// reach the store up to a drain's gathering (spool.DefaultCoalesce) after
// they were appended, before the lag counts.
func Model(ctx context.Context, w io.Writer, o ModelOptions) ([]ModelRun, error) {
	if len(o.Sessions) == 0 {
		o.Sessions = []int{1, 3}
	}
	if o.Events <= 0 {
		o.Events = 100_000
	}
	if o.Rate <= 0 {
		o.Rate = 5000
	}
	if o.Slice <= 0 {
		o.Slice = 10_000
	}
	if len(o.Via) == 0 {
		o.Via = []Via{ViaSpool, ViaForward, ViaPost}
	}
	tmp, bin, err := buildHookwatch(ctx, o.Repo, "model")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(w, "model: sessions of %d events (50 subagents), %d events/s in all, CPU per event of the collector per slice of %d events\n",
		o.Events, o.Rate, o.Slice)
	var runs []ModelRun
	for round := range max(o.Rounds, 1) {
		for _, n := range o.Sessions {
			for _, via := range o.Via {
				var warm float64
				if o.WarmMiB > 0 {
					perFault, err := touchFresh(ctx, o.WarmMiB)
					if err != nil {
						return runs, fmt.Errorf("cannot warm the memory up: %w", err)
					}
					warm = median(perFault)
				}
				// Each run's home (its database, ~0.4 GiB with three
				// sessions) goes once its figures are read: rounds
				// would otherwise pile them up.
				home := filepath.Join(tmp, fmt.Sprint("run-", n, "-", via, "-", round))
				r, err := modelRun(ctx, bin, home, n, via, o)
				os.RemoveAll(home)
				if err != nil {
					return runs, err
				}
				r.WarmFault = warm
				runs = append(runs, r)
				printModelRun(w, r)
			}
		}
	}
	if o.Rounds > 1 {
		printModelRounds(w, runs)
	}
	return runs, nil
}

// printModelRounds writes, for each number of sessions and way, the median
// of each slice over its runs, and the run's measures of them: a slice
// that the machine slowed in one run (another program, a collection)
// counts as the other runs had it.
func printModelRounds(w io.Writer, runs []ModelRun) {
	type config struct {
		sessions int
		via      Via
	}
	var order []config
	of := map[config][]ModelRun{}
	for _, r := range runs {
		c := config{r.Sessions, r.Via}
		if of[c] == nil {
			order = append(order, c)
		}
		of[c] = append(of[c], r)
	}
	for _, c := range order {
		rs := of[c]
		n := len(rs[0].SliceMicros)
		for _, r := range rs {
			n = min(n, len(r.SliceMicros))
		}
		if n == 0 {
			continue
		}
		per := make([]float64, n)
		var b strings.Builder
		for i := range per {
			at := make([]float64, len(rs))
			for j, r := range rs {
				at[j] = r.SliceMicros[i]
			}
			per[i] = median(at)
			fmt.Fprintf(&b, " %.0f", per[i])
		}
		fmt.Fprintf(w, "  %d session(s) %s, median of %d runs per slice:%s\n", c.sessions, c.via.how(), len(rs), b.String())
		fmt.Fprintf(w, "    median %.0f µs/event, last/first slice %.2f (last three / first three slices' medians %.2f, last third / first third's means %.2f)\n",
			median(per), per[n-1]/per[0], trend(per, 3), thirds(per))
	}
}

// printModelRun writes the figures of one run.
func printModelRun(w io.Writer, r ModelRun) {
	var b strings.Builder
	for _, us := range r.SliceMicros {
		fmt.Fprintf(&b, " %.0f", us)
	}
	first, last := r.SliceMicros[0], r.SliceMicros[len(r.SliceMicros)-1]
	warm := ""
	if r.WarmFault > 0 {
		warm = fmt.Sprintf(" (memory warmed up first at %.1f µs per page fault)", r.WarmFault)
	}
	fmt.Fprintf(w, "  %d session(s), %d events %s%s: µs/event per slice:%s\n", r.Sessions, r.Events, r.Via.how(), warm, b.String())
	fmt.Fprintf(w, "    median %.0f µs/event, last/first slice %.2f (last three / first three slices' medians %.2f, last third / first third's means %.2f); lag p50 %v, p99 %v; %v rebuilds, %v group loads; tool-calls first page (of %d calls) median %v\n",
		median(r.SliceMicros), last/first, trend(r.SliceMicros, 3), thirds(r.SliceMicros), r.LagP50.Round(time.Millisecond), r.LagP99.Round(time.Millisecond),
		r.Rebuilds, r.Loads, r.Calls, r.FirstPage.Round(10*time.Microsecond))
	if len(r.SliceGC) == len(r.SliceMicros) {
		// Where the collections fell: one marks the whole live heap,
		// mostly the model's groups, so one late in a run costs a slice
		// or two much more than one early, and which slices it lands in
		// is a matter of where the heap crossed its goal. Its CPU counts
		// when it ends, maybe a slice after the one it ran in.
		b.Reset()
		for i, gc := range r.SliceGC {
			fmt.Fprintf(&b, " %.0f", gc)
			if r.SliceGCCycles[i] > 0 {
				fmt.Fprintf(&b, "(%.0f)", r.SliceGCCycles[i])
			}
		}
		fmt.Fprintf(w, "    of which garbage collection, µs/event per slice (collections ended in it):%s\n", b.String())
	}
	if len(r.SliceKernel) == len(r.SliceMicros) {
		b.Reset()
		for i, k := range r.SliceKernel {
			fmt.Fprintf(&b, " %.0f(%.1f)", k, r.SliceFaults[i])
		}
		fmt.Fprintf(w, "    of which the kernel, µs/event per slice (page faults per event):%s\n", b.String())
	}
	fmt.Fprintf(w, "    rounds p50 %v, p99 %v; %.0f GC cycles, GC %.1f µs/event, %.0f B and %.0f objects allocated per event; peak RSS %d MiB; live heap at the last collection %.0f MiB (%.0f B per event sent)\n",
		r.RoundP50.Round(time.Millisecond), r.RoundP99.Round(time.Millisecond), r.GCCycles, r.GCMicros, r.AllocBytes, r.AllocObjects, r.PeakRSS>>20,
		r.LiveHeap/(1<<20), r.LiveHeap/float64(r.Events))
	fmt.Fprintf(w, "    %.3f context switches per event while sending (%.3f where a thread waited), %.2f page faults; %.0f commits of the events, %.1f events each\n",
		r.Switches, r.Voluntary, r.Faults, r.Commits, r.EventsPerCommit)
}

// trend is the median of the last k of per-slice figures over that of the
// first k: how much a slice costs at the end of a run against its start,
// read through k slices so that one garbage collection, which marks the
// whole live heap and lands in one slice or another, does not decide it
// alone (the single last/first ratio is printed beside it). With fewer
// than 2k slices it compares the halves.
func trend(slices []float64, k int) float64 {
	k = min(k, len(slices)/2)
	if k == 0 {
		return 1
	}
	return median(slices[len(slices)-k:]) / median(slices[:k])
}

// thirds is the mean of the last third of per-slice figures over that of
// the first third: what the whole work costs at the end of a run against
// its start, the garbage collections included wherever they fell. A third
// of a run holds a collection or two of its heap, while three slices may
// hold none or one that counts twice (trend); the means show what the
// collections cost more as the heap grows, which trend's medians leave
// out. With fewer than two slices it is 1.
func thirds(slices []float64) float64 {
	k := len(slices) / 3
	if len(slices) == 2 {
		k = 1
	}
	if k == 0 {
		return 1
	}
	mean := func(v []float64) float64 {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return t / float64(len(v))
	}
	return mean(slices[len(slices)-k:]) / mean(slices[:k])
}

// median is the middle of v (the upper one of an even count), 0 for none.
func median[T cmp.Ordered](v []T) T {
	var zero T
	if len(v) == 0 {
		return zero
	}
	c := slices.Clone(v)
	slices.Sort(c)
	return c[len(c)/2]
}

func modelRun(ctx context.Context, bin, home string, sessions int, via Via, o ModelOptions) (ModelRun, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return ModelRun{}, err
	}
	env := append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_TOKEN=", "HOOKWATCH_DB=")
	if o.CPUProfile != "" {
		env = append(env, "HOOKWATCH_CPU_PROFILE="+o.CPUProfile)
	}
	p, err := serveproc.Start(serveproc.Options{Bin: bin, Healthy: 30 * time.Second, Env: env})
	if err != nil {
		return ModelRun{}, err
	}
	defer p.Stop(time.Minute)

	// The sessions, each in its own project, timed from now on so that
	// the collector sees live traffic.
	start := time.Now()
	streams := make([][]event.Envelope, sessions)
	for i := range streams {
		envs := demo.Big(demo.BigSpec{
			SessionID: fmt.Sprintf("bench-%d-%d", sessions, i), Start: start, Events: o.Events, Agents: 50,
			Project: fmt.Sprint("bench-project-", i), Seed: uint64(i + 1),
		})
		streams[i] = envs
	}
	total := 0
	for _, s := range streams {
		total += len(s)
	}

	// Each session posts over a connection it keeps, as a forwarder does
	// (hookwatch forward reads every answer whole): an answer left unread
	// closes its connection, and the collector would accept, set up and
	// close a connection per batch, which no sender of batches makes it do.
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: sessions}}
	defer client.CloseIdleConnections()
	// The spools the events are offered to, one per session (nil when
	// they are POSTed).
	spools := make([]*spool.Spool, sessions)
	switch via {
	case ViaSpool:
		// The spool the collector attached to at its start, as a hook
		// finds it in the home they share.
		sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
		if err != nil {
			return ModelRun{}, err
		}
		for i := range spools {
			spools[i] = sp
		}
	case ViaForward:
		stop, err := startForwarders(ctx, filepath.Join(home, "machines"), p.URL(), spools)
		if err != nil {
			return ModelRun{}, err
		}
		defer stop()
	}
	post := func(session int, envs []event.Envelope) error {
		if sp := spools[session]; sp != nil {
			// One record an Offer, as each hook run offers its event.
			for i := range envs {
				if err := sp.Offer(envs[i].AppendJSON(nil)); err != nil {
					return err
				}
			}
			return nil
		}
		// The body as the SDK's sender makes it.
		recs := make([][]byte, len(envs))
		for i := range envs {
			recs[i] = envs[i].AppendJSON(nil)
		}
		res, err := client.Post(p.URL()+"/v1/events", "application/json", bytes.NewReader(hook.BatchBody(recs)))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /v1/events: %d %s", res.StatusCode, b)
		}
		return nil
	}

	// Every tick each session sends its share, stamped as a hook stamps
	// what it sends (demo.Sent).
	const tick = 10 * time.Millisecond
	perTick := max(1, o.Rate*int(tick/time.Millisecond)/1000/sessions)
	cpu0, err := procCPU(p.Pid())
	if err != nil {
		return ModelRun{}, err
	}
	vol0, all0, err := procSwitches(p.Pid())
	if err != nil {
		return ModelRun{}, err
	}
	faults0, err := procFaults(p.Pid())
	if err != nil {
		return ModelRun{}, err
	}
	kernel0, err := procKernel(p.Pid())
	if err != nil {
		return ModelRun{}, err
	}
	var (
		mu       sync.Mutex
		sent     int
		perSlice []float64
		lastAt   = cpu0
		// the kernel's share and the faults, per slice
		perSliceKernel, perSliceFaults []float64
		lastKernel, lastFaults         = kernel0, faults0
	)
	// At each slice's end the collector's metrics are read for what its
	// garbage collector took, off the senders' way.
	sliced := make(chan struct{}, 1024)
	var perSliceGC, perSliceCycles []float64
	gcRead := make(chan error, 1)
	go func() {
		gc0, cycles0, err := gcSoFar(client, p.URL())
		for range sliced {
			if err != nil {
				continue
			}
			var gc, cycles float64
			if gc, cycles, err = gcSoFar(client, p.URL()); err == nil {
				perSliceGC = append(perSliceGC, (gc-gc0)*1e6/float64(o.Slice))
				perSliceCycles = append(perSliceCycles, cycles-cycles0)
				gc0, cycles0 = gc, cycles
			}
		}
		gcRead <- err
	}()
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for session, envs := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(tick)
			defer t.Stop()
			// What was sent counts in its slice.
			sentNow := func(n int) {
				mu.Lock()
				defer mu.Unlock()
				before := sent / o.Slice
				sent += n
				if sent/o.Slice > before {
					if c, err := procCPU(p.Pid()); err == nil {
						perSlice = append(perSlice, (c-lastAt).Seconds()*1e6/float64(o.Slice))
						lastAt = c
						sliced <- struct{}{}
					}
					k, kerr := procKernel(p.Pid())
					f, ferr := procFaults(p.Pid())
					if kerr == nil && ferr == nil {
						perSliceKernel = append(perSliceKernel, (k-lastKernel).Seconds()*1e6/float64(o.Slice))
						perSliceFaults = append(perSliceFaults, float64(f-lastFaults)/float64(o.Slice))
						lastKernel, lastFaults = k, f
					}
				}
			}
			// Posted, the events gather as the SDK's sender gathers them:
			// full batches at once, the rest once the first has waited
			// its linger.
			var pending []event.Envelope
			var first time.Time
			for i := 0; i < len(envs); i += perTick {
				select {
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				case <-t.C:
				}
				batch := demo.Sent(envs[i:min(i+perTick, len(envs))], time.Now().UTC())
				if via != ViaPost {
					if err := post(session, batch); err != nil {
						errs <- err
						return
					}
					sentNow(len(batch))
					continue
				}
				if len(pending) == 0 {
					first = time.Now()
				}
				pending = append(pending, batch...)
				for len(pending) > 0 {
					n := min(len(pending), toolhook.DefaultBatchSize)
					if n < toolhook.DefaultBatchSize && time.Since(first) < spool.DefaultCoalesce && i+perTick < len(envs) {
						break
					}
					if err := post(session, pending[:n]); err != nil {
						errs <- err
						return
					}
					sentNow(n)
					pending, first = pending[n:], time.Now()
				}
			}
		}()
	}
	wg.Wait()
	close(sliced)
	if err := <-gcRead; err != nil {
		return ModelRun{}, fmt.Errorf("cannot read the collector's garbage collections: %w", err)
	}
	close(errs)
	if err := <-errs; err != nil {
		return ModelRun{}, err
	}
	if len(perSlice) == 0 {
		return ModelRun{}, errors.New("no slice completed: send more events")
	}
	vol1, all1, err := procSwitches(p.Pid())
	if err != nil {
		return ModelRun{}, err
	}
	faults1, err := procFaults(p.Pid())
	if err != nil {
		return ModelRun{}, err
	}

	// Everything offered delivered, then the model caught up; then the
	// lag and the first page.
	if err := delivered(ctx, spools, 2*time.Minute); err != nil {
		return ModelRun{}, err
	}
	run := ModelRun{Sessions: sessions, Events: total, Via: via, SliceMicros: perSlice, SliceGC: perSliceGC, SliceGCCycles: perSliceCycles,
		SliceKernel: perSliceKernel, SliceFaults: perSliceFaults,
		Switches: float64(all1-all0) / float64(total), Voluntary: float64(vol1-vol0) / float64(total),
		Faults: float64(faults1-faults0) / float64(total)}
	first := streams[0][0]
	var sid struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal(first.Payload, &sid)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var v collector.SessionView
		if err := getJSON(client, p.URL()+"/v1/sessions/"+sid.SessionID, &v); err != nil {
			return run, err
		}
		if v.DerivedSeq == v.LastSeq {
			run.Calls = v.Counts.ToolCalls
			break
		}
		if time.Now().After(deadline) {
			return run, fmt.Errorf("the model of %s did not catch up: derived_seq %d, last_seq %d", sid.SessionID, v.DerivedSeq, v.LastSeq)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var pages []time.Duration
	for range 21 {
		t0 := time.Now()
		var body collector.ToolCallsResponse
		if err := getJSON(client, p.URL()+"/v1/sessions/"+sid.SessionID+"/tool-calls?limit=100", &body); err != nil {
			return run, err
		}
		pages = append(pages, time.Since(t0))
	}
	run.FirstPage = quantile(pages, 0.5)
	m, err := scrape(client, p.URL()+"/metrics")
	if err != nil {
		return run, err
	}
	run.LagP50 = time.Duration(histQuantile(m, "hookwatch_model_lag_seconds", 0.5) * float64(time.Second))
	run.LagP99 = time.Duration(histQuantile(m, "hookwatch_model_lag_seconds", 0.99) * float64(time.Second))
	run.Rebuilds = m["hookwatch_model_rebuilds_total"]
	run.Loads = m["hookwatch_model_group_loads_total"]
	run.Commits = m["hookwatch_commit_events_count"]
	if run.Commits > 0 {
		run.EventsPerCommit = m["hookwatch_commit_events_sum"] / run.Commits
	}
	run.RoundP50 = time.Duration(histQuantile(m, "hookwatch_model_round_duration_seconds", 0.5) * float64(time.Second))
	run.RoundP99 = time.Duration(histQuantile(m, "hookwatch_model_round_duration_seconds", 0.99) * float64(time.Second))
	run.GCCycles = m["go_gc_duration_seconds_count"]
	run.GCMicros = m["go_gc_cpu_seconds_total"] * 1e6 / float64(total)
	run.AllocBytes = m["go_memstats_alloc_bytes_total"] / float64(total)
	run.AllocObjects = m["go_memstats_mallocs_total"] / float64(total)
	run.LiveHeap = m["go_gc_heap_live_bytes"]
	if run.PeakRSS, err = peakRSS(p); err != nil {
		return run, err
	}
	return run, nil
}

func getJSON(c *http.Client, url string, v any) error {
	res, err := c.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return json.NewDecoder(res.Body).Decode(v)
}

// procSwitches returns the context switches of a process's threads so
// far, from /proc/pid/task/*/status: those where a thread waited
// (voluntary) and all of them. A thread that ended is no longer counted;
// the collector's threads last as long as it does.
func procSwitches(pid int) (voluntary, all int64, err error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("cannot count the context switches of %d: %w", pid, err)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		for line := range strings.Lines(string(b)) {
			name, v, ok := strings.Cut(line, ":")
			if !ok || !strings.HasSuffix(name, "voluntary_ctxt_switches") {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("cannot read the context switches of %d: %q", pid, line)
			}
			all += n
			if name == "voluntary_ctxt_switches" {
				voluntary += n
			}
		}
	}
	return voluntary, all, nil
}

// procCPU returns the user plus system CPU time of a process so far: from
// its CPU-time clock (cputime.Process) where it can be read, to the nanosecond,
// else from /proc/pid/stat, in clock ticks.
func procCPU(pid int) (time.Duration, error) {
	if d, ok := cputime.Process(pid); ok {
		return d, nil
	}
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return statTime(pid, f, 11, 12)
}

// procKernel returns the system CPU time of a process so far, from
// /proc/pid/stat, in clock ticks.
func procKernel(pid int) (time.Duration, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return statTime(pid, f, 12)
}

// procFaults returns the page faults of a process so far, minor and major,
// from /proc/pid/stat (its threads', those that exited included).
func procFaults(pid int) (int64, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, fmt.Errorf("cannot count the page faults of %d: %w", pid, err)
	}
	return statSum(pid, f, 7, 9) // minflt, majflt
}

// procStat returns the fields of /proc/pid/stat that follow the command
// name (which may hold spaces: they start after its ')'): f[1] is the
// parent's pid, f[7] and f[9] the minor and major page faults, f[11] and
// f[12] utime and stime, f[13] and f[14] cutime and cstime (the reaped
// children's).
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])), nil
}

// statTime is the sum of the clock-tick fields at of pid's procStat f.
func statTime(pid int, f []string, at ...int) (time.Duration, error) {
	ticks, err := statSum(pid, f, at...)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ticks) * time.Second / hz, err
}

// statSum is the sum of the counters at of pid's procStat f.
func statSum(pid int, f []string, at ...int) (int64, error) {
	var n int64
	for _, i := range at {
		if i >= len(f) {
			return 0, fmt.Errorf("short /proc/%d/stat", pid)
		}
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad /proc/%d/stat", pid)
		}
		n += v
	}
	return n, nil
}

// startForwarders starts a forwarder (forward.Run) for each of spools, as
// `hookwatch forward` runs on each of as many machines, each with a home
// of its own under dir, posting to the collector at url; spools[i] becomes
// the spool of the i-th, which its hooks append to. stop ends them.
func startForwarders(ctx context.Context, dir, url string, spools []*spool.Spool) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop = func() { cancel(); wg.Wait() }
	failed := make(chan error, len(spools))
	for i := range spools {
		home := filepath.Join(dir, fmt.Sprint("machine-", i))
		if spools[i], err = spool.Open(filepath.Join(home, "spool"), spool.Options{}); err != nil {
			stop()
			return nil, err
		}
		ready := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A plain client: the benchmark's collector listens on
			// loopback without TLS.
			err := forward.Run(ctx, forward.Options{Home: home, URL: url, Client: &http.Client{Timeout: time.Minute},
				Ready: func() { close(ready) }})
			failed <- fmt.Errorf("the forwarder of %s stopped: %v", home, err)
		}()
		select {
		case <-ready:
		case err := <-failed:
			stop()
			return nil, err
		}
	}
	return stop, nil
}

// delivered waits until every spool of spools (nil ones aside) holds
// nothing its consumer has yet to deliver, for at most wait.
func delivered(ctx context.Context, spools []*spool.Spool, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for _, sp := range spools {
		for sp != nil {
			st, err := sp.Stats()
			if err != nil {
				return err
			}
			if st.PendingBytes == 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s still holds %d bytes to deliver after %v", sp.Dir(), st.PendingBytes, wait)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// gcSoFar reads the CPU seconds the collector at url spent in garbage
// collection so far, and the collections it ran.
func gcSoFar(c *http.Client, url string) (seconds, cycles float64, err error) {
	m, err := scrape(c, url+"/metrics")
	if err != nil {
		return 0, 0, err
	}
	seconds, ok := m["go_gc_cpu_seconds_total"]
	cycles, ok2 := m["go_gc_duration_seconds_count"]
	if !ok || !ok2 {
		return 0, 0, errors.New("no go_gc_cpu_seconds_total or go_gc_duration_seconds_count in /metrics")
	}
	return seconds, cycles, nil
}

// scrape reads a Prometheus text page into sample name (with labels) →
// value.
func scrape(c *http.Client, url string) (map[string]float64, error) {
	res, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// histQuantile estimates quantile q of a VictoriaMetrics histogram from its
// vmrange buckets (upper bound of the bucket that holds it).
func histQuantile(m map[string]float64, name string, q float64) float64 {
	type bucket struct{ lo, hi, n float64 }
	var bs []bucket
	total := 0.0
	prefix := name + `_bucket{vmrange="`
	for k, v := range m {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		lo, hi, ok := strings.Cut(strings.TrimSuffix(k[len(prefix):], `"}`), "...")
		if !ok {
			continue
		}
		l, err1 := strconv.ParseFloat(lo, 64)
		h, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		bs = append(bs, bucket{l, h, v})
		total += v
	}
	slices.SortFunc(bs, func(a, b bucket) int {
		if a.lo < b.lo {
			return -1
		}
		if a.lo > b.lo {
			return 1
		}
		return 0
	})
	want, acc := q*total, 0.0
	for _, b := range bs {
		acc += b.n
		if acc >= want {
			return b.hi
		}
	}
	return math.NaN()
}
