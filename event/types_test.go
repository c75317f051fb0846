package event

import "testing"

// TestEveryEventHasATypedView: each event of Claude Code and Codex, and the
// statusLine, decodes into its own typed view.
func TestEveryEventHasATypedView(t *testing.T) {
	for _, name := range append(append(append([]string(nil), ClaudeCodeEvents...), CodexEvents...), StatusLine) {
		if newEvent(name) == nil {
			t.Errorf("%s has no typed view", name)
		}
	}
	if newEvent("NoSuchEvent") != nil || newEvent("") != nil {
		t.Error("an unknown name got a typed view")
	}
}
