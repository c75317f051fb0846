package policy

import (
	"os"
	"strings"
	"testing"
)

// TestDocExamples loads every YAML rule example of docs/policy.md (blocks
// that are a whole file or a list of rules) and compiles it: the language
// reference must not drift from the language.
func TestDocExamples(t *testing.T) {
	b, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Skipf("docs not present: %v", err)
	}
	blocks := strings.Split(string(b), "```yaml\n")[1:]
	n := 0
	for _, blk := range blocks {
		body, _, _ := strings.Cut(blk, "```")
		var doc string
		switch {
		case strings.HasPrefix(body, "version:"), strings.HasPrefix(body, "rules:"):
			doc = body
		case strings.HasPrefix(body, "- id:"):
			doc = "rules:\n" + indent(body)
		default:
			continue // a fragment (transform options)
		}
		n++
		set := loadYAML(t, doc)
		if ps := append(set.Problems, set.compileAll()...); len(ps) > 0 {
			t.Fatalf("example %d:\n%s\nproblems: %v", n, body, ps)
		}
		if len(set.Rules) == 0 {
			t.Fatalf("example %d has no rules:\n%s", n, body)
		}
	}
	if n < 15 {
		t.Fatalf("only %d examples found", n)
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
