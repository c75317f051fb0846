package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/importer"
	"github.com/hookwatch/hookwatch/ingest"
	"github.com/hookwatch/hookwatch/privacy"
)

// ImportOptions configure the import benchmark.
type ImportOptions struct {
	// Repo is the repository root: the real transcripts the tree is made
	// of are in importer/testdata.
	Repo string
	// Bytes is the size of the generated tree; 0 means 1 GB.
	Bytes int64
	// CPUProfile, when not "", is where the CPU profile of the import
	// (not of the tree's making) is written.
	CPUProfile string
	// EndToEnd also runs `hookwatch import` (built from Repo) on the tree
	// against a collector of its own (hookwatch serve, SQLite, in a
	// temporary home), as a user does.
	EndToEnd bool
}

// ImportResult is what the import benchmark measured.
type ImportResult struct {
	Bytes     int64
	Files     int
	Envelopes int
	Elapsed   time.Duration
	// CPU is the process's CPU time (user and system) over the import.
	CPU time.Duration
}

// MBps is the throughput in MB (10^6 bytes) of transcript per second.
func (r ImportResult) MBps() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// Import measures hookwatch import: a tree of Claude Code transcripts made
// by ImportTree is read, converted and passed through the ingest pipeline
// with the default privacy rules, as `hookwatch import` does; the envelopes
// are dropped instead of posted, so that the figure is the importer's, not
// the collector's. The tree is made in a temporary directory, removed at the
// end.
func Import(ctx context.Context, w io.Writer, o ImportOptions) (ImportResult, error) {
	if o.Bytes <= 0 {
		o.Bytes = 1 << 30
	}
	root, err := os.MkdirTemp("", "hookwatch-import-bench-")
	if err != nil {
		return ImportResult{}, err
	}
	defer os.RemoveAll(root)
	fmt.Fprintf(w, "import: generating %.0f MB of transcripts in %s\n", float64(o.Bytes)/1e6, root)
	if _, err := ImportTree(ctx, o.Repo, root, o.Bytes); err != nil {
		return ImportResult{}, err
	}
	files, err := importer.Find([]string{filepath.Join(root, "projects")})
	if err != nil {
		return ImportResult{}, err
	}
	if o.CPUProfile != "" {
		pf, err := os.Create(o.CPUProfile)
		if err != nil {
			return ImportResult{}, fmt.Errorf("cannot write the CPU profile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return ImportResult{}, fmt.Errorf("cannot write the CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	n := 0
	start := time.Now()
	cpu, err := processCPU()
	if err != nil {
		return ImportResult{}, err
	}
	sum, err := importer.Run(ctx, files, importer.Options{
		Pipeline: &ingest.Pipeline{Origin: ingest.LocalOrigin("bench"), Privacy: privacy.DefaultOptions()},
		Deliver:  func(_ context.Context, envs []event.Envelope) error { n += len(envs); return nil },
	})
	cpu2, _ := processCPU()
	res := ImportResult{Bytes: sum.Bytes, Files: sum.Files, Envelopes: n, Elapsed: time.Since(start), CPU: cpu2 - cpu}
	if err != nil {
		return res, err
	}
	mb := float64(res.Bytes) / 1e6
	fmt.Fprintf(w, "import, importer only: %d files, %.0f MB, %d envelopes (%.0f per MB) in %.1f s: %.1f MB/s, %.0f envelopes/s; CPU %.1f s, %.1f ms per MB; peak RSS %.0f MiB\n",
		res.Files, mb, res.Envelopes, float64(n)/mb, res.Elapsed.Seconds(), res.MBps(), float64(n)/res.Elapsed.Seconds(),
		res.CPU.Seconds(), res.CPU.Seconds()*1e3/mb, float64(procStatusKiB("VmHWM"))/1024)
	if o.EndToEnd {
		if err := importEndToEnd(ctx, w, o.Repo, filepath.Join(root, "projects"), res.Bytes); err != nil {
			return res, err
		}
	}
	return res, nil
}

// importEndToEnd runs `hookwatch import` on tree, bytes of transcripts,
// against a collector of its own, and prints the throughput and the CPU
// time of both processes.
func importEndToEnd(ctx context.Context, w io.Writer, repo, tree string, bytes int64) error {
	dir, bin, err := buildHookwatch(ctx, repo, "import")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	col, err := startAbuseCollector(bin, home) // a collector on a free loopback port, no token
	if err != nil {
		return err
	}
	defer col.Stop(time.Minute)
	url, pid := col.URL(), col.Pid()
	before, err := procCPU(pid)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, "import", "--no-start", tree)
	cmd.Env = append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+url, "HOOKWATCH_TOKEN=")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("hookwatch import: %w", err)
	}
	// Its peak RSS, read from /proc while it runs: the maxrss of a child
	// counts what this process held when it started it.
	var impRSS atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if kib := pidStatusKiB(strconv.Itoa(cmd.Process.Pid), "VmHWM"); kib > 0 {
				impRSS.Store(kib << 10)
			} else {
				return // exited
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	err = cmd.Wait()
	el := time.Since(start)
	<-sampled
	if err != nil {
		return fmt.Errorf("hookwatch import: %w\n%s", err, out.String())
	}
	// The collector's CPU and memory count its model of what was imported
	// too: the rounds still applying it when the import returned.
	m, caught, err := modelApplied(url + "/metrics")
	if err != nil {
		return err
	}
	after, err := procCPU(pid)
	if err != nil {
		return err
	}
	mb := float64(bytes) / 1e6
	imp := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	colCPU := after - before
	fmt.Fprintf(w, "import, end to end: %s", out.String())
	colRSS, _ := peakRSS(col)
	fmt.Fprintf(w, "import, end to end: %.0f MB in %.1f s: %.1f MB/s; CPU: hookwatch import %.1f s (%.1f ms per MB), collector %.1f s (%.1f ms per MB); peak RSS: hookwatch import %s, collector %s\n",
		mb, el.Seconds(), mb/el.Seconds(), imp.Seconds(), imp.Seconds()*1e3/mb, colCPU.Seconds(), colCPU.Seconds()*1e3/mb, mib(impRSS.Load()), mib(colRSS))
	fmt.Fprintf(w, "import, end to end: the model caught up %.1f s after the import; group loads %.0f, evictions %.0f, rebuilds %.0f; groups kept %.0f (%s estimated)\n",
		caught.Seconds(), m["hookwatch_model_group_loads_total"], m["hookwatch_model_group_evictions_total"], m["hookwatch_model_rebuilds_total"],
		m["hookwatch_model_groups_cached"], mib(int64(m["hookwatch_model_cache_bytes"])))
	return nil
}

// modelApplied waits (at most 5 min) until the collector at url (its
// /metrics) has applied every event committed to its model, and returns
// its metrics then and how long it waited.
func modelApplied(url string) (map[string]float64, time.Duration, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	for {
		m, err := scrape(client, url)
		if err != nil {
			return nil, 0, fmt.Errorf("cannot read the collector's metrics: %w", err)
		}
		if m["hookwatch_model_pending_events"] == 0 {
			return m, time.Since(start), nil
		}
		if time.Since(start) > 5*time.Minute {
			return nil, 0, fmt.Errorf("the collector's model did not catch up in 5 min: %v events pending", m["hookwatch_model_pending_events"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sampleSession is the real client's session the tree is made of
// (importer/testdata/parallel): a main transcript and two subagents.
const sampleSession = "04c54c49-9580-4ffd-ac42-925d83960a3b"

// importVariants is how many variants of the sample session the tree cycles
// through, each with other file contents in its tool results.
const importVariants = 16

// ImportTree writes under root a tree of Claude Code transcripts of about
// size bytes, in the client's layout (projects/<project>/<session>.jsonl and
// <session>/subagents/agent-<id>.jsonl), and returns the bytes written. Each
// session is the real client's session of importer/testdata/parallel under
// a new id, with the tool results made the size real ones have: a Read
// result carries a real file of the repository (twice, as the client writes
// it: numbered in the message, whole in toolUseResult), a Bash result the
// lines of a real document as its output, so that — as in real transcripts
// — tool output is most of the bytes, beside many small records. It writes
// one file at a time: its memory does not grow with size.
func ImportTree(ctx context.Context, repo, root string, size int64) (int64, error) {
	variants, err := sampleVariants(repo)
	if err != nil {
		return 0, err
	}
	var written int64
	for i := 0; written < size; i++ {
		if err := ctx.Err(); err != nil {
			return written, err
		}
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		dir := filepath.Join(root, "projects", fmt.Sprintf("-bench-project-%d", i%16))
		if err := os.MkdirAll(filepath.Join(dir, id, "subagents"), 0o700); err != nil {
			return written, err
		}
		for _, f := range variants[i%len(variants)] {
			path := filepath.Join(dir, id+".jsonl")
			if f.name != "" {
				path = filepath.Join(dir, id, "subagents", f.name)
			}
			n, err := writeLines(path, f.lines, []byte(sampleSession), []byte(id))
			written += n
			if err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// sampleFile is one transcript of a variant: its lines, and its name in
// subagents/ ("" for the main transcript).
type sampleFile struct {
	name  string
	lines [][]byte
}

func writeLines(path string, lines [][]byte, old, new []byte) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for _, l := range lines {
		m, _ := bw.Write(bytes.ReplaceAll(l, old, new))
		n += int64(m)
	}
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// sampleVariants returns importVariants variants of the sample session,
// each with its tool results filled from other files of the repository.
func sampleVariants(repo string) ([][]sampleFile, error) {
	src := filepath.Join(repo, "importer", "testdata", "parallel", "projects", "-tmp-hc-1665870347-c-demo")
	paths := []string{filepath.Join(src, sampleSession+".jsonl")}
	subs, err := filepath.Glob(filepath.Join(src, sampleSession, "subagents", "*.jsonl"))
	if err != nil || len(subs) == 0 {
		return nil, fmt.Errorf("cannot find the sample subagents in %s", src)
	}
	slices.Sort(subs)
	paths = append(paths, subs...)
	var code, docs []string // contents of the repository's files, in path order
	for _, pat := range []string{"*/*.go", "docs/*.md", "*.md"} {
		ms, _ := filepath.Glob(filepath.Join(repo, pat))
		slices.Sort(ms)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil || len(b) > 256<<10 {
				continue
			}
			if strings.HasSuffix(m, ".go") {
				code = append(code, string(b))
			} else {
				docs = append(docs, string(b))
			}
		}
	}
	if len(code) == 0 || len(docs) == 0 {
		return nil, fmt.Errorf("cannot find the repository's files to fill tool results with in %s", repo)
	}
	out := make([][]sampleFile, importVariants)
	k := 0 // the next file to use
	for v := range out {
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("cannot read the sample transcript: %w", err)
			}
			f := sampleFile{}
			if p != paths[0] {
				f.name = filepath.Base(p)
			}
			for _, line := range bytes.SplitAfter(b, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				k++
				line = fillResult(line, code[k%len(code)], docs[k%len(docs)])
				f.lines = append(f.lines, line)
			}
			out[v] = append(out[v], f)
		}
	}
	return out, nil
}

// fillResult returns a user record carrying a Read or a Bash result with
// that result replaced: a Read's file content by file, a Bash's output by
// output; any other line as it is.
func fillResult(line []byte, file, output string) []byte {
	if !bytes.Contains(line, []byte(`"tool_result"`)) {
		return line
	}
	var rec map[string]any
	if json.Unmarshal(line, &rec) != nil {
		return line
	}
	res, _ := rec["toolUseResult"].(map[string]any)
	msg, _ := rec["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	if len(blocks) != 1 {
		return line
	}
	block, _ := blocks[0].(map[string]any)
	switch {
	case res == nil && block != nil:
		// A subagent's result, which the client records without
		// toolUseResult: a Read's numbered file, or a command's output.
		text, _ := block["content"].(string)
		if !strings.HasPrefix(text, "1\t") {
			block["content"] = output
			break
		}
		block["content"] = numberLines(file)
	case res["file"] != nil && block != nil:
		fm, _ := res["file"].(map[string]any)
		if fm == nil || fm["content"] == nil {
			return line
		}
		n := strings.Count(file, "\n") + 1
		fm["content"], fm["numLines"], fm["totalLines"] = file, n, n
		block["content"] = numberLines(file)
	case res["stdout"] != nil && block != nil:
		res["stdout"] = output
		block["content"] = output
	default:
		return line
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return line
	}
	return append(b, '\n')
}

// numberLines numbers the lines of file as the client's Read does.
func numberLines(file string) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(file, "\n") {
		fmt.Fprintf(&b, "%d\t%s", i+1, l)
	}
	return b.String()
}
