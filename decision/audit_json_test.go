package decision

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAuditAppendJSON holds the hand encoder to encoding/json's bytes
// (without its HTML escapes).
func TestAuditAppendJSON(t *testing.T) {
	f := func(a Audit) {
		t.Helper()
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&a); err != nil {
			t.Fatal(err)
		}
		if got := a.AppendJSON(nil); string(got) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Fatalf("\n got %s\nwant %s", got, want.Bytes())
		}
	}
	f(Audit{Action: ActionAllow, RuleIDs: []string{}, Enforced: true})
	f(Audit{Action: ActionDeny, RuleIDs: []string{"a", "b\"<c>"}, Reason: "refunds > 500 go to a human\n", Enforced: true,
		Rules: []Note{{RuleID: "a", Action: ActionDeny, Reason: "x & y", Enforced: true}, {Action: ActionWarn, Error: "cannot evaluate \x01"}}})
	f(Audit{Action: ActionWarn, RuleIDs: []string{}})
	for _, d := range []Decision{
		{Verdict: Deny, Reasons: []string{"no"}},
		{Verdict: Ask, Reasons: []string{"sure?"}, Notes: []Note{{RuleID: "r1", Action: ActionAsk, Enforced: true}}},
		{Stop: true, StopReasons: []string{"halt"}, Notes: []Note{{RuleID: "r2", Action: ActionStop, Enforced: true}, {RuleID: "r3", Action: ActionAllow}}},
	} {
		if a := d.Audit(); a != nil {
			f(*a)
		}
	}
}
