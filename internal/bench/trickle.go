package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/internal/serveproc"
)

// TrickleOptions configures the trickle benchmark.
type TrickleOptions struct {
	Repo   string        // repository root, to build the binaries from
	Events int           // hook events per round (default 300)
	Rounds int           // rounds (default 3)
	Gap    time.Duration // pause after each hook (default 15 ms)
	// Payload is the hook payload every run reads (default: a PreToolUse
	// of Claude Code 2.1.197); its session_id is replaced by each round's.
	Payload []byte
}

// Trickle measures what one hook event costs when the hooks come one by
// one, as in an agent's session: hookwatch-hook runs with the collector
// attached to its home's spool (events handed over through the spool), one
// at a time, a gap apart, so that the collector drains, stores and models
// them as they trickle in, a few per pass of its spool's drainer. The figures
// are CPU time, which the load of other programs moves far less than wall
// time: the hook's per run (user + system, from wait4), beside /bin/true's
// and the floor's run interleaved with it, and the collector's per event
// (its CPU over the round, procCPU, less what it spends idle over as long).
// Every round must store every event.
func Trickle(ctx context.Context, w io.Writer, o TrickleOptions) error {
	if o.Events <= 0 {
		o.Events = 300
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Gap <= 0 {
		o.Gap = 15 * time.Millisecond
	}
	payload := o.Payload
	if payload == nil {
		payload = preToolUsePayload
	}
	var fields struct {
		SessionID string `json:"session_id"`
		Event     string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(payload, &fields); err != nil || fields.SessionID == "" || fields.Event == "" {
		return fmt.Errorf("the trickle payload must be a hook payload with a session_id and a hook_event_name (%v)", err)
	}
	b, err := buildAll(ctx, o.Repo)
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	home := filepath.Join(b.tmp, "home")
	p, err := serveproc.Start(serveproc.Options{
		Bin: b.full, Stderr: io.Discard, Healthy: 15 * time.Second,
		Args: []string{"--codex-rollouts", "off"},
		Env:  append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_TOKEN="),
	})
	if err != nil {
		return err
	}
	defer p.Stop(time.Minute)
	hookEnv := append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+p.URL(), projectDirEnv())
	client := &http.Client{Timeout: 10 * time.Second}

	fmt.Fprintf(w, "trickle: %d %s hooks (%d bytes) per round, one at a time %v apart, the collector attached to their spool, %d rounds\n", o.Events, fields.Event, len(payload), o.Gap, o.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\t/bin/true CPU/run\tfloor CPU/run\thookwatch-hook CPU/run\thook − floor\tcollector CPU/event\tload\t")
	var hooks, colls []time.Duration
	for round := -1; round < o.Rounds; round++ { // round -1 warms up, unmeasured
		n := o.Events
		if round < 0 {
			n = 20
		}
		sid := fmt.Sprintf("0e2e0b5d-7136-4322-8086-%012d", round+1)
		// The collector's idle CPU (its tickers) over one second, to
		// take out of the round's.
		idle0, err := procCPU(p.Pid())
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		idle1, err := procCPU(p.Pid())
		if err != nil {
			return err
		}
		start := time.Now()
		var tru, floor, hook []time.Duration
		for i := range n {
			payload := bytes.ReplaceAll(payload, []byte(fields.SessionID), []byte(sid))
			payload = bytes.Replace(payload, []byte(`"toolu_00000009"`), fmt.Appendf(nil, `"toolu_%08d"`, i), 1)
			for _, c := range []struct {
				argv []string
				env  []string
				into *[]time.Duration
			}{{[]string{"/bin/true"}, nil, &tru}, {[]string{b.floor}, nil, &floor}, {[]string{b.hook, "PreToolUse"}, hookEnv, &hook}} {
				cpu, err := runCPU(ctx, c.argv, c.env, payload)
				if err != nil {
					return err
				}
				*c.into = append(*c.into, cpu)
			}
			time.Sleep(o.Gap)
		}
		got, err := waitStored(ctx, client, p.URL(), sid, n)
		if err != nil {
			return err
		}
		end, err := procCPU(p.Pid())
		if err != nil {
			return err
		}
		if round < 0 {
			continue
		}
		wall := time.Since(start)
		coll := end - idle1 - time.Duration(float64(idle1-idle0)*wall.Seconds())
		perEvent := coll / time.Duration(got)
		hooks, colls = append(hooks, median(hook)), append(colls, perEvent)
		load, _ := os.ReadFile("/proc/loadavg")
		fmt.Fprintf(tw, "%d\t%v\t%v\t%v\t%v\t%v\t%s\t\n", round+1, median(tru).Round(time.Microsecond), median(floor).Round(time.Microsecond),
			median(hook).Round(time.Microsecond), (median(hook) - median(floor)).Round(time.Microsecond), perEvent.Round(time.Microsecond),
			strings.Join(strings.Fields(string(load))[:3], " "))
	}
	tw.Flush()
	fmt.Fprintf(w, "median of %d rounds: hookwatch-hook %v CPU per run, the collector %v CPU per event (medians of the runs; the collector's from its CPU-time clock over the round)\n",
		o.Rounds, median(hooks).Round(time.Microsecond), median(colls).Round(time.Microsecond))
	return nil
}

// runCPU runs argv with stdin and returns its user plus system time.
func runCPU(ctx context.Context, argv, env []string, stdin []byte) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		return 0, fmt.Errorf("%s: %v %s", argv[0], err, out)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// waitStored waits until the collector has stored and modelled want events
// of session id and returns how many it stored.
func waitStored(ctx context.Context, client *http.Client, base, id string, want int) (int, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		counts, err := countEvents(client, base, id)
		total := 0
		for _, n := range counts {
			total += n
		}
		if err == nil && total >= want {
			var v collector.SessionView
			if err = getJSON(client, base+"/v1/sessions/"+url.PathEscape(id), &v); err == nil && v.DerivedSeq >= v.LastSeq {
				return total, nil
			}
		}
		if time.Now().After(deadline) {
			return total, fmt.Errorf("session %s: %d of %d events stored within a minute (%v)", id, total, want, err)
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
