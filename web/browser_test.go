package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/attribution"
	"github.com/hookwatch/hookwatch/collector"
	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/internal/demo"
	"github.com/hookwatch/hookwatch/privacy"
	"github.com/hookwatch/hookwatch/store/sqlite"
	"github.com/hookwatch/hookwatch/web"
)

// The browser tests need Node, the npm packages of web/e2e (npm ci --prefix
// web/e2e) and Debian's chromium. A developer without them gets a skip; CI
// (CI set) gets a failure, so a missing install step cannot pass unnoticed.
func browserTools(t testing.TB) (node string) {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		msg := "browser tests need " + what + " (see web/e2e/README.md)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	if _, err := os.Stat("e2e/node_modules/playwright-core/package.json"); err != nil {
		missing("playwright-core: run npm ci --prefix web/e2e")
	}
	chromium := os.Getenv("HOOKWATCH_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing("chromium: apt-get install -y chromium")
	}
	return node
}

// serve starts a real collector on a temporary SQLite database with the
// dashboard mounted the way `hookwatch serve` mounts it, and ingests envs.
// The dashboard's files need no token, as with `hookwatch serve`; the API
// needs token when it is not empty.
func serve(t testing.TB, envs []event.Envelope, token string) string {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "hookwatch.db"))
	if err != nil {
		t.Fatal(err)
	}
	// The fixtures' tool output is kept whole, as the collector stores it
	// with HOOKWATCH_CAPTURE=full: the tests read a call's output as the
	// client gave it.
	priv := privacy.DefaultOptions()
	priv.Capture = privacy.CaptureFull
	// Stalls swept often: a session that stalls with a page open tells it
	// at once.
	// The model held back on a session's round (modelGate): the pages see
	// events the collector has not modelled yet.
	mg := &modelGate{}
	srv, err := collector.New(collector.Config{Store: db, Version: "test", Token: token, Privacy: priv, ArchiveDir: archiveFixture(t), StallSweep: 200 * time.Millisecond,
		ModelSinks: []collector.ModelSink{mg}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", web.Handler())
	mux.Handle("/v1/", srv.Handler())
	mux.Handle("/healthz", srv.Handler())
	mux.Handle("/metrics", srv.Handler()) // the streams it holds open (hookwatch_sse_clients)
	gate := &streamGate{open: make(chan struct{}), streams: map[*http.Request]context.CancelFunc{}}
	close(gate.open)
	mux.Handle("GET /v1/stream", gate.wrap(srv.Handler()))
	mux.HandleFunc("POST /test/streams", gate.set)
	mux.HandleFunc("POST /test/model", mg.set)
	down := &downGate{streams: gate}
	mux.HandleFunc("POST /test/down", down.set)
	icons := &faviconLog{}
	mux.HandleFunc("GET /test/favicon", icons.get)
	hs := httptest.NewServer(icons.wrap(down.wrap(mux)))
	t.Cleanup(func() {
		mg.release() // the collector's stop waits for its model's last round
		// Shutdown ends the open event streams; only then can the test
		// server's Close, which waits for them, return.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
	})
	for chunk := range slices.Chunk(envs, 2000) {
		if _, err := srv.Ingest(context.Background(), chunk); err != nil {
			t.Fatal(err)
		}
	}
	return hs.URL
}

// streamGate stands for the network between the pages and the collector's
// stream: POST /test/streams?hold=1 cuts every open stream and holds the
// pages' reconnections (as a collector that is down, while what the test
// posts is stored); ?hold=0 lets them through. The pages see a dropped
// connection, not an error.
type streamGate struct {
	mu      sync.Mutex
	open    chan struct{} // closed while streams pass
	streams map[*http.Request]context.CancelFunc
}

func (g *streamGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		open := g.open
		g.mu.Unlock()
		select {
		case <-open:
		case <-r.Context().Done():
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		r = r.WithContext(ctx)
		g.mu.Lock()
		g.streams[r] = cancel
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			delete(g.streams, r)
			g.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

func (g *streamGate) set(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		if r.URL.Query().Get("hold") == "1" {
			g.open = make(chan struct{})
			for _, cancel := range g.streams {
				cancel()
			}
		}
	default:
		if r.URL.Query().Get("hold") == "0" {
			close(g.open)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// downGate stands for a collector that stopped while the pages stay open:
// POST /test/down?down=1 cuts the open streams and closes the connection
// of every API request without an answer, as a stopped collector's
// refused connection reads to a page (its fetch fails, with no status);
// ?down=0 brings it back. The dashboard's own files are still served:
// the pages loaded them before.
type downGate struct {
	down    atomic.Bool
	streams *streamGate
}

func (g *downGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.down.Load() && (strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/healthz") {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (g *downGate) set(w http.ResponseWriter, r *http.Request) {
	down := r.URL.Query().Get("down") == "1"
	g.down.Store(down)
	if down {
		g.streams.mu.Lock()
		for _, cancel := range g.streams.streams {
			cancel()
		}
		g.streams.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// faviconLog records the answers to the browser's requests for
// /favicon.ico, which Playwright leaves out of a page's requests: GET
// /test/favicon returns their statuses, as a JSON array.
type faviconLog struct {
	mu       sync.Mutex
	statuses []int
}

func (l *faviconLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/favicon.ico" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		l.mu.Lock()
		l.statuses = append(l.statuses, rec.status)
		l.mu.Unlock()
	})
}

func (l *faviconLog) get(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(append([]int{}, l.statuses...))
}

// statusRecorder keeps the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// modelGate holds the collector's model back, as a collector busy with a
// large import does: POST /test/model?hold=<session id> makes the next
// round that changes that session stop once its rows are stored (a model
// sink's Offer runs on the modeler's goroutine), so that the events stored
// after it are not modelled; POST /test/model (no hold) lets the model go
// on. The round waits at most a minute, should a test forget it.
type modelGate struct {
	mu      sync.Mutex
	session string        // the session whose round is held; "" for none
	held    chan struct{} // closed to let the held round go
}

func (g *modelGate) set(w http.ResponseWriter, r *http.Request) {
	if id := r.URL.Query().Get("hold"); id != "" {
		g.mu.Lock()
		g.session, g.held = id, make(chan struct{})
		g.mu.Unlock()
	} else {
		g.release()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (g *modelGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
	}
	g.session, g.held = "", nil
}

// Offer holds the round when it changed the session held.
func (g *modelGate) Offer(changes []attribution.SessionChanges) {
	g.mu.Lock()
	id, held := g.session, g.held
	g.mu.Unlock()
	if held == nil || !slices.ContainsFunc(changes, func(c attribution.SessionChanges) bool { return c.Session != nil && c.Session.SessionID == id }) {
		return
	}
	select {
	case <-held:
	case <-time.After(time.Minute):
	}
}

func (g *modelGate) Stop(context.Context) {}

// archiveFixture returns an archive directory holding one compaction
// archive of realSession, as a PreCompact and PostCompact leave it, with
// its summary beside it.
func archiveFixture(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "archive")
	agent := filepath.Join(dir, realSession, "main")
	if err := os.MkdirAll(agent, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"20260101T120000.000000000Z.jsonl":        `{"type":"user","message":{"role":"user","content":"before the compaction"}}` + "\n",
		"20260101T120000.000000000Z.summary.json": `{"time":"2026-01-01T12:00:03Z","trigger":"manual","compact_summary":"all done"}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(agent, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// realSession is the session of the Claude Code 2.1.197 capture with two
// parallel subagents, a failed Bash call, rejected tools, resumes and a
// compaction.
const realSession = "0e2e0b5d-7136-4322-8086-c38ed16b10ad"

const parallelSession = "5ca1ab1e-0000-4000-8000-00000000a11e"

// backgroundSession is the first run of the Claude Code 2.1.332 capture
// under its own id, cut before its survey subagent stops: the main agent
// stopped while that background subagent still runs.
const backgroundSession = "bac6670d-0000-4000-8000-0000000b6b6b"

// resumedSession is the session of the whole 2.1.332 capture: resumed
// three times, the last time with an expired prompt cache, and never with
// a status line.
const resumedSession = "74975720-1a50-4d17-9463-df6fabfdeb7c"

// orphanFork is the fork of the 2.1.332 capture: its transcript names no
// parent hookwatch saw, so the collector knows it as a fork without a
// parent.
const orphanFork = "03760423-27f3-4a00-8d63-b14ec37ed695"

// backgroundCut is the number of payloads of the 2.1.332 capture
// backgroundSession holds: up to the survey agent's own Agent call's end.
const backgroundCut = 34

// background returns the events of backgroundSession, and of the whole
// capture (resumedSession and its fork).
func background(t testing.TB, at time.Time) []event.Envelope {
	t.Helper()
	b, err := os.ReadFile("../testdata/payloads/claude-code-2.1.332.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitN(b, []byte("\n"), backgroundCut+1)[:backgroundCut]
	cut := bytes.ReplaceAll(bytes.Join(lines, []byte("\n")), []byte(resumedSession), []byte(backgroundSession))
	envs, err := demo.Payloads(bytes.NewReader(cut), at)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := demo.Payloads(bytes.NewReader(b), at.Add(-30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return append(envs, whole...)
}

func fixtures(t testing.TB, now time.Time) []event.Envelope {
	t.Helper()
	f, err := os.Open("../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	real, err := demo.Payloads(f, now.Add(-20*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	envs := demo.Sessions(40, now.Add(-2*time.Hour), 7)
	envs = append(envs, real...)
	envs = append(envs, demo.XSS(now.Add(-5*time.Minute))...)
	envs = append(envs, demo.Big(demo.BigSpec{SessionID: parallelSession, Start: now.Add(-12 * time.Minute), Events: 420, Agents: 6, Wave: 3, Seed: 3})...)
	envs = append(envs, previewed(t, now.Add(-30*time.Minute))...)
	envs = append(envs, background(t, now.Add(-3*time.Minute))...)
	envs = append(envs, demo.Story(storySession, now.Add(-100*time.Minute), 1)...)
	capture, err := os.ReadFile("../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	fan, err := demo.FanOut(capture, outlierSession, 0x0ed0, now.Add(-40*time.Minute), 3, 24, 2)
	if err != nil {
		t.Fatal(err)
	}
	stuck, err := demo.Stalled(capture, stalledSession, now.Add(-10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	envs = append(envs, codexCapture(t, now.Add(-25*time.Minute))...)
	run, _ := transcriptRun(t)
	envs = append(envs, run...)
	return append(append(envs, fan...), stuck...)
}

// codexSession is the run of the Codex 0.169 capture whose main agent
// spawns a subagent (spawn_agent) and waits for it: the subagent's events
// and calls carry no prompt id of the user's.
const codexSession = "01a1fec1-e798-7443-975d-177a9c6c32f3"

// codexCapture returns the envelopes of the Codex 0.169 capture (its
// payloads unwrapped from the capture's records), runtime codex, timed
// from at.
func codexCapture(t testing.TB, at time.Time) []event.Envelope {
	t.Helper()
	b, err := os.ReadFile("../testdata/payloads/codex-0.169.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var payloads bytes.Buffer
	for line := range bytes.Lines(b) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || len(rec.Payload) == 0 {
			t.Fatalf("cannot read the Codex capture: %v", err)
		}
		payloads.Write(rec.Payload)
		payloads.WriteByte('\n')
	}
	envs, err := demo.Payloads(&payloads, at)
	if err != nil {
		t.Fatal(err)
	}
	for i := range envs {
		envs[i].Runtime = event.RuntimeCodex
	}
	return envs
}

// transcriptSession is the real run of Claude Code 2.1.197 with three
// subagents that the session model's tests use, reported by its hooks and
// read from its transcripts (attribution/testdata/claude-transcript), but
// for the hook events of its last finished call, lost: the transcripts
// copy every other call, prompt and subagent, and that call is theirs
// alone. transcriptLost returns its tool_use_id.
const transcriptSession = "b4383b84-90ed-4ee7-986f-80e2b6c88baa"

const transcriptRunDir = "../attribution/testdata/claude-transcript"

// transcriptRun returns the hooks' envelopes of transcriptSession but the
// lost call's, and its transcripts read by the importer, and the lost
// call's id.
func transcriptRun(t testing.TB) (envs []event.Envelope, lost string) {
	t.Helper()
	hooks, imported, err := demo.Transcripts(transcriptRunDir)
	if err != nil {
		t.Fatal(err)
	}
	kept, lost := demo.LoseCall(hooks)
	return append(kept, imported...), lost
}

// apiErrorSession is a real run of Claude Code 2.1.197 whose subagent's
// model request, then the main agent's, failed with an API error (400):
// its hooks' envelopes and its transcripts read by the importer
// (attribution/testdata/claude-apierror-2.1.197), written as JSON to a
// file (apiErrorFile) that the test of it posts: the other tests see the
// collector without it.
const apiErrorSession = "bed3416c-0acd-4526-923e-7120d8a3fa48"

func apiErrorFile(t testing.TB) string {
	t.Helper()
	hooks, imported, err := demo.Transcripts("../attribution/testdata/claude-apierror-2.1.197")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(append(hooks, imported...))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "apierror.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// outlierSession is a fan-out of three Explore subagents made of the
// 2.1.197 capture's payloads, the second making 24 calls against its
// siblings' 3 and 2: an outlier (outlierAgent). stalledSession waits on a
// call since ten minutes ago: stalled.
const (
	outlierSession = "0471e700-0000-4000-8000-0000000fa900"
	outlierAgent   = "a0000000000000ed2"
	stalledSession = "57a11ed0-0000-4000-8000-00000000057a"
)

// storySession is the session `hookwatch demo` plays: among its agents, a
// background general-purpose subagent with a denied call, the row of the
// agent tree with the most beside its name.
const storySession = "57025000-0000-4000-8000-0000000d3e70"

// previewSession has one Bash call whose long output the privacy rules kept
// as a preview, as the hook does by default.
const previewSession = "9e7e0000-0000-4000-8000-0000000e1ee1"

// previewed returns the events of previewSession, its payloads passed
// through privacy.Apply with the default options.
func previewed(t testing.TB, at time.Time) []event.Envelope {
	t.Helper()
	base := map[string]any{
		"session_id": previewSession, "cwd": "/home/dev/src/demo", "transcript_path": "/home/dev/.claude/projects/-home-dev-src-demo/" + previewSession + ".jsonl",
		"tool_name": "Bash", "tool_use_id": "toolu_preview", "tool_input": map[string]any{"command": "go test ./..."},
	}
	stdout := strings.Repeat("ok  \tgithub.com/dev/demo/pkg\t0.012s\n", 60) + "--- FAIL: TestQuote \"quoted\"\nFAIL\tgithub.com/dev/demo/quote\t0.004s\n"
	payloads := []map[string]any{
		{"hook_event_name": "SessionStart", "source": "startup", "session_id": previewSession, "cwd": base["cwd"]},
		{"hook_event_name": "PreToolUse"},
		{"hook_event_name": "PostToolUse", "duration_ms": 1200, "tool_response": map[string]any{"stdout": stdout, "stderr": "", "interrupted": false}},
	}
	var envs []event.Envelope
	for i, p := range payloads {
		if p["hook_event_name"] != "SessionStart" {
			for k, v := range base {
				p[k] = v
			}
		}
		raw := map[string]json.RawMessage{}
		for k, v := range p {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			raw[k] = b
		}
		privacy.Apply(raw, privacy.DefaultOptions())
		b, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		when := at.Add(time.Duration(i) * 1500 * time.Millisecond)
		envs = append(envs, event.Envelope{ID: fmt.Sprintf("preview-%d", i), Runtime: event.RuntimeClaudeCode, Kind: event.KindHook, ReceivedAt: when, Payload: b})
	}
	return envs
}

func runNode(t testing.TB, node string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(node, args...)
	cmd.Dir = "e2e"
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestModel runs the unit tests of the dashboard's session model, output
// decoding and formatting (e2e/model.test.mjs), which need Node but no
// browser, against a collector holding the real client's capture: the
// model is fed with what the collector answers.
func TestModel(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the dashboard's unit tests need node")
		}
		t.Skip("the dashboard's unit tests need node")
	}
	url := serve(t, fixtures(t, time.Now().UTC()), "")
	t.Logf("%s", runNode(t, node, []string{"HOOKWATCH_URL=" + url, "HW_REAL=" + realSession, "HW_RESUMED=" + resumedSession, "HW_FORK=" + orphanFork, "HW_CODEX=" + codexSession}, "--test", "--test-reporter=spec", "model.test.mjs"))
}

// TestBrowser runs e2e/dashboard.test.mjs in headless Chromium against a
// collector filled with the real client's payloads, a session of XSS
// attempts, a session with parallel subagents and one whose tool output
// was kept as a preview.
//
// It runs against the collector as it is, and with a token, which the page
// asks for. In the first case, HW_TEST_PATTERN runs the tests whose names
// match it, spaces and all (node's --test-name-pattern, a regular
// expression): HW_TEST_PATTERN='^agent names stay'; HW_NODE_ARGS is passed
// on to node as more arguments, split on spaces.
func TestBrowser(t *testing.T) {
	node := browserTools(t)
	xss, _ := json.Marshal(demo.XSSStrings)
	_, lost := transcriptRun(t)
	run := func(t *testing.T, token string, args ...string) {
		url := serve(t, fixtures(t, time.Now().UTC()), token)
		out := runNode(t, node, []string{
			"HOOKWATCH_URL=" + url,
			"HW_TOKEN=" + token,
			"HW_REAL=" + realSession,
			"HW_XSS=" + demo.XSSSessionID,
			"HW_PARALLEL=" + parallelSession,
			"HW_PREVIEW=" + previewSession,
			"HW_BACKGROUND=" + backgroundSession,
			"HW_STORY=" + storySession,
			"HW_RESUMED=" + resumedSession,
			"HW_FORK=" + orphanFork,
			"HW_CODEX=" + codexSession,
			"HW_OUTLIER=" + outlierSession,
			"HW_OUTLIER_AGENT=" + outlierAgent,
			"HW_STALLED=" + stalledSession,
			"HW_TRANSCRIPT=" + transcriptSession,
			"HW_TRANSCRIPT_LOST=" + lost,
			"HW_APIERROR=" + apiErrorSession,
			"HW_APIERROR_FILE=" + apiErrorFile(t),
			"HW_XSS_STRINGS=" + string(xss),
		}, append([]string{"--test", "--test-reporter=spec", "--test-concurrency=1"}, append(args, "dashboard.test.mjs")...)...)
		t.Logf("%s", out)
	}
	t.Run("collector", func(t *testing.T) {
		args := strings.Fields(os.Getenv("HW_NODE_ARGS"))
		// One argument, whatever it holds: a test's name has spaces.
		if p := os.Getenv("HW_TEST_PATTERN"); p != "" {
			args = append(args, "--test-name-pattern="+p)
		}
		run(t, "", args...)
	})
	t.Run("token", func(t *testing.T) { run(t, "s3cret-token", "--test-name-pattern=^with a token") })
}

// TestScreenshots saves the README's screenshots into the directory named
// by HOOKWATCH_SCREENSHOTS (docs/dashboard-sessions.png,
// docs/dashboard-session.png and docs/dashboard-background.png); without
// it, it skips.
//
//	HOOKWATCH_SCREENSHOTS=$PWD/docs go test ./web -run Screenshots
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("HOOKWATCH_SCREENSHOTS")
	if dir == "" {
		t.Skip("set HOOKWATCH_SCREENSHOTS to a directory to save the screenshots")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	node := browserTools(t)
	now := time.Now().UTC()
	f, err := os.Open("../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	real, err := demo.Payloads(f, now.Add(-3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	envs := demo.Sessions(400, now.Add(-50*time.Minute), 11)
	envs = append(envs, real...)
	envs = append(envs, demo.Big(demo.BigSpec{SessionID: "c0ffee00-0000-4000-8000-00000000b16b", Start: now.Add(-95 * time.Minute), Events: 3000, Agents: 12,
		Project: "billing-worker", Title: "Move invoice retries to the queue", Ended: true, Seed: 5})...)
	const shown = "5ca1ab1e-0000-4000-8000-0000000005ee"
	envs = append(envs, demo.Big(demo.BigSpec{SessionID: shown, Start: now.Add(-12 * time.Minute), Events: 900, Agents: 11, Wave: 4, Seed: 4})...)
	envs = append(envs, background(t, now.Add(-time.Minute))...)
	url := serve(t, envs, "")
	out := runNode(t, node, []string{"HOOKWATCH_URL=" + url, "HW_PARALLEL=" + shown, "HW_BACKGROUND=" + backgroundSession, "HOOKWATCH_SCREENSHOTS=" + dir}, "screenshots.mjs")
	t.Logf("%s", out)
}

// BenchmarkFirstRender measures, in headless Chromium, the time from
// navigation to the first drawn timeline, to the timeline with the whole
// model (every agent and tool call the collector has), and to the page with
// every event loaded too, for a session of 20,000 events and 50 subagents,
// and reports the size of the embedded assets as served gzipped.
func BenchmarkFirstRender(b *testing.B) {
	node := browserTools(b)
	const sid = "b16b16b1-0000-4000-8000-000000020000"
	url := serve(b, demo.Big(demo.BigSpec{SessionID: sid, Start: time.Now().UTC().Add(-3 * time.Hour), Events: 20000, Agents: 50}), "")
	files, raw, gz := web.Assets()
	var first, model, loaded, events float64
	b.ResetTimer()
	for b.Loop() {
		out := runNode(b, node, []string{"HOOKWATCH_URL=" + url, "HW_SESSION=" + sid, "HW_RUNS=1"}, "bench.mjs")
		var r struct{ First, Model, Loaded, Events float64 }
		if err := json.Unmarshal(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:], &r); err != nil {
			b.Fatalf("cannot read the benchmark's result: %v\n%s", err, out)
		}
		first += r.First
		model += r.Model
		loaded += r.Loaded
		events = r.Events
	}
	n := float64(b.N)
	b.ReportMetric(first/n, "ms-first-render")
	b.ReportMetric(model/n, "ms-model-render")
	b.ReportMetric(loaded/n, "ms-events-loaded")
	b.ReportMetric(events, "events")
	b.ReportMetric(float64(gz), "asset-bytes-gz")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d embedded files, %d bytes, %d gzipped", files, raw, gz)
}

// BenchmarkSessionList measures, in headless Chromium, the time to the
// first rows and to the whole list of 10,000 sessions (HW_BENCH_SESSIONS
// sessions when set: a team server's 50,000), how long a search over them
// takes to show, and the page's JavaScript heap with the list loaded.
func BenchmarkSessionList(b *testing.B) {
	node := browserTools(b)
	n := 10000
	if v := os.Getenv("HW_BENCH_SESSIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("HW_BENCH_SESSIONS=%q: want a number of sessions", v)
		}
	}
	url := serve(b, demo.Sessions(n, time.Now().UTC(), 9), "")
	var first, full, search, heap, sessions float64
	b.ResetTimer()
	for b.Loop() {
		out := runNode(b, node, []string{"HOOKWATCH_URL=" + url, "HW_RUNS=1"}, "bench.mjs")
		b.Logf("%s", out) // the run's line: the API's share of the time besides
		var r struct{ First, Full, Search, Heap, Sessions float64 }
		if err := json.Unmarshal(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:], &r); err != nil {
			b.Fatalf("cannot read the benchmark's result: %v\n%s", err, out)
		}
		first += r.First
		full += r.Full
		search += r.Search
		heap += r.Heap
		sessions = r.Sessions
	}
	runs := float64(b.N)
	b.ReportMetric(first/runs, "ms-first-rows")
	b.ReportMetric(full/runs, "ms-all-rows")
	b.ReportMetric(search/runs, "ms-search")
	b.ReportMetric(heap/runs/1e6, "MB-heap")
	b.ReportMetric(sessions, "sessions")
	b.ReportMetric(0, "ns/op")
}
