package policy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
)

// benchPayload is a real PreToolUse payload (Claude Code 2.1.197).
const benchPayload = `{"session_id":"0e2e0b5d-7136-4322-8086-c38ed16b10ad","transcript_path":"/home/dev/.claude/projects/-home-dev-src-demo/0e2e0b5d-7136-4322-8086-c38ed16b10ad.jsonl","cwd":"/home/dev/src/demo","prompt_id":"4e22d70a-9461-4c2b-b2e7-bfcde2ff451a","permission_mode":"bypassPermissions","effort":{"level":"high"},"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go vet ./... 2>&1; exit 3","description":"vet"},"tool_use_id":"toolu_00000009"}`

// BenchmarkEvaluate measures policy with 50 rules in force (testdata/
// bench50.yaml, 5 of them apply to the payload's event and tool):
//
//   - fresh: what a fresh hook process pays through Discover — find and
//     read the files, load the (cached) parse, build the expr configuration,
//     compile the 5 applicable rules, evaluate, render;
//   - fresh-nocache: the same with the YAML parsed every time (first run
//     after an edit);
//   - warm: per event in a long-running collector, the set already loaded.
func BenchmarkEvaluate(b *testing.B) {
	data, err := os.ReadFile("testdata/bench50.yaml")
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	if err := os.WriteFile(filepath.Join(home, "policy.yaml"), data, 0o600); err != nil {
		b.Fatal(err)
	}
	payload := func(b *testing.B) map[string]any {
		var p map[string]any
		if err := json.Unmarshal([]byte(benchPayload), &p); err != nil {
			b.Fatal(err)
		}
		return p
	}
	run := func(b *testing.B, load func() *Set) {
		b.ReportAllocs()
		for b.Loop() {
			p := payload(b)
			exprs = &exprCompiler{} // a fresh process builds the expr configuration once
			set := load()
			if len(set.Rules) != 50 {
				b.Fatalf("%d rules", len(set.Rules))
			}
			d := set.Evaluate(context.Background(), p, nil)
			if out, _ := decision.Render(d); len(out) == 0 {
				b.Fatal("no decision")
			}
		}
	}
	b.Run("fresh", func(b *testing.B) {
		run(b, func() *Set { return Discover(home, "/nonexistent/project", "") })
	})
	b.Run("fresh-nocache", func(b *testing.B) {
		run(b, func() *Set { return LoadSources(Source{Path: filepath.Join(home, "policy.yaml"), Scope: ScopeUser}) })
	})
	warm := func(b *testing.B, set *Set) {
		p := payload(b)
		b.ReportAllocs()
		for b.Loop() {
			d := set.Evaluate(context.Background(), p, nil)
			decision.Render(d)
		}
	}
	b.Run("warm", func(b *testing.B) { warm(b, Discover(home, "/nonexistent/project", "")) })
	// warm-effect adds a rule on the command's meaning: every evaluation
	// then analyses the command (package shell).
	b.Run("warm-effect", func(b *testing.B) {
		dir := b.TempDir()
		rule := "\n  - id: no-destruction\n    tool: Bash\n    when: command.effect == \"destructive\"\n    action: deny\n"
		if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), append(append([]byte(nil), data...), rule...), 0o600); err != nil {
			b.Fatal(err)
		}
		set := Discover(dir, "/nonexistent/project", "")
		if len(set.Rules) != 51 || len(set.Problems) > 0 {
			b.Fatalf("%d rules, problems %v", len(set.Rules), set.Problems)
		}
		warm(b, set)
	})
}
