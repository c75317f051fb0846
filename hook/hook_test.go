package hook_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/internal/deadport"
	"github.com/hookwatch/hookwatch/internal/spooltest"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/spool"
)

// preToolUse is a real PreToolUse payload from Claude Code 2.1.197.
func preToolUse(t testing.TB) []byte {
	t.Helper()
	return corpusLine(t, `"hook_event_name":"PreToolUse"`)
}

func corpusLine(t testing.TB, contains string) []byte {
	t.Helper()
	f, err := os.Open("../testdata/payloads/claude-code-2.1.197.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(contains)) {
			return append([]byte(nil), sc.Bytes()...)
		}
	}
	t.Fatalf("no corpus line contains %s", contains)
	return nil
}

// collector records the envelopes POSTed to /v1/events and answers with
// status (200 unless set).
type collector struct {
	mu        sync.Mutex
	envelopes []event.Envelope
	status    int
	srv       *httptest.Server
}

func newCollector(t *testing.T) *collector {
	c := &collector{status: 200}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/events" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		var body struct{ Envelopes []event.Envelope }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.status == 200 {
			c.envelopes = append(c.envelopes, body.Envelopes...)
		}
		w.WriteHeader(c.status)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) got() []event.Envelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event.Envelope(nil), c.envelopes...)
}

func config(t *testing.T, url string) hook.Config {
	getenv := func(k string) string {
		switch k {
		case "HOOKWATCH_HOME":
			return t.TempDir()
		case "HOOKWATCH_URL":
			return url
		}
		return ""
	}
	cfg, warn := hook.ConfigFromEnv(getenv)
	if len(warn) > 0 {
		t.Fatal(warn)
	}
	cfg.Budget = 2 * time.Second
	cfg.Version = "test"
	return cfg
}

func logLines(t *testing.T, home string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "hook.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestRunDelivers(t *testing.T) {
	c := newCollector(t)
	cfg := config(t, c.srv.URL)
	res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
	if !res.Delivered || res.Spooled || res.Err != nil || res.ExitCode != 0 || len(res.Stdout) != 0 {
		t.Fatalf("Run = %+v", res)
	}
	got := c.got()
	if len(got) != 1 {
		t.Fatalf("collector got %d envelopes", len(got))
	}
	env := got[0]
	if len(env.ID) != 36 || env.Runtime != event.RuntimeClaudeCode || env.Kind != event.KindHook || env.HookwatchVersion != "test" || env.ReceivedAt.IsZero() {
		t.Errorf("envelope = %+v", env)
	}
	p, err := event.Decode(env.Payload)
	if err != nil || p.Name() != event.PreToolUse || p.Tool().ToolUseID == "" {
		t.Errorf("payload = %s (%v)", env.Payload, err)
	}
	if lines := logLines(t, cfg.Home); lines != nil {
		t.Errorf("a delivered event logged %q", lines)
	}
}

// TestRunTraceparent: the agent's TRACEPARENT reaches the envelope.
func TestRunTraceparent(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c := newCollector(t)
	cfg, warn := hook.ConfigFromEnv(func(k string) string {
		return map[string]string{"HOOKWATCH_HOME": t.TempDir(), "HOOKWATCH_URL": c.srv.URL, "TRACEPARENT": tp}[k]
	})
	if len(warn) > 0 || cfg.Traceparent != tp {
		t.Fatalf("config %+v, %v", cfg, warn)
	}
	if res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t))); !res.Delivered {
		t.Fatalf("Run = %+v", res)
	}
	if got := c.got(); len(got) != 1 || got[0].Traceparent != tp {
		t.Fatalf("collector got %+v", got)
	}
}

// TestConfigBase: the API's paths join the collector's URL however it
// ends, and the hook keeps the URL as it was given.
func TestConfigBase(t *testing.T) {
	for url, want := range map[string]string{
		"http://127.0.0.1:7421":    "http://127.0.0.1:7421",
		"http://127.0.0.1:7421/":   "http://127.0.0.1:7421",
		"https://hw.example.com//": "https://hw.example.com",
	} {
		cfg, _ := hook.ConfigFromEnv(func(k string) string {
			return map[string]string{"HOOKWATCH_HOME": t.TempDir(), "HOOKWATCH_URL": url}[k]
		})
		if cfg.URL != url || cfg.Base() != want {
			t.Errorf("HOOKWATCH_URL %q: URL %q, Base %q; want Base %q", url, cfg.URL, cfg.Base(), want)
		}
	}
}

// TestTokenSource: the token comes from HOOKWATCH_TOKEN, else, for a
// collector HOOKWATCH_URL names, from the home's token file, and a
// refusal of it names that source and the fix that fits: a new token
// exported, or installed in the file, or one given at all.
func TestTokenSource(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, hook.TokenFile)
	for _, tc := range []struct {
		name              string
		env, url, inFile  string
		token             string
		src               hook.TokenSource
		what, fix, notFix string
		why               string // the collector's refusal
	}{
		{name: "environment", env: "hwt_env", url: "https://hw.example.com", inFile: "hwt_file", token: "hwt_env", src: hook.TokenFromEnv,
			what: "refuses HOOKWATCH_TOKEN", fix: "export HOOKWATCH_TOKEN=", notFix: "--token-file"},
		// Revoked: the server's token or one made anywhere but where the
		// collector runs is no fix; a new one from its admin is.
		{name: "environment, revoked", env: "hwt_env", url: "https://hw.example.com", token: "hwt_env", src: hook.TokenFromEnv,
			why:  hook.RevokedToken + " at 2026-11-30T09:00:00Z: ask the server's admin for a new one",
			what: "refuses HOOKWATCH_TOKEN", fix: "ask the collector's admin for a new token ('hookwatch token create --user NAME', where the collector runs), then export HOOKWATCH_TOKEN=<the new token>", notFix: "serve runs with"},
		{name: "environment, revoked: unset it for the file", env: "hwt_env", url: "https://hw.example.com", token: "hwt_env", src: hook.TokenFromEnv,
			why:  hook.RevokedToken + " at 2026-11-30T09:00:00Z",
			what: "refuses HOOKWATCH_TOKEN", fix: "or unset HOOKWATCH_TOKEN and install it: hookwatch install --token-file FILE", notFix: "serve runs with"},
		{name: "file", url: "https://hw.example.com", inFile: "hwt_file", token: "hwt_file", src: hook.TokenFromFile,
			what: "refuses the token in " + file, fix: "a new token ('hookwatch token create --user NAME') and install it: hookwatch install --token-file FILE", notFix: "export"},
		{name: "file holds none", url: "https://hw.example.com", src: hook.TokenFromFile,
			what: "none was given, neither HOOKWATCH_TOKEN nor " + file + " holding one", fix: "hookwatch install --token-file FILE", notFix: "export"},
		// The local default reads no file: only the environment gives it one.
		{name: "none", inFile: "hwt_file", src: hook.TokenNone,
			what: "none was given, HOOKWATCH_TOKEN being unset", fix: "export HOOKWATCH_TOKEN=", notFix: "--token-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(file)
			if tc.inFile != "" {
				if err := os.WriteFile(file, []byte(tc.inFile+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOOKWATCH_HOME": home, "HOOKWATCH_TOKEN": tc.env, "HOOKWATCH_URL": tc.url}
			cfg, _ := hook.ConfigFromEnv(func(k string) string { return env[k] })
			if cfg.Token != tc.token || cfg.TokenSource != tc.src {
				t.Fatalf("token %q from %d, want %q from %d", cfg.Token, cfg.TokenSource, tc.token, tc.src)
			}
			what, fix := hook.RefusedToken(cfg.TokenSource, cfg.Token, home, tc.why)
			if !strings.Contains(what, tc.what) || !strings.Contains(fix, tc.fix) || strings.Contains(fix, tc.notFix) {
				t.Errorf("refused: %q, fix %q; want %q, fix with %q and without %q", what, fix, tc.what, tc.fix, tc.notFix)
			}
			if strings.ContainsAny(strings.ReplaceAll(what, file, ""), ":()") {
				t.Errorf("%q has a colon or a parenthesis, which the callers' HTTP status follows", what)
			}
			if strings.Contains(what+fix, "hwt_") {
				t.Errorf("the wording holds the token: %q %q", what, fix)
			}
		})
	}
}

// TestURLSource: the hooks send where HOOKWATCH_URL says, else where the
// home's URL file (install --url) says, else to the local default; a URL
// from the file is a collector's like one from the environment, so the
// token file is read for it.
func TestURLSource(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, hook.TokenFile), []byte("hwt_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, env, inFile string
		url               string
		src               hook.URLSource
		token             string
	}{
		{name: "default", url: hook.DefaultURL, src: hook.URLDefault},
		{name: "file", inFile: "https://team.example:7070\n", url: "https://team.example:7070", src: hook.URLFromFile, token: "hwt_file"},
		{name: "environment wins", env: "http://127.0.0.1:9999", inFile: "https://team.example:7070\n", url: "http://127.0.0.1:9999", src: hook.URLFromEnv, token: "hwt_file"},
		{name: "empty file", inFile: "\n", url: hook.DefaultURL, src: hook.URLDefault},
		{name: "file too large", inFile: "https://" + strings.Repeat("a", 5000), url: hook.DefaultURL, src: hook.URLDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(home, hook.URLFile)
			os.Remove(file)
			if tc.inFile != "" {
				if err := os.WriteFile(file, []byte(tc.inFile), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOOKWATCH_HOME": home, "HOOKWATCH_URL": tc.env}
			getenv := func(k string) string { return env[k] }
			cfg, _ := hook.ConfigFromEnv(getenv)
			if cfg.URL != tc.url || cfg.URLSource != tc.src || cfg.Token != tc.token {
				t.Fatalf("URL %q from %v, token %q; want %q from %v, token %q", cfg.URL, cfg.URLSource, cfg.Token, tc.url, tc.src, tc.token)
			}
			if u, src := hook.LookupURL(getenv, home); u != cfg.URL || src != cfg.URLSource {
				t.Errorf("LookupURL = %q, %v; ConfigFromEnv said %q, %v", u, src, cfg.URL, cfg.URLSource)
			}
			if tok, src := hook.LookupToken(getenv, home); tok != cfg.Token || src != cfg.TokenSource {
				t.Errorf("LookupToken = %q, %v; ConfigFromEnv said %q, %v", tok, src, cfg.Token, cfg.TokenSource)
			}
			// ConfigKeepingURL of what the file keeps now reads the
			// same; of another URL (or none), as if the file kept it.
			if kc, _ := hook.ConfigKeepingURL(getenv, hook.ReadURL(home)); kc.URL != cfg.URL || kc.URLSource != cfg.URLSource || kc.Token != cfg.Token {
				t.Errorf("ConfigKeepingURL of the file's URL: %q from %v, token %q; ConfigFromEnv said %q from %v, token %q", kc.URL, kc.URLSource, kc.Token, cfg.URL, cfg.URLSource, cfg.Token)
			}
			kc, _ := hook.ConfigKeepingURL(getenv, "")
			if want := cmp.Or(tc.env, hook.DefaultURL); kc.URL != want {
				t.Errorf("ConfigKeepingURL of none: %q, want %q", kc.URL, want)
			}
			kc, _ = hook.ConfigKeepingURL(getenv, "https://other.example")
			if want := cmp.Or(tc.env, "https://other.example"); kc.URL != want || (tc.env == "" && kc.URLSource != hook.URLFromFile) {
				t.Errorf("ConfigKeepingURL of another: %q from %v, want %q", kc.URL, kc.URLSource, want)
			}
		})
	}
}

// BenchmarkConfigFromEnv is what each hook run pays to read its
// configuration, with HOOKWATCH_URL unset (the URL file is read then) and
// set (it is not).
func BenchmarkConfigFromEnv(b *testing.B) {
	home := b.TempDir()
	for _, name := range []string{"env", "no file", "file"} {
		b.Run(name, func(b *testing.B) {
			env := map[string]string{"HOOKWATCH_HOME": home}
			switch name {
			case "env":
				env["HOOKWATCH_URL"] = "https://team.example:7070"
			case "file":
				if err := os.WriteFile(filepath.Join(home, hook.URLFile), []byte("https://team.example:7070\n"), 0o600); err != nil {
					b.Fatal(err)
				}
			}
			getenv := func(k string) string { return env[k] }
			for b.Loop() {
				hook.ConfigFromEnv(getenv)
			}
		})
	}
}

func TestRunSpoolsThenDrains(t *testing.T) {
	cfg := config(t, testbin.DeadURL(t))
	for i := 0; i < 3; i++ {
		res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
		if !res.Spooled || res.Delivered || res.ExitCode != 0 {
			t.Fatalf("Run with collector down = %+v", res)
		}
	}
	if n := len(logLines(t, cfg.Home)); n != 3 {
		t.Errorf("hook.log has %d lines, want one per spooled event", n)
	}
	// The collector comes back: the next event is delivered and drains the spool.
	c := newCollector(t)
	cfg.URL = c.srv.URL
	res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
	if !res.Delivered {
		t.Fatalf("Run = %+v", res)
	}
	got := c.got()
	ids := map[string]bool{}
	for _, e := range got {
		ids[e.ID] = true
	}
	if len(got) != 4 || len(ids) != 4 {
		t.Errorf("collector got %d envelopes (%d distinct), want 4", len(got), len(ids))
	}
}

func TestRunCollectorErrors(t *testing.T) {
	f := func(status int, wantSpooled, wantRejected bool) {
		t.Helper()
		c := newCollector(t)
		c.status = status
		cfg := config(t, c.srv.URL)
		res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
		if res.Spooled != wantSpooled || res.Delivered || res.ExitCode != 0 || res.Err == nil {
			t.Errorf("HTTP %d: Run = %+v", status, res)
		}
		_, err := os.Stat(filepath.Join(cfg.Home, "rejected.jsonl"))
		if (err == nil) != wantRejected {
			t.Errorf("HTTP %d: rejected.jsonl exists = %v, want %v", status, err == nil, wantRejected)
		}
	}
	f(500, true, false)
	f(503, true, false)
	f(401, true, false) // a wrong token is fixed by the user; keep the events
	f(400, false, true)
	f(413, false, true)
	f(403, false, true) // another user's session: it never becomes this user's
}

// TestRunTokenRefusedLog: a collector that refuses the token (a revoked
// one) leaves in hook.log which token it refused, where it came from, and
// where to read why and what replaces it, not a bare status.
func TestRunTokenRefusedLog(t *testing.T) {
	c := newCollector(t)
	c.status = 401
	cfg := config(t, c.srv.URL)
	if err := os.WriteFile(filepath.Join(cfg.Home, hook.TokenFile), []byte("hwt_revoked\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Token, cfg.TokenSource = hook.LookupToken(func(k string) string {
		if k == "HOOKWATCH_URL" {
			return c.srv.URL
		}
		return ""
	}, cfg.Home)
	res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
	if !res.Spooled {
		t.Fatalf("Run = %+v, want spooled", res)
	}
	lines := logLines(t, cfg.Home)
	if len(lines) != 1 {
		t.Fatalf("hook.log has %d lines, want 1: %q", len(lines), lines)
	}
	for _, want := range []string{"collector answered HTTP 401", "refuses the token in " + filepath.Join(cfg.Home, hook.TokenFile), "wait in the spool", "hookwatch doctor"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("hook.log lacks %q:\n%s", want, lines[0])
		}
	}
	if strings.Contains(lines[0], "hwt_revoked") {
		t.Errorf("hook.log shows the token:\n%s", lines[0])
	}
}

// hungCollector listens on loopback, accepts connections and never answers
// them, as a collector stuck before its answer would; accepted is closed at
// the first connection. All of it is closed when the test ends.
func hungCollector(t *testing.T) (url string, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			if conns == nil {
				close(first)
			}
			conns = append(conns, conn) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return "http://" + l.Addr().String(), first
}

// TestRunHungCollector: a collector that accepts connections and never
// answers costs the hook its budget, not the agent's patience.
func TestRunHungCollector(t *testing.T) {
	url, _ := hungCollector(t)
	cfg := config(t, url)
	cfg.Budget = 300 * time.Millisecond
	start := time.Now()
	res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
	took := time.Since(start)
	if !res.Spooled {
		t.Errorf("Run = %+v, want spooled", res)
	}
	// Generous bound: this asserts the budget is enforced, not speed.
	if took > 3*time.Second {
		t.Errorf("Run took %v with a 300ms budget", took)
	}
}

func TestRunSubagentMeta(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "sess-1.jsonl")
	metaDir := filepath.Join(dir, "sess-1", "subagents")
	if err := os.MkdirAll(metaDir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"agentType":"worker","description":"d","toolUseId":"toolu_9","spawnDepth":2}`
	if err := os.WriteFile(filepath.Join(metaDir, "agent-abc.meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCollector(t)
	cfg := config(t, c.srv.URL)
	payload := `{"session_id":"sess-1","transcript_path":"` + transcript + `","hook_event_name":"PreToolUse","agent_id":"abc","agent_type":"worker","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_10"}`
	if res := hook.Run(context.Background(), cfg, strings.NewReader(payload)); !res.Delivered {
		t.Fatalf("Run = %+v", res)
	}
	m := c.got()[0].Subagent
	if m == nil || m.ToolUseID != "toolu_9" || m.SpawnDepth != 2 || m.AgentType != "worker" {
		t.Errorf("subagent meta = %+v", m)
	}
	// A hostile agent_id must not walk out of the transcript directory.
	payload = strings.Replace(payload, `"agent_id":"abc"`, `"agent_id":"../../etc"`, 1)
	if res := hook.Run(context.Background(), cfg, strings.NewReader(payload)); !res.Delivered || c.got()[1].Subagent != nil {
		t.Errorf("Run with a path in agent_id = %+v, meta %+v", res, c.got()[1].Subagent)
	}
}

// buildHook builds cmd/hookwatch-hook, the binary agents run.
func buildHook(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hookwatch-hook")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/hookwatch-hook")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestHostileInput runs the real hook binary on every input of the hostile
// corpus, with the collector down and up: exit 0, nothing on stdout, exactly
// one line in hook.log, within the budget.
func TestHostileInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	bin := buildHook(t)
	inputs := map[string][]byte{}
	files, _ := filepath.Glob("testdata/hostile/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = b
	}
	inputs["nested-10000"] = []byte(strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000))
	inputs["nested-10000-in-tool-input"] = []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}")
	big := bytes.Repeat([]byte("x"), 64<<20)
	inputs["tool-output-64MiB"] = append(append([]byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"cat big"},"tool_response":{"stdout":"`), big...), `","stderr":""}}`...)
	if len(inputs) < 10 {
		t.Fatalf("hostile corpus has %d inputs", len(inputs))
	}
	c := newCollector(t)
	for _, url := range []string{testbin.DeadURL(t), c.srv.URL} {
		for name, in := range inputs {
			home := t.TempDir()
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(), "HOOKWATCH_HOME="+home, "HOOKWATCH_URL="+url, "HOOKWATCH_HOOK_BUDGET=1s")
			cmd.Stdin = bytes.NewReader(in)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if err != nil {
				t.Errorf("%s → %s: %v (stderr %q)", name, url, err, stderr.String())
			}
			if stdout.Len() != 0 || stderr.Len() != 0 {
				t.Errorf("%s → %s: stdout %q stderr %q, want both empty", name, url, stdout.String(), stderr.String())
			}
			lines := logLines(t, home)
			if len(lines) != 1 {
				t.Errorf("%s → %s: hook.log has %d lines, want 1: %q", name, url, len(lines), lines)
			}
			if took > 10*time.Second {
				t.Errorf("%s → %s: took %v", name, url, took)
			}
		}
	}
}

func TestMainHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := hook.Main(context.Background(), []string{"--help"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" }, "v", nil)
	if code != 0 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "HOOKWATCH_URL") {
		t.Errorf("--help: code %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
	// The help says what the hook prints when a policy answers (a deny the
	// agent enforces), and that an https:// URL is reached through the
	// forwarder, not only loopback.
	for _, want := range []string{"policy", "hookwatch policy explain", "https://", "hookwatch forward"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("--help does not mention %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "exits 0 with nothing on stdout.") {
		t.Errorf("--help says the hook never prints, which a policy's answer contradicts:\n%s", stderr.String())
	}
}

// TestMainVersion: --version prints the version and exits 0 without
// waiting for a payload, and leaves hook.log alone: a person ran it, and
// doctor would report a logged error for a day.
func TestMainVersion(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOOKWATCH_HOME": home}
	for _, args := range [][]string{{"--version"}, {"-version"}, {"hook", "--version"}, {"--version=true"}} {
		var stdout, stderr bytes.Buffer
		// A reader that never ends: a run that waited for a payload would
		// time out after the stdin wait, and log it.
		code := hook.Main(context.Background(), args, blockingReader{}, &stdout, &stderr, func(k string) string { return env[k] }, "1.2.3", nil)
		if code != 0 || stdout.String() != "hookwatch 1.2.3\n" || stderr.Len() != 0 {
			t.Errorf("%q: code %d stdout %q stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "hook.log")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("hook.log written: %q, %v", b, err)
	}
}

// blockingReader is a stdin that never has anything to read.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestMainBadFlagStillRecords(t *testing.T) {
	c := newCollector(t)
	home := t.TempDir()
	env := map[string]string{"HOOKWATCH_HOME": home, "HOOKWATCH_URL": c.srv.URL}
	var stdout, stderr bytes.Buffer
	code := hook.Main(context.Background(), []string{"--bogus"}, bytes.NewReader(preToolUse(t)), &stdout, &stderr, func(k string) string { return env[k] }, "v", nil)
	if code != 0 || stdout.Len() != 0 || stderr.Len() != 0 || len(c.got()) != 1 {
		t.Errorf("bad flag: code %d stdout %q stderr %q delivered %d", code, stdout.String(), stderr.String(), len(c.got()))
	}
}

// TestMainRuntimeAfterSubcommand: `hookwatch-hook hook --runtime codex`
// (the full binary's command line) reads the flag after the subcommand.
func TestMainRuntimeAfterSubcommand(t *testing.T) {
	f := func(args []string, want string) {
		t.Helper()
		c := newCollector(t)
		env := map[string]string{"HOOKWATCH_HOME": t.TempDir(), "HOOKWATCH_URL": c.srv.URL}
		var stdout, stderr bytes.Buffer
		code := hook.Main(context.Background(), args, bytes.NewReader(preToolUse(t)), &stdout, &stderr, func(k string) string { return env[k] }, "v", nil)
		got := c.got()
		if code != 0 || stdout.Len() != 0 || len(got) != 1 || got[0].Runtime != want {
			t.Errorf("%q: code %d stdout %q delivered %+v", args, code, stdout.String(), got)
		}
	}
	f([]string{"hook", "--runtime", "codex"}, event.RuntimeCodex)
	f([]string{"--runtime", "codex"}, event.RuntimeCodex)
	f([]string{"hook"}, event.RuntimeClaudeCode)
	// A runtime the hook does not know is detected, and said in hook.log.
	f([]string{"--runtime", "claude"}, event.RuntimeClaudeCode)
	home := t.TempDir()
	env := map[string]string{"HOOKWATCH_HOME": home, "HOOKWATCH_URL": newCollector(t).srv.URL}
	hook.Main(context.Background(), []string{"--runtime", "claude"}, bytes.NewReader(preToolUse(t)), io.Discard, io.Discard, func(k string) string { return env[k] }, "v", nil)
	if b, _ := os.ReadFile(filepath.Join(home, "hook.log")); !bytes.Contains(b, []byte(`ignoring --runtime \"claude\"`)) && !bytes.Contains(b, []byte(`ignoring --runtime "claude"`)) {
		t.Errorf("hook.log: %s", b)
	}
}

// TestRunFullSpoolAttached: with a collector attached to the spool, a full
// spool makes the hook post instead; every event is delivered one way or
// the other, and none is counted as dropped.
func TestRunFullSpoolAttached(t *testing.T) {
	c := newCollector(t)
	cfg := config(t, c.srv.URL)
	rec := preToolUse(t)
	cfg.SpoolMax = int64(3 * (len(rec) + 600)) // room for a few envelopes
	sp, err := spool.Open(filepath.Join(cfg.Home, "spool"), spool.Options{MaxBytes: cfg.SpoolMax})
	if err != nil {
		t.Fatal(err)
	}
	release, err := sp.Attach(strings.TrimPrefix(c.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for range 20 {
		if res := hook.Run(context.Background(), cfg, bytes.NewReader(rec)); !res.Delivered || res.Err != nil {
			t.Fatalf("Run = %+v", res)
		}
	}
	spooled := 0
	if _, err := sp.Drain(context.Background(), 0, func(recs [][]byte) error { spooled += len(recs); return nil }); err != nil {
		t.Fatal(err)
	}
	// (A hook that posted also drains the spool to the collector.)
	if posted := len(c.got()); posted == 0 || spooled+posted != 20 {
		t.Fatalf("%d spooled and %d posted, want 20 in all, some posted", spooled, posted)
	}
	st, err := sp.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Dropped != 0 || st.Unacknowledged() != 0 {
		t.Fatalf("Stats = %+v: delivered events counted as lost", st)
	}
}

// TestRunArchiveFailure: a PreCompact whose transcript cannot be archived
// is delivered all the same, answers nothing and logs why; with
// HOOKWATCH_ARCHIVE=0 nothing is tried.
func TestRunArchiveFailure(t *testing.T) {
	c := newCollector(t)
	// A real payload: its transcript is on the machine that captured it.
	payload := []byte(`{"session_id":"74975720-1a50-4d17-9463-df6fabfdeb7c","transcript_path":"/nonexistent/.claude/projects/-home-dev-src-demo/74975720-1a50-4d17-9463-df6fabfdeb7c.jsonl","cwd":"/home/dev/src/demo","prompt_id":"33a7efa6-4db2-456c-9ae6-d66d619deff0","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":"keep the notes"}`)
	f := func(archive string, wantLog bool) {
		t.Helper()
		home := t.TempDir()
		cfg, _ := hook.ConfigFromEnv(func(k string) string {
			return map[string]string{"HOOKWATCH_HOME": home, "HOOKWATCH_URL": c.srv.URL, "HOOKWATCH_ARCHIVE": archive}[k]
		})
		res := hook.Run(context.Background(), cfg, bytes.NewReader(payload))
		if !res.Delivered || res.ExitCode != 0 || len(res.Stdout) != 0 {
			t.Fatalf("HOOKWATCH_ARCHIVE=%q: Run = %+v", archive, res)
		}
		lines := logLines(t, home)
		if logged := len(lines) == 1 && strings.Contains(lines[0], "cannot open the transcript"); logged != wantLog {
			t.Errorf("HOOKWATCH_ARCHIVE=%q: hook.log %q", archive, lines)
		}
	}
	f("", true)
	f("0", false)
}

// TestRunForwarder: for a URL the hook cannot post to (https, a host name)
// it appends to the spool. A forwarder attached for that URL makes that
// delivery, quietly; without one the event is spooled, and with autostart
// off the log says no forwarder runs.
func TestRunForwarder(t *testing.T) {
	const url = "https://hookwatch.example.com:8443/"
	for _, u := range []string{url, "http://hookwatch.internal:7421", "HTTPS://10.0.0.5"} {
		if !hook.NeedsForwarder(u) {
			t.Errorf("NeedsForwarder(%q) = false", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:7421", "http://[::1]:80", "ftp://example.com", "https//x"} {
		if hook.NeedsForwarder(u) {
			t.Errorf("NeedsForwarder(%q) = true", u)
		}
	}
	cfg := config(t, url)
	cfg.Autostart = false
	rec := preToolUse(t)
	res := hook.Run(context.Background(), cfg, bytes.NewReader(rec))
	if !res.Spooled || res.Delivered || res.ExitCode != 0 || len(res.Stdout) > 0 {
		t.Fatalf("Run without a forwarder = %+v, want spooled", res)
	}
	if lines := logLines(t, cfg.Home); len(lines) != 1 || !strings.Contains(lines[0], "no forwarder runs") {
		t.Fatalf("hook.log: %q", lines)
	}
	// Another consumer (a local collector) does not take a forwarder's
	// events as delivered.
	sp, release := spooltest.Attach(t, cfg.Home, "127.0.0.1:7421")
	if res := hook.Run(context.Background(), cfg, bytes.NewReader(rec)); !res.Spooled || res.Delivered {
		t.Fatalf("Run beside a collector = %+v, want spooled", res)
	}
	release()
	release, err := sp.Attach(hook.ForwarderAddr(url))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	before := len(logLines(t, cfg.Home))
	if res := hook.Run(context.Background(), cfg, bytes.NewReader(rec)); !res.Delivered || res.Err != nil {
		t.Fatalf("Run with a forwarder = %+v, want delivered", res)
	}
	if after := logLines(t, cfg.Home); len(after) != before {
		t.Fatalf("a delivery through the forwarder logged %q", after[before:])
	}
	n := 0
	if _, err := sp.Drain(context.Background(), 0, func(recs [][]byte) error { n += len(recs); return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("the spool held %d envelopes, want the 3 runs'", n)
	}
}

// TestRunForwarderComingUp runs the real hook binary for a team server's
// https:// URL, as the hooks of a burst run: the first spools its event
// and starts a forwarder; those after it, before the forwarder attaches,
// spool theirs too and log nothing, as a forwarder coming up is no
// failure. A forwarder that cannot start is logged by the hook that tried
// and by those after it.
func TestRunForwarderComingUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook binary")
	}
	built := buildHook(t)
	payload := preToolUse(t)
	// beside returns a hookwatch-hook with, beside it, a hookwatch that
	// exits at once (a forwarder that starts and is not attached yet when
	// the next hook runs) or, if !runs, one that cannot be executed.
	beside := func(runs bool) string {
		dir := t.TempDir()
		b, err := os.ReadFile(built)
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "hookwatch-hook")
		if err := os.WriteFile(bin, b, 0o700); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o600)
		if runs {
			mode = 0o700
		}
		if err := os.WriteFile(filepath.Join(dir, "hookwatch"), []byte("#!/bin/sh\nexit 0\n"), mode); err != nil {
			t.Fatal(err)
		}
		return bin
	}
	run := func(bin, home string) {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "HOOKWATCH_HOME=" + home,
			"HOOKWATCH_URL=https://hookwatch.example.com:8443/"}
		cmd.Stdin = bytes.NewReader(payload)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil || stdout.Len() > 0 {
			t.Fatalf("hook: %v, stdout %q", err, stdout.String())
		}
	}
	spooled := func(home string) int {
		t.Helper()
		sp, err := spool.Open(filepath.Join(home, "spool"), spool.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if _, err := sp.Drain(context.Background(), 0, func(recs [][]byte) error { n += len(recs); return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}

	bin, home := beside(true), t.TempDir()
	for i := 1; i <= 3; i++ {
		run(bin, home)
		if lines := logLines(t, home); len(lines) != 0 {
			t.Fatalf("hook %d, a forwarder coming up: hook.log %q", i, lines)
		}
	}
	if n := spooled(home); n != 3 {
		t.Fatalf("the spool holds %d envelopes, want the 3 hooks'", n)
	}

	bin, home = beside(false), t.TempDir()
	for i := 1; i <= 2; i++ {
		run(bin, home)
		if lines := logLines(t, home); len(lines) != i || !strings.Contains(lines[i-1], "no forwarder runs") {
			t.Fatalf("hook %d, a forwarder that cannot start: hook.log %q", i, lines)
		}
	}
	if lines := logLines(t, home); !strings.Contains(lines[1], "could not be started moments ago") {
		t.Errorf("the hook after a failed start: hook.log %q", lines[1])
	}
}

// TestRunAttachedElsewhere: when nothing answers at the hook's URL but
// this home's collector drains its spool from another address (serve
// --addr without the matching HOOKWATCH_URL), the spool is how the event
// reaches that collector: the hook starts no second collector for the home
// and logs no error for each event (doctor says what to export).
func TestRunAttachedElsewhere(t *testing.T) {
	port, err := deadport.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	cfg := config(t, port.URL())
	cfg.Autostart = true
	sp, _ := spooltest.Attach(t, cfg.Home, "127.0.0.1:7999")
	res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
	if !res.Spooled || res.Err != nil || res.ExitCode != 0 || len(res.Stdout) > 0 {
		t.Fatalf("Run = %+v, want spooled quietly", res)
	}
	if lines := logLines(t, cfg.Home); len(lines) != 0 {
		t.Errorf("hook.log: %q", lines)
	}
	if _, err := os.Stat(filepath.Join(cfg.Home, "autostart.lock")); err == nil {
		t.Error("the hook tried to start a collector beside the home's own")
	}
	n := 0
	if _, err := sp.Drain(context.Background(), 0, func(recs [][]byte) error { n += len(recs); return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("the spool held %d envelopes, want 1", n)
	}
}

// TestRunCollectorComingUp: a hook that finds no collector at its loopback
// URL while another hook of the same burst started one moments ago spools
// its event without logging an error (the collector attaches to the spool
// as it comes up); one whose start failed moments ago is said.
func TestRunCollectorComingUp(t *testing.T) {
	for _, c := range []struct {
		stamp  string
		logged string
	}{{"started\n", ""}, {"failed\n", "could not be started moments ago"}} {
		port, err := deadport.Open()
		if err != nil {
			t.Fatal(err)
		}
		cfg := config(t, port.URL())
		cfg.Autostart = true
		if err := os.WriteFile(filepath.Join(cfg.Home, "autostart.lock"), []byte(c.stamp), 0o600); err != nil {
			t.Fatal(err)
		}
		res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
		port.Close()
		lines := logLines(t, cfg.Home)
		switch {
		case !res.Spooled || res.ExitCode != 0 || len(res.Stdout) > 0:
			t.Errorf("%q: Run = %+v, want spooled", c.stamp, res)
		case c.logged == "" && (res.Err != nil || len(lines) != 0):
			t.Errorf("a collector coming up: Run = %+v, hook.log %q, want nothing said", res, lines)
		case c.logged != "" && (len(lines) != 1 || !strings.Contains(lines[0], "connection refused")):
			t.Errorf("a collector that could not start: hook.log %q, want the refusal said", lines)
		}
	}
}
