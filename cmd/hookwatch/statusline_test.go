package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/spool"
)

// testdata is the absolute path of testdata: tests change directory.
var testdata, _ = filepath.Abs("testdata")

// statuslinePayload is a real statusLine payload of Claude Code 2.1.268.
func statuslinePayload(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, "statusline-2.1.268.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const statuslineSession = "b99e7a1f-b52d-42f8-b3db-7858547ccca7"

func TestStatuslineRecordsAndPrints(t *testing.T) {
	newTestEnv(t)
	c := newTestCollector(t)
	c.setAgents(`{"agents":[
		{"agent_id":"","agent_type":null,"started_at":"2026-09-01T10:00:00Z","stopped_at":null},
		{"agent_id":"a1","agent_type":"Explore","started_at":"2026-09-01T10:00:01Z","stopped_at":null},
		{"agent_id":"a2","agent_type":"Plan","started_at":"2026-09-01T10:00:02Z"},
		{"agent_id":"a3","agent_type":"Explore","started_at":"2026-09-01T10:00:03Z","stopped_at":"2026-09-01T10:00:09Z"}]}`)
	out, errOut, err := hw(t, statuslinePayload(t), "statusline")
	if err != nil || errOut != "" {
		t.Fatalf("statusline: %v, stderr %q", err, errOut)
	}
	// The agents count is best effort (100 ms): accept the line without it
	// on a loaded machine, but never another line.
	want := "ctx 5% · $0.18 · Opus 5 · 2 agents running\n"
	if out != want && out != "ctx 5% · $0.18 · Opus 5\n" {
		t.Fatalf("statusline printed %q, want %q", out, want)
	}
	evs := c.session(t, statuslineSession)
	if len(evs) != 1 {
		t.Fatalf("collector stored %d events of the session, want 1", len(evs))
	}
	if ev := evs[0]; ev.Kind != "statusline" || ev.Event != "StatusLine" || !gjson.GetBytes(ev.Envelope, "payload.context_window.used_percentage").Exists() {
		t.Fatalf("stored event kind %q, event %q, envelope %s", ev.Kind, ev.Event, ev.Envelope)
	}
}

// TestStatuslineTokenFile: the status line asks a team collector with the
// token the hook sends, read from the home's token file when
// HOOKWATCH_TOKEN is not set.
func TestStatuslineTokenFile(t *testing.T) {
	e := newTestEnv(t)
	c := newTestCollectorToken(t, "team-secret")
	t.Setenv("HOOKWATCH_TOKEN", "")
	if err := os.MkdirAll(e.hwHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.hwHome, hook.TokenFile), []byte("team-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The agents count is best effort (100 ms): on a loaded machine a run
	// may give up before its request arrives, so try a few.
	for range 5 {
		if _, _, err := hw(t, statuslinePayload(t), "statusline"); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		auth := c.agentsAuth
		c.mu.Unlock()
		if auth != "" {
			if auth != "Bearer team-secret" {
				t.Fatalf("agents asked with Authorization %q, want the token file's", auth)
			}
			return
		}
	}
	t.Fatal("the status line never asked the collector for the running agents")
}

func TestStatuslineSpoolsWhenCollectorDown(t *testing.T) {
	e := newTestEnv(t)
	out, _, err := hw(t, statuslinePayload(t), "statusline")
	if err != nil || out != "ctx 5% · $0.18 · Opus 5\n" {
		t.Fatalf("statusline: %q, %v", out, err)
	}
	sp, err := spool.Open(filepath.Join(e.hwHome, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sp.Stats()
	if err != nil || st.PendingBytes == 0 {
		t.Fatalf("spool stats %+v, %v: want the snapshot spooled", st, err)
	}
}

func TestStatuslineWrap(t *testing.T) {
	newTestEnv(t)
	out, _, err := hw(t, statuslinePayload(t), "statusline", "--wrap", `printf 'mine: %s\n' "$(grep -o '"version":"[^"]*"')"`)
	if err != nil {
		t.Fatal(err)
	}
	want := "mine: \"version\":\"2.1.268\"\nctx 5% · $0.18 · Opus 5\n"
	if out != want {
		t.Fatalf("statusline --wrap printed %q, want %q", out, want)
	}
	// A failing wrapped command costs only its own output.
	out, _, err = hw(t, statuslinePayload(t), "statusline", "--wrap", "exit 3")
	if err != nil || out != "ctx 5% · $0.18 · Opus 5\n" {
		t.Fatalf("statusline --wrap 'exit 3': %q, %v", out, err)
	}
}

func TestStatuslineBadPayload(t *testing.T) {
	e := newTestEnv(t)
	f := func(stdin string, args ...string) {
		t.Helper()
		out, errOut, err := hw(t, stdin, append([]string{"statusline"}, args...)...)
		if err != nil || out != "\n" || errOut != "" {
			t.Fatalf("statusline %v < %q: stdout %q, stderr %q, err %v; want one empty line", args, stdin, out, errOut, err)
		}
	}
	f("")
	f("not json")
	f("[1,2]")
	f(`{"session_id": 7}`)
	f(`{"cost": "free", "model": 5, "context_window": {"used_percentage": "x"}}`)
	f(`{"cost": {"total_cost_usd": -1}}`)
	f(`{"context_window": null}`, "--unknown-flag")
	// With the collector down, whatever was recorded is in the spool: only
	// payloads that look like a statusLine.
	sp, err := spool.Open(filepath.Join(e.hwHome, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := sp.Drain(context.Background(), 100, func(recs [][]byte) error {
		for _, r := range recs {
			p := gjson.GetBytes(r, "payload")
			if gjson.GetBytes(r, "kind").String() != "statusline" || !p.Get("cost").Exists() && !p.Get("context_window").Exists() {
				t.Errorf("spooled an envelope for a payload that is not a statusLine: %s", r)
			}
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("drained %d envelopes (%v), want the 3 statusLine-shaped payloads", n, err)
	}
}

// TestStatuslineByHand: run with a terminal on stdin, as a person trying
// it does, the statusline says on stderr what it waits for; fed through a
// pipe, as Claude Code feeds it, it says nothing there
// (TestStatuslineBadPayload), nor with stdin at /dev/null, as a script or
// a service may run it, whatever its flags.
func TestStatuslineByHand(t *testing.T) {
	newTestEnv(t)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, args := range [][]string{{"statusline"}, {"statusline", "--bogus"}} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, null, &out, &errOut); err != nil || out.String() != "\n" || errOut.String() != "" {
			t.Errorf("%v < /dev/null: stdout %q, stderr %q, %v; want one empty line and nothing on stderr", args, out.String(), errOut.String(), err)
		}
	}
	tty, ptmx := openPTY(t)
	// A person who has nothing to paste ends the input with Ctrl-D.
	if _, err := ptmx.Write([]byte{4}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"statusline"}, tty, &out, &errOut); err != nil || out.String() != "\n" ||
		!strings.Contains(errOut.String(), "reads the JSON Claude Code gives a statusLine command on stdin") {
		t.Fatalf("statusline at a terminal: stdout %q, stderr %q, %v", out.String(), errOut.String(), err)
	}
}

func TestStatusLineText(t *testing.T) {
	f := func(payload string, agents int, want string) {
		t.Helper()
		if got := statusLine(gjson.Parse(payload), agents); got != want {
			t.Fatalf("statusLine(%s, %d) = %q, want %q", payload, agents, got, want)
		}
	}
	f(`{}`, -1, "")
	f(`{"context_window":{"used_percentage":41.6}}`, 0, "ctx 42%")
	f(`{"context_window":{"used_percentage":null,"context_window_size":200000,"current_usage":{"input_tokens":1000,"cache_read_input_tokens":19000}}}`, -1, "ctx 10%")
	f(`{"context_window":{"used_percentage":null,"current_usage":null}}`, -1, "")
	f(`{"context_window":{"used_percentage":250}}`, -1, "ctx 100%")
	f(`{"cost":{"total_cost_usd":0.305}}`, -1, "$0.30")
	f(`{"cost":{"total_cost_usd":12}}`, 1, "$12.00 · 1 agent running")
	f(`{"model":{"id":"claude-opus-5[1m]","display_name":"Opus 5 (1M context)"}}`, -1, "Opus 5")
	f(`{"model":{"id":"claude-sonnet-5"}}`, -1, "claude-sonnet-5")
	f(`{"model":"haiku"}`, -1, "haiku")
	f(`{"model":{"display_name":"Evil\u001b[2J\u0007 Model"}}`, -1, "Evil[2J Model")
	f(`{"model":{"display_name":"`+strings.Repeat("m", 100)+`"}}`, -1, strings.Repeat("m", 39)+"…")
}

func FuzzStatusLine(f *testing.F) {
	f.Add([]byte(`{"context_window":{"used_percentage":5},"cost":{"total_cost_usd":0.1},"model":{"display_name":"Opus 5 (1M context)"}}`))
	f.Add([]byte(`{"model":{"display_name":" ("}}`))
	f.Add([]byte(`{"context_window":{"context_window_size":1e-300,"current_usage":{"input_tokens":1e300}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		line := statusLine(gjson.ParseBytes(b), 3)
		if strings.ContainsAny(line, "\n\r\x1b") {
			t.Fatalf("line %q holds a control character", line)
		}
	})
}
