package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookwatch/hookwatch/internal/secrettest"
)

// agentCase is one case of testdata/agent-secrets.txt.
type agentCase struct {
	line       int
	kind, text string
	secrets    []string
}

// agentSecrets reads testdata/agent-secrets.txt (its format is described at
// its top).
func agentSecrets(tb testing.TB) []agentCase {
	tb.Helper()
	raw := strings.ReplaceAll(string(readFile(tb, "testdata/agent-secrets.txt")), "{{}}", "")
	var cases []agentCase
	var text []string
	flush := func() {
		if len(cases) > 0 {
			cases[len(cases)-1].text = strings.Join(text, "\n")
		}
		text = nil
	}
	for i, l := range strings.Split(raw, "\n") {
		switch {
		case strings.HasPrefix(l, "== "):
			flush()
			f := strings.Fields(l[3:])
			if len(f) < 2 && (len(f) != 1 || f[0] != "none") {
				tb.Fatalf("testdata/agent-secrets.txt:%d: want \"== <kind> <secret>…\" or \"== none\", got %q", i+1, l)
			}
			cases = append(cases, agentCase{line: i + 1, kind: f[0], secrets: f[1:]})
		case len(cases) == 0:
			// the file's comment
		default:
			text = append(text, l)
		}
	}
	flush()
	if len(cases) < 50 {
		tb.Fatalf("only %d cases in testdata/agent-secrets.txt", len(cases))
	}
	return cases
}

// TestAgentSecrets holds String and JSON to the cases of
// testdata/agent-secrets.txt: each secret is gone from the text, which says
// what kind it was, and ordinary text is left as it is, whether the text comes alone, as a JSON string (the output of
// a tool, a file read), or as the JSON text itself (a tool that printed
// JSON, redacted as the tool's response).
func TestAgentSecrets(t *testing.T) {
	for _, c := range agentSecrets(t) {
		if c.kind == "none" {
			if out, n := String(c.text); n != 0 {
				t.Errorf("line %d: String redacted ordinary text:\n%s", c.line, out)
			}
			q, _ := json.Marshal(c.text)
			if out, n := JSON(q); n != 0 {
				t.Errorf("line %d: JSON redacted ordinary text:\n%s", c.line, out)
			}
			continue
		}
		out, _ := String(c.text)
		for _, s := range c.secrets {
			if strings.Contains(out, s) {
				t.Errorf("line %d: %s stays in String's output:\n%s", c.line, s, out)
			}
		}
		if !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
			t.Errorf("line %d: no [REDACTED:%s] in String's output:\n%s", c.line, c.kind, out)
		}
		q, _ := json.Marshal(map[string]any{"type": "text", "file": map[string]string{"filePath": "/w/x", "content": c.text}})
		docs := [][]byte{q}
		if json.Valid([]byte(c.text)) {
			docs = append(docs, []byte(c.text))
		}
		for _, d := range docs {
			jout, _ := JSON(d)
			for _, s := range c.secrets {
				if secrettest.Leaks(jout, s) {
					t.Errorf("line %d: %s stays in JSON's output:\n%s", c.line, s, jout)
				}
			}
		}
	}
}
