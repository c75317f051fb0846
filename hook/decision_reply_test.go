package hook

import (
	"encoding/json"
	"testing"
)

func TestDecisionReplyRoundTrip(t *testing.T) {
	f := func(code int, audit string, stdout string) {
		t.Helper()
		v, err := parseDecisionReply(DecisionReply(code, json.RawMessage(audit), []byte(stdout)))
		if err != nil || v.code != code || string(v.audit) != audit || string(v.stdout) != stdout {
			t.Errorf("round trip of (%d, %q, %q) = %+v, %v", code, audit, stdout, v, err)
		}
	}
	f(0, "", "")
	f(0, `{"action":"deny","rule_ids":["a"]}`, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`)
	f(2, `{"action":"block"}`, "line one\nline two\n")
	for _, bad := range []string{"", "x\n\n", "0", "0\n{not json}\n", "0\nno newline after"} {
		if _, err := parseDecisionReply([]byte(bad)); err == nil {
			t.Errorf("parseDecisionReply(%q) accepted it", bad)
		}
	}
}

func FuzzParseDecisionReply(f *testing.F) {
	f.Add([]byte("0\n\n"))
	f.Add(DecisionReply(0, json.RawMessage(`{"a":1}`), []byte("out")))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseDecisionReply(b)
		if err != nil {
			return
		}
		if w := DecisionReply(v.code, v.audit, v.stdout); len(v.audit) > 0 && !json.Valid(v.audit) {
			t.Fatalf("accepted invalid audit %q (re-encoded %q)", v.audit, w)
		}
	})
}
