package attribution

import (
	"testing"

	"github.com/hookwatch/hookwatch/event"
)

func TestClaudeCode2197Golden(t *testing.T) {
	res := Build(loadCorpus(t, "claude-code-2.1.197.jsonl", event.RuntimeClaudeCode))
	golden(t, "claude-code-2.1.197.golden.json", mustJSON(t, res))
}
