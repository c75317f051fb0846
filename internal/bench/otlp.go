package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/export/otlp"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/internal/modeled"
	"github.com/hookwatch/hookwatch/internal/otelcol"
	"github.com/hookwatch/hookwatch/store"
	"github.com/hookwatch/hookwatch/store/sqlite"
)

// OTLPOptions configures OTLP. Zero values take the defaults.
type OTLPOptions struct {
	// Events is the size of the session exported (default 100,000) and
	// the number of events of each ingest run (default 100,000).
	Events, IngestEvents int
	// Rounds is how many times each ingest variant runs, interleaved
	// (default 2); the figure is the median.
	Rounds int
}

// OTLP measures the OTLP trace export: the export of one big session from
// the store (events/s, spans/s, peak memory), and the collector's ingest
// rate with the live push off and on, side by side in one run. The push
// goes to a receiver on loopback that reads and discards each request, and
// also to a real OpenTelemetry Collector when scripts/build-otelcol.sh has
// built one (its own CPU then competes with the collector's), as serve runs
// it: the sessions owed kept in the collector's store (otlp_debts), whose
// writes, reads and their wall time it counts; once more to a port where
// nothing listens (a receiver down the whole run: every session owed); and
// to the discarding receiver with the sessions owed in memory only, the
// push as measured before the store kept them.
func OTLP(ctx context.Context, w io.Writer, o OTLPOptions) error {
	if o.Events <= 0 {
		o.Events = 100_000
	}
	if o.IngestEvents <= 0 {
		o.IngestEvents = 100_000
	}
	if o.Rounds <= 0 {
		o.Rounds = 2
	}
	dir, err := os.MkdirTemp("", "hookwatch-bench-otlp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	sink := newDiscardReceiver()
	defer sink.Close()
	receivers := []struct{ name, endpoint string }{{"discarding receiver", sink.URL}}
	if rcv, err := otelcol.Start(dir); err == nil {
		defer rcv.Stop()
		receivers = append(receivers, struct{ name, endpoint string }{"OpenTelemetry Collector " + otelcol.Version, rcv.Endpoint})
	} else {
		fmt.Fprintf(w, "otlp: no OpenTelemetry Collector (%v); the discarding receiver only\n", err)
	}

	// The export of one big session, to each receiver.
	dbPath := filepath.Join(dir, "export.db")
	id, err := storeBigSession(ctx, dbPath, o.Events)
	if err != nil {
		return err
	}
	for _, r := range receivers {
		if err := benchExport(ctx, w, dbPath, id, o.Events, r.name, r.endpoint); err != nil {
			return err
		}
	}

	// The push's own CPU, without the rest of the collector.
	cost, spans, err := pushCost(ctx, sink.URL, o.Events, o.Rounds)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "otlp push, its own cost: the model changes of a %d-event session replayed in rounds of 100 events into an exporter\n"+
		"  sending to the discarding receiver: %d spans, %.1f µs of CPU per event (median of %d, runs %s)\n",
		o.Events, spans, median(cost), o.Rounds, formatRates(cost, 1))

	// The table's own cost, without ingest waiting for the writer or
	// holding it.
	perWrite, err := debtWriteCost(ctx, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "otlp sessions owed, the table's own cost: %d writes recording or clearing %d sessions each on an idle database: %.0f µs of CPU per write\n",
		2*debtCostRounds, debtCostSessions, perWrite)

	// Ingest with the push off and on, interleaved. The push as serve
	// runs it keeps the sessions owed in the collector's store (Rows,
	// Debts, Owner), whose writes share SQLite's one writer with ingest;
	// the push in memory only (no Rows, no Debts) is the variant of the
	// figures before the store kept them, kept to compare with those.
	down, err := closedPort()
	if err != nil {
		return err
	}
	type variant struct {
		name, endpoint string
		debts          bool
	}
	variants := []variant{{name: "off"}, {"on, to the discarding receiver, sessions owed in memory only (as before the table)", sink.URL, false}}
	for _, r := range receivers {
		variants = append(variants, variant{"on, to the " + r.name + ", sessions owed in the store (as serve)", r.endpoint, true})
	}
	variants = append(variants, variant{"on, the receiver down (a closed port) for the whole run, sessions owed in the store (as serve)", down, true})
	// Per variant and run: events/s to the last reply, events/s until the
	// model applied every event (the push runs in the model's rounds), the
	// rounds' wall time per event, and the µs of this process's CPU per
	// event (collector, clients, the in-process receiver), which a busy
	// machine disturbs less than wall time.
	type figures struct{ rate, modelled, roundUS, cpuUS []float64 }
	figs := make([]figures, len(variants))
	lost, sent := make([]int64, len(variants)), make([]int64, len(variants))
	writes := make([]debtCounts, len(variants))
	for r := range o.Rounds {
		// Rotate which goes first, so that none always runs on a warmer
		// machine.
		for k := range variants {
			i := (r + k) % len(variants)
			opts := IngestOptions{Events: o.IngestEvents, WaitModel: true, Quiet: true}
			var exp *otlp.Exporter
			set := metrics.NewSet()
			counted := &countedDebts{}
			if v := variants[i]; v.endpoint != "" && !v.debts {
				exp = otlp.NewExporter(&otlp.Client{Endpoint: v.endpoint}, otlp.ExporterOptions{Metrics: set})
				opts.ModelSinks = []collector.ModelSink{exp}
			} else if v.endpoint != "" {
				// As cmd/hookwatch wires serve's exporter.
				opts.StoreSinks = func(db *sqlite.DB) []collector.ModelSink {
					counted.OTLPDebtStore = db
					exp = otlp.NewExporter(&otlp.Client{Endpoint: v.endpoint}, otlp.ExporterOptions{Metrics: set, Rows: db, Debts: counted, Owner: "bench"})
					return []collector.ModelSink{exp}
				}
			}
			cpu0, err := processCPU()
			if err != nil {
				return err
			}
			res, err := Ingest(ctx, io.Discard, opts)
			if err != nil {
				return err
			}
			cpu1, err := processCPU()
			if err != nil {
				return err
			}
			f := &figs[i]
			f.rate = append(f.rate, res.EventsPerSec)
			f.modelled = append(f.modelled, float64(res.Events)/res.Modelled.Seconds())
			f.roundUS = append(f.roundUS, float64(res.ModelRoundTime.Microseconds())/float64(res.Events))
			f.cpuUS = append(f.cpuUS, float64((cpu1-cpu0).Microseconds())/float64(res.Events))
			if exp != nil {
				var b bytes.Buffer
				set.WritePrometheus(&b)
				lost[i] += metricSum(b.String(), "hookwatch_otlp_spans_dropped_total{")
				sent[i] += metricSum(b.String(), "hookwatch_otlp_spans_sent_total ")
			}
			writes[i].add(counted.counts())
		}
	}
	fmt.Fprintf(w, "otlp ingest: %d events per run, %d runs of each, interleaved; medians, and the change from push off.\n"+
		"  The push in memory only is the variant measured before the store kept the sessions owed; the others run as serve does.\n", o.IngestEvents, o.Rounds)
	for i, v := range variants {
		row := func(name, unit string, x, base []float64, prec int) {
			m := median(x)
			fmt.Fprintf(w, "    %-26s %8.1f %-9s (%+5.1f %%)  runs %s\n", name, m, unit, 100*(m/median(base)-1), formatRates(x, prec))
		}
		fmt.Fprintf(w, "  push %s", v.name)
		if v.endpoint != "" {
			fmt.Fprintf(w, ": %d spans sent, %d lost", sent[i], lost[i])
		}
		fmt.Fprintln(w)
		row("ingest rate", "events/s", figs[i].rate, figs[0].rate, 0)
		row("rate until modelled", "events/s", figs[i].modelled, figs[0].modelled, 0)
		row("model rounds (wall)", "µs/event", figs[i].roundUS, figs[0].roundUS, 1)
		row("CPU of the process", "µs/event", figs[i].cpuUS, figs[0].cpuUS, 1)
		if v.debts {
			c := writes[i]
			n := int64(o.Rounds)
			fmt.Fprintf(w, "    the table, per run:        %d writes recording %d sessions (%d distinct; its beat among them), %d writes clearing %d, %d reads;\n"+
				"                               %.1f writes per 1,000 events; the calls took %v (wall, waits for SQLite's writer included), %.2f µs per event\n",
				c.oweWrites/n, c.owed/n, c.distinct/n, c.clearWrites/n, c.cleared/n, c.reads/n,
				1000*float64(c.oweWrites+c.clearWrites+c.paidWrites)/float64(n*int64(o.IngestEvents)),
				(c.took / time.Duration(n)).Round(time.Millisecond), float64(c.took.Microseconds())/float64(n*int64(o.IngestEvents)))
			fmt.Fprintf(w, "                               at the table's own cost per write, %.2f µs of CPU per event (%.1f %% of the push off's)\n",
				perWrite*float64(c.oweWrites+c.clearWrites+c.paidWrites)/float64(n*int64(o.IngestEvents)),
				100*perWrite*float64(c.oweWrites+c.clearWrites+c.paidWrites)/float64(n*int64(o.IngestEvents))/median(figs[0].cpuUS))
		}
	}
	return nil
}

// debtCostRounds and debtCostSessions size debtWriteCost: about as many
// sessions per write as an ingest run's writes carry.
const debtCostRounds, debtCostSessions = 200, 100

// debtWriteCost records and clears debtCostSessions sessions owed,
// debtCostRounds times, in a new SQLite database in dir, and returns the
// process's µs of CPU per write: the table's own cost, apart from the
// waits for SQLite's one writer that an ingest run adds to the calls'
// wall time.
func debtWriteCost(ctx context.Context, dir string) (float64, error) {
	db, err := sqlite.Open(filepath.Join(dir, "debts.db"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	ids := make([]string, debtCostSessions)
	owed := make(map[string]time.Time, len(ids))
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%02d-%015d", i%4, i) // as Ingest names them
		owed[ids[i]] = time.Now()
	}
	runtime.GC()
	cpu0, err := processCPU()
	if err != nil {
		return 0, err
	}
	for range debtCostRounds {
		if err := db.OweOTLP(ctx, "bench", owed, time.Now()); err != nil {
			return 0, err
		}
		if err := db.ClearOTLP(ctx, "bench", ids); err != nil {
			return 0, err
		}
	}
	cpu1, err := processCPU()
	if err != nil {
		return 0, err
	}
	return float64((cpu1 - cpu0).Microseconds()) / (2 * debtCostRounds), nil
}

// closedPort returns the URL of a port on loopback where nothing listens:
// a receiver down, every request refused.
func closedPort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	url := "http://" + ln.Addr().String()
	return url, ln.Close()
}

// countedDebts is a store's OTLPDebtStore that counts the writes and reads
// the exporter makes of it, the distinct sessions it records, and the
// wall time the calls take; a write of nothing (no sessions) touches no
// table and is not counted.
type countedDebts struct {
	store.OTLPDebtStore
	mu  sync.Mutex
	n   debtCounts
	ids map[string]bool
}

func (c *countedDebts) count(start time.Time, f func(n *debtCounts)) {
	took := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n.took += took
	f(&c.n)
}

func (c *countedDebts) OweOTLP(ctx context.Context, owner string, sessions map[string]time.Time, at time.Time) error {
	start := time.Now()
	err := c.OTLPDebtStore.OweOTLP(ctx, owner, sessions, at)
	c.count(start, func(n *debtCounts) {
		if len(sessions) == 0 {
			return
		}
		if c.ids == nil {
			c.ids = map[string]bool{}
		}
		n.oweWrites++
		n.owed += int64(len(sessions))
		for id := range sessions {
			if !c.ids[id] {
				c.ids[id] = true
				n.distinct++
			}
		}
	})
	return err
}

func (c *countedDebts) ClearOTLP(ctx context.Context, owner string, ids []string) error {
	start := time.Now()
	err := c.OTLPDebtStore.ClearOTLP(ctx, owner, ids)
	c.count(start, func(n *debtCounts) {
		if len(ids) > 0 {
			n.clearWrites++
			n.cleared += int64(len(ids))
		}
	})
	return err
}

func (c *countedDebts) PaidOTLP(ctx context.Context, debts []store.OTLPDebt) error {
	start := time.Now()
	err := c.OTLPDebtStore.PaidOTLP(ctx, debts)
	c.count(start, func(n *debtCounts) {
		if len(debts) > 0 {
			n.paidWrites++
		}
	})
	return err
}

func (c *countedDebts) OTLPDebts(ctx context.Context, limit int) ([]store.OTLPDebt, error) {
	start := time.Now()
	rows, err := c.OTLPDebtStore.OTLPDebts(ctx, limit)
	c.count(start, func(n *debtCounts) { n.reads++ })
	return rows, err
}

func (c *countedDebts) counts() debtCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// debtCounts are countedDebts' counts, summed over runs: writes (and the
// sessions they record, distinct ones, and clear), reads, and the wall
// time of every call.
type debtCounts struct {
	oweWrites, owed, distinct, clearWrites, cleared, paidWrites, reads int64
	took                                                               time.Duration
}

func (d *debtCounts) add(x debtCounts) {
	d.oweWrites += x.oweWrites
	d.owed += x.owed
	d.distinct += x.distinct
	d.clearWrites += x.clearWrites
	d.cleared += x.cleared
	d.paidWrites += x.paidWrites
	d.reads += x.reads
	d.took += x.took
}

func formatRates(v []float64, prec int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'f', prec, 64)
	}
	return strings.Join(s, " ")
}

// metricSum sums the samples of a metrics text whose line starts with
// prefix.
func metricSum(text, prefix string) int64 {
	var n int64
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			n += v
		}
	}
	return n
}

// pushCost replays the model changes of a synthetic session of events
// events, in rounds of 100 events as the collector applies them, into an
// exporter sending to endpoint, rounds times; it returns the process's CPU
// per event of each run (span building, deduplication, protobuf, HTTP, and
// the in-process receiver's read) and the spans sent.
func pushCost(ctx context.Context, endpoint string, events, rounds int) ([]float64, int64, error) {
	envs := demo.Big(demo.BigSpec{SessionID: "bench-otlp-push", Start: time.Now().Add(-time.Hour), Events: events, Agents: 50, Ended: true, Seed: 11})
	g := attribution.NewGroup()
	var changes [][]attribution.SessionChanges
	for chunk := range slices.Chunk(envs, 100) {
		g.Apply(chunk...)
		changes = append(changes, g.Changes().Sessions)
	}
	var out []float64
	var sent int64
	for range rounds {
		set := metrics.NewSet()
		runtime.GC()
		cpu0, err := processCPU()
		if err != nil {
			return nil, 0, err
		}
		exp := otlp.NewExporter(&otlp.Client{Endpoint: endpoint}, otlp.ExporterOptions{Metrics: set})
		for _, c := range changes {
			exp.Offer(c)
		}
		exp.Stop(ctx)
		cpu1, err := processCPU()
		if err != nil {
			return nil, 0, err
		}
		out = append(out, float64((cpu1-cpu0).Microseconds())/float64(len(envs)))
		var b bytes.Buffer
		set.WritePrometheus(&b)
		if lost := metricSum(b.String(), "hookwatch_otlp_spans_dropped_total{"); lost > 0 {
			return nil, 0, fmt.Errorf("the push lost %d spans", lost)
		}
		sent = metricSum(b.String(), "hookwatch_otlp_spans_sent_total ")
	}
	return out, sent, nil
}

// storeBigSession stores a synthetic session of about events events (50
// subagents, failures, denials, a compaction) and its model in a new
// database at dbPath, and returns the session id.
func storeBigSession(ctx context.Context, dbPath string, events int) (string, error) {
	const id = "bench-otlp-export"
	envs := demo.Big(demo.BigSpec{SessionID: id, Start: time.Now().Add(-time.Hour), Events: events, Agents: 50, Ended: true, Seed: 7})
	return id, modeled.Store(ctx, dbPath, envs, 10*time.Minute)
}

// benchExport exports session id of the database at dbPath to endpoint
// and prints the figures. Peak memory is the process's peak RSS, reset just
// before the export (/proc/self/clear_refs), and the Go heap's peak.
func benchExport(ctx context.Context, w io.Writer, dbPath, id string, events int, name, endpoint string) error {
	db, err := sqlite.Open(dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	rss0 := procStatusKiB("VmRSS")
	var peakHeap atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peakHeap.Load() {
				peakHeap.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	c := &otlp.Client{Endpoint: endpoint}
	requests := 0
	send := func(ctx context.Context, rs []*tracepb.ResourceSpans) error {
		requests++
		return c.Send(ctx, rs)
	}
	start := time.Now()
	spans, err := otlp.ExportSession(ctx, db, id, send, 0)
	took := time.Since(start)
	close(stop)
	<-sampled
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "otlp export of a %d-event session to the %s: %d spans in %d requests in %v: %.0f events/s, %.0f spans/s; peak RSS %.1f MiB (%.1f MiB before), peak Go heap %.1f MiB\n",
		events, name, spans, requests, took.Round(time.Millisecond), float64(events)/took.Seconds(), float64(spans)/took.Seconds(),
		float64(procStatusKiB("VmHWM"))/1024, float64(rss0)/1024, float64(peakHeap.Load())/(1<<20))
	return nil
}

// resetPeakRSS resets the process's peak RSS (VmHWM) to its current RSS.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatusKiB reads a kB field of /proc/self/status; 0 when unknown.
func procStatusKiB(field string) int64 { return pidStatusKiB("self", field) }

// pidStatusKiB is procStatusKiB of process pid ("self": this one).
func pidStatusKiB(pid, field string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// discardReceiver is an OTLP/HTTP receiver on loopback that reads each
// request whole and answers an empty success: the push's own cost, without
// a backend's.
type discardReceiver struct {
	URL string
	srv *http.Server
}

func newDiscardReceiver() *discardReceiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go srv.Serve(ln)
	return &discardReceiver{URL: "http://" + ln.Addr().String(), srv: srv}
}

func (d *discardReceiver) Close() { d.srv.Close() }
