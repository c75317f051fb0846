package policy

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/decision"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpusPayloads are the real payloads of testdata/*.jsonl (raw lines and
// lines wrapping the payload under "payload").
func corpusPayloads(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, name := range []string{"claude-code-2.1.197.jsonl", "public-captures.jsonl"} {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			p, _, err := payloadOf(sc.Bytes())
			if err == nil {
				out = append(out, p)
			}
		}
		f.Close()
	}
	return out
}

// pick returns a deep copy of the first real payload of event (and tool,
// and agent type "main" for none / a name), so tests may modify it.
func pick(t testing.TB, event, tool, agentType string) map[string]any {
	t.Helper()
	for _, p := range corpusPayloads(t) {
		if p["hook_event_name"] != event || (tool != "" && p["tool_name"] != tool) {
			continue
		}
		at, hasAgent := p["agent_id"].(string)
		switch {
		case agentType == "main" && hasAgent && at != "":
			continue
		case agentType != "" && agentType != "main" && p["agent_type"] != agentType:
			continue
		}
		b, _ := json.Marshal(p)
		var c map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Fatalf("no %s/%s/%s payload in the corpus", event, tool, agentType)
	return nil
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadYAML loads one user-scope policy from text.
func loadYAML(t testing.TB, content string) *Set {
	t.Helper()
	return LoadSources(Source{Path: writeFile(t, t.TempDir(), "policy.yaml", content), Scope: ScopeUser})
}

func eval(set *Set, p map[string]any) decision.Decision {
	return set.Evaluate(context.Background(), p, MemoryState())
}

func render(d decision.Decision) string {
	out, _ := decision.Render(d)
	return strings.TrimSuffix(string(out), "\n")
}

// golden compares got with testdata/<name>, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}
