package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/hook"
)

// serveInProcess runs `hookwatch serve` in this process on a free port,
// with the extra flags given, and returns its URL; it stops when the test
// ends.
func serveInProcess(t *testing.T, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &serveOutput{line: make(chan string, 1)}
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...), nil, out, &stderr)
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case line := <-out.line:
		url := servedURL(line)
		return url
	case err := <-done:
		t.Fatalf("serve exited: %v %s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve printed no address")
	}
	return ""
}

// collectorIn points HOOKWATCH_HOME at home, clears what would name another
// database, token or address, starts a collector in process with flags and
// points HOOKWATCH_URL at it; it returns that URL.
func collectorIn(t *testing.T, home string, flags ...string) string {
	t.Helper()
	t.Setenv("HOOKWATCH_HOME", home)
	for _, k := range []string{"HOOKWATCH_DB", "HOOKWATCH_TOKEN", "HOOKWATCH_ADDR"} {
		t.Setenv(k, "")
	}
	base := serveInProcess(t, flags...)
	t.Setenv("HOOKWATCH_URL", base)
	return base
}

// collectorWithToken is collectorIn for a collector that requires a token
// (HOOKWATCH_TOKEN) which the shell, left with none, does not give.
func collectorWithToken(t *testing.T, home string) string {
	t.Helper()
	t.Setenv("HOOKWATCH_HOME", home)
	t.Setenv("HOOKWATCH_DB", "")
	t.Setenv("HOOKWATCH_ADDR", "")
	t.Setenv("HOOKWATCH_TOKEN", "the-collector's-own")
	base := serveInProcess(t)
	t.Setenv("HOOKWATCH_URL", base)
	t.Setenv("HOOKWATCH_TOKEN", "")
	return base
}

// getJSON decodes the answer of GET base+path into v.
func getJSON(t *testing.T, base, path string, v any) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// TestDemo plays the demo into a real collector and finds, through its API,
// what the demo promises: a tree of agents three deep with parallel
// subagents, a failed call, a denied call and a compaction.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	base := collectorIn(t, filepath.Join(dir, "home"))

	start := time.Now()
	out := mustHW(t, "demo", "--speed", "20")
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("demo --speed 20 took %v", took)
	}
	i := strings.Index(out, base+"/#/s/")
	if i < 0 || strings.Contains(out, "started one") {
		t.Fatalf("demo output names no dashboard link, or started a collector although one ran:\n%s", out)
	}
	id, _, _ := strings.Cut(out[i+len(base+"/#/s/"):], "\n")
	for _, want := range []string{"FAILED", "DENIED", "compacted", "(depth 3)"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output does not tell %q:\n%s", want, out)
		}
	}

	var agents struct {
		Agents []struct {
			AgentID       string  `json:"agent_id"`
			AgentType     *string `json:"agent_type"`
			ParentAgentID *string `json:"parent_agent_id"`
			Depth         int     `json:"depth"`
		} `json:"agents"`
	}
	getJSON(t, base, "/v1/sessions/"+id+"/agents", &agents)
	parent := map[string]string{}
	maxDepth, underMain := 0, 0
	for _, a := range agents.Agents {
		if a.ParentAgentID != nil {
			parent[a.AgentID] = *a.ParentAgentID
		}
		maxDepth = max(maxDepth, a.Depth)
		if a.AgentID != "" && a.ParentAgentID != nil && *a.ParentAgentID == "" && a.AgentType != nil && *a.AgentType != "" {
			underMain++
		}
	}
	if maxDepth != 3 || underMain < 3 {
		t.Fatalf("agents: deepest at %d, %d subagents under the main agent; want depth 3 and at least 3 in parallel: %+v", maxDepth, underMain, agents.Agents)
	}
	for _, a := range agents.Agents {
		if a.Depth == 3 {
			// The chain: depth 3 → 2 → 1 → main.
			chain, cur := 0, a.AgentID
			for cur != "" && chain < 5 {
				cur = parent[cur]
				chain++
			}
			if chain != 3 || cur != "" {
				t.Errorf("agent %s at depth 3 has a chain of %d parents to %q", a.AgentID, chain, cur)
			}
		}
	}

	var calls struct {
		ToolCalls []struct {
			ToolName string          `json:"tool_name"`
			Status   string          `json:"status"`
			Decision json.RawMessage `json:"decision"`
		} `json:"tool_calls"`
	}
	getJSON(t, base, "/v1/sessions/"+id+"/tool-calls", &calls)
	status := map[string]int{}
	for _, c := range calls.ToolCalls {
		status[c.Status]++
	}
	if status["error"] != 1 || status["denied"] != 1 || status["ok"] < 20 {
		t.Fatalf("tool call statuses %v, want 1 error, 1 denied and the rest ok", status)
	}

	var ses struct {
		Status      string `json:"status"`
		Compactions []any  `json:"compactions"`
		Counts      struct {
			Subagents, Failures, Denials, Compactions int
		} `json:"counts"`
	}
	getJSON(t, base, "/v1/sessions/"+id, &ses)
	if ses.Status != "ended" || len(ses.Compactions) != 1 || ses.Counts.Compactions != 1 || ses.Counts.Failures != 1 || ses.Counts.Denials != 1 {
		t.Fatalf("session %s: %+v", id, ses)
	}
	var list struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	getJSON(t, base, "/v1/sessions", &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id {
		t.Fatalf("session list %+v, want the demo's session", list.Sessions)
	}
}

// TestDemoNoStart: with no collector and --no-start, demo says how to start
// one and starts nothing.
// TestDemoAnotherHome: a collector answering at HOOKWATCH_URL that is
// another home's takes the demo into that home's database: demo says so,
// and says how to run this home's; played from that home, it says nothing.
func TestDemoAnotherHome(t *testing.T) {
	dir := t.TempDir()
	theirs := filepath.Join(dir, "theirs")
	collectorIn(t, theirs)
	mine := filepath.Join(dir, "mine")
	t.Setenv("HOOKWATCH_HOME", mine)
	if out := mustHW(t, "demo", "--speed", "1000"); !strings.Contains(out, "the collector of another HOOKWATCH_HOME, not of "+mine) || !strings.Contains(out, "hookwatch serve --addr") {
		t.Errorf("demo into another home's collector:\n%s", out)
	}
	t.Setenv("HOOKWATCH_HOME", theirs)
	if out := mustHW(t, "demo", "--speed", "1000"); strings.Contains(out, "another HOOKWATCH_HOME") {
		t.Errorf("demo into its own home's collector:\n%s", out)
	}
}

func TestDemoNoStart(t *testing.T) {
	newTestEnv(t) // HOOKWATCH_URL is a closed port
	_, _, err := hw(t, "", "demo", "--no-start")
	addr := strings.TrimPrefix(os.Getenv("HOOKWATCH_URL"), "http://")
	if err == nil || !strings.Contains(err.Error(), "start one with 'hookwatch serve --addr "+addr+"'") {
		t.Fatalf("demo --no-start without a collector at %s: %v", addr, err)
	}
	for _, speed := range []string{"0", "1e-300", "0.009", "NaN", "1001"} {
		if _, _, err := hw(t, "", "demo", "--speed", speed); err == nil {
			t.Errorf("demo --speed %s accepted", speed)
		}
	}
}

// TestStartElsewhereDown: when no collector answers at a URL (HOOKWATCH_URL
// or the one install kept) that is not this machine's http:// loopback (a team server down, a
// wrong URL), the commands that would start one say that none answers
// there and what to check, and start nothing.
func TestStartElsewhereDown(t *testing.T) {
	projects := filepath.Join(t.TempDir(), "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	e := newTestEnv(t)
	dead := deadPort(t)
	base := "https://" + dead.Addr()
	// The URL named by where it comes from: HOOKWATCH_URL, else the URL
	// install kept.
	for _, kept := range []bool{false, true} {
		t.Setenv("HOOKWATCH_URL", base)
		from := "HOOKWATCH_URL"
		if kept {
			t.Setenv("HOOKWATCH_URL", "")
			from = "the URL kept by 'hookwatch install --url'"
			os.MkdirAll(e.hwHome, 0o700)
			if err := os.WriteFile(filepath.Join(e.hwHome, hook.URLFile), []byte(base+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		want := "no collector answers at " + base + " (" + from + "), and only one at http://<loopback address>:<port> can be started here: " +
			"check that the collector at that URL runs, and that the URL is right: " + pointHint
		for _, args := range [][]string{{"demo", "--speed", "1000"}, {"import", projects}, {"doctor", "--start"}} {
			out, _, err := hw(t, "", args...)
			if err == nil || err.Error() != want {
				t.Errorf("%s with no collector at %s: %v\nwant %s", strings.Join(args, " "), base, err, want)
			}
			if out != "" {
				t.Errorf("%s printed, then failed:\n%s", strings.Join(args, " "), out)
			}
		}
		if exists(filepath.Join(os.Getenv("HOOKWATCH_HOME"), "serve.log")) {
			t.Error("a collector was started")
		}
	}
}

// TestStartTunnelDown: a home holding a team server's token, whose hooks
// send to a URL on this machine (an SSH tunnel to the server) that nothing
// answers: the commands that would start a collector there start none, as
// the hooks start none, and say the address is the team server's, whether
// the token is read from the file or from HOOKWATCH_TOKEN exported from it.
func TestStartTunnelDown(t *testing.T) {
	projects := filepath.Join(t.TempDir(), "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	e := newTestEnv(t) // HOOKWATCH_URL is a closed port on loopback
	base := os.Getenv("HOOKWATCH_URL")
	if err := os.MkdirAll(e.hwHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.hwHome, hook.TokenFile), []byte("hwt_team\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, exported := range []string{"", "hwt_team"} {
		t.Setenv("HOOKWATCH_TOKEN", exported)
		for _, args := range [][]string{{"demo", "--speed", "1000"}, {"import", projects}, {"doctor", "--start"}} {
			out, _, err := hw(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), "no collector answers at "+base) || !strings.Contains(err.Error(), "open the tunnel to the server") ||
				strings.Contains(err.Error(), "hookwatch serve") {
				t.Errorf("%s with a team server's token (HOOKWATCH_TOKEN %q) and nothing at %s: %v", strings.Join(args, " "), exported, base, err)
			}
			if out != "" {
				t.Errorf("%s printed, then failed:\n%s", strings.Join(args, " "), out)
			}
		}
		if exists(filepath.Join(e.hwHome, "serve.log")) {
			t.Fatal("a collector was started at the team server's address")
		}
	}
	// A token of its own in HOOKWATCH_TOKEN is no team server's: a local
	// collector may require it, and the hint starts one.
	t.Setenv("HOOKWATCH_TOKEN", "hwt_mine")
	if got := startHint(base); !strings.Contains(got, "start one with 'hookwatch serve") {
		t.Errorf("startHint with a token of its own: %q", got)
	}
}

// TestHomeCollectorElsewhere: when nothing answers at the URL the hooks
// send to (HOOKWATCH_URL mistyped, say) while this home's collector runs at
// another address, the commands that would start one, or ask it, say where
// it runs and how to point them at it — no collector of the home can start
// beside it, so "start one" would only fail.
func TestHomeCollectorElsewhere(t *testing.T) {
	projects := filepath.Join(t.TempDir(), "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	newTestEnv(t)
	running := serveInProcess(t)
	dead := deadPort(t)
	t.Setenv("HOOKWATCH_URL", dead.URL())
	want := "this home's collector runs at " + running
	fix := "unset HOOKWATCH_URL (in the profile Claude Code starts from too), then hookwatch install --url " + running
	for _, args := range [][]string{
		{"demo", "--speed", "1000"}, {"demo", "--no-start"},
		{"import", projects}, {"import", "--no-start", projects},
		{"doctor", "--start"},
		{"sessions", "diff", "a", "b"},
	} {
		out, _, err := hw(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fix) ||
			strings.Contains(err.Error(), "start one with") || strings.Contains(err.Error(), "then hookwatch serve") {
			t.Errorf("%s with this home's collector at %s and HOOKWATCH_URL %s: %v\nwant it to say %q and %q", strings.Join(args, " "), running, dead.URL(), err, want, fix)
		}
		if out != "" {
			t.Errorf("%s printed, then failed:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestStartHomeUnusable: a command that starts a collector for a
// HOOKWATCH_HOME it cannot create says which directory, the variable and
// the way out, as serve does, before starting anything.
func TestStartHomeUnusable(t *testing.T) {
	newTestEnv(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(file, "home")
	t.Setenv("HOOKWATCH_HOME", home)
	for _, args := range [][]string{{"demo", "--speed", "1000"}, {"doctor", "--start"}} {
		out, _, err := hw(t, "", args...)
		for _, w := range []string{"cannot create the data directory " + home + " (HOOKWATCH_HOME)", "set HOOKWATCH_HOME to a directory you can write in"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s with HOOKWATCH_HOME=%s: %v, want an error saying %q", strings.Join(args, " "), home, err, w)
			}
		}
		if out != "" {
			t.Errorf("%s printed, then failed:\n%s", strings.Join(args, " "), out)
		}
	}
}

// occupiedAddr returns a loopback address another program holds until the
// test ends: it takes connections and closes them, so nothing answers
// /healthz there and serve cannot listen there.
func occupiedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestStartFailsAtOnce: a collector the command starts that cannot run
// (its address taken by another program) is reported at once, with the
// reason serve gave, not after the wait for an answer with a pointer to a
// log file.
func TestStartFailsAtOnce(t *testing.T) {
	newTestEnv(t)
	t.Setenv("HOOKWATCH_URL", "http://"+occupiedAddr(t))
	start := time.Now()
	out, _, err := hw(t, "", "demo", "--speed", "1000")
	if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "--addr") {
		t.Fatalf("demo with the address taken: %v\n%s", err, out)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("demo took %v to say that serve could not start", took)
	}
}

// TestStartIgnoresAddr: demo, import and doctor --start, starting a
// collector for the hooks, say in one line that it listens at the hooks'
// URL's address, not at a HOOKWATCH_ADDR set to another (or to the port
// on every address), and how to use that one; nothing when HOOKWATCH_ADDR
// is the URL's address. The collector cannot start here (another program
// holds the address), which shows the line is said before the start,
// whatever comes of it.
func TestStartIgnoresAddr(t *testing.T) {
	projects := filepath.Join(t.TempDir(), "projects")
	copyDir(t, "../../importer/testdata/parallel/projects", projects)
	newTestEnv(t)
	addr := occupiedAddr(t)
	t.Setenv("HOOKWATCH_URL", "http://"+addr)
	want := "HOOKWATCH_ADDR=127.0.0.1:1 is not used: the collector started for the hooks listens on " + addr + ", the address of their URL (HOOKWATCH_URL); " +
		"to have them send to 127.0.0.1:1 instead: unset HOOKWATCH_URL (in the profile Claude Code starts from too), then hookwatch install --url http://127.0.0.1:1, or unset HOOKWATCH_ADDR\n"
	_, port, _ := net.SplitHostPort(addr)
	every := "0.0.0.0:" + port
	wantEvery := "HOOKWATCH_ADDR=" + every + " is not used: the collector started for the hooks listens on " + addr + " only, the address of their URL (HOOKWATCH_URL); " +
		"to listen on " + every + ": hookwatch stop, then hookwatch serve\n"
	for _, set := range []string{"127.0.0.1:1", every, addr} {
		t.Setenv("HOOKWATCH_ADDR", set)
		for _, args := range [][]string{{"demo", "--speed", "1000"}, {"import", projects}, {"doctor", "--start"}} {
			out, errOut, err := hw(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), "address already in use") {
				t.Fatalf("%s with the address taken: %v\n%s", strings.Join(args, " "), err, out)
			}
			said := out
			if args[0] == "import" {
				said = errOut // where it says it started one
			}
			switch {
			case set == addr && strings.Contains(out+errOut, "HOOKWATCH_ADDR"):
				t.Errorf("%s with HOOKWATCH_ADDR=%s, the URL's address: said\n%s%s", strings.Join(args, " "), set, out, errOut)
			case set == every && said != wantEvery:
				t.Errorf("%s with HOOKWATCH_ADDR=%s: said\n%q\nwant\n%q", strings.Join(args, " "), set, said, wantEvery)
			case set == "127.0.0.1:1" && said != want:
				t.Errorf("%s with HOOKWATCH_ADDR=%s: said\n%q\nwant\n%q", strings.Join(args, " "), set, said, want)
			}
		}
	}
}

// TestStartHint: the command a message gives to start the collector
// HOOKWATCH_URL names listens where that URL reaches it.
func TestStartHint(t *testing.T) {
	f := func(addrEnv, base, want string) {
		t.Helper()
		t.Setenv("HOOKWATCH_ADDR", addrEnv)
		if got := startHint(base); got != want {
			t.Errorf("HOOKWATCH_ADDR=%q: startHint(%s) = %q, want %q", addrEnv, base, got, want)
		}
	}
	f("", "http://127.0.0.1:7421", "start one with 'hookwatch serve'")
	f("", "http://127.0.0.1:7499", "start one with 'hookwatch serve --addr 127.0.0.1:7499'")
	f("127.0.0.1:7499", "http://127.0.0.1:7499", "start one with 'hookwatch serve'")
	f("127.0.0.1:7499", "http://127.0.0.1:7421", "start one with 'hookwatch serve --addr 127.0.0.1:7421'")
	f("", "http://[::1]:7421", "start one with 'hookwatch serve --addr [::1]:7421'")
	f("", "https://hookwatch.example.com", "check that the collector at that URL runs, and that the URL is right: "+pointHint)
	f("", "http://10.0.0.5:7421", "check that the collector at that URL runs, and that the URL is right: "+pointHint)
}

// TestDemoTokenRefused: a collector that requires a token the shell does
// not give is said so, with how to give one, and no link to a session it
// will not record is printed.
func TestDemoTokenRefused(t *testing.T) {
	collectorWithToken(t, filepath.Join(t.TempDir(), "home"))
	out, _, err := hw(t, "", "demo", "--speed", "1000")
	if err == nil || !strings.Contains(err.Error(), "requires a token, and none was given") || !strings.Contains(err.Error(), "hookwatch install --token-file FILE") {
		t.Fatalf("demo into a collector that requires a token: %v", err)
	}
	if out != "" {
		t.Errorf("demo printed, then failed:\n%s", out)
	}
}
