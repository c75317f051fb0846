package event

import "testing"

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
