package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/internal/serveproc"
)

// The memory goals under abuse: the collector's peak RSS whatever clients
// send or fail to read, and the hook's whatever its stdin holds.
const (
	AbuseCollectorGoal = 300 << 20
	AbuseHookGoal      = 64 << 20
)

// AbuseOptions configures the abuse benchmark.
type AbuseOptions struct {
	Repo string // repository root, to build the binaries from
}

// Abuse measures memory and time under hostile input, against real
// processes on 127.0.0.1, every step bounded in count and time:
//
//   - 32 concurrent POST /v1/events of 100 MB each, declaring their length,
//     then 32 more without (chunked): the collector's peak RSS (VmHWM);
//   - 50 GET /v1/stream clients that never read while four events of 5 MB
//     are stored: the collector's peak RSS, on a fresh collector;
//   - the hook with 300 MB on stdin, with the largest payload it takes,
//     and with a payload whose stdin stays open: its peak RSS (the
//     wait4 maxrss, measured under a small wrapper process) and wall time
//     against its bounds: its budget (1 s) past its payload, which it
//     waits five budgets for.
func Abuse(ctx context.Context, w io.Writer, o AbuseOptions) error {
	b, err := buildAll(ctx, o.Repo)
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	wrap, err := buildSource(ctx, o.Repo, b.tmp, "rsswrap", rssWrapSource)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "abuse: peak memory of the collector and the hook under hostile input")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tpeak RSS\ttime\tanswers\tgoal\t")
	var missed []string
	row := func(name string, rss int64, took time.Duration, answers string, goal int64, budget time.Duration) {
		ok := rss >= 0 && rss < goal && (budget == 0 || took <= budget)
		goalText := fmt.Sprintf("< %d MiB", goal>>20)
		if budget > 0 {
			goalText += fmt.Sprintf(", ≤ %v", budget)
		}
		if !ok {
			goalText += " MISSED"
			missed = append(missed, name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t\n", name, mib(rss), took.Round(time.Millisecond), answers, goalText)
	}

	// Bodies.
	p, err := startAbuseCollector(b.full, filepath.Join(b.tmp, "bodies"))
	if err != nil {
		return err
	}
	start := time.Now()
	declared := postHuge(p.URL(), 32, 100<<20, true)
	chunked := postHuge(p.URL(), 32, 100<<20, false)
	rss, err := peakRSS(p)
	took := time.Since(start)
	p.Stop(time.Minute)
	if err != nil {
		return err
	}
	row("collector: 32 × 100 MB bodies, then 32 chunked", rss, took, declared+"; "+chunked, AbuseCollectorGoal, 0)

	// Streams.
	p, err = startAbuseCollector(b.full, filepath.Join(b.tmp, "streams"))
	if err != nil {
		return err
	}
	start = time.Now()
	answers, err := stuckStreams(p.URL(), 50, 4, 5<<20)
	if err == nil {
		rss, err = peakRSS(p)
	}
	took = time.Since(start)
	p.Stop(time.Minute)
	if err != nil {
		return err
	}
	row("collector: 50 streams not reading, 4 × 5 MB events", rss, took, answers, AbuseCollectorGoal, 0)

	// The hook.
	const budget = time.Second
	dead, err := deadport.Open()
	if err != nil {
		return err
	}
	defer dead.Close()
	env := []string{"HOOKWATCH_HOME=" + filepath.Join(b.tmp, "hook-home"), "HOOKWATCH_URL=" + dead.URL(), "HOOKWATCH_AUTOSTART=0", "HOOKWATCH_HOOK_BUDGET=" + budget.String()}
	largest := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Write","tool_use_id":"toolu_1","cwd":"/tmp","tool_input":{"file_path":"/tmp/f","content":"` + strings.Repeat("y", 8<<20-1024) + `"}}`
	// A run ends within its budget once it has its payload, which it
	// waits StdinWaitFactor budgets for.
	hookCases := []struct {
		name  string
		feed  func(w *os.File)
		bound time.Duration
	}{
		{"hook: 300 MB on stdin", func(w *os.File) {
			w.WriteString(`{"session_id":"s","hook_event_name":"PostToolUse","tool_response":"`)
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for range 300 {
				if _, err := w.Write(chunk); err != nil {
					break
				}
			}
			w.Close()
		}, budget + budget/4},
		{fmt.Sprintf("hook: a payload of %d bytes", len(largest)), func(w *os.File) {
			w.WriteString(largest)
			w.Close()
		}, budget + budget/4},
		{"hook: stdin left open (sleep 6 | hook)", func(w *os.File) {
			w.Write(preToolUsePayload)
			time.Sleep(6 * time.Second)
			w.Close()
		}, hook.StdinWaitFactor*budget + budget/4},
	}
	for _, c := range hookCases {
		m, err := MeasureRSS(ctx, wrap, []string{b.hook}, env, c.feed, 20*time.Second)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		answers := "exit 0, no output"
		if m.ExitCode != 0 || len(m.Stdout) > 0 {
			answers = fmt.Sprintf("exit %d, %d bytes on stdout", m.ExitCode, len(m.Stdout))
			missed = append(missed, c.name)
		}
		row(c.name, m.PeakRSS, m.Took, answers, AbuseHookGoal, c.bound)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(missed) > 0 {
		fmt.Fprintf(w, "goals MISSED: %s\n", strings.Join(missed, "; "))
	} else {
		fmt.Fprintln(w, "goals met: collector < 300 MiB in both cases, hook < 64 MiB on any input and within its bounds")
	}
	return nil
}

func mib(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

func startAbuseCollector(bin, home string) (*serveproc.Proc, error) {
	return serveproc.Start(serveproc.Options{
		Bin: bin, Healthy: 15 * time.Second,
		Env: append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_TOKEN="),
	})
}

// peakRSS is the collector's peak resident set so far (VmHWM): the
// process's own, whatever its parent's was.
func peakRSS(p *serveproc.Proc) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return -1, fmt.Errorf("cannot read the collector's peak RSS: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return -1, errors.New("no VmHWM in /proc/<pid>/status")
}

// postHuge sends n concurrent POST /v1/events of size bytes each (a batch
// that never ends: '{"envelopes":[' and spaces), with Content-Length or
// chunked, and summarises the answers.
func postHuge(base string, n int, size int64, declare bool) string {
	start := time.Now()
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: time.Minute}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := io.MultiReader(strings.NewReader(`{"envelopes":[`), io.LimitReader(spaces{}, size-14))
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/events", body)
			req.Header.Set("Content-Type", "application/json")
			if declare {
				req.ContentLength = size
			} else {
				req.ContentLength = -1
			}
			res, err := client.Do(req)
			what := "connection cut"
			if err == nil {
				what = strconv.Itoa(res.StatusCode)
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			mu.Lock()
			codes[what]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	kind := "chunked"
	if declare {
		kind = "declared"
	}
	var parts []string
	for k, v := range codes {
		parts = append(parts, fmt.Sprintf("%d× %s", v, k))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s: %s in %v", kind, strings.Join(parts, ", "), time.Since(start).Round(time.Millisecond))
}

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// stuckStreams opens n streams that never read, stores events of size
// bytes one per request, and waits for the streams to have been woken and
// written to.
func stuckStreams(base string, n, events, size int) (string, error) {
	addr := strings.TrimPrefix(base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return "", err
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /v1/stream HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	}
	// Let every stream start (and take its position) before the events.
	time.Sleep(time.Second)
	stored := 0
	for i := range events {
		prompt := strings.Repeat("z", size)
		body := fmt.Sprintf(`{"envelopes":[{"id":"0196f0a0-0000-7000-8000-%012d","runtime":"claude-code","kind":"hook","received_at":"2026-11-25T12:00:00Z","payload":{"session_id":"abuse","hook_event_name":"UserPromptSubmit","prompt":%q}}]}`, i+1, prompt)
		res, err := http.Post(base+"/v1/events", "application/json", strings.NewReader(body))
		if err != nil {
			return "", err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			stored++
		}
	}
	// The streams read and write what is new within milliseconds; give
	// them a few seconds on a busy machine.
	time.Sleep(5 * time.Second)
	return fmt.Sprintf("%d of %d events stored", stored, events), nil
}

// Measured is one run of a program under the RSS wrapper.
type Measured struct {
	Took     time.Duration
	PeakRSS  int64 // bytes
	ExitCode int
	Stdout   []byte
}

// MeasureRSS runs argv with env added to the environment and a pipe as
// stdin, which feed writes to (and closes, or not), and returns its wall
// time and peak RSS. The program runs under wrap (see rssWrapSource): the
// maxrss the kernel reports for a child includes what its parent held when
// it started it, and a small parent keeps that out of the figure. A run is
// killed after timeout.
func MeasureRSS(ctx context.Context, wrap string, argv, env []string, feed func(w *os.File), timeout time.Duration) (Measured, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		return Measured{}, err
	}
	defer w.Close()
	cmd := exec.CommandContext(ctx, wrap, argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = r
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		r.Close()
		return Measured{}, err
	}
	r.Close()
	go feed(w)
	err = cmd.Wait()
	if ctx.Err() != nil {
		return Measured{}, fmt.Errorf("killed after %v", timeout)
	}
	// The wrapper's last line on stderr is the child's took and maxrss.
	m := Measured{ExitCode: cmd.ProcessState.ExitCode(), Stdout: stdout.Bytes()}
	sc := bufio.NewScanner(&stderr)
	var last string
	for sc.Scan() {
		last = sc.Text()
	}
	var tookNS, kib int64
	if _, serr := fmt.Sscanf(last, "rsswrap: took %d ns, maxrss %d KiB", &tookNS, &kib); serr != nil {
		return Measured{}, fmt.Errorf("no measure from the wrapper (%v): %s", err, stderr.String())
	}
	m.Took, m.PeakRSS = time.Duration(tookNS), kib<<10
	return m, nil
}

// rssWrapSource runs its arguments as a program with its own stdin, stdout
// and stderr, and then writes the program's wall time and peak RSS as a
// last line to stderr. Its exit code is the program's.
const rssWrapSource = `package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(125)
	}
	fmt.Fprintf(os.Stderr, "rsswrap: took %d ns, maxrss %d KiB\n", took.Nanoseconds(), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	os.Exit(cmd.ProcessState.ExitCode())
}
`

// BuildRSSWrapper builds the wrapper MeasureRSS runs programs under into
// dir and returns its path.
func BuildRSSWrapper(ctx context.Context, repo, dir string) (string, error) {
	return buildSource(ctx, repo, dir, "rsswrap", rssWrapSource)
}
