package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hookwatch/hookwatch/event"
	"github.com/hookwatch/hookwatch/hook"
	"github.com/hookwatch/hookwatch/hooksock"
	"github.com/hookwatch/hookwatch/internal/testbin"
	"github.com/hookwatch/hookwatch/spool"
)

// answering serves the hook socket of cfg's home with answer, recording the
// requests. It is the socket side of a collector, without the engine.
func answering(t *testing.T, cfg hook.Config, answer hooksock.Handler) func() []hooksock.Request {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cfg.Home, "policy.yaml"), []byte("rules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := hooksock.Listen(hooksock.Path(cfg.Home))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reqs []hooksock.Request
	s.Serve(func(r hooksock.Request) hooksock.Reply {
		mu.Lock()
		reqs = append(reqs, r)
		mu.Unlock()
		return answer(r)
	}, func(error) {})
	t.Cleanup(func() { s.Close() })
	return func() []hooksock.Request { mu.Lock(); defer mu.Unlock(); return reqs }
}

// spooled returns the envelopes in cfg's spool.
func spooled(t *testing.T, cfg hook.Config) []event.Envelope {
	t.Helper()
	sp, err := spool.Open(filepath.Join(cfg.Home, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Envelope
	_, err = sp.Drain(context.Background(), 100, func(recs [][]byte) error {
		for _, r := range recs {
			var e event.Envelope
			if err := json.Unmarshal(r, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRunAsksTheLocalCollector: with a policy file in force, the hook asks
// the collector on the home's socket, naming the project policy it located,
// answers the agent with the reply, and — the reply naming the collector at
// its URL — hands the event over through the spool with the audit record.
func TestRunAsksTheLocalCollector(t *testing.T) {
	url := testbin.DeadURL(t) // the collector's HTTP side is not needed
	cfg := config(t, url)
	cfg.ProjectDir = t.TempDir()
	asked := answering(t, cfg, func(r hooksock.Request) hooksock.Reply {
		return hooksock.Reply{Addr: strings.TrimPrefix(url, "http://"), Code: 2, Audit: json.RawMessage(`{"action":"block","rule_ids":["r1"]}`), Stdout: []byte("blocked by r1")}
	})
	payload := preToolUse(t)
	res := hook.Run(context.Background(), cfg, bytes.NewReader(payload))
	if res.ExitCode != 2 || string(res.Stdout) != "blocked by r1" || !res.Delivered || res.Spooled || res.Err != nil {
		t.Fatalf("Run = %+v", res)
	}
	reqs := asked()
	if len(reqs) != 1 {
		t.Fatalf("the collector was asked %d times", len(reqs))
	}
	// The payload's cwd (from the machine it was captured on) has no
	// project policy here, so the project's is CLAUDE_PROJECT_DIR's.
	if want := filepath.Join(cfg.ProjectDir, ".hookwatch", "policy.yaml"); reqs[0].ProjectPolicy != want {
		t.Errorf("project policy sent: %q, want %q", reqs[0].ProjectPolicy, want)
	}
	if !bytes.Equal(reqs[0].Payload, bytes.TrimSpace(payload)) {
		t.Errorf("payload sent: %.100s", reqs[0].Payload)
	}
	envs := spooled(t, cfg)
	if len(envs) != 1 || !strings.Contains(string(envs[0].Decision), `"rule_ids":["r1"]`) {
		t.Fatalf("spooled %+v", envs)
	}
	if lines := logLines(t, cfg.Home); lines != nil {
		t.Errorf("logged %q", lines)
	}
}

// TestRunCollectorFailsToAnswer: a collector that takes the question but
// gives no answer leaves the agent unanswered (fail-open, exit 0), the event
// recorded, and one line saying why.
func TestRunCollectorFailsToAnswer(t *testing.T) {
	cfg := config(t, testbin.DeadURL(t))
	answering(t, cfg, func(hooksock.Request) hooksock.Reply { panic("evaluator bug") })
	res := hook.Run(context.Background(), cfg, bytes.NewReader(preToolUse(t)))
	if res.ExitCode != 0 || len(res.Stdout) != 0 || !res.Spooled {
		t.Fatalf("Run = %+v", res)
	}
	lines := logLines(t, cfg.Home)
	if len(lines) != 1 || !strings.Contains(lines[0], "could not be evaluated") || !strings.Contains(lines[0], "without an answer") {
		t.Errorf("hook.log: %q", lines)
	}
	if envs := spooled(t, cfg); len(envs) != 1 || envs[0].Decision != nil {
		t.Errorf("spooled %+v", envs)
	}
}
