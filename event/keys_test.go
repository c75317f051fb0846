package event

import (
	"testing"

	"github.com/hookwatch/hookwatch/internal/jsonscan"
)

// TestMemberKey: every name comes back as the string it spells, known or
// not, and a known one allocates nothing.
func TestMemberKey(t *testing.T) {
	for _, k := range []string{"session_id", "tool_input", "scratchpad_dir", "", "unknown_member", "Session_ID", "session_id\x00", "é"} {
		if got := memberKey([]byte(k)); got != k {
			t.Errorf("memberKey(%q) = %q", k, got)
		}
	}
	b := []byte("tool_response")
	if n := testing.AllocsPerRun(100, func() { _ = memberKey(b) }); n != 0 {
		t.Errorf("memberKey of a known name: %v allocations, want 0", n)
	}
}

// TestConstantValue: a string member that spells a known name decodes to
// that name without an allocation; any other spelling of it (escaped)
// decodes to the same value through the general path.
func TestConstantValue(t *testing.T) {
	for _, lit := range []string{`"PreToolUse"`, `"bypassPermissions"`, `"Bash"`, `"apply_patch"`, `"Pre\u0054oolUse"`, `"Bash "`, `"bash"`, `""`, `"Ba\"sh"`} {
		want, ok := jsonscan.Unquote([]byte(lit))
		if !ok {
			t.Fatalf("bad literal %s", lit)
		}
		if got, ok := lenientString([]byte(lit)); !ok || got != want {
			t.Errorf("lenientString(%s) = %q, %v; want %q", lit, got, ok, want)
		}
	}
	for _, name := range append(append([]string{}, ClaudeCodeEvents...), "Read", "acceptEdits", ApplyPatch) {
		lit := []byte(`"` + name + `"`)
		if n := testing.AllocsPerRun(100, func() { _, _ = lenientString(lit) }); n != 0 {
			t.Errorf("lenientString(%s): %v allocations, want 0", lit, n)
		}
	}
}
