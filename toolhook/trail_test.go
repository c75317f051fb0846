package toolhook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hookwatch/hookwatch/audit"
	"github.com/hookwatch/hookwatch/decision"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Secrets the trail must not hold: in an input, as an input's key, in an
// output and in an error.
const (
	secretToken = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	secretKey   = "AKIAIOSFODNN7EXAMPLE"
	secretPass  = "hunter2-very-secret"
)

// TestTrailGolden records a small agent tree — a sub-agent, a failure, a
// refused call, an interrupted one, secrets everywhere, the session's end —
// and compares its audit directory with the golden files (testdata/trail/;
// -update rewrites them), times, envelope ids and hashes masked:
// events.jsonl has the calls' PreToolUse and PostToolUse(/Failure) events,
// each payload with the session's cwd and permission mode, the sub-agent's
// SubagentStart and SubagentStop around its calls, and the SessionEnd,
// tool_calls.jsonl the calls. Every line validates against the
// published schema of its file, both chains verify, and no secret is in
// either file.
func TestTrailGolden(t *testing.T) {
	dir := t.TempDir()
	w, err := audit.NewWriter(dir, audit.WriterOptions{UniqueCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := NewAuditRecorder(w, AuditOptions{BatchSize: 4})

	var hooks Registry
	hooks.Pre("deploy", func(context.Context, *Call) PreResult {
		return PreResult{Decision: decision.Decision{Verdict: decision.Deny, Reasons: []string{"no deploys on Fridays"}}}
	})
	hooks.Pre("Bash", func(_ context.Context, c *Call) PreResult {
		if strings.Contains(c.Input["command"].(string), "rm -rf") {
			return PreResult{Action: Abort, Reason: "rm -rf is not for agents"}
		}
		return PreResult{}
	})
	x := &Executor{Registry: &hooks, Recorder: rec, SessionID: "go-agent-golden", Dir: "/home/dev/src/agent", PermissionMode: "acceptEdits"}
	x.Tools = map[string]Tool{
		"Bash": func(_ context.Context, in map[string]any) (any, error) {
			return map[string]any{"stdout": "export GITHUB_TOKEN=" + secretToken + "\n<done> & ok", "exit_code": 0}, nil
		},
		"login": func(context.Context, map[string]any) (any, error) {
			return nil, errors.New("login failed for password=" + secretPass)
		},
		"deploy": echo,
		"Task": func(ctx context.Context, in map[string]any) (any, error) {
			wctx := SpawnAgent(ctx, "worker-1", "checker")
			if _, err := x.CallID(wctx, "Bash", "toolu_bash_1", map[string]any{"command": "env", secretKey: "aws"}); err != nil {
				return nil, err
			}
			x.CallID(wctx, "Bash", "toolu_bash_2", map[string]any{"command": "rm -rf /"})
			return "checked", nil
		},
	}
	ctx := WithTask(context.Background(), "ticket-9")
	if _, err := x.CallID(ctx, "Task", "toolu_task_1", map[string]any{"prompt": "check the env"}); err != nil {
		t.Fatal(err)
	}
	x.CallID(ctx, "login", "toolu_login_1", map[string]any{"user": "ops", "password": secretPass})
	x.CallID(ctx, "deploy", "toolu_deploy_1", map[string]any{"env": "prod"})
	x.EndSession(ctx, "prompt_input_exit")
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}

	reports, err := audit.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 {
		t.Fatalf("%d streams verified, want 2", len(reports))
	}
	for _, r := range reports {
		if r.Problem != nil {
			t.Fatal(audit.Summary(r))
		}
	}
	session := filepath.Join(dir, audit.SessionDir("go-agent-golden"))
	for _, f := range []struct {
		name   string
		schema string
		lines  int
	}{
		{audit.EventsFile, "event.v1.schema.json", 12}, // 5 calls ran, the deploy was refused; the sub-agent's start and stop; the end
		{audit.ToolCallsFile, "tool_call.v1.schema.json", 5},
	} {
		data, err := os.ReadFile(filepath.Join(session, f.name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{secretToken, secretKey, secretPass} {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds the secret %s", f.name, s)
			}
		}
		schema := trailSchema(t, f.schema)
		n := 0
		for sc := bufio.NewScanner(bytes.NewReader(data)); sc.Scan(); n++ {
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(v); err != nil {
				t.Fatalf("%s: %s: %v", f.name, sc.Bytes(), err)
			}
		}
		if n != f.lines {
			t.Errorf("%s has %d lines, want %d", f.name, n, f.lines)
		}
		golden := filepath.Join("testdata", "trail", f.name)
		got := maskTrail(data)
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run with -update and review the diff):\n%s", f.name, golden, got)
		}
	}
}

// volatile are the members of a trail's lines that differ from run to run:
// times, durations, envelope ids and the hashes over them.
var volatile = regexp.MustCompile(`"(time|started_at|ended_at|id|prev|hash)":"[^"]*"|"duration_ms":[0-9]+`)

// The mask of a member: its name, then "…".

func maskTrail(data []byte) []byte {
	return volatile.ReplaceAllFunc(data, func(m []byte) []byte {
		name, _, _ := bytes.Cut(m, []byte(":"))
		if bytes.Equal(name, []byte(`"prev"`)) && bytes.HasSuffix(m, []byte(`:""`)) {
			return m // the first line's: nothing before it
		}
		return append(append([]byte(nil), name...), `:"…"`...)
	})
}

// trailSchema compiles the published schema name of an audit file (the
// tool-call schema refers to the event schema's definitions).
func trailSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	const base = "https://github.com/hookwatch/hookwatch/docs/audit/"
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, file := range []string{"event.v1.schema.json", "tool_call.v1.schema.json"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", "audit", file))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := c.AddResource(base+file, doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(base + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
