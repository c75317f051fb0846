package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hookwatch/hookwatch/decision"
)

func TestQuotaPerSession(t *testing.T) {
	set := loadYAML(t, `rules:
  - id: bash-3
    tool: Bash
    quota: {limit: 3, per: [session]}
    action: deny
    reason: 3 Bash calls per session
  - id: agent-types
    tool: Bash
    quota: {limit: 1, per: [agent_type, tool]}
    context: first Bash call of this agent type
    mode: audit
`)
	st := MemoryState()
	call := func(session, agentType string) decision.Decision {
		p := pick(t, "PreToolUse", "Bash", "main")
		p["session_id"] = session
		if agentType != "" {
			p["agent_id"], p["agent_type"] = "a1", agentType
		}
		return set.Evaluate(context.Background(), p, st)
	}
	for i := 1; i <= 3; i++ {
		if d := call("s1", ""); d.Verdict != decision.None {
			t.Fatalf("call %d denied: %q", i, d.Reasons)
		}
	}
	for i := 0; i < 2; i++ {
		if d := call("s1", ""); d.Verdict != decision.Deny || d.Reason() != "3 Bash calls per session" {
			t.Fatalf("4th call: %v", d.Verdict)
		}
	}
	if d := call("s2", "Explore"); d.Verdict != decision.None {
		t.Fatal("another session has its own count")
	}
	counts, err := st.Counts()
	if err != nil {
		t.Fatal(err)
	}
	// Denied calls are not counted; audit-mode quota rules count too.
	want := map[string]int64{
		"bash-3|session=s1":                        3,
		"bash-3|session=s2":                        1,
		"agent-types|agent_type=|tool=Bash":        3,
		"agent-types|agent_type=Explore|tool=Bash": 1,
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
}

func TestQuotaSlidingWindow(t *testing.T) {
	set := loadYAML(t, `rules:
  - id: fetch-rate
    tool: WebFetch
    quota: {limit: 2, window: 1m}
    action: deny
    reason: at most 2 fetches a minute
`)
	st := MemoryState()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	st.Clock = func() time.Time { return now }
	p := pick(t, "PreToolUse", "WebFetch", "")
	f := func(at time.Duration, want decision.Verdict) {
		t.Helper()
		now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).Add(at)
		if d := set.Evaluate(context.Background(), p, st); d.Verdict != want {
			t.Fatalf("at +%v: %v, want %v", at, d.Verdict, want)
		}
	}
	f(0, decision.None)
	f(10*time.Second, decision.None)
	f(20*time.Second, decision.Deny)
	f(59*time.Second, decision.Deny)
	f(61*time.Second, decision.None) // the first call left the window
	f(62*time.Second, decision.Deny)
	f(130*time.Second, decision.None)
}

func TestQuotaNoState(t *testing.T) {
	set := loadYAML(t, `rules:
  - {id: open, tool: Bash, quota: {limit: 1}, action: deny}
  - {id: closed, tool: Bash, quota: {limit: 1}, action: deny, on_error: closed}
`)
	d := set.Evaluate(context.Background(), pick(t, "PreToolUse", "Bash", "main"), nil)
	a := d.Audit()
	if d.Verdict != decision.Deny || len(a.Rules) != 2 || a.Rules[0].Error == "" || !a.Rules[1].Enforced {
		t.Fatalf("%v %+v", d.Verdict, a)
	}
}

// TestQuotaFileState runs hook-like evaluations, each with its own State on
// the same directory (as separate processes would), concurrently: the flock
// must make every count land.
func TestQuotaFileState(t *testing.T) {
	dir := t.TempDir()
	set := loadYAML(t, `rules:
  - id: count-all
    tool: Bash
    quota: {limit: 1000, per: [session]}
    action: deny
  - id: edits-5
    tool: Edit
    quota: {limit: 5, window: 1h}
    action: deny
`)
	p := pick(t, "PreToolUse", "Bash", "main")
	const workers, each = 4, 10
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				d := set.Evaluate(context.Background(), p, OpenState(dir))
				if d.Verdict != decision.None || len(d.SystemMessages) > 0 {
					t.Errorf("unexpected %+v", d)
				}
			}
		}()
	}
	wg.Wait()
	counts, err := OpenState(dir).Counts()
	if err != nil {
		t.Fatal(err)
	}
	if got := counts["count-all|session="+p["session_id"].(string)]; got != workers*each {
		t.Fatalf("count %d, want %d", got, workers*each)
	}

	edit := pick(t, "PreToolUse", "Edit", "main")
	for i := 0; i < 7; i++ {
		d := set.Evaluate(context.Background(), edit, OpenState(dir))
		if want := i >= 5; (d.Verdict == decision.Deny) != want {
			t.Fatalf("edit %d: %v", i, d.Verdict)
		}
	}

	// A corrupt file starts afresh instead of breaking the hook.
	if err := os.WriteFile(filepath.Join(dir, "quota.json"), []byte("{nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := set.Evaluate(context.Background(), edit, OpenState(dir)); d.Verdict != decision.None {
		t.Fatalf("after corruption: %v", d.Verdict)
	}
	// An unusable directory fails per on_error (open here), with a note.
	bad := filepath.Join(dir, "quota.json", "sub")
	d := set.Evaluate(context.Background(), edit, OpenState(bad))
	if d.Verdict != decision.None || d.Audit() == nil || d.Audit().Rules[0].Error == "" {
		t.Fatalf("bad dir: %+v", d)
	}
}

func TestQuotaPrune(t *testing.T) {
	st := MemoryState()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.Clock = func() time.Time { return now }
	if err := st.begin(); err != nil {
		t.Fatal(err)
	}
	st.end([]quotaHit{{key: "old"}, {key: "win", window: time.Minute, keep: 2}}, true)
	now = now.Add(2 * time.Minute)
	if err := st.begin(); err != nil {
		t.Fatal(err)
	}
	st.end([]quotaHit{{key: "new"}}, true)
	counts, _ := st.Counts()
	if _, ok := counts["win"]; ok || counts["old"] != 1 || counts["new"] != 1 {
		t.Fatalf("after 2m: %v", counts)
	}
	now = now.Add(31 * 24 * time.Hour)
	if err := st.begin(); err != nil {
		t.Fatal(err)
	}
	st.end([]quotaHit{{key: "new"}}, true)
	counts, _ = st.Counts()
	if len(counts) != 1 || counts["new"] != 2 {
		t.Fatalf("after 31d: %v", counts)
	}
}

// TestQuotaPerAgent: per agent means per agent instance of a session: the
// main agent of each session has its own budget, as has each subagent, even
// one whose id another session's subagent had.
func TestQuotaPerAgent(t *testing.T) {
	set := loadYAML(t, `rules:
  - id: one-bash
    tool: Bash
    quota: {limit: 1, per: [agent]}
    action: deny
    reason: one Bash per agent
`)
	st := MemoryState()
	call := func(session, agentID string) decision.Verdict {
		p := pick(t, "PreToolUse", "Bash", "main")
		p["session_id"] = session
		delete(p, "agent_id")
		delete(p, "agent_type")
		if agentID != "" {
			p["agent_id"], p["agent_type"] = agentID, "Explore"
		}
		return set.Evaluate(context.Background(), p, st).Verdict
	}
	f := func(session, agentID string, want decision.Verdict) {
		t.Helper()
		if got := call(session, agentID); got != want {
			t.Errorf("session %s agent %q: %v, want %v", session, agentID, got, want)
		}
	}
	f("s1", "", decision.None)
	f("s1", "", decision.Deny)
	f("s2", "", decision.None) // another session's main agent
	f("s1", "a1", decision.None)
	f("s1", "a1", decision.Deny)
	f("s2", "a1", decision.None) // the same id in another session
	counts, err := st.Counts()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"one-bash|agent=s1/": 1, "one-bash|agent=s2/": 1, "one-bash|agent=s1/a1": 1, "one-bash|agent=s2/a1": 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
}
